r"""The privacy plan: one certified calibration behind transform, sampler and accountant.

:func:`make_plan` takes the schedule (dataset size ``N``, expected batch size ``B`` or
sampling rate ``q = B / N``, steps ``T`` or epochs ``E`` with ``T = ceil(E / q)``), the
target ``(epsilon, delta)``, the clipping groups (:mod:`dpjax.train.groups`) and the noise
family, calibrates the noise once and returns a frozen :class:`PrivacyPlan`.  Its
:meth:`~PrivacyPlan.transform`, :meth:`~PrivacyPlan.sampler` and
:meth:`~PrivacyPlan.accountant` are built from the same numbers; there is no public way to
change one without the others.

**Gaussian** (global, per-layer or per-group clipping).  Group ``m`` (``K_m`` coordinates,
l2 clip ``C_m``) gets ``N(0, sigma_m^2)`` per coordinate.  One example shifts the noised sum
by ``v`` with ``||v_m||_2 <= C_m``; whitened, ``||v||`` is at most
``mu = sqrt(sum_m C_m^2 / sigma_m^2)``, so every step is dominated by the Gaussian pair
with shift ``mu``, and ``T`` Poisson-subsampled steps by the subsampled pair of noise
multiplier ``sigma_eff = 1 / mu`` (add and remove adjacency; Zhu, Dong & Wang 2022,
Thm 11).  ``sigma_eff`` is calibrated by :func:`dpjax.calibrate` (``"gaussian"``,
``sampling_rate = q``, ``compositions = T``: the PLD engine, certified), and the group
scales split ``mu^2`` (Sec. VI-C of inid-noise-laplace-beats-gaussian):

* ``allocation="inid"``: the least total variance ``sum_m K_m sigma_m^2`` (eq. (9) /
  Theorem 4 with the profile ``lambda_m = C_m`` and weights ``K_m``:
  ``sigma_m^2 \propto C_m / sqrt(K_m)``; :func:`dpjax.train.groups.allocate`);
* ``allocation="spr"``: the SPR baseline: every coordinate gets an equal share of the
  resource (``sigma_m \propto C_m / sqrt(K_m)``, the per-coordinate sensitivity of
  Sec. VI-C).

With one group both give ``sigma_1 = sigma_eff C`` (global clipping).

**Laplace** (global, per-layer or per-group **l1** clipping): group ``m`` gets
``Lap(0, b_m)`` per coordinate, added to the sum; the shift ``sum_m C_m / b_m`` is dominated
by the one-dimensional Laplace pair, calibrated by :func:`dpjax.calibrate` (``"laplace"``,
``l1 = 1``, ``sampling_rate = q``, ``compositions = T``: the PLD engine, both adjacencies,
certified) and split over groups by eq. (12) or SPR (:mod:`dpjax.train.laplace`).

**Flipped Huber** (global clipping): i.i.d. ``FH(alpha, gamma^2)`` per coordinate, the
least-variance certified member: ``alpha > 0`` shapes calibrated through Theorem 9 of
flipped-huber-mechanism and a Poisson-subsampled RDP accountant
(:mod:`dpjax.train.flipped_huber`; the PLD engine has no dominating pair for them), beside
``alpha = 0`` (``FH(0, gamma^2) = N(0, gamma^2)``, accounted by the PLD engine as above).

**Padded batches.**  The sampler pads to ``max_batch_size`` rows; a Poisson draw larger
than that is truncated.  The event has probability ``p <= P(Bin(N + 1, q) > B_max)`` per
step on either dataset; coupling the truncated and the exact mechanism,
``delta_total = delta_noise + (1 + e^epsilon) T p`` (the truncation share), so the noise
is calibrated at ``delta_noise = delta - (1 + e^epsilon) T p``.  The default ``B_max`` makes
the truncation share at most ``delta / 1000``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import dpjax
from dpjax import _validate
from dpjax.train import laplace
from dpjax.train.accountant import Accountant
from dpjax.train.flipped_huber import SHAPE_GRID, calibrate_flipped_huber
from dpjax.train.groups import Groups, allocate, make_groups, whitened
from dpjax.train.sampler import make_sampler
from dpjax.train.transform import dp_optimizer, dp_transform

NOISES = ("gaussian", "laplace", "flipped-huber")
ALLOCATIONS = ("inid", "spr")
#: Share of ``delta`` the default ``max_batch_size`` leaves to batch truncation.
TRUNCATION_SHARE = 1e-3


@dataclass(frozen=True)
class PrivacyPlan:
    """A calibrated DP-SGD schedule (build it with :func:`make_plan`; fields are read-only).

    Attributes:
      dataset_size: ``N``.
      sampling_rate: Poisson rate ``q``.
      steps: planned logical steps ``T``.
      epsilon, delta: the target (``delta`` includes the truncation share).
      noise_delta: the ``delta`` the noise is calibrated and accounted at.
      max_batch_size: padded batch rows ``B_max``.
      truncation_probability: ``P(Bin(N + 1, q) > B_max)`` (a per-step upper bound).
      noise: ``"gaussian"``, ``"laplace"`` or ``"flipped-huber"``.
      allocation: ``"inid"``, ``"spr"`` (several groups) or ``"global"``.
      groups: the clipping :class:`~dpjax.train.groups.Groups`.
      noise_std: per group, the noise's standard deviation (absolute units).
      noise_multiplier: ``sigma_eff`` of the Gaussian dominating pair, ``>=`` the
        calibrated one; Laplace: ``b_eff``, the dominating pair's scale per unit l1 shift
        (``nan`` for flipped Huber with ``alpha > 0``).
      fh_alpha, fh_gamma: flipped Huber parameters (absolute units; ``nan`` for Gaussian).
      accumulation_steps: micro-batches per logical step.
      certificate: how the plan was certified (one line).
      laplace_scale: per group, the Laplace scale ``b_m`` (``None`` for other noises).
    """

    dataset_size: int
    sampling_rate: float
    steps: int
    epsilon: float
    delta: float
    noise_delta: float
    max_batch_size: int
    truncation_probability: float
    noise: str
    allocation: str
    groups: Groups
    noise_std: np.ndarray
    noise_multiplier: float
    fh_alpha: float
    fh_gamma: float
    accumulation_steps: int
    certificate: str
    laplace_scale: np.ndarray | None = None

    @property
    def clip_norm_order(self) -> int:
        """The norm of the clipping: ``1`` for Laplace noise, ``2`` otherwise."""
        return 1 if self.noise == "laplace" else 2

    @property
    def expected_batch_size(self) -> float:
        """``q N``: the fixed denominator of the transform."""
        return self.sampling_rate * self.dataset_size

    def transform(self, seed):
        """The DP :class:`optax.GradientTransformationExtraArgs` (:mod:`dpjax.train.transform`);
        ``seed``: an int or a JAX PRNG key for the noise."""
        return dp_transform(self, seed)

    def optimizer(self, inner, seed):
        """``inner`` behind the DP transform, with gradient accumulation when the plan has
        ``accumulation_steps > 1`` (:func:`dpjax.train.transform.dp_optimizer`)."""
        return dp_optimizer(self, inner, seed)

    def sampler(self, mode: str = "poisson", assume_poisson: bool = False):
        """The batch sampler (:class:`dpjax.train.sampler.PoissonSampler`)."""
        return make_sampler(self, mode, assume_poisson)

    def accountant(self):
        """The accountant (:class:`dpjax.train.accountant.Accountant`)."""
        return Accountant(self)

    def summary(self) -> dict:
        """A JSON-ready description of the plan."""
        out = {
            "dataset_size": self.dataset_size,
            "sampling_rate": self.sampling_rate,
            "expected_batch_size": self.expected_batch_size,
            "max_batch_size": self.max_batch_size,
            "steps": self.steps,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "noise_delta": self.noise_delta,
            "noise": self.noise,
            "allocation": self.allocation,
            "groups": {
                n: {"size": int(k), "clip_norm": float(c), "noise_std": float(s)}
                for n, k, c, s in zip(
                    self.groups.names, self.groups.sizes, self.groups.clip_norms,
                    self.noise_std, strict=True,
                )
            },
            "clip_norm": f"l{self.clip_norm_order}",
            "certificate": self.certificate,
        }
        if self.laplace_scale is not None:
            for name, b in zip(self.groups.names, self.laplace_scale, strict=True):
                out["groups"][name]["laplace_scale"] = float(b)
        if math.isfinite(self.noise_multiplier):
            out["noise_multiplier"] = self.noise_multiplier
        if self.noise == "flipped-huber":
            out["alpha"], out["gamma"] = self.fh_alpha, self.fh_gamma
        return out


def _schedule(dataset_size, batch_size, sampling_rate, steps, epochs):
    n = _validate.positive_int(dataset_size, "dataset_size")
    if (batch_size is None) == (sampling_rate is None):
        raise ValueError("give exactly one of batch_size (expected) or sampling_rate")
    if batch_size is not None:
        b = float(_validate.positive(batch_size, "batch_size"))
        if b > n:
            raise ValueError(f"batch_size must be <= dataset_size = {n}, got {batch_size!r}")
        sampling_rate = b / n
    q = _validate.probability(sampling_rate, "sampling_rate")
    if (steps is None) == (epochs is None):
        raise ValueError("give exactly one of steps or epochs")
    if steps is not None:
        t = _validate.positive_int(steps, "steps")
    else:
        e = float(_validate.positive(epochs, "epochs"))
        t = max(1, math.ceil(e / q - 1e-9))
    return n, q, t


def _truncation(n, q, t, epsilon, delta, max_batch_size):
    """``(B_max, p)`` with ``(1 + e^eps) T p`` the truncation share of ``delta``."""
    from scipy.stats import binom  # deferred: scipy.stats (heavy import, loaded on first use)

    factor = (1.0 + math.exp(min(epsilon, 700.0))) * t
    if max_batch_size is None:
        mean, sd = q * (n + 1), math.sqrt(q * (1 - q) * (n + 1))
        b = max(1, math.ceil(mean + sd))
        while b < n + 1 and factor * binom.sf(b, n + 1, q) > TRUNCATION_SHARE * delta:
            b += max(1, math.ceil(sd / 8))
        max_batch_size = min(b, n + 1)
    b = min(_validate.positive_int(max_batch_size, "max_batch_size"), n + 1)
    p = float(binom.sf(b, n + 1, q)) * 1.01  # 1% pad on scipy's sf; 0 for b = N + 1
    if factor * p >= 0.5 * delta:
        raise ValueError(
            f"max_batch_size = {b} truncates too often: (1 + e^epsilon) T P(batch > {b}) = "
            f"{factor * p:.3g} >= delta / 2; raise max_batch_size"
        )
    return b, p, factor * p


def _flipped_huber(groups: Groups, q, t, eps, noise_delta, sigma):
    """The least-variance certified flipped Huber noise: ``alpha = 0`` is the Gaussian
    ``sigma C`` (PLD engine); ``alpha > 0`` shapes go through the RDP accountant."""
    if groups.count != 1:
        raise ValueError("flipped-huber noise supports global clipping (one clip norm) only")
    c, d = float(groups.clip_norms[0]), groups.dim
    try:
        alpha, gamma, var, eps_at = calibrate_flipped_huber(
            d, c, q, t, eps, noise_delta, shapes=SHAPE_GRID[1:] / math.sqrt(d)
        )
    except ValueError:
        var = math.inf
    if (sigma * c) ** 2 <= var:  # the Gaussian member wins: keep its tighter PLD accounting
        return (np.array([sigma * c]), sigma, 0.0, sigma * c,
                f"flipped Huber with alpha = 0, i.e. N(0, {sigma * c!r}^2): the least-variance "
                f"certified member for this schedule (best alpha > 0 candidate: variance "
                f"{var:.6g} vs {(sigma * c) ** 2:.6g}), accounted by the PLD engine")
    cert = (
        f"flipped Huber FH({alpha!r}, {gamma!r}^2): zCDP per coordinate (Theorem 9), "
        f"Poisson-subsampled RDP (Zhu & Wang 2019, Thm 6), epsilon {eps_at!r} at "
        f"delta {noise_delta!r}"
    )
    return np.array([math.sqrt(var)]), math.nan, alpha, gamma, cert


def make_plan(
    params,
    *,
    dataset_size: int,
    epsilon: float,
    delta: float,
    clip_norms=1.0,
    batch_size: float | None = None,
    sampling_rate: float | None = None,
    steps: int | None = None,
    epochs: float | None = None,
    noise: str = "gaussian",
    allocation: str = "inid",
    max_batch_size: int | None = None,
    accumulation_steps: int = 1,
) -> PrivacyPlan:
    r"""Calibrate a DP-SGD schedule once; the transform, sampler and accountant follow from it.

    See the module docstring for the guarantees (Gaussian: the PLD engine through
    :func:`dpjax.calibrate`; flipped Huber: Theorem 9 of flipped-huber-mechanism and
    Poisson-subsampled RDP).  All privacy numbers are float64.

    Args:
      params: the model parameters (arrays or ``jax.ShapeDtypeStruct``; shapes and dtypes
        are used).
      dataset_size: ``N``.
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      clip_norms: a number (global clipping) or a pytree prefix of ``params``
        (:func:`dpjax.train.groups.make_groups`); l2 norms, l1 for ``noise="laplace"``.
      batch_size: expected batch size ``B`` (``q = B / N``); or give ``sampling_rate``.
      sampling_rate: ``q`` in ``(0, 1]``.
      steps: logical steps ``T``; or give ``epochs`` (``T = ceil(E / q)``).
      epochs: passes over the data.
      noise: ``"gaussian"``, ``"laplace"`` (l1 clipping) or ``"flipped-huber"`` (global
        clipping only).
      allocation: ``"inid"`` (optimal) or ``"spr"`` for several groups.
      max_batch_size: padded rows of the sampler (default: truncation share ``<= delta /
        1000``).
      accumulation_steps: micro-batches per logical step (``max_batch_size`` is rounded
        up to a multiple of it).

    Returns:
      A :class:`PrivacyPlan`.

    Raises:
      ValueError: bad input (with what is allowed).
      dpjax.errors.CertificationError: the calibration could not be certified.

    Example:
      >>> import jax.numpy as jnp
      >>> params = {"w": jnp.zeros((4, 3)), "b": jnp.zeros(3)}
      >>> plan = make_plan(params, dataset_size=1000, batch_size=50, epochs=2,
      ...                  epsilon=2.0, delta=1e-5, clip_norms=1.0)
      >>> plan.steps, round(plan.noise_multiplier, 2)
      (40, 1.1)
    """
    n, q, t = _schedule(dataset_size, batch_size, sampling_rate, steps, epochs)
    eps = float(_validate.positive(epsilon, "epsilon"))
    dlt = float(_validate.delta(delta))
    if not dlt > 0:
        raise ValueError("delta must be > 0 for DP-SGD (Gaussian-tailed noise)")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, got {allocation!r}")
    k = _validate.positive_int(accumulation_steps, "accumulation_steps")
    groups = make_groups(params, clip_norms)
    b_max, p, share = _truncation(n, q, t, eps, dlt, max_batch_size)
    b_max = k * math.ceil(b_max / k)
    noise_delta = (dlt - share) * (1.0 - 1e-12)
    alpha = gamma = math.nan
    lap = None
    if noise == "laplace":
        b_eff, cal = laplace.calibrate_multiplier(q, t, eps, noise_delta)
        lap = allocate(groups, b_eff, allocation, order=1)
        std = math.sqrt(2.0) * lap
        sigma_eff = whitened(groups, lap, order=1)
        cert = (
            f"Laplace with l1 clipping: dominating pair Lap(0, {sigma_eff!r}) vs shift 1, scale "
            f">= {b_eff!r} calibrated by dpjax.calibrate (delta_at_params "
            f"{float(cal.delta_at_params):.6g}); {cal.notes[-1]}"
        )
    else:
        cal = dpjax.calibrate("gaussian", eps, noise_delta, sampling_rate=q, compositions=t,
                              l2=1.0)
        sigma = float(cal.params["sigma"])
    if noise == "gaussian":
        std = allocate(groups, sigma, allocation, order=2)
        sigma_eff = whitened(groups, std, order=2)
        cert = (
            f"Gaussian, noise multiplier {sigma_eff!r} >= {sigma!r} calibrated by dpjax.calibrate "
            f"(delta_at_params {float(cal.delta_at_params):.6g}); {cal.notes[-1]}"
        )
    elif noise == "flipped-huber":
        std, sigma_eff, alpha, gamma, cert = _flipped_huber(groups, q, t, eps, noise_delta, sigma)
    return PrivacyPlan(
        dataset_size=n, sampling_rate=q, steps=t, epsilon=eps, delta=dlt,
        noise_delta=noise_delta, max_batch_size=b_max, truncation_probability=p,
        noise=noise, allocation=allocation if groups.count > 1 else "global", groups=groups,
        noise_std=std, noise_multiplier=sigma_eff, fh_alpha=alpha, fh_gamma=gamma,
        accumulation_steps=k, certificate=cert, laplace_scale=lap,
    )
