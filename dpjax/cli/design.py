"""``dpjax design``: compare every mechanism dpjax supports for one target (the main job)."""

from __future__ import annotations

import dataclasses

import numpy as np

import dpjax
from dpjax.cli import _common as c
from dpjax.cli import inid as _inid_cli
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
    p.add_argument(
        "--condition", choices=("auto", "exact", "sufficient"), default="auto",
        help="auto (default): exact in 1-D; in K dims a mechanism's sufficient condition "
        "where it has one (exact K-dim calibration runs the PLD engine and is slow)",
    )
    _inid_cli.add_profile_args(p, required=False)  # i.n.i.d. options when a profile is given
    c.add_json_arg(p)
    p.set_defaults(func=run)


def _conditions(mech, preference: str, dim: int) -> list[str]:
    """Conditions to try, in order.  ``auto``: exact in one dimension; in K
    dimensions the closed-form sufficient condition first where a mechanism has
    one (its exact K-dim calibration runs the PLD engine: minutes on a CPU)."""
    order = {"exact": ("exact",), "sufficient": ("sufficient", "exact")}.get(
        preference, ("exact", "sufficient") if dim == 1 else ("sufficient", "exact")
    )
    return [cond for cond in order if cond in mech.conditions]


def compare(epsilon, delta, condition: str = "auto", **query) -> tuple[list, list]:
    """Calibrate every registered mechanism; returns (results, skipped reasons)."""
    results, skipped = [], []
    for name in names():
        mech = dpjax.mechanisms.get(name)
        errors = []
        for cond in _conditions(mech, condition, query.get("dim", 1)):
            try:
                results.append(dpjax.calibrate(name, epsilon, delta, condition=cond, **query))
                break
            except (NotImplementedError, InfeasibleTargetError) as err:
                errors.append(str(err))
        else:
            skipped.append((name, "; ".join(errors) or "condition not supported"))
    if query.get("dim", 1) >= 2:  # in one dimension the spherical family is the cactus
        try:
            results.append(_spherical(epsilon, delta, query))
        except (NotImplementedError, InfeasibleTargetError) as err:
            skipped.append(("spherical", str(err)))
    results.sort(key=lambda r: float(r.mse))
    return results, skipped


def _spherical(epsilon, delta, query: dict):
    """The KL-optimal spherical mechanism at the query's l2 sensitivity, least certified
    budget (:mod:`dpjax.spherical.calibrate`; ~15 s on 2 CPU cores)."""
    from dpjax.sensitivity import Sensitivity
    from dpjax.spherical.calibrate import calibrate_spherical

    if query.get("compositions", 1) != 1 or query.get("sampling_rate") is not None:
        raise NotImplementedError(
            "spherical: design compares single releases; account compositions and "
            "subsampling of a designed mechanism with `dpjax spherical account`"
        )
    sens = Sensitivity(**{k: query.get(k) for k in ("dim", "l1", "l2", "linf")})
    l2, notes = sens.resolve("l2")
    cal = calibrate_spherical(float(epsilon), float(delta), int(query["dim"]), l2)
    return dataclasses.replace(cal, notes=cal.notes + tuple(notes))


def run(args) -> None:
    if args.profile is not None or args.profile_file is not None or args.profile_kind is not None:
        return run_with_profile(args)
    sens = c.sensitivity_kwargs(args)
    if sens["l1"] is None and sens["l2"] is None and sens["linf"] is None:
        sens["linf"] = DEFAULTS["linf"]
    query = dict(sens, compositions=args.compositions, sampling_rate=args.sampling_rate)
    results, skipped = compare(args.epsilon, args.delta, condition=args.condition, **query)
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


def run_with_profile(args) -> None:
    """A sensitivity profile: the mechanisms above with Delta_p = ||lambda||_p, plus i.n.i.d.

    The i.i.d. mechanisms get the sound bounds ``Delta_p <= ||lambda||_p``
    (Remark 1 of inid-noise-laplace-beats-gaussian); the i.n.i.d. Gaussian
    (eq. 9) and Laplace (eq. 12 / Corollary 6) designs use the profile itself.
    ``--profile-kind`` is normalised to unit l2 unless ``--norm`` says otherwise.
    """
    from dpjax.inid import gaussian_design, laplace_design

    lam = _inid_cli.read_profile(args, "gaussian", args.dim if args.profile_kind else None)
    sens = {"dim": int(lam.size), "l1": float(np.sum(lam)),
            "l2": float(np.sqrt(np.sum(lam * lam))), "linf": float(np.max(lam))}
    query = dict(sens, compositions=args.compositions, sampling_rate=args.sampling_rate)
    results, skipped = compare(args.epsilon, args.delta, condition=args.condition, **query)
    inid = []
    if args.compositions == 1 and args.sampling_rate is None:
        if args.delta > 0:
            inid.append(gaussian_design(lam, args.epsilon, args.delta))
        inid.append(laplace_design(lam, args.epsilon, 0.0))
        if args.delta > 0:
            inid.append(laplace_design(lam, args.epsilon, args.delta))
    else:
        why = "single release only (compose via the resource view, Sec. IV-B)"
        skipped.append(("i.n.i.d.", why))
    if args.json:
        c.print_json(
            {
                "epsilon": args.epsilon,
                "delta": args.delta,
                "query": query,
                "profile": lam.tolist(),
                "results": [r.to_json() for r in results],
                "inid": [d.to_json() for d in inid],
                "skipped": [{"mechanism": n, "reason": why} for n, why in skipped],
            }
        )
        return
    rows = [[r.mechanism + " (i.i.d.)", ", ".join(f"{k}={c.fmt(v)}" for k, v in r.params.items()),
             r.mse, r.delta_at_params, r.condition] for r in results]
    for d in inid:
        cor6 = " Cor. 6" if d.mechanism == "laplace" and d.delta else ""
        name = f"{d.mechanism} (i.n.i.d.){cor6}"
        scales = "sigma" if d.mechanism == "gaussian" else "b"
        rows.append([name, f"{scales}_i in [{c.fmt(d.scales.min())}, {c.fmt(d.scales.max())}]",
                     d.mse, d.delta_at_params, d.condition.split(":")[0]])
    rows.sort(key=lambda r: float(r[2]))
    c.print_table(["mechanism", "parameters", "total MSE", "certified delta", "condition"], rows,
                  title=f"target epsilon={args.epsilon!r}, delta={args.delta!r}; profile K="
                  f"{lam.size}, ||lambda||_1={c.fmt(sens['l1'])}, ||lambda||_2={c.fmt(sens['l2'])}")
    for name, why in skipped:
        print(f"skipped {name}: {why}")
    print("note: i.i.d. rows use Delta_p = ||lambda||_p (an upper bound, Remark 1)")
    if rows:
        print(f"best: {rows[0][0]} (total MSE {c.fmt(rows[0][2])})")
