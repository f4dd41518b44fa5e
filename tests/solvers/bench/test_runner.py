"""solvers.bench.runner: verification by the shared residual, never by the backend's status."""

import math

import jax
import numpy as np
import pytest

from solvers.bench import get_family
from solvers.bench.runner import (
    CvxpyBackend,
    JaxBackend,
    Run,
    available_backends,
    batched_throughput,
    run_benchmark,
)


@pytest.fixture(scope="module")
def instances():
    import dpjax.spherical.benchmark_family  # noqa: F401 - registers the KL families

    return [get_family("allocation-lognormal").make("8", 1),
            get_family("spherical-kl").make("6,18", 0)]


@pytest.fixture(scope="module")
def rows(instances):
    return run_benchmark(instances, [JaxBackend("float64"), CvxpyBackend("CLARABEL",
                                                                         isolate=False)],
                         time_limit=120.0, repeats=2)


def test_both_backends_solve_both_instances(rows, instances):
    assert len(rows) == 4
    for row in rows:
        assert row["solved_1e-06"], row
        assert row["error"] == "" and not row["timed_out"]
    jax_rows = [r for r in rows if r["backend"] == "jax-f64"]
    assert all(r["compile_s"] > 0 and r["repeats"] == 2 for r in jax_rows)
    for inst in instances:  # the two backends agree on the optimal value
        vals = [r["objective"] for r in rows if r["instance"] == inst.name]
        assert vals[0] == pytest.approx(vals[1], rel=1e-7)


class LyingBackend:
    """Returns the problem's start (feasible, not optimal) and says 'optimal'."""

    name, kind = "liar", "host"

    def run(self, problem, time_limit, repeats):
        x = np.asarray(problem.reference()) if hasattr(problem, "reference") else \
            2.0 * np.ones(problem.num_variables)
        return Run(x, np.zeros(0), np.zeros(0), 0, (0.001,))


class SetupOnceBackend:
    """Pays 10 s of setup inside its first solve of each size (as the old cvxpy rows did:
    a polish compile per size), then 10 ms per solve; returns the closed-form answer."""

    name, kind = "setup-once", "host"

    def __init__(self):
        self.seen, self.calls, self.jax = set(), 0, JaxBackend("float64")

    def run(self, problem, time_limit, repeats):
        self.calls += 1
        extra = 0.0 if problem.num_variables in self.seen else 10.0
        self.seen.add(problem.num_variables)
        sol = self.jax.run(problem, math.inf, 1)
        return sol._replace(times=(0.01 + extra,) + (0.01,) * (repeats - 1),
                            compile_s=math.nan)


def test_first_instance_of_a_size_is_timed_like_the_others():
    fam = get_family("allocation-lognormal")
    insts = [fam.make("8", s) for s in range(3)] + [fam.make("9", 0)]
    backend = SetupOnceBackend()
    rows = run_benchmark(insts, [backend], time_limit=60.0, repeats=1)
    assert backend.calls == 6  # one untimed warm-up per size, then one timed solve each
    assert [r["time_s"] for r in rows] == [0.01] * 4  # the setup is not solve time
    assert [r["warm_up"] for r in rows] == [True, False, False, True]
    for r in rows:
        assert r["solved_1e-08"]
        first = r["warm_up"]
        assert r["setup_s"] == pytest.approx(10.0 if first else 0.0)
        assert r["end_to_end_s"] == pytest.approx(10.01 if first else 0.01)


def test_setup_reported_apart_for_real_backends(rows):
    for r in rows:
        assert r["end_to_end_s"] >= r["time_s"] > 0 and r["setup_s"] >= 0
    # cvxpy builds and canonicalises its model on every solve: setup on every row
    assert all(r["setup_s"] > 0 for r in rows if r["backend"] == "cvxpy-clarabel")
    jax_first = [r for r in rows if r["backend"] == "jax-f64" and r["warm_up"]]
    assert jax_first and all(r["end_to_end_s"] >= r["compile_s"] > 0 for r in jax_first)


def test_wrong_point_with_status_optimal_is_a_failure(instances):
    rows = run_benchmark(instances, [LyingBackend()], time_limit=10.0)
    for row in rows:
        assert row["reported_status"] == 0
        assert row["residual"] > 1e-6
        assert not row["solved_1e-06"] and not row["solved_1e-08"]


