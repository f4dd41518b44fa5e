"""``dpjax design``: compare every mechanism dpjax supports for one target (the main job)."""

from __future__ import annotations

import numpy as np

import dpjax
from dpjax.cli import _common as c
from dpjax.errors import InfeasibleTargetError
from dpjax.mechanisms import names

DEFAULTS = {"epsilon": 0.3, "delta": 1e-6, "dim": 1, "linf": 1.0}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "design",
        help="compare all mechanisms for a target and name the best "
        f"(default: epsilon={DEFAULTS['epsilon']}, delta={DEFAULTS['delta']}, dim=1, linf=1)",
    )
    p.add_argument("--epsilon", type=float, default=DEFAULTS["epsilon"])
    p.add_argument("--delta", type=float, default=DEFAULTS["delta"])
    c.add_sensitivity_args(p)
    c.add_use_args(p)
    c.add_json_arg(p)
    p.set_defaults(func=run)


def compare(epsilon, delta, **query) -> tuple[list, list]:
    """Calibrate every registered mechanism; returns (results, skipped reasons)."""
    results, skipped = [], []
    for name in names():
        mech = dpjax.mechanisms.get(name)
        conditions = [cond for cond in ("exact", "sufficient") if cond in mech.conditions]
        for cond in conditions[:1]:
            try:
                results.append(dpjax.calibrate(name, epsilon, delta, condition=cond, **query))
            except (NotImplementedError, InfeasibleTargetError) as err:
                skipped.append((name, str(err)))
    results.sort(key=lambda r: float(r.mse))
    return results, skipped


def run(args) -> None:
    sens = c.sensitivity_kwargs(args)
    if sens["l1"] is None and sens["l2"] is None and sens["linf"] is None:
        sens["linf"] = DEFAULTS["linf"]
    query = dict(sens, compositions=args.compositions, sampling_rate=args.sampling_rate)
    results, skipped = compare(args.epsilon, args.delta, **query)
    if args.json:
        c.print_json(
            {
                "epsilon": args.epsilon,
                "delta": args.delta,
                "query": query,
                "best": results[0].mechanism if results else None,
                "results": [r.to_json() for r in results],
                "skipped": [{"mechanism": n, "reason": why} for n, why in skipped],
            }
        )
        return
    rows = [
        [
            r.mechanism,
            ", ".join(f"{k}={c.fmt(v)}" for k, v in r.params.items()),
            r.variance,
            r.mse,
            r.delta_at_params,
            r.condition,
        ]
        for r in results
    ]
    title = (
        f"target epsilon={args.epsilon!r}, delta={args.delta!r}; dim={sens['dim']}, "
        f"l1={sens['l1']}, l2={sens['l2']}, linf={sens['linf']}, compositions={args.compositions}"
        + (f", sampling_rate={args.sampling_rate}" if args.sampling_rate else "")
    )
    c.print_table(
        ["mechanism", "parameters", "variance/coord", "total MSE", "certified delta", "condition"],
        rows,
        title=title,
    )
    for name, why in skipped:
        print(f"skipped {name}: {why}")
    notes = sorted({n for r in results for n in r.notes})
    for note in notes:
        print(f"note: {note}")
    if results:
        best = results[0]
        ratio = float(np.asarray(results[-1].mse) / np.asarray(best.mse))
        print(f"best: {best.mechanism} (total MSE {c.fmt(best.mse)}; {ratio:.3g}x below the worst)")
