r"""Which member of a two-parameter family a shape search returned.

A shape search minimises the variance over a shape ``s`` of a family whose ends are
themselves mechanisms (flipped Huber: ``b = alpha / gamma = 0`` is Gaussian, ``b -> inf``
Laplace; OSGT: ``k -> 0`` Gaussian, ``k -> inf`` Laplace; truncated Laplace:
``c -> inf`` Laplace).  :func:`name_member` says which one won, so a user reading the
result knows whether the family's interior helped at all.
"""

from __future__ import annotations

import numpy as np

#: Name of a shape strictly inside the searched range.
INTERIOR = "interior"


def name_member(
    shape, lower: float, upper: float, lower_name: str, upper_name: str, rtol: float = 0.35
) -> np.ndarray:
    r"""Name the family member of each returned shape (a NumPy array of strings).

    .. math:: \text{member}(s) = \begin{cases} \text{lower\_name} & s \le \ell (1 + r) \\
              \text{upper\_name} & s \ge u / (1 + r) \\ \text{interior} & \text{else}
              \end{cases}

    (``r = rtol``: a shape within one grid step of an end of the searched range is that
    end's member; the ends are chosen so that the variance there is within the search's
    resolution of the limit member's closed form.)

    Args:
      shape: returned shapes (array).
      lower: least shape searched (``0`` allowed: then only ``s == 0`` is the lower member).
      upper: largest shape searched.
      lower_name: name of the lower limit member (e.g. ``"gaussian"``).
      upper_name: name of the upper limit member (e.g. ``"laplace"``).
      rtol: relative width of the ends.

    Returns:
      Array of member names, shaped like ``shape``.

    Example:
      >>> name_member([0.0, 3.0, 1e9], 0.0, 1e9, "gaussian", "laplace").tolist()
      ['gaussian', 'interior', 'laplace']
    """
    s = np.asarray(shape, dtype=float)
    out = np.full(s.shape, INTERIOR, dtype=object)
    out[s <= lower * (1.0 + rtol)] = lower_name
    out[s >= upper / (1.0 + rtol)] = upper_name
    return out.astype(str)
