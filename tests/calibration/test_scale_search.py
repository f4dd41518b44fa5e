"""Scale calibration through the PLD engine (:mod:`dpjax.calibration.scale_search`), judged
end to end by re-evaluating the engine at the returned scale: the certificate must be the
profile of exactly that scale, and the scale minimal against the closed form."""

import numpy as np
import pytest

from dpjax.accounting.gaussian import delta_gaussian
from dpjax.accounting.pld import engine
from dpjax.calibration import scale_search
from dpjax.noise.gaussian import Gaussian

# each target's re-evaluation is one engine.profile call at its own scale: its own grid
# sizes, its own compiled kernel (~15 s each on one core); one target runs by default, the
# three-target instance (the same assertions) is marked slow
CERTIFICATE_EPS = [
    pytest.param([1.0], id="eps1"),
    pytest.param([0.5, 1.0, 2.0], id="eps3", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("eps", CERTIFICATE_EPS)
def test_calibration_certificate_is_the_profile_at_the_returned_scale(eps):
    eps = np.array(eps)
    res = scale_search.calibrate_scale(
        Gaussian.from_scale, 0.0, 1.0, eps, 1e-6, 3, None, 1e-3, upper=20.0, lower=1.0
    )
    assert np.all(res.certified)
    again = [
        engine.profile(Gaussian.from_scale, s, 0.0, 1.0, e, 3, None, 1e-3)
        for s, e in zip(res.scale, eps, strict=True)
    ]
    # the same engine at the same scale (sizes may differ: the window only moves bounded tails)
    np.testing.assert_allclose(again, res.delta_at, rtol=1e-6)
    assert np.all(res.delta_at <= 1e-6)
    # least: the exact (Balle-Wang) delta at scale (1 - 1e-4) already exceeds the target
    exact = np.asarray(delta_gaussian(eps, res.scale * (1 - 1e-4), np.sqrt(3.0)))
    assert np.all(exact > 1e-6)


# delta = 1e-8 lies below engine.TILT_BELOW: both searches also run the tilted stage (two
# more compiled programs, ~3 min on one core), marked slow; delta = 1e-6 (plain engine
# only) runs the same comparison by default
@pytest.mark.parametrize(
    "delta", [1e-6, pytest.param(1e-8, marks=pytest.mark.slow)], ids=["1e-6", "1e-8"]
)
def test_coarse_to_fine_agrees_with_a_search_at_full_resolution(delta):
    from dpjax.calibration.gaussian import sigma_gaussian

    kw = dict(upper=100.0, lower=4.0, tolerance=1e-8)
    eps = np.array([0.3, 1.0])
    args = (Gaussian.from_scale, 0.0, 1.0, eps, delta, 5, None, 1e-3)
    two = scale_search.calibrate_scale(*args, coarsen=scale_search.COARSEN, **kw)
    one = scale_search.calibrate_scale(*args, coarsen=1, **kw)
    assert np.all(two.certified) and np.all(one.certified)
    # both are pessimistic: above the exact answer (5-fold Gaussian = Gaussian, l2 = sqrt 5)
    exact = np.asarray(sigma_gaussian(eps, delta, np.sqrt(5.0))[0])
    for r in (two, one):
        assert np.all(r.scale >= exact) and np.all(r.scale <= exact * (1 + 2e-4))
    # the one-stage search sizes its grids for the bracket's low end: larger FFTs, a
    # larger certified round-off term, so a slightly larger scale; never a smaller one
    assert np.all(two.scale <= one.scale * (1 + 2e-8))


def test_default_search_compiles_one_program():
    """The default (single-stage) search runs one compiled kernel for every target of the
    call, and no warm-settle kernel; the result is certified and minimal to the tolerance."""
    from dpjax.accounting.pld import plan

    eps = np.array([0.4, 0.8, 1.6])
    search, warm = scale_search.search_kernel, scale_search.warm_kernel
    before = search._cache_size(), warm._cache_size(), plan._sizing._cache_size()
    res = scale_search.calibrate_scale(
        Gaussian.from_scale, 0.0, 1.0, eps, 2e-5, 4, None, 2e-3, upper=30.0, lower=1.0
    )
    assert search._cache_size() == before[0] + 1
    assert warm._cache_size() == before[1]
    assert plan._sizing._cache_size() <= before[2] + 1
    assert np.all(res.certified) and np.all(res.delta_at <= 2e-5)
    exact = np.asarray(delta_gaussian(eps, res.scale * (1 - 1e-4), 2.0))  # 4 uses: l2 = 2
    assert np.all(exact > 2e-5)


def test_shared_plan_holds_plain_and_tilted_sizes_and_passes_the_float64_guard():
    """A ``plan`` dict shared between calls (the shape search's memo) holds the plain and the
    tilted stage's sizes; ``calibrate_scale``'s float64 guard flattens every argument as a
    pytree, which sorts a dict's keys: keys of two layouts (``(h, tail)`` beside
    ``("tilted", h, level)``) did not sort, and the second call of the K-dim flipped Huber
    shape search (``delta < TILT_BELOW``) crashed before computing anything."""
    import jax

    from dpjax.calibration import scale_tilted
    from dpjax.numerics import require_float64

    rows, lo, _, _ = scale_search._setup(
        Gaussian.from_scale, 0.0, 1.0, np.array([0.3]), 1e-8, 5, None, 100.0, None, None, True,
        {}, True,
    )
    index = np.arange(rows.size)
    scale_search._sizes(rows, index, lo, 1e-2)  # what the plain stage records
    scale_tilted._tilted_sizes(-40)(rows, index, lo, 1e-2)  # and the tilted stage
    assert len(rows.plan) == 2
    jax.tree_util.tree_leaves(rows.plan)  # sorts the keys (raised on two key layouts)
    require_float64("calibrate_scale", plan=rows.plan)


@pytest.mark.parametrize("fft,retry_pad", [(2**10, 16), (2**20, 2)])
def test_a_widened_search_pads_to_the_first_batch_unless_execution_bound(
    monkeypatch, fft, retry_pad
):
    """Two of 15 rows miss their bracket: their widened search reuses the first search's
    16-row kernel on small grids (no new compile), and runs on 2 rows where one evaluation
    of 16 would cost more than compiling (an FFT of 2^20 points: 18 CPU s padded at K = 1e5)."""
    from types import SimpleNamespace

    from dpjax.accounting.pld.plan import Sizes
    from dpjax.numerics import Root, Status

    pads = []

    def run(kernel, rows, todo, a, b, h, tol, sizes, pad_to=0):
        pads.append((len(todo), pad_to))
        status = np.full(len(todo), Status.OPTIMAL, np.int32)
        if len(pads) == 1:
            status[[1, 2]] = Status.BRACKET_TOO_SMALL
        n = len(todo)
        return Root(good=np.zeros(n), aux=np.zeros((n, 2)), bad=np.zeros(n),
                    slope=np.zeros(n), status=status, evaluations=np.ones(n))

    monkeypatch.setattr(scale_search, "_run", run)
    rows = SimpleNamespace(fallback_upper=None)
    lo, hi = np.ones(15), np.full(15, 4.0)
    root, lo2, _ = scale_search._bracketed_search(
        rows, np.arange(15), lo, hi, 1e-4, 1e-7, sizes=lambda *a: Sizes(4096, fft))
    assert pads == [(15, 16), (2, retry_pad)]
    assert np.all(root.status == Status.OPTIMAL) and lo2[1] == lo2[2] == 0.25


def test_search_loads_its_traced_kernel_from_the_export_cache(tmp_path, monkeypatch):
    """The batched search kernel goes through the export cache as the engine's kernels do: a
    warm process loads it untraced (a warm ``dpjax calibrate`` traced it before) and returns
    the same scale, bit for bit."""
    from _helpers import loaded_from_export_cache

    def call():
        engine._ANSWERS.clear()
        return scale_search.calibrate_scale(
            Gaussian.from_scale, 0.0, 1.0, np.array([0.8]), 2e-5, 4, None, 2e-3, upper=30.0,
            lower=1.0,
        )

    first, second = loaded_from_export_cache(call, tmp_path, monkeypatch, "kernel")
    np.testing.assert_array_equal(second.scale, first.scale)
    np.testing.assert_array_equal(second.delta_at, first.delta_at)
    assert np.all(first.certified) and np.all(first.delta_at <= 2e-5)
