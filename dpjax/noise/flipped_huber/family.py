r"""The flipped Huber noise family ``FH(alpha, gamma^2)`` (flipped-huber-mechanism, Def. 7).

A Laplace centre (scale ``gamma^2 / alpha``) grafted onto Gaussian tails
(``N(0, gamma^2)``), density ``g(t) = exp(-rho_alpha(t) / gamma^2) / kappa``
(eqs. (7)-(9)).  A scale family, ``FH(alpha, gamma^2) = gamma FH(b, 1)`` with
``b = alpha / gamma``: every method rescales a kernel of the standard shape
(:mod:`.standard`); the privacy loss and its closed-form inverse (eqs. (15),
(25)) are in :mod:`.privacy_loss`.  ``alpha = 0`` is the Gaussian ``N(0, gamma^2)``;
``b -> inf`` with ``gamma^2 / alpha`` fixed is Laplace.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise import _shared
from dpjax.noise.flipped_huber import standard as st
from dpjax.noise.flipped_huber.privacy_loss import centred_privacy_loss_inverse
from dpjax.numerics.constants import LOG_2


class FlippedHuber(NamedTuple):
    r"""Flipped Huber noise ``FH(alpha, gamma^2)`` (dpjax name ``flipped-huber``).

    .. math:: g(t) = \frac{1}{\kappa} e^{-\rho_\alpha(t)/\gamma^2},\qquad
              \rho_\alpha(t) = \begin{cases} \alpha|t| & |t| \le \alpha \\
              (t^2 + \alpha^2)/2 & |t| > \alpha \end{cases}

    (eqs. (7)-(9) of flipped-huber-mechanism).  ``shape_parameter = alpha / gamma`` is
    the scale-free ``b``; ``FH(alpha, gamma^2) = gamma FH(b, 1)``.  Sampling is
    inversion (App. A): ``|T| = gamma y`` with ``P(T > gamma y) = U / 2`` for a
    tail-exact uniform ``U`` (:mod:`dpjax.noise._tail`): ``y = Q^{-1}(p c)`` in the
    Gaussian tails, ``-log(1 - k (1 - U)) / b`` in the Laplace centre (eq. (23)).

    Attributes:
      alpha: transition ``alpha >= 0`` from the Laplace centre to the Gaussian tails.
      gamma: scale ``gamma > 0``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> fh = FlippedHuber(alpha=2.0, gamma=1.0)
      >>> x = fh.sample(jax.random.key(0), (4,), dtype=jnp.float32)
      >>> x.dtype
      dtype('float32')
    """

    alpha: ArrayLike
    gamma: ArrayLike

    name = "flipped-huber"
    constraints = {"alpha": ">= 0", "gamma": "> 0"}

    @classmethod
    def from_scale(cls, scale: ArrayLike, shape: ArrayLike) -> FlippedHuber:
        """``FH(alpha = shape * scale, gamma = scale)``: the PLD engine's ``noise_fn``.

        Args:
          scale: ``gamma``.
          shape: ``b = alpha / gamma``.
        """
        return cls(shape * scale, scale)

    @property
    def shape_parameter(self) -> Array:
        """``b = alpha / gamma``."""
        return jnp.asarray(self.alpha) / jnp.asarray(self.gamma)

    @property
    def variance(self) -> Array:
        """``sigma^2 = gamma^2 v(b)`` of eq. (11) (cancellation-free form)."""
        return jnp.square(jnp.asarray(self.gamma)) * st.standard_variance(self.shape_parameter)

    @property
    def fisher_information(self) -> Array:
        """Location Fisher information of eq. (12): ``(b + B) / ((A + B) gamma^2)``."""
        return st.standard_fisher_information(self.shape_parameter) / jnp.square(
            jnp.asarray(self.gamma)
        )

    @property
    def normalised_fisher_information(self) -> Array:
        """``I * sigma^2`` (Sec. II-D; between 1 (Gaussian) and 2 (Laplace), Fig. 2)."""
        b = self.shape_parameter
        return st.standard_fisher_information(b) * st.standard_variance(b)

    def loss(self, t: ArrayLike) -> Array:
        """``rho_alpha(t)`` of eq. (7).

        Args:
          t: points.
        """
        return st.flipped_huber_loss(t, self.alpha)

    def logpdf(self, x: ArrayLike) -> Array:
        """``-rho_alpha(x)/gamma^2 - log kappa`` (eq. (8)), ``log kappa = log gamma + log Z(b)``.

        Args:
          x: points.
        """
        gamma = jnp.asarray(self.gamma)
        b = self.shape_parameter
        return -st.standard_loss(jnp.asarray(x) / gamma, b) - jnp.log(gamma) - st.log_normaliser(b)

    pdf = _shared.pdf

    def log_sf(self, x: ArrayLike) -> Array:
        """``log P(T > x)`` (eq. (10)), accurate far into both tails.

        Args:
          x: points.
        """
        return st.standard_log_sf(jnp.asarray(x) / self.gamma, self.shape_parameter)

    log_cdf = _shared.log_cdf
    sf = _shared.sf
    cdf = _shared.cdf

    def isf_log(self, log_p: ArrayLike) -> Array:
        """``x`` with ``log P(T > x) = log_p``, for ``log_p <= log(1/2)`` (eq. (23), far tail).

        Args:
          log_p: ``log p``.
        """
        return jnp.asarray(self.gamma) * st.standard_isf_log(log_p, self.shape_parameter)

    def quantile(self, u: ArrayLike) -> Array:
        """``G^{-1}(u)`` of eq. (23); ``min(u, 1-u)`` is inverted in log space.

        Args:
          u: probabilities in ``(0, 1)``.
        """
        u = jnp.asarray(u)
        upper = u > 0.5
        p = jnp.where(upper, 1.0 - u, u)
        y = st.standard_isf_log(jnp.log(p), self.shape_parameter)
        return jnp.asarray(self.gamma) * jnp.where(upper, y, -y)

    def mgf(self, s: ArrayLike) -> Array:
        """The moment generating function ``E[e^{sT}] = exp(log_mgf(s))`` (Sec. III-B.2).

        Args:
          s: real arguments (finite where ``E[e^{sT}]`` is, i.e. everywhere: Gaussian tails).
        """
        return jnp.exp(self.log_mgf(s))

    def log_mgf(self, s: ArrayLike) -> Array:
        """``log E[e^{sT}] = log M_b(gamma s)`` for the standard shape's ``M_b`` (Sec. III-B.2).

        Args:
          s: real arguments; evaluated in log space (no overflow for large ``s``).
        """
        return st.standard_log_mgf(jnp.asarray(s) * self.gamma, self.shape_parameter)

    def abs_isf(
        self, log_u: ArrayLike, one_minus_u: ArrayLike, deep: bool = True, u=None
    ) -> Array:
        r"""``|x|`` with ``P(|T| > |x|) = U``: ``gamma y`` with ``P(T/gamma > y) = U/2`` (eq. (23)).

        ``1 - 2p = 1 - U`` is passed exactly.  Computed in the dtype of ``log_u``;
        the per-shape constants in the parameters' dtype, then cast.

        Args:
          log_u: ``log U``.
          one_minus_u: ``1 - U``.
          deep: ``False`` promises ``U >= 2^-12``.
          u: ``U`` itself where the caller has it (the main path; spares ``exp(log U)``).
        """
        log_u, omu = jnp.asarray(log_u), jnp.asarray(one_minus_u)
        work = log_u.dtype
        consts = jax.tree_util.tree_map(
            lambda v: v.astype(work) if jnp.issubdtype(v.dtype, jnp.floating) else v,
            st.isf_constants(self.shape_parameter),
        )
        p = None if u is None else 0.5 * jnp.asarray(u)
        y = st.standard_isf(log_u - LOG_2, omu, consts, deep, p=p)
        return jnp.asarray(self.gamma).astype(work) * y

    from_bits = _shared.from_bits
    sample = _shared.sample

    def privacy_loss(self, t: ArrayLike, sensitivity: ArrayLike) -> Array:
        r"""``zeta_d(t) = (rho_alpha(t + d) - rho_alpha(t)) / gamma^2`` (Sec. II-C).

        Args:
          t: points.
          sensitivity: the shift ``d``.
        """
        t, d = jnp.asarray(t), jnp.asarray(sensitivity)
        gamma2 = jnp.square(jnp.asarray(self.gamma))
        rho = st.flipped_huber_loss
        return (rho(t + d, self.alpha) - rho(t, self.alpha)) / gamma2

    def privacy_loss_inverse(self, epsilon: ArrayLike, sensitivity: ArrayLike) -> Array:
        r"""Right-continuous ``sup{t : zeta_d(t) <= epsilon}`` in closed form (eq. (15)).

        ``zeta_d(t) = zeta~_d(t + d/2)`` (eq. (25)), so
        ``t(epsilon) = zeta~_d^{-1}(epsilon) - d/2``
        (:func:`~dpjax.noise.flipped_huber.centred_privacy_loss_inverse`).

        Args:
          epsilon: loss levels.
          sensitivity: the shift ``d > 0``.
        """
        inverse = centred_privacy_loss_inverse(epsilon, sensitivity, self.alpha, self.gamma)
        return inverse - 0.5 * sensitivity
