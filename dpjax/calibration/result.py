"""The result type every calibration returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Calibration:
    """Least-error parameters of a mechanism meeting a privacy target, certified.

    Attributes:
      mechanism: dpjax mechanism name (``"gaussian"``, ``"laplace"``, ...).
      params: parameter name -> value (NumPy float64 arrays shaped like the
        broadcast targets; 0-d for scalar targets).
      variance: per-coordinate noise variance.
      mse: expected squared l2 error summed over the ``dim`` coordinates.
      epsilon, delta: the target.
      delta_at_params: the certificate: the mechanism's privacy profile
        re-evaluated at ``params`` (an upper bound where the profile is a
        bound, exact where it is exact); always ``<= delta``.
      dim: number of coordinates the noise is added to.
      sensitivity: the sensitivities used (after sound derivation).
      condition: ``"exact"`` (necessary and sufficient) or ``"sufficient"``.
      notes: what was assumed or derived (e.g. a sensitivity bound).
      member: for a family searched over a shape, which member won per target
        (``"gaussian"``, ``"laplace"``, ``"interior"``; NumPy strings shaped like the
        targets), else ``None``.
    """

    mechanism: str
    params: dict[str, np.ndarray]
    variance: np.ndarray
    mse: np.ndarray
    epsilon: np.ndarray
    delta: np.ndarray
    delta_at_params: np.ndarray
    dim: int = 1
    compositions: int = 1
    sampling_rate: float | None = None
    condition: str = "exact"
    sensitivity: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    member: Any = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (floats at full precision; arrays as nested lists)."""

        def conv(x):
            arr = np.asarray(x, dtype=np.float64)
            return arr.tolist() if arr.ndim else float(arr)

        return {
            "mechanism": self.mechanism,
            "params": {k: conv(v) for k, v in self.params.items()},
            "variance": conv(self.variance),
            "mse": conv(self.mse),
            "epsilon": conv(self.epsilon),
            "delta": conv(self.delta),
            "delta_at_params": conv(self.delta_at_params),
            "dim": self.dim,
            "compositions": self.compositions,
            "sampling_rate": self.sampling_rate,
            "condition": self.condition,
            "sensitivity": dict(self.sensitivity),
            "notes": list(self.notes),
            "member": None if self.member is None else np.asarray(self.member).tolist(),
        }
