"""Argument parsing and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

import numpy as np


def float_list(text: str) -> list[float]:
    """Parse ``"0.5,1,2"`` into ``[0.5, 1.0, 2.0]`` (an argparse ``type``).

    Args:
      text: comma-separated numbers (spaces around them allowed).

    Returns:
      The numbers, at least one.

    Raises:
      argparse.ArgumentTypeError: an item is not a number or is empty (``"1,,2"``, a
        trailing comma), or there is none.

    Example:
      >>> float_list("0.5,1,2")
      [0.5, 1.0, 2.0]
    """
    items = [v.strip() for v in text.split(",")]
    if not any(items):
        raise argparse.ArgumentTypeError(f"expected at least one number, got {text!r}")
    if not all(items):
        raise argparse.ArgumentTypeError(
            f"empty item in the comma-separated list {text!r} (give one number between commas)"
        )
    try:
        return [float(v) for v in items]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None


def param(text: str) -> tuple[str, float]:
    """Parse ``"sigma=2.0"`` into ``("sigma", 2.0)`` (an argparse ``type``).

    Args:
      text: ``NAME=VALUE`` with a numeric value.

    Returns:
      ``(name, value)``.

    Raises:
      argparse.ArgumentTypeError: no ``=``, no name, or a value that is not a number.

    Example:
      >>> param("sigma=2")
      ('sigma', 2.0)
    """
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"parameter {name!r}: {value!r} is not a number") from None


def params_dict(pairs: Sequence[tuple[str, float]]) -> dict[str, float]:
    """The ``--param NAME=VALUE`` pairs as a dict; a name given twice is an error.

    Args:
      pairs: the parsed :func:`param` pairs, in the order given.

    Returns:
      ``{name: value}``.

    Raises:
      ValueError: a parameter is given more than once.

    Example:
      >>> params_dict([("alpha", 0.5), ("gamma", 2.0)])
      {'alpha': 0.5, 'gamma': 2.0}
    """
    out: dict[str, float] = {}
    for name, value in pairs:
        if name in out:
            raise ValueError(f"--param {name} is given twice ({fmt(out[name])} and {fmt(value)})")
        out[name] = value
    return out


def add_sensitivity_args(p: argparse.ArgumentParser, *, dim: bool = True) -> None:
    """Add ``--dim``, ``--l1``, ``--l2``, ``--linf`` (the query's sensitivities) to a parser.

    Missing sensitivities are later bounded soundly from the given ones
    (:meth:`dpjax.sensitivity.Sensitivity.resolve`, eq. (5) of flipped-huber-mechanism).

    Args:
      p: the subcommand's parser.
      dim: whether to add ``--dim`` too.
    """
    g = p.add_argument_group(
        "query sensitivity (every subcommand: none given in one dimension means 1, the "
        "parameters are then noise multipliers; with --dim > 1 give at least one; missing "
        "ones are bounded soundly from the given ones)"
    )
    if dim:
        g.add_argument("--dim", type=int, default=1, help="number of coordinates K (default 1)")
    g.add_argument("--l1", type=float, help="l1 sensitivity Delta_1")
    g.add_argument("--l2", type=float, help="l2 sensitivity Delta_2")
    g.add_argument("--linf", type=float, help="per-coordinate (l-infinity) sensitivity")


def add_use_args(p: argparse.ArgumentParser) -> None:
    """Add ``--compositions`` (``T``) and ``--sampling-rate`` (``q``) to a parser.

    Args:
      p: the subcommand's parser.
    """
    p.add_argument("--compositions", type=int, default=1, help="number of uses T (default 1)")
    p.add_argument("--sampling-rate", type=float, help="Poisson subsampling rate q in (0, 1]")


def add_relation_arg(p: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    """Add ``--relation`` (the neighbouring relation, default ``add_remove``) to a parser.

    Args:
      p: the subcommand's parser.
      choices: the relations it takes (:data:`dpjax.mechanisms.RELATIONS`; passed in, so
        that this module imports no mechanism).
    """
    p.add_argument(
        "--relation", choices=tuple(choices), default="add_remove",
        help="neighbouring relation (default add_remove: the worse of adding and removing a "
        "record; replace_one without subsampling: twice the sensitivity)",
    )


def add_json_arg(p: argparse.ArgumentParser) -> None:
    """Add ``--json`` (exact JSON instead of a table) to a parser.

    Args:
      p: the subcommand's parser.
    """
    p.add_argument("--json", action="store_true", help="print exact JSON instead of a table")


def sensitivity_kwargs(args) -> dict:
    """The sensitivity keyword arguments of the façade from parsed arguments.

    Args:
      args: the parsed ``argparse.Namespace``.

    The same default in every subcommand: in one dimension, no sensitivity given means
    sensitivity 1 (the parameters are then noise multipliers); with ``dim > 1`` one must
    be given.

    Returns:
      ``{"dim": ..., "l1": ..., "l2": ..., "linf": ...}`` (``dim = 1`` when absent).

    Raises:
      ValueError: ``dim > 1`` and no sensitivity given.
    """
    dim = getattr(args, "dim", 1)
    if args.l1 is None and args.l2 is None and args.linf is None:
        if dim != 1:
            raise ValueError(f"--dim {dim}: give a sensitivity (--l1, --l2 or --linf)")
        return {"dim": 1, "l1": 1.0, "l2": 1.0, "linf": 1.0}
    return {"dim": dim, "l1": args.l1, "l2": args.l2, "linf": args.linf}


def scalar_or_list(values: Sequence[float]):
    """One value as a float, several as a float64 array (a vectorised call).

    Args:
      values: the parsed numbers.

    Returns:
      ``values[0]`` or ``np.asarray(values)``.
    """
    return values[0] if len(values) == 1 else np.asarray(values, dtype=np.float64)


def _plain_scalars(values) -> bool:
    """Whether every entry of the list ``values`` is a Python ``float``, ``int``, ``str``,
    ``bool`` or ``None`` (one C-level pass over their types)."""
    return set(map(type, values)) <= {float, int, str, bool, type(None)}


def to_jsonable(x):
    """NumPy/JAX values -> JSON-ready Python (floats keep full precision via repr).

    Args:
      x: a value, dict, list or tuple (nested).

    Returns:
      The same structure with arrays as (nested) lists and floating scalars as ``float``.

    Example:
      >>> import numpy as np
      >>> to_jsonable({"delta": np.array([1e-6, 0.5]), "dim": 3})
      {'delta': [1e-06, 0.5], 'dim': 3}
    """
    if isinstance(x, dict):
        return {k: to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if _plain_scalars(x):
            return list(x)  # already JSON-ready: no call per entry
        return [to_jsonable(v) for v in x]
    if isinstance(x, (str, bool, int)) or x is None:
        return x
    arr = np.asarray(x)
    if arr.dtype.kind in "fc":
        arr = arr.astype(np.float64)
        return arr.tolist() if arr.ndim else float(arr)
    return arr.tolist()


def _non_finite_as_string(v):
    """``v`` with every non-finite float replaced by ``"inf"``, ``"-inf"`` or ``"nan"``."""
    if isinstance(v, float):
        return v if math.isfinite(v) else ("inf" if v > 0 else ("-inf" if v < 0 else "nan"))
    if isinstance(v, dict):
        return {k: _non_finite_as_string(w) for k, w in v.items()}
    if isinstance(v, list):
        if set(map(type, v)) <= {float, int} and all(map(math.isfinite, v)):
            return v  # the common case, a finite numeric array: no call per entry
        return [_non_finite_as_string(w) for w in v]
    return v


def _encode(v, depth: int) -> str:
    """JSON of ``v``: objects and lists of objects indented by two spaces a level, a list of
    scalars on one line (:func:`json.dumps`'s C encoder: an array of ``10^6`` entries in a
    fraction of a second, where the indenting encoder writes it a line per entry)."""
    pad, inner = "\n" + "  " * depth, "\n" + "  " * (depth + 1)
    if isinstance(v, dict) and v:
        items = (f"{inner}{json.dumps(str(k))}: {_encode(w, depth + 1)}" for k, w in v.items())
        return "{" + ",".join(items) + pad + "}"
    if isinstance(v, list) and not _plain_scalars(v):
        return "[" + ",".join(inner + _encode(w, depth + 1) for w in v) + pad + "]"
    return json.dumps(v, allow_nan=False)


def print_json(obj) -> None:
    """Print ``obj`` as indented JSON on stdout (keys in order, floats at full precision).

    Floats are written with ``repr`` (the shortest string that reads back the same float64);
    non-finite floats as the strings ``"inf"``, ``"-inf"``, ``"nan"``, so that the output
    stays valid JSON.  A list of numbers or strings is written on one line.

    Args:
      obj: anything :func:`to_jsonable` takes.

    Example:
      >>> print_json({"epsilon": float("inf"), "delta": [1e-06, 0.5], "rows": [{"k": 1}]})
      {
        "epsilon": "inf",
        "delta": [1e-06, 0.5],
        "rows": [
          {
            "k": 1
          }
        ]
      }
    """
    sys.stdout.write(_encode(_non_finite_as_string(to_jsonable(obj)), 0) + "\n")


def fmt(x) -> str:
    """A number for a table: 6 significant digits, or the repr of ints/strings.

    Args:
      x: a number, an array (joined with ``", "``) or a string (returned as is).

    Returns:
      The formatted text (``0`` and non-finite values by ``repr``).

    Example:
      >>> fmt(168.80186), fmt([0.5, 2.0]), fmt(float("inf"))
      ('168.802', '0.5, 2', 'inf')
    """
    if isinstance(x, str):
        return x
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim:
        return ", ".join(fmt(v) for v in arr.ravel())
    v = float(arr)
    if v == 0 or not math.isfinite(v):
        return repr(v)
    return f"{v:.6g}"


def print_table(headers: Sequence[str], rows: Sequence[Sequence], title: str | None = None) -> None:
    """Print rows as a left-aligned text table (the subcommands' default output).

    Args:
      headers: the column names.
      rows: the rows, each a sequence of cells (formatted with :func:`fmt`).
      title: an optional line printed above the table.

    Example:
      >>> print_table(["epsilon", "delta"], [[0.5, 1e-6]])
      epsilon  delta
      -------  -----
      0.5      1e-06
    """
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
        for i, h in enumerate(headers)
    ]
    if title:
        print(title)
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


#: what the columns every subcommand prints mean (one vocabulary for tables and JSON)
COLUMNS = (
    "variance: per coordinate; mse: total over the dim coordinates; delta_at_params: the "
    "certified delta of the returned parameters at the target epsilon; condition: exact = "
    "the mechanism's necessary and sufficient profile, sufficient = a sufficient bound"
)


def params_text(params: dict) -> str:
    """Parameters as ``name=value, ...`` (never a Python dict repr).

    Args:
      params: parameter name -> number or array.

    Returns:
      The text.

    Example:
      >>> params_text({"alpha": 0.5, "gamma": 2.0})
      'alpha=0.5, gamma=2'
    """
    return ", ".join(f"{k}={fmt(v)}" for k, v in params.items())


def query_fields(args, sens: dict | None = None) -> dict:
    """The query of a subcommand, in the JSON vocabulary: ``dim``, ``l1``, ``l2``, ``linf``,
    ``compositions``, ``sampling_rate``.

    Args:
      args: the parsed arguments.
      sens: the sensitivities used (default :func:`sensitivity_kwargs` of ``args``).

    Returns:
      The dict (``None`` for what was not given).
    """
    sens = sensitivity_kwargs(args) if sens is None else sens
    return {
        "dim": sens.get("dim", 1),
        "l1": sens.get("l1"),
        "l2": sens.get("l2"),
        "linf": sens.get("linf"),
        "compositions": getattr(args, "compositions", 1),
        "sampling_rate": getattr(args, "sampling_rate", None),
    }


def query_text(query: dict) -> str:
    """The given parts of a query as ``dim=20, linf=1, compositions=1`` (no ``None``).

    Args:
      query: :func:`query_fields`' dict.

    Returns:
      The text.

    Example:
      >>> query_text({"dim": 1, "l1": None, "l2": 1.0, "compositions": 1})
      'dim=1, l2=1, compositions=1'
    """
    return ", ".join(f"{k}={fmt(v)}" for k, v in query.items() if v is not None)


def relation_text(relation: str) -> str:
    """``"; relation=R"`` for a title, or nothing for the default ``add_remove``.

    Args:
      relation: the neighbouring relation.

    Example:
      >>> relation_text("replace_one"), relation_text("add_remove")
      ('; relation=replace_one', '')
    """
    return "" if relation == "add_remove" else f"; relation={relation}"


def note_lines(mechanism: str, notes) -> list[str]:
    """Notes as printed lines, each naming its mechanism; a leading ``"<mechanism>: "`` in
    the note itself is not repeated.

    Args:
      mechanism: the mechanism the notes belong to.
      notes: the note texts.

    Returns:
      ``["note (gaussian): ...", ...]``.
    """
    prefix = f"{mechanism}: "
    return [f"note ({mechanism}): {n[len(prefix):] if n.startswith(prefix) else n}"
            for n in notes]


def skipped_line(mechanism: str, reason: str) -> str:
    """``skipped osgt: <reason>`` without repeating the mechanism's name.

    Args:
      mechanism: the skipped mechanism.
      reason: why.

    Returns:
      The line.
    """
    prefix = f"{mechanism}: "
    return f"skipped {mechanism}: {reason[len(prefix):] if reason.startswith(prefix) else reason}"