class SlowBackend(LyingBackend):
    name = "slow"

    def run(self, problem, time_limit, repeats):
        sol = JaxBackend("float64").run(problem, math.inf, 1)
        return sol._replace(times=(2.0 * time_limit,))


def test_solve_over_the_time_limit_fails_at_the_limit(instances):
    row = run_benchmark(instances[:1], [SlowBackend()], time_limit=0.5)[0]
    assert row["residual"] < 1e-8  # correct, but too late
    assert row["timed_out"] and row["time_s"] == 0.5 and not row["solved_1e-08"]


def test_no_run_after_a_time_out_on_the_same_family_and_seed(instances):
    fam = get_family("allocation-lognormal")
    sizes = [fam.make("8", 1), fam.make("9", 1), fam.make("8", 2)]
    rows = run_benchmark(sizes, [SlowBackend()], time_limit=0.5)
    assert rows[0]["timed_out"] and rows[0]["residual"] < 1e-8  # run, too late
    assert rows[1]["error"].startswith("not run: hit the time limit at size 8")
    assert rows[1]["timed_out"] and rows[1]["time_s"] == 0.5 and rows[1]["residual"] == math.inf
    assert rows[2]["residual"] < 1e-8  # another seed still runs
    again = run_benchmark(sizes[:2], [SlowBackend()], time_limit=0.5, skip_after_timeout=False)
    assert again[1]["error"] == "" and again[1]["residual"] < 1e-8


def test_crash_is_a_failure_not_an_abort(instances):
    class Crash(LyingBackend):
        def run(self, problem, time_limit, repeats):
            raise RuntimeError("boom")

    row = run_benchmark(instances[:1], [Crash()], time_limit=1.0)[0]
    assert "boom" in row["error"] and row["residual"] == math.inf and not row["solved_1e-06"]


def test_float32_is_verified_in_float64(instances):
    row = run_benchmark(instances[:1], [JaxBackend("float32")], time_limit=60.0, repeats=1)[0]
    assert row["backend"] == "jax-f32" and math.isfinite(row["residual"])
    assert row["residual"] > 1e-12  # float32 rounding is visible to the float64 residual


def test_isolated_host_solve_in_a_kept_worker(instances):
    prob = instances[0].problem
    backend = CvxpyBackend("CLARABEL")
    try:
        run = backend.run(prob, 60.0, 1)
        pid = backend._worker.proc.pid
        again = backend.run(prob, 60.0, 1)
        assert backend._worker.proc.pid == pid  # one start-up for both solves
    finally:
        backend.close()
    assert backend._worker is None
    for r in (run, again):
        assert r.error == "" and r.reported_status == 0 and len(r.times) == 1
        assert r.x.shape == (8,)
    np.testing.assert_array_equal(run.x, again.x)


def test_batched_throughput(instances):
    fam = get_family("allocation-lognormal")
    batch = [fam.make("8", s) for s in range(3)]
    shapes = {tuple(np.shape(v) for v in jax.tree_util.tree_leaves(b.problem)) for b in batch}
    assert len(shapes) == 1
    out = batched_throughput(batch, CvxpyBackend("CLARABEL", isolate=False), repeats=1)
    assert out["batch"] == 3 and out["jax_solved_1e-08"] == 3 and out["host_solved_1e-06"] == 3
    assert out["jax_instances_per_s"] > 0 and out["host_instances_per_s"] > 0
    # both JAX strategies measured and verified; the batched runner keeps the faster one
    assert out["jax_vmap_max_residual"] <= 1e-8 and out["jax_loop_max_residual"] <= 1e-8
    best = max(out["jax_vmap_instances_per_s"], out["jax_loop_instances_per_s"])
    assert out["jax_instances_per_s"] == best
    assert out["jax_strategy"] == ("vmap" if out["jax_vmap_instances_per_s"] == best else "loop")


def test_backend_selection():
    names = [b.name for b in available_backends()]
    assert names[:2] == ["jax-f64", "jax-f32"] and "cvxpy-clarabel" in names
    assert [b.name for b in available_backends("jax-f64")] == ["jax-f64"]
    with pytest.raises(ValueError, match="not available"):
        available_backends("jax-f64,nonsense")
    with pytest.raises(ValueError, match="dtype"):
        JaxBackend("float16")
