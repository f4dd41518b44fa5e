"""bench/benchopt: the benchmark folder driven through benchopt's documented protocol.

benchopt is an optional extra: where it is installed the real base classes
are used, elsewhere a minimal stand-in for
``benchopt.BaseObjective/BaseDataset/BaseSolver`` (``get_instance(**params)``
sets the parameters as attributes, joint ``"n, N"`` keys split, as benchopt's
``save_parameters`` does) lets the files be loaded and run in benchopt's
order: ``Dataset.get_data -> Objective.set_data -> Objective.get_objective ->
Solver.set_objective -> Solver.run -> Solver.get_result ->
Objective.evaluate_result``.  ``benchopt run bench/benchopt`` itself (it spawns
solver processes: minutes) runs in the slow tier, where benchopt is installed
(``pip install -e '.[bench]'``), and must agree with ``solvers.bench.runner``.
"""

import importlib.util
import pathlib
import shutil
import subprocess
import sys
import types

import pytest

from solvers.bench import get_family

FOLDER = pathlib.Path(__file__).resolve().parents[3] / "bench" / "benchopt"


class _Base:
    parameters: dict = {}

    def __init__(self, **params):
        for key, values in self.parameters.items():
            names = [k.strip() for k in key.split(",")]  # "n, N": joint values (tuples)
            first = values[0] if len(names) > 1 else (values[0],)
            for i, name in enumerate(names):
                setattr(self, name, params.get(name, first[i]))

    @classmethod
    def get_instance(cls, **params):  # benchopt's constructor (parameters saved as attributes)
        return cls(**params)


@pytest.fixture(scope="module")
def load():
    try:
        import benchopt  # noqa: F401 - the real one, where installed

        stub = None
    except ImportError:
        stub = types.ModuleType("benchopt")
        stub.BaseObjective = type("BaseObjective", (_Base,), {})
        stub.BaseDataset = type("BaseDataset", (_Base,), {})
        stub.BaseSolver = type("BaseSolver", (_Base,), {})
        sys.modules["benchopt"] = stub

    def _load(rel):
        spec = importlib.util.spec_from_file_location(f"_benchopt_{rel.replace('/', '_')}",
                                                      FOLDER / rel)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    yield _load
    if stub is not None:
        del sys.modules["benchopt"]


def _run(load, dataset_file, dataset_params, solver_file, solver_params):
    data = load(dataset_file).Dataset.get_instance(**dataset_params).get_data()
    objective = load("objective.py").Objective.get_instance()
    objective.set_data(**data)
    solver = load(solver_file).Solver.get_instance(**solver_params)
    skip = getattr(solver, "skip", None)
    if skip is not None and skip(**objective.get_objective())[0]:
        pytest.skip("solver not installed")
    solver.set_objective(**objective.get_objective())
    solver.run(None)
    return objective, objective.evaluate_result(**solver.get_result())


@pytest.mark.parametrize("solver_file,params", [
    ("solvers/jax_solve.py", {"dtype": "float64"}),
    ("solvers/cvxpy_solve.py", {"solver": "CLARABEL"}),
])
def test_allocation_through_the_protocol(load, solver_file, params):
    _, out = _run(load, "datasets/allocation.py", {"profile": "lognormal", "K": 8},
                  solver_file, params)
    assert out["solved_1e-08"] == 1.0 and out["residual"] <= 1e-8


def test_spherical_kl_dataset_and_one_result(load):
    objective, out = _run(load, "datasets/spherical_kl.py", {"n": 6, "N": 18},
                          "solvers/jax_solve.py", {"dtype": "float64"})
    assert out["solved_1e-08"] == 1.0
    start = objective.evaluate_result(**objective.get_one_result())  # the start: not optimal
    assert start["solved_1e-06"] == 0.0 and start["value"] > out["value"]


@pytest.mark.slow
def test_benchopt_run_agrees_with_the_runner(tmp_path):
    pytest.importorskip("benchopt")
    pd = pytest.importorskip("pandas")
    from solvers.bench.runner import CvxpyBackend, JaxBackend, run_benchmark

    folder = tmp_path / "benchopt"
    shutil.copytree(FOLDER, folder, ignore=shutil.ignore_patterns("outputs", "__pycache__"))
    cmd = [sys.executable, "-m", "benchopt", "run", str(folder),
           "-d", "allocation[profile=lognormal,K=8,seed=0]",
           "-s", "jax[dtype=float64]", "-s", "cvxpy[solver=CLARABEL]",
           "-n", "1", "-r", "1", "--no-plot", "--no-html", "--no-timeout"]
    # not from inside the folder: `python -m` puts the working directory first on sys.path,
    # where the benchmark's own solvers/ folder would shadow the solvers package
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (result,) = (folder / "outputs").glob("*.parquet")
    df = pd.read_parquet(result)
    got = {row.solver_name: row for row in df.itertuples()}
    assert set(got) == {"jax[dtype=float64]", "cvxpy[solver=CLARABEL]"}

    inst = get_family("allocation-lognormal").make("8", 0)
    rows = run_benchmark([inst], [JaxBackend("float64"), CvxpyBackend("CLARABEL",
                                                                      isolate=False)],
                         time_limit=300.0, repeats=1)
    ours = {r["backend"]: r for r in rows}
    for bo_name, name in (("jax[dtype=float64]", "jax-f64"),
                          ("cvxpy[solver=CLARABEL]", "cvxpy-clarabel")):
        row = got[bo_name]
        assert row.objective_value == pytest.approx(ours[name]["objective"], rel=1e-12)
        assert df.loc[df.solver_name == bo_name, "objective_solved_1e-08"].item() == 1.0
        assert ours[name]["solved_1e-08"]
        assert df.loc[df.solver_name == bo_name, "objective_residual"].item() <= 1e-8
