r"""The privacy-loss-distribution (PLD) pytree on a uniform loss grid.

For a pair of output distributions ``(P, Q)`` (``P`` = the mechanism on the
dataset *with* the differing record, ``Q`` = without, or the reverse) the
privacy loss is ``L = log(dP/dQ)(Y)`` with ``Y ~ P``.  Its law determines the
whole privacy profile (the hockey-stick divergence):

.. math:: \delta(\epsilon) = H_{e^\epsilon}(P \| Q)
          = P(L = +\infty) + \mathbb E_P\big[(1 - e^{\epsilon - L})_+ ;\ L < \infty\big],

and the ``K``-fold composition of independent pairs has the law of the sum of
the losses (convolution of the pmfs).  A :class:`PLD` stores that law on the
grid ``l_i = (lower + i) * bin_width`` as a pmf plus a mass at ``+infinity``
(cf. dp_accounting ``pld/privacy_loss_distribution.py``: every discretisation declares
its direction and its error).

Because ``delta(eps)`` is increasing in ``L`` pointwise, any discretisation
that moves loss mass *up* (or, in the connect-the-dots sense of Doroshenko et
al. 2022, whose hockey-stick curve lies above the true one for every
``epsilon``) yields a *pessimistic* PLD: every ``delta(eps)`` it reports, and
every ``delta(eps)`` of its compositions, is an upper bound.  ``pessimistic``
records the direction; ``truncated_mass`` records how much mass was moved to
the ends of the grid (informational); ``roundoff`` is an l2 bound on the
floating-point error of ``pmf`` (FFT composition), which :mod:`.query` adds
back so that reported values stay upper bounds.

``log_mgf`` carries ``log E_P[e^{lambda L}; L < inf]`` of the *discretised*
pair before any window cut, on the fixed grid :data:`LAMBDAS`; composition
adds them.  :mod:`.tail_bounds` turns them into Chernoff bounds used to size
FFT windows and to certify ``delta`` below the FFT round-off floor.
``atom_inf`` is the mass at ``+infinity`` of that discretised pair (without
the window cut), so ``delta <= atom_inf + Chernoff`` holds at any ``epsilon``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U

#: The ``lambda`` grid of the Chernoff / MGF tail bounds: ``-lambda`` and
#: ``+lambda`` for 64 geometric values in ``[1e-3, 1e3]`` and 16 in ``[1e-8, 1e-3)``
#: (negative half first).  The small ones serve huge compositions, whose optimal
#: ``lambda ~ sqrt(2 log(1/delta) / (K Var L))`` is far below ``1e-3``.
_POS = np.concatenate([np.geomspace(1e-8, 1e-3, 16, endpoint=False), np.geomspace(1e-3, 1e3, 64)])
LAMBDAS = np.concatenate([-_POS[::-1], _POS])
#: Index of the first positive ``lambda`` in :data:`LAMBDAS`.
POSITIVE = len(_POS)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class PLD:
    r"""Privacy loss distribution of a dominating pair on a uniform loss grid.

    Attributes:
      bin_width: ``h``: grid spacing of the loss values.
      lower: integer index of ``pmf[0]``: its loss value is ``lower * h``.
      pmf: ``(n,)`` probabilities under ``P`` of ``L = (lower + i) h``.
      inf_mass: mass at ``L = +infinity`` used by ``delta`` (includes the
        upper tails cut off by composition windows, bounded by Chernoff).
      truncated_mass: total mass moved by truncation (top tail sent to
        infinity, bottom tail lumped onto the lowest grid point, composition
        windows): a record, not needed for the guarantee.
      roundoff: l2 bound on the floating-point error of ``pmf``.
      log_mgf: ``log E[e^{lambda L}; L < inf]`` on :data:`LAMBDAS` of the
        discretised pair (no window cut).
      atom_inf: mass at ``+infinity`` of the discretised pair (no window cut).
      pessimistic: ``True`` if every ``delta(eps)`` is an upper bound
        (static metadata, not traced).
    """

    bin_width: Array
    lower: Array
    pmf: Array
    inf_mass: Array
    truncated_mass: Array
    roundoff: Array
    log_mgf: Array
    atom_inf: Array
    pessimistic: bool = field(default=True, metadata={"static": True})

    @property
    def size(self) -> int:
        """Number of grid points ``n`` of the pmf (static).

        Returns:
          ``pmf.shape[-1]``.
        """
        return self.pmf.shape[-1]

    def top(self) -> float:
        """The loss just above the grid, ``(lower + n) h`` (host float; beyond it only the
        mass at ``+infinity``): where a profile built from this PLD stops changing.

        Returns:
          ``(lower + n) * bin_width``.
        """
        return (int(self.lower) + self.size) * float(self.bin_width)

    def losses(self) -> Array:
        r"""The loss grid ``l_i = (lower + i) h``, ``i = 0 .. n - 1``.

        .. math:: l_i = (\text{lower} + i)\,h

        Returns:
          The ``(n,)`` float64 loss values of ``pmf``.
        """
        idx = jnp.arange(self.size, dtype=jnp.float64)
        return (self.lower.astype(jnp.float64) + idx) * self.bin_width


#: Block length of :func:`log_mgf_grid` (one GEMM of ``(n / B, B) @ (B, #lambda)``).
_BLOCK = 64
_TINY = float(np.finfo(np.float64).tiny)


@jax.jit
@float64_kernel
def log_mgf_grid(lower: Array, bin_width: Array, pmf: Array) -> Array:
    r"""``log sum_i pmf_i exp(lambda l_i)`` on :data:`LAMBDAS`: an **upper bound**, from one GEMM.

    .. math:: M(\lambda) = \sum_b e^{\lambda(\text{lower} + bB + c)h}\, S_b(\lambda),\qquad
              S_b(\lambda) = \sum_{j<B} p_{bB+j}\, e^{\lambda(j - c)h}

    for ``l_i = (lower + i) h`` (the moment generating function of the privacy loss that
    every Chernoff bound needs; Sommer, Meiser & Mohammadi 2019).  The grid is uniform, so
    the ``S_b`` for all blocks of ``B`` points and all ``lambda`` are one GEMM of the
    reshaped pmf with the ``B x #lambda`` matrix ``e^{lambda (j - c) h}`` (``c = B - 1`` for
    ``lambda > 0``, ``0`` for ``lambda < 0``, so every entry is ``<= 1``: no overflow), then a
    log-sum-exp over blocks: ``n #lambda`` flops in a GEMM instead of ``n #lambda``
    exponentials.  Made an upper bound: inflated by the rounding bounds of the sums of
    non-negative terms and of the exponents, and each entry that may have underflowed
    (``< tiny``, in units of its block's top/bottom ``e^{lambda l}``) is counted at ``tiny``
    (``n tiny e^{lambda l_edge}`` added per positive entry), negligible unless the pmf
    itself is below ``1e-300``.

    Args:
      lower: integer index of ``pmf[0]`` (its loss is ``lower h``).
      bin_width: grid spacing ``h > 0``.
      pmf: ``(n,)`` masses (negative round-off is clipped to 0).

    Returns:
      ``(len(LAMBDAS),)`` upper bounds on ``log M(lambda)``; a ``nan`` in the pmf makes
      every moment ``+inf`` (fail closed).
    """
    n = pmf.shape[-1]
    nb = -(-n // _BLOCK)
    h = jnp.asarray(bin_width, jnp.float64)
    lam = jnp.asarray(LAMBDAS)
    pmf = jnp.pad(jnp.maximum(pmf, 0.0), (0, nb * _BLOCK - n)).reshape(nb, _BLOCK)
    c = jnp.where(lam > 0, _BLOCK - 1.0, 0.0)
    j = jnp.arange(_BLOCK, dtype=jnp.float64)
    z = jnp.exp(lam[None, :] * (j[:, None] - c[None, :]) * h)
    s = pmf @ z  # (nb, #lambda)
    ok = s > 0
    # a nan (or inf) mass makes that block's moment +inf: fail closed, never a zero mass
    log_s = jnp.where(ok, jnp.log(jnp.where(ok, s, 1.0)), -jnp.inf)
    log_s = jnp.where(jnp.isnan(s), jnp.inf, log_s)
    base = jnp.asarray(lower, jnp.float64) + _BLOCK * jnp.arange(nb, dtype=jnp.float64)
    expo = lam[None, :] * (base[:, None] + c[None, :]) * h
    # sums of non-negative terms: relative error <= B u; exponents lambda l: absolute
    # error <= 2 u |lambda| max|l| (blocked and direct products round differently)
    slack = (
        jnp.log1p(4.0 * _BLOCK * _U)
        + 4.0 * _U * jnp.abs(lam) * (jnp.abs(jnp.asarray(lower, jnp.float64)) + n + _BLOCK) * h
    )
    out = jax.scipy.special.logsumexp(log_s + expo, axis=0) + slack
    # entries lost to underflow: each positive entry of block b is < tiny e^{expo_b}
    count = jnp.sum(pmf > 0, axis=1).astype(jnp.float64)
    log_count = jnp.where(count > 0, jnp.log(jnp.maximum(count, 1.0)), -jnp.inf)
    lost = jax.scipy.special.logsumexp(log_count[:, None] + math.log(_TINY) + expo, axis=0)
    return jnp.logaddexp(out, lost)


@float64_kernel
def make(
    bin_width,
    lower,
    pmf,
    inf_mass,
    truncated_mass=0.0,
    roundoff=0.0,
    pessimistic=True,
    log_mgf=None,
    atom_inf=None,
) -> PLD:
    r"""Assemble a :class:`PLD`, computing ``log_mgf`` from the pmf when not given.

    .. math:: \log M(\lambda) = \log \sum_i p_i\, e^{\lambda (\text{lower} + i) h}
              \quad (\text{:func:`log_mgf_grid`, when } \texttt{log\_mgf} \text{ is None})

    Args:
      bin_width: grid spacing ``h > 0``.
      lower: integer index of ``pmf[0]``.
      pmf: ``(n,)`` probabilities of the finite losses.
      inf_mass: mass at ``L = +infinity``.
      truncated_mass: mass moved by truncation (a record).
      roundoff: l2 bound on the floating-point error of ``pmf``.
      pessimistic: whether every ``delta(eps)`` of this PLD is an upper bound (static).
      log_mgf: ``log E[e^{lambda L}; L < inf]`` on :data:`LAMBDAS` (``None``: computed).
      atom_inf: mass at ``+infinity`` before any window cut (``None``: ``inf_mass``).

    Returns:
      The :class:`PLD` (float64 leaves, int64 ``lower``).

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import delta_for_epsilon
      >>> # randomized response with e^eps0 = 3: L = +-log 3 with P-probabilities 3/4, 1/4
      >>> rr = make(bin_width=math.log(3.0), lower=-1, pmf=[0.25, 0.0, 0.75], inf_mass=0.0)
      >>> round(float(delta_for_epsilon(rr, 0.0)), 6)  # E[(1 - e^{-L})_+] = 3/4 (1 - 1/3)
      0.5
    """
    bin_width = jnp.asarray(bin_width, jnp.float64)
    lower = jnp.asarray(lower, jnp.int64)
    pmf = jnp.asarray(pmf, jnp.float64)
    inf_mass = jnp.asarray(inf_mass, jnp.float64)
    if log_mgf is None:
        log_mgf = log_mgf_grid(lower, bin_width, pmf)
    return PLD(
        bin_width=bin_width,
        lower=lower,
        pmf=pmf,
        inf_mass=inf_mass,
        truncated_mass=jnp.asarray(truncated_mass, jnp.float64),
        roundoff=jnp.asarray(roundoff, jnp.float64),
        log_mgf=jnp.asarray(log_mgf, jnp.float64),
        atom_inf=inf_mass if atom_inf is None else jnp.asarray(atom_inf, jnp.float64),
        pessimistic=pessimistic,
    )
