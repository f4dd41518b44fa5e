"""``dpjax inid``: certified per-coordinate (i.n.i.d.) Gaussian or Laplace noise for a profile."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dpjax.cli import _common as c

#: rows of the per-coordinate table printed in full (longer profiles are abbreviated)
MAX_ROWS = 40


def add_profile_args(p, *, required: bool) -> None:
    """Add ``--profile`` / ``--profile-file`` / ``--profile-kind`` and ``--norm`` to a parser.

    The profile is the per-coordinate sensitivity vector of Definition 4 of
    inid-noise-laplace-beats-gaussian; ``--profile-kind`` picks a family of its Sec. V.

    Args:
      p: the subcommand's parser.
      required: whether one of the three sources must be given.
    """
    # deferred: dpjax.inid (imports JAX; the CLI parser stays JAX-free)
    from dpjax.inid import KINDS

    g = p.add_argument_group("sensitivity profile lambda (per-coordinate sensitivities)")
    src = g.add_mutually_exclusive_group(required=required)
    src.add_argument("--profile", type=c.float_list, help="comma-separated lambda_1,...,lambda_K")
    src.add_argument("--profile-file", type=Path,
                     help="file with the profile (numbers separated by commas/whitespace, "
                     "a JSON list, or a .npy array)")
    src.add_argument("--profile-kind", choices=KINDS,
                     help="a family of Sec. V (needs --dim); normalised by --norm")
    g.add_argument("--exponent", type=float,
                   help="a of --profile-kind power: lambda_i = i^a (1: linear, 2: quadratic, "
                   "< 0: a decaying power law)")
    g.add_argument("--norm", choices=("l1", "l2", "none"),
                   help="normalise the profile (default for --profile-kind: l2 for gaussian, "
                   "l1 for laplace, as in Sec. V; default otherwise: none)")


def read_profile(args, mechanism: str, dim: int | None) -> np.ndarray:
    """The sensitivity profile the arguments describe, validated and normalised.

    Args:
      args: the parsed arguments (``profile``, ``profile_file`` or ``profile_kind``, ``norm``,
        ``exponent`` of the power family).
      mechanism: ``"gaussian"`` or ``"laplace"``: the default norm of a profile family
        (unit l2 for Gaussian, unit l1 for Laplace, as in Sec. V).
      dim: ``K`` for ``--profile-kind`` (``None`` otherwise).

    Returns:
      The profile ``lambda`` as a float64 array.

    Raises:
      ValueError: a missing ``--dim`` (or one given without ``--profile-kind``), an
        ``--exponent`` without ``--profile-kind power`` (or that kind without it), an
        unreadable file or an invalid profile.
    """
    # deferred: dpjax.inid (imports JAX; the CLI parser stays JAX-free)
    from dpjax.inid import make_profile, normalize, validate_profile

    norm = getattr(args, "norm", None)
    if args.profile_kind is None and dim is not None:
        raise ValueError(f"--dim {dim} goes with --profile-kind only (a given profile's "
                         "length is its dimension)")
    exponent = getattr(args, "exponent", None)
    if (args.profile_kind == "power") != (exponent is not None):
        raise ValueError("--exponent goes with --profile-kind power only, and power needs it "
                         "(lambda_i = i^exponent)")
    if args.profile_kind is not None:
        if dim is None:
            raise ValueError("--profile-kind needs --dim K")
        lam = make_profile(args.profile_kind, dim, None, exponent=exponent)
        norm = norm or ("l2" if mechanism == "gaussian" else "l1")
    elif args.profile is not None:
        lam = validate_profile(args.profile)
    else:
        lam = _read_file(args.profile_file)
    if norm and norm != "none":
        lam = normalize(lam, norm)
    return validate_profile(lam)


def _read_file(path: Path) -> np.ndarray:
    # deferred: dpjax.inid (imports JAX; the CLI parser stays JAX-free)
    from dpjax.inid import validate_profile

    if not path.is_file():
        raise ValueError(f"profile file {str(path)!r} does not exist")
    if path.suffix == ".npy":
        try:
            values = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            raise ValueError(f"profile file {str(path)!r} is not a NumPy .npy array") from None
        return validate_profile(values, name=f"profile in {path}")
    try:
        text = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read profile file {str(path)!r}: {err}") from None
    if text.startswith("["):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"profile file {str(path)!r} is not a valid JSON list: {err}"
            ) from None
        return validate_profile(values, name=f"profile in {path}")
    try:
        values = [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise ValueError(f"profile file {str(path)!r}: expected numbers") from None
    return validate_profile(values, name=f"profile in {path}")


def add_parser(sub) -> None:
    """Add ``dpjax inid --mechanism gaussian|laplace --epsilon E [--delta D] PROFILE ...``.

    Args:
      sub: the ``dpjax`` parser's subparsers.
    """
    p = sub.add_parser(
        "inid",
        help="optimal per-coordinate Gaussian/Laplace noise for a sensitivity profile "
        "(inid-noise-laplace-beats-gaussian)",
    )
    p.add_argument("--mechanism", choices=("gaussian", "laplace"), required=True)
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--delta", type=float, default=None,
                   help="delta (gaussian: required, > 0; laplace: default 0 = pure DP, "
                   "> 0 uses Corollary 6)")
    add_profile_args(p, required=True)
    p.add_argument("--dim", type=int, help="K for --profile-kind")
    p.add_argument("--error-power", type=float, default=2.0,
                   help="p of the l_p^p error sum w_i E|T_i|^p (default 2: MSE)")
    p.add_argument("--weights", type=c.float_list, help="error weights w_1,...,w_K (> 0)")
    p.add_argument("--solver", choices=("closed-form", "jax", "cvxpy"), default="closed-form",
                   help="closed form (default) or the convex programme via solvers/")
    c.add_json_arg(p)
    p.set_defaults(func=run)


def run(args) -> None:
    """Print the optimal i.n.i.d. scales for the profile beside the i.i.d. and SPR designs.

    Calls :func:`dpjax.inid.design` (Theorems 4, 5 and Corollary 6 of
    inid-noise-laplace-beats-gaussian) and prints the per-coordinate table and the error
    comparison, or JSON.

    Args:
      args: the parsed arguments.

    Raises:
      ValueError: Gaussian without ``--delta``.
    """
    # deferred: dpjax.inid (imports JAX; the CLI parser stays JAX-free)
    from dpjax.inid import design

    if args.mechanism == "gaussian" and args.delta is None:
        raise ValueError("--mechanism gaussian needs --delta D (> 0)")
    delta = 0.0 if args.delta is None else args.delta
    lam = read_profile(args, args.mechanism, args.dim)
    d = design(args.mechanism, lam, args.epsilon, delta, error_power=args.error_power,
               weights=args.weights, solver=args.solver)
    if args.json:
        c.print_json(d.to_json())
        return
    scale = "sigma_i" if d.mechanism == "gaussian" else "b_i"
    share = "eta_i" if d.mechanism == "gaussian" else "eps_i"
    idx = np.arange(d.profile.size)
    if idx.size > MAX_ROWS:
        idx = np.concatenate([idx[: MAX_ROWS // 2], idx[-MAX_ROWS // 2:]])
    rows = [[int(i) + 1, d.profile[i], d.scales[i], d.spr_scales[i], d.allocation[i]] for i in idx]
    c.print_table(["i", "lambda_i", scale, f"SPR {scale}", share], rows,
                  title=f"i.n.i.d. {d.mechanism}: epsilon={d.epsilon!r}, delta={d.delta!r}, "
                  f"K={d.profile.size}, error = sum w_i E|T_i|^{c.fmt(d.error_power)}")
    if d.profile.size > MAX_ROWS:
        print(f"({d.profile.size - MAX_ROWS} middle coordinates not shown; use --json)")
    print()
    with np.errstate(divide="ignore", invalid="ignore"):  # errors beyond float64: inf/nan dB
        spr_db = 10 * np.log10(np.float64(d.error_spr) / d.error)
    c.print_table(
        ["design", "error", "vs i.n.i.d. (dB)"],
        [["i.n.i.d. (optimal)", d.error, 0.0],
         [f"i.i.d. ({'sigma' if d.mechanism == 'gaussian' else 'b'}={c.fmt(d.iid_scale)})",
          d.error_iid, d.reduction_db],
         ["SPR (Definition 5)", d.error_spr, spr_db]],
    )
    print(f"certified delta at the scales: {c.fmt(d.delta_at_params)} ({d.condition})")
    for note in d.notes:
        print(f"note: {note}")
