"""Argument parsing and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

import numpy as np


def float_list(text: str) -> list[float]:
    """``"0.5,1,2"`` -> ``[0.5, 1.0, 2.0]`` (argparse type)."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


def param(text: str) -> tuple[str, float]:
    """``"sigma=2.0"`` -> ``("sigma", 2.0)`` (argparse type)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"parameter {name!r}: {value!r} is not a number") from None


def add_sensitivity_args(p: argparse.ArgumentParser, *, dim: bool = True) -> None:
    g = p.add_argument_group("query sensitivity (give at least one; missing ones are bounded soundly)")
    if dim:
        g.add_argument("--dim", type=int, default=1, help="number of coordinates K (default 1)")
    g.add_argument("--l1", type=float, help="l1 sensitivity Delta_1")
    g.add_argument("--l2", type=float, help="l2 sensitivity Delta_2")
    g.add_argument("--linf", type=float, help="per-coordinate (l-infinity) sensitivity")


def add_use_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--compositions", type=int, default=1, help="number of uses T (default 1)")
    p.add_argument("--sampling-rate", type=float, help="Poisson subsampling rate q in (0, 1]")


def add_json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print exact JSON instead of a table")


def sensitivity_kwargs(args) -> dict:
    return {"dim": getattr(args, "dim", 1), "l1": args.l1, "l2": args.l2, "linf": args.linf}


def scalar_or_list(values: Sequence[float]):
    return values[0] if len(values) == 1 else np.asarray(values, dtype=np.float64)


def to_jsonable(x):
    """NumPy/JAX values -> JSON-ready Python (floats keep full precision via repr)."""
    if isinstance(x, dict):
        return {k: to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, (str, bool, int)) or x is None:
        return x
    arr = np.asarray(x)
    if arr.dtype.kind in "fc":
        arr = arr.astype(np.float64)
        return arr.tolist() if arr.ndim else float(arr)
    return arr.tolist()


def print_json(obj) -> None:
    # json.dumps writes floats with repr (shortest round-trip, full precision);
    # inf/nan are written as strings so the output stays valid JSON.
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
        if isinstance(v, dict):
            return {k: clean(w) for k, w in v.items()}
        if isinstance(v, list):
            return [clean(w) for w in v]
        return v

    json.dump(clean(to_jsonable(obj)), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def fmt(x) -> str:
    """A number for a table: 6 significant digits, or the repr of ints/strings."""
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
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    if title:
        print(title)
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
