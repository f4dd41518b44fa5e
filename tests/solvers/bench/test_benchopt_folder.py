"""bench/benchopt: the benchmark folder driven through benchopt's documented protocol.

benchopt is an optional extra: where it is installed the real base classes
are used, elsewhere a minimal stand-in for
``benchopt.BaseObjective/BaseDataset/BaseSolver`` (``get_instance(**params)``
sets the parameters as attributes, joint ``"n, N"`` keys split, as benchopt's
``save_parameters`` does) lets the files be loaded and run in benchopt's
order: ``Dataset.get_data -> Objective.set_data -> Objective.get_objective ->
Solver.set_objective -> Solver.run -> Solver.get_result ->
Objective.evaluate_result``.  ``benchopt run bench/benchopt`` itself is
documented in the README (it spawns solver processes: too slow for a unit test).
"""

import importlib.util
import pathlib
import sys
import types

import pytest

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
