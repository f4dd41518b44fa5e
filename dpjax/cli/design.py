"""``dpjax design``: compare every mechanism dpjax supports for one target (the main job).

The comparison is :func:`dpjax.design` (:mod:`dpjax.comparison`); this module parses the
arguments and formats its rows as a table or as JSON (:meth:`dpjax.comparison.Design.to_json`).
"""

from __future__ import annotations

import sys

import dpjax
from dpjax import _progress
from dpjax.cli import _common as c
from dpjax.cli import inid as _inid_cli
from dpjax.mechanisms import RELATIONS

DEFAULTS = {"epsilon": 0.3, "delta": 1e-6, "dim": 1, "linf": 1.0}


def add_parser(sub) -> None:
    """Register ``dpjax design`` (its options mirror :func:`dpjax.design`).

    Args:
      sub: the ``argparse`` subparsers of the ``dpjax`` command.
    """
    p = sub.add_parser(
        "design",
        help="compare all mechanisms for a target and name the best "
        f"(default: epsilon={DEFAULTS['epsilon']}, delta={DEFAULTS['delta']}, dim=1, linf=1)",
    )
    p.add_argument("--epsilon", type=float, default=DEFAULTS["epsilon"])
    p.add_argument("--delta", type=float, default=DEFAULTS["delta"])
    c.add_sensitivity_args(p)
    p.set_defaults(dim=None)  # 1, but --profile-kind needs it given (see run)
    c.add_use_args(p)
    p.add_argument(
        "--condition", choices=("auto", "exact", "sufficient"), default="auto",
        help="auto (default): exact in 1-D; in K dims a mechanism's sufficient condition "
        "where it has one (exact K-dim calibration runs the PLD engine and is slow)",
    )
    c.add_relation_arg(p, RELATIONS)
    _inid_cli.add_profile_args(p, required=False)  # i.n.i.d. options when a profile is given
    c.add_json_arg(p)
    p.set_defaults(func=run)


def _params(row) -> str:
    """``name=value, ...`` of an i.i.d. row; ``sigma_i in [lo, hi]`` of an i.n.i.d. one."""
    if not row.inid:
        return ", ".join(f"{k}={c.fmt(v)}" for k, v in row.params.items())
    scales = row.result.scales
    name = "sigma" if row.mechanism == "gaussian" else "b"
    return f"{name}_i in [{c.fmt(scales.min())}, {c.fmt(scales.max())}]"


def _member(row) -> str:
    """Which member of a shape family won (``"-"`` for a mechanism without a shape)."""
    member = None if row.inid else row.result.member
    return "-" if member is None else str(member)


def _design(args, **query) -> dpjax.comparison.Design:
    """:func:`dpjax.design` for the parsed target; on a terminal, then one line on stderr
    saying where the time went (one stage per mechanism)."""
    _progress.stages()  # a fresh list of stages
    d = dpjax.design(
        args.epsilon, args.delta, compositions=args.compositions,
        sampling_rate=args.sampling_rate, condition=args.condition, relation=args.relation,
        **query,
    )
    if _progress.enabled():
        print(_progress.summary("design"), file=sys.stderr)
    return d


