"""benchopt Dataset: the spherical KL family (``dpjax.spherical.benchmark_family``)."""

from benchopt import BaseDataset


class Dataset(BaseDataset):
    """``spherical-kl`` at the headline sizes (n, N) = (50, 150) ... (400, 1200)."""

    name = "spherical-kl"
    # (n, N) pairs: benchopt's joint-parameter form (select with ``-d "spherical-kl[n=50,N=150]"``)
    parameters = {"n, N": [(50, 150), (100, 300), (200, 600), (400, 1200)], "seed": [0]}
    test_parameters = {"n, N": [(10, 30)], "seed": [0]}

    def get_data(self):
        """The instance as ``Objective.set_data`` keywords."""
        import jax

        jax.config.update("jax_enable_x64", True)
        import dpjax.spherical.benchmark_family  # noqa: F401 - registers the family
        from solvers.bench import get_family

        inst = get_family("spherical-kl").make(f"{self.n},{self.N}", self.seed)
        return dict(problem=inst.problem, instance=inst.name)
