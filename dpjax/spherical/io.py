"""Save and load a designed spherical mechanism (``.npz``; spherical-kl-optimal-mechanisms).

A :class:`~dpjax.spherical.mechanism.SphericalMechanism` is data: the dimension ``m``,
shells per unit radius ``n``, last free shell ``N``, tail ratio ``r``, the log density
``log p`` on the free shells (Definition 2, eqs. 17-18), the banded log cell volumes
``log(A_m gamma_ij)`` (eq. 23) and log shell volumes its exact PLD uses, its budget
and its KL.  The file stores exactly these arrays (NumPy ``.npz``, no pickled
objects), so a loaded mechanism samples and accounts bit for bit as the saved one.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numpy as np

from dpjax.spherical.mechanism import SphericalMechanism

#: The arrays a mechanism file holds, in the order of :class:`SphericalMechanism`.
FIELDS = SphericalMechanism._fields


def save(mechanism: SphericalMechanism, path: str | PathLike) -> Path:
    """Write ``mechanism`` to ``path`` (``.npz``; NumPy appends the suffix if missing).

    Args:
      mechanism: a designed :class:`SphericalMechanism`.
      path: the file to write.

    Returns:
      The path written.

    Example:
      >>> import tempfile, numpy as np
      >>> mech = SphericalMechanism(2, 1, 2, 0.5, np.zeros(3), np.zeros((4, 3)), np.zeros(4),
      ...                           1.0, 0.1)
      >>> with tempfile.TemporaryDirectory() as tmp:
      ...     back = load(save(mech, f"{tmp}/mech.npz"))
      >>> back.m, back.N, float(back.r)
      (2, 2, 0.5)
    """
    path = Path(path)
    np.savez(path, **{name: getattr(mechanism, name) for name in FIELDS})
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def load(path: str | PathLike) -> SphericalMechanism:
    """Read a mechanism written by :func:`save` (or by ``dpjax spherical design --out``).

    Args:
      path: the ``.npz`` file.

    Returns:
      The :class:`SphericalMechanism`.

    Raises:
      ValueError: the file does not exist, or lacks one of the arrays (named).
    """
    if not Path(path).is_file():
        raise ValueError(f"mechanism file {str(path)!r} does not exist")
    with np.load(path, allow_pickle=False) as z:
        # ``first`` (the first row with stored cells) is 0 in files written before it existed
        missing = [name for name in FIELDS if name not in z.files and name != "first"]
        if missing:
            raise ValueError(
                f"mechanism file {str(path)!r} lacks {', '.join(missing)}: not a spherical "
                "mechanism saved by dpjax"
            )
        return SphericalMechanism(
            int(z["m"]), int(z["n"]), int(z["N"]), float(z["r"]), z["log_p"], z["log_w"],
            z["log_v"], float(z["budget"]), float(z["kl"]),
            int(z["first"]) if "first" in z.files else 0,
        )


__all__ = ["FIELDS", "load", "save"]