def run(args) -> None:
    """Print :func:`dpjax.design` for the parsed target and query (table or ``--json``).

    Args:
      args: the parsed ``argparse`` namespace.

    Raises:
      ValueError: ``--dim K > 1`` without a sensitivity, or bad input.
      InfeasibleTargetError: no mechanism meets the target (an empty table is no answer).
    """
    if args.profile is not None or args.profile_file is not None or args.profile_kind is not None:
        return run_with_profile(args)
    if args.dim is None:
        args.dim = DEFAULTS["dim"]
    if args.l1 is None and args.l2 is None and args.linf is None and args.dim == 1:
        args.linf = DEFAULTS["linf"]  # in K > 1 dims a sensitivity must be given
    sens = c.sensitivity_kwargs(args)
    d = _design(args, **sens)
    if args.json:
        c.print_json(d.to_json())
        return
    goal = {r.mechanism: dpjax.comparison.objective(r.mechanism, args.compositions,
                                                    args.sampling_rate) for r in d.rows}
    rows = [
        [r.mechanism, _params(r), r.variance, r.mse, r.delta_at_params, r.condition, _member(r)]
        for r in d.rows
    ]
    title = (f"target epsilon={c.fmt(args.epsilon)}, delta={c.fmt(args.delta)}; "
             + c.query_text(c.query_fields(args, sens)) + c.relation_text(args.relation))
    c.print_table(
        ["mechanism", "params", "variance", "mse", "delta_at_params", "condition", "member"],
        rows,
        title=title,
    )
    print(f"({c.COLUMNS})")
    for s in d.skipped:
        print(c.skipped_line(s.mechanism, s.reason))
    for r in d.rows:
        print(f"objective ({r.mechanism}): {goal[r.mechanism]}")
    for r in d.rows:
        for line in c.note_lines(r.mechanism, r.notes):
            print(line)
    if d.rows:
        best, worst = d.rows[0], d.rows[-1]
        ratio = worst.mse / best.mse
        print(f"best: {best.mechanism} (mse {c.fmt(best.mse)}; {ratio:.3g}x below the worst)")


def run_with_profile(args) -> None:
    """A sensitivity profile: the mechanisms above with Delta_p = ||lambda||_p, plus i.n.i.d.

    The i.i.d. mechanisms get the sound bounds ``Delta_p <= ||lambda||_p``
    (Remark 1 of inid-noise-laplace-beats-gaussian); the i.n.i.d. Gaussian
    (eq. 9) and Laplace (eq. 12 / Corollary 6) designs use the profile itself.
    ``--profile-kind`` is normalised to unit l2 unless ``--norm`` says otherwise.

    Args:
      args: the parsed ``argparse`` namespace.
    """
    given = [f"--{n}" for n in ("l1", "l2", "linf") if getattr(args, n) is not None]
    if args.dim is not None and args.profile_kind is None:
        given.insert(0, "--dim")
    if given:  # the profile sets them: dim = its length, l_p = ||lambda||_p
        raise ValueError(f"give either a sensitivity profile or {'/'.join(given)}, not both "
                         "(the profile sets dim = its length and l_p = ||lambda||_p)")
    lam = _inid_cli.read_profile(args, "gaussian", args.dim if args.profile_kind else None)
    d = _design(args, profile=lam)
    if args.json:
        c.print_json(d.to_json())
        return
    rows = []
    for r in d.rows:
        if r.inid:
            cor6 = " Cor. 6" if r.mechanism == "laplace" and r.result.delta else ""
            name, condition = f"{r.mechanism} (i.n.i.d.){cor6}", r.condition.split(":")[0]
        else:
            name, condition = r.mechanism + " (i.i.d.)", r.condition
        rows.append([name, _params(r), r.mse, r.delta_at_params, condition])
    q = d.query
    c.print_table(["mechanism", "params", "mse", "delta_at_params", "condition"], rows,
                  title=f"target epsilon={c.fmt(args.epsilon)}, delta={c.fmt(args.delta)}; "
                  f"profile dim={q['dim']}, ||lambda||_1={c.fmt(q['l1'])}, "
                  f"||lambda||_2={c.fmt(q['l2'])}{c.relation_text(args.relation)}")
    print(f"({c.COLUMNS})")
    for s in d.skipped:
        print(c.skipped_line(s.mechanism, s.reason))
    print("note: i.i.d. rows use Delta_p = ||lambda||_p (an upper bound, Remark 1)")
    if args.relation == "replace_one" and d.inid:
        print(f"note: {dpjax.comparison.INID_REPLACE_ONE}")
    if rows:
        print(f"best: {rows[0][0]} (mse {c.fmt(rows[0][2])})")
