r"""Query sensitivities and the sound ways to derive a missing one.

A query of dimension ``K = dim`` may state any of ``l1 = Delta_1``,
``l2 = Delta_2``, ``linf = Delta_inf`` (the largest per-coordinate change).
For any vector ``x`` in R^K (eq. (5) of flipped-huber-mechanism)

.. math:: \|x\|_\infty \le \|x\|_2 \le \|x\|_1,\qquad
          \|x\|_2 \le \sqrt{K}\,\|x\|_\infty,\qquad
          \|x\|_1 \le \sqrt{K}\,\|x\|_2 \le K \|x\|_\infty,

so a missing sensitivity is replaced by the smallest of the upper bounds the
given ones imply.  Each derivation is recorded in ``notes`` so the output can
say what was assumed.  Given values that contradict these inequalities
(e.g. ``l2 > l1``) are rejected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dpjax import _validate
from dpjax._validate import shown

NORMS = ("l1", "l2", "linf")


@dataclass(frozen=True)
class Sensitivity:
    """Stated sensitivities of a ``dim``-dimensional query (``None`` = not given).

    The l_p sensitivities of Definition 5 / eq. (4) of flipped-huber-mechanism; validated
    on construction (positive normal float64 numbers, at least one given, consistent with
    eq. (5)).

    Attributes:
      dim: number of coordinates ``K >= 1``.
      l1: ``Delta_1``, or ``None``.
      l2: ``Delta_2``, or ``None``.
      linf: ``Delta_inf`` (the largest per-coordinate change), or ``None``.
      notes: free-form notes carried along (not compared).

    Raises:
      ValueError: a non-positive or non-finite value, none given, or values that contradict
        eq. (5) (e.g. ``l2 > l1``).

    Example:
      >>> Sensitivity(dim=4, linf=1.0).resolve("l2")
      (2.0, ('l2 not given; used the upper bound l2 <= sqrt(dim) * linf = 2.0',))
    """

    dim: int = 1
    l1: float | None = None
    l2: float | None = None
    linf: float | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self):
        _validate.positive_int(self.dim, "dim")
        for name in NORMS:
            value = getattr(self, name)
            if value is not None:
                arr = _validate.positive(value, name)
                if arr.ndim:
                    raise ValueError(f"{name} must be a single number, got {shown(value)}")
                object.__setattr__(self, name, float(arr))
        if self.l1 is None and self.l2 is None and self.linf is None:
            raise ValueError("give at least one sensitivity: l1, l2 or linf (all must be > 0)")
        self._check_consistent()

    def _check_consistent(self) -> None:
        k = self.dim
        tol = 1 + 1e-12
        pairs = [
            ("l2", "l1", 1.0),  # ||x||_2 <= ||x||_1
            ("linf", "l2", 1.0),  # ||x||_inf <= ||x||_2
            ("l1", "l2", math.sqrt(k)),  # ||x||_1 <= sqrt(K) ||x||_2
            ("l2", "linf", math.sqrt(k)),  # ||x||_2 <= sqrt(K) ||x||_inf
            ("l1", "linf", float(k)),  # ||x||_1 <= K ||x||_inf
            ("linf", "l1", 1.0),
        ]
        for small, big, factor in pairs:
            a, b = getattr(self, small), getattr(self, big)
            if a is not None and b is not None and a > factor * b * tol:
                bound = f"{big}" if factor == 1.0 else f"{factor:g} * {big}"
                raise ValueError(
                    f"inconsistent sensitivities for dim={k}: {small}={shown(a)} exceeds "
                    f"{bound}={shown(factor * b)}; every vector satisfies {small} <= {bound}"
                )

    def resolve(self, norm: str) -> tuple[float, tuple[str, ...]]:
        r"""The sensitivity in ``norm``: stated, or the tightest sound upper bound.

        .. math:: \Delta_q \le K^{[1/q - 1/r]_+}\,\Delta_r

        (eq. (5) of flipped-huber-mechanism; eq. (4) of inid-noise-laplace-beats-gaussian):
        the least of the bounds implied by the stated norms.

        Args:
          norm: ``"l1"``, ``"l2"`` or ``"linf"``.

        Returns:
          ``(value, notes)``; ``notes`` explains a derivation (empty when the value was stated
          or ``dim == 1``, where all norms coincide).

        Raises:
          ValueError: ``norm`` is not one of :data:`NORMS`.
        """
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {shown(norm)}")
        stated = getattr(self, norm)
        if stated is not None:
            return stated, ()
        k = self.dim
        if k == 1:
            value = next(getattr(self, n) for n in NORMS if getattr(self, n) is not None)
            return value, ()
        bounds = []
        if norm == "l2":
            if self.l1 is not None:
                bounds.append((self.l1, f"l2 <= l1 = {shown(self.l1)}"))
            if self.linf is not None:
                bounds.append(
                    (
                        math.sqrt(k) * self.linf,
                        f"l2 <= sqrt(dim) * linf = {shown(math.sqrt(k) * self.linf)}",
                    )
                )
        elif norm == "l1":
            if self.l2 is not None:
                bounds.append(
                    (
                        math.sqrt(k) * self.l2,
                        f"l1 <= sqrt(dim) * l2 = {shown(math.sqrt(k) * self.l2)}",
                    )
                )
            if self.linf is not None:
                bounds.append((k * self.linf, f"l1 <= dim * linf = {shown(k * self.linf)}"))
        else:  # linf
            if self.l2 is not None:
                bounds.append((self.l2, f"linf <= l2 = {shown(self.l2)}"))
            if self.l1 is not None:
                bounds.append((self.l1, f"linf <= l1 = {shown(self.l1)}"))
        value, note = min(bounds, key=lambda b: b[0])
        return value, (f"{norm} not given; used the upper bound {note}",)

    def as_dict(self) -> dict[str, float | None]:
        """The stated values as a dict (``None`` where not given).

        Returns:
          ``{"dim": ..., "l1": ..., "l2": ..., "linf": ...}``.
        """
        return {"dim": self.dim, "l1": self.l1, "l2": self.l2, "linf": self.linf}
