"""benchopt Dataset: the power-allocation families of ``solvers.bench.families``."""

from benchopt import BaseDataset


class Dataset(BaseDataset):
    """``allocation-<profile>`` at ``K`` coordinates (hard corners included)."""

    name = "allocation"
    parameters = {"profile": ["uniform", "lognormal", "loguniform", "exponential", "tiny"],
                  "K": [100], "seed": [0]}
    test_parameters = {"profile": ["lognormal"], "K": [8], "seed": [0]}

    def get_data(self):
        """The instance as ``Objective.set_data`` keywords."""
        import jax

        jax.config.update("jax_enable_x64", True)
        from solvers.bench import get_family

        inst = get_family(f"allocation-{self.profile}").make(str(self.K), self.seed)
        return dict(problem=inst.problem, instance=inst.name)
