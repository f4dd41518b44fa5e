"""The certified i.n.i.d. noise design every design function of :mod:`dpjax.inid` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.noise import Gaussian, Laplace
from dpjax.noise._base import sample_dtype


@dataclass(frozen=True)
class InidDesign:
    """A certified i.n.i.d. noise design and its baselines.

    Attributes:
      mechanism: ``"gaussian"`` (scales are standard deviations ``sigma_i``) or
        ``"laplace"`` (scales ``b_i``).
      profile: the sensitivity profile ``lambda``.
      scales: per-coordinate scales (0 where ``lambda_i = 0``).
      epsilon, delta: the target.
      error_power, weights: the error is ``sum_i w_i E|T_i|^p``.
      error, error_iid, error_spr: expected error of this design, of the i.i.d.
        mechanism (``Delta_2 = ||lambda||_2`` resp. ``Delta_1 = ||lambda||_1``) and of
        the SPR mechanism (Definition 5), same target and condition.
      reduction_db: ``10 log10(error_iid / error)``.
      iid_scale: the common i.i.d. scale; spr_scales: the SPR scales.
      mse: ``sum_i Var(T_i)`` (unweighted MSE) of this design.
      privacy_parameter: Gaussian ``mu = sqrt(sum lambda^2/sigma^2)`` (GDP, Lemma 3);
        Laplace ``sum lambda_i / b_i`` (maximal privacy loss).
      allocation: the privacy-resource split (Sec. IV-B): Gaussian
        ``eta_i = lambda_i^2 / (2 sigma_i^2)`` (zCDP, sums to ``mu^2 / 2``), Laplace
        ``epsilon_i = lambda_i / b_i`` (sums to the l1 budget).
      delta_at_params: the certificate, ``<= delta``.
      condition: what the certificate means.
      solver: how the scales were found (``"closed-form"``, or a :mod:`solvers` backend).
      solver_stats: the backend's status, residual and statistics (programme solvers).
      notes: assumptions made.
    """

    mechanism: str
    profile: np.ndarray
    scales: np.ndarray
    epsilon: float
    delta: float
    error_power: float
    weights: np.ndarray
    error: float
    error_iid: float
    error_spr: float
    reduction_db: float
    iid_scale: float
    spr_scales: np.ndarray
    mse: float
    privacy_parameter: float
    allocation: np.ndarray
    delta_at_params: float
    condition: str
    solver: str = "closed-form"
    solver_stats: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def noise(self):
        """The per-coordinate noise as a :mod:`dpjax.noise` family (vector of scales)."""
        s = jnp.asarray(self.scales)
        return Gaussian(sigma=s) if self.mechanism == "gaussian" else Laplace(scale=s)

    def sample(self, key, shape: tuple[int, ...] = (), dtype=None):
        """Noise vectors ``T`` with ``T_i = s_i Z_i`` (``Z_i`` standard normal or Laplace).

        Args:
          key: a ``jax.random`` key.
          shape: leading batch shape.
          dtype: sampling dtype (default: the caller's float dtype).

        Returns:
          An array of shape ``shape + (K,)`` (coordinate ``i`` with scale ``scales[i]``).
        """
        dtype = sample_dtype(dtype)
        s = jnp.asarray(self.scales, dtype)
        shape = tuple(shape) + (s.shape[-1],)
        base = jax.random.normal if self.mechanism == "gaussian" else jax.random.laplace
        return s * base(key, shape, dtype)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (floats at full precision; arrays as lists)."""
        return {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "profile": self.profile.tolist(),
            "scales": self.scales.tolist(),
            "scale_name": "sigma" if self.mechanism == "gaussian" else "b",
            "error_power": self.error_power,
            "weights": self.weights.tolist(),
            "error": self.error,
            "error_iid": self.error_iid,
            "error_spr": self.error_spr,
            "reduction_db": self.reduction_db,
            "iid_scale": self.iid_scale,
            "spr_scales": self.spr_scales.tolist(),
            "mse": self.mse,
            "privacy_parameter": self.privacy_parameter,
            "allocation": self.allocation.tolist(),
            "delta_at_params": self.delta_at_params,
            "condition": self.condition,
            "solver": self.solver,
            "notes": list(self.notes),
        }
