"""How much each tilt of a tilted engine query decides (issue 36: the deep command's cost).

A tilted query (``dpjax.accounting.pld.tilted.fold``) answers the least over a few tilts
``lambda`` around the Chernoff minimiser (``fold.OFFSETS``); each costs a full FFT
composition.  For each setting this runs ``dpjax.account`` once, captures the engine's
tilted queries, and re-evaluates every tilt of a wider ladder (:data:`LADDER`, the tilts
the engine tried until 2026-12-06) for every adjacency alone on the same pairs and FFT
length, then reports each tilt's answer relative to the least, which offset won and whether
the engine's own tilts (``fold.OFFSETS``) include it.  Then the same for the tilted products
of two ledgers (``PLDAccountant``), read inside the compiled program with
``jax.debug.callback`` (run it with ``DPJAX_NO_COMPILATION_CACHE=1``: a program loaded
from the export cache would not report).  It measures a design input; nothing in dpjax uses it.

    DPJAX_NO_COMPILATION_CACHE=1 python bench/study_tilts.py
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import dpjax
from dpjax.accounting import events as ev
from dpjax.accounting.accountant import PLDAccountant
from dpjax.accounting.pld import engine
from dpjax.accounting.pld.tilted import compose as tilted_compose
from dpjax.accounting.pld.tilted import fold

jax.config.update("jax_enable_x64", True)

#: The ladder studied, as offsets from the Chernoff minimiser per query kind (``by_delta``)
LADDER = {True: (0, -1, -2, -3), False: (2, 1, 0, -1, -2)}

#: (mechanism, params, compositions, sampling rate, delta)
SETTINGS = [
    ("gaussian", {"sigma": 2.0}, 100, 0.1, 1e-8),
    ("gaussian", {"sigma": 1.0}, 1000, 0.01, 1e-10),
    ("gaussian", {"sigma": 0.8}, 10_000, 0.004, 1e-10),
    ("gaussian", {"sigma": 1.0}, 10, None, 1e-30),
    ("laplace", {"scale": 3.0}, 50, 0.05, 1e-9),
    ("gaussian", {"sigma": 0.8}, 10_000_000, 1e-6, 1e-8),
    ("gaussian", {"sigma": 0.8}, 10_000, 1e-4, 1e-14),
    ("flipped-huber", {"alpha": 2.0, "gamma": 1.0}, 200, 0.05, 1e-10),
    ("laplace", {"scale": 1.0}, 20, None, 1e-12),
]


#: (title, [(event, count), ...], delta) of the ledger part
LEDGERS = [
    ("subsampled Gaussian (1, 0.01) x 1000 + Laplace(20) x 10",
     [(ev.PoissonSampled(0.01, ev.Gaussian(1.0)), 1000), (ev.Laplace(20.0), 10)], 1e-10),
    ("subsampled Gaussians (0.8, 0.004) x 5000 + (1.5, 0.01) x 500",
     [(ev.PoissonSampled(0.004, ev.Gaussian(0.8)), 5000),
      (ev.PoissonSampled(0.01, ev.Gaussian(1.5)), 500)], 1e-12),
]


def _report(by, a, x, lams, got) -> None:
    best = int(np.argmin(got))
    spread = np.abs(got - got[best]) / max(abs(got[best]), 1e-300)
    kept = [got[LADDER[by].index(o)] for o in fold.OFFSETS[by]]
    print(f"  {'epsilon' if by else 'log delta'} query at {x:.6g}, adjacency {a}: "
          f"tilts {np.round(lams, 3).tolist()}, least at offset {LADDER[by][best]}, "
          f"others within {np.round(spread, 12).tolist()} relative; "
          f"fold.OFFSETS {'has' if min(kept) == got[best] else 'MISSES'} the least")


def _ledgers() -> None:
    """Each tilt of the ledgers' tilted products, read inside the program."""
    rows: list = []

    def spy(answer, log_mgf, x, by_delta, combine=jnp.min, tilts=None):
        lams = jax.vmap(
            lambda xi: fold.saddle_lambdas(log_mgf, xi, by_delta, LADDER[by_delta]))(x)
        xs = jnp.broadcast_to(x[:, None], lams.shape)
        got = jax.vmap(answer)(xs.ravel(), lams.ravel()).reshape(lams.shape)
        jax.debug.callback(
            lambda xv, lv, gv: rows.append((by_delta, xv, lv, gv)), x, lams, got)
        return combine(got, axis=1)

    least = tilted_compose.least_over_tilts
    tilted_compose.least_over_tilts = spy
    try:
        for title, ledger, delta in LEDGERS:
            rows.clear()
            acc = PLDAccountant()
            for event, count in ledger:
                acc.compose(event, count)
            print(f"{title} at delta {delta:g}: epsilon {float(acc.get_epsilon(delta))!r}")
            for by, xv, lv, gv in rows:
                for i, (lams, got) in enumerate(zip(np.asarray(lv), np.asarray(gv),
                                                    strict=True)):
                    _report(by, "-", float(np.asarray(xv)[i]), lams, got)
    finally:
        tilted_compose.least_over_tilts = least


def _tilts(call):
    """Every tilt's answer per (adjacency, entry) of one captured tilted query."""
    args, xs, more, static = call
    sizes, by = static["sizes"], static["by_delta"]
    fields = engine.composed_fields(
        *args, tail=jnp.float64(sizes.tail), noise_fn=static["noise_fn"],
        bin_width=static["bin_width"], sizes=sizes._replace(fft=0),
        subsampled=static["subsampled"],
    )
    plds = engine._pld_of_fields(fields)
    k = jnp.asarray(args[4], jnp.float64)
    rows = []
    for i, x in enumerate(np.asarray(xs, np.float64)):
        level = float(more[0][i]) if more else (float(np.log(x)) if by else -np.inf)
        for a in range(plds.pmf.shape[0]):
            pair = jax.tree.map(lambda v, a=a: v[a], plds)
            placed = fold.placed_pair(pair, k, jnp.float64(x), jnp.float64(level), by)
            lams = np.asarray(fold.saddle_lambdas(
                k * placed.log_mgf, jnp.float64(x), by, LADDER[by]))
            got = np.array([
                float(fold.query(fold.tilted_self_compose(placed, k, sizes.fft, lam),
                                 jnp.float64(x), by)) for lam in lams
            ])
            rows.append((by, a, x, lams, got))
    return rows


def main() -> None:
    calls: list = []
    run_padded = engine.run_padded

    def spy(kernel, args, xs, *more, **static):
        calls.append((args, xs, more, static))
        return run_padded(kernel, args, xs, *more, **static)

    engine.run_padded = spy
    for name, params, k, q, delta in SETTINGS:
        calls.clear()
        eps = dpjax.account(name, params, compositions=k, sampling_rate=q, delta=delta)
        print(f"{name} {params} K={k} q={q} delta={delta:g}: epsilon {float(eps)!r}, "
              f"{len(calls)} tilted queries")
        for call in list(calls):
            for row in _tilts(call):
                _report(*row)
    engine.run_padded = run_padded
    _ledgers()


if __name__ == "__main__":
    main()
