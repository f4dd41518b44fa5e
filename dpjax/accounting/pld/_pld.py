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
(cf. dp_accounting ``pld/privacy_loss_distribution.py``; STYLE.md item 8).

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

import functools
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

#: The ``lambda`` grid of the Chernoff / MGF tail bounds: ``-lambda`` and
#: ``+lambda`` for 64 geometric values in ``[1e-3, 1e3]`` (negative half first).
_POS = np.geomspace(1e-3, 1e3, 64)
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
        return self.pmf.shape[-1]

    def losses(self) -> Array:
        """The grid ``(lower + i) * bin_width``."""
        idx = jnp.arange(self.size, dtype=jnp.float64)
        return (self.lower.astype(jnp.float64) + idx) * self.bin_width


@functools.partial(jax.jit, static_argnames=("stride",))
def log_mgf_of(losses: Array, pmf: Array, stride: int = 1) -> Array:
    r"""``log sum_i pmf_i exp(lambda l_i)`` on :data:`LAMBDAS` (log-sum-exp; no mass: ``-inf``).

    Exact on the grid: any rounding of the losses here would be multiplied
    by the number of compositions in the Chernoff bounds.  With ``stride > 1``
    only every ``stride``-th ``lambda`` is evaluated and the others are set to
    ``+inf`` (a trivially valid bound, ignored by every Chernoff minimum):
    cheaper, for kernels that need the MGF only to place FFT windows.
    """
    lam = jnp.asarray(LAMBDAS[::stride])
    pmf = jnp.maximum(pmf, 0.0)
    logp = jnp.where(pmf > 0, jnp.log(jnp.where(pmf > 0, pmf, 1.0)), -jnp.inf)
    out = jax.scipy.special.logsumexp(logp[None, :] + lam[:, None] * losses[None, :], axis=1)
    if stride == 1:
        return out
    return jnp.full(len(LAMBDAS), jnp.inf).at[::stride].set(out)


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
    mgf_stride: int = 1,
) -> PLD:
    """Assemble a :class:`PLD`, computing ``log_mgf`` from the pmf when not given."""
    bin_width = jnp.asarray(bin_width, jnp.float64)
    lower = jnp.asarray(lower, jnp.int64)
    pmf = jnp.asarray(pmf, jnp.float64)
    inf_mass = jnp.asarray(inf_mass, jnp.float64)
    if log_mgf is None:
        idx = jnp.arange(pmf.shape[-1], dtype=jnp.float64)
        log_mgf = log_mgf_of((lower.astype(jnp.float64) + idx) * bin_width, pmf, mgf_stride)
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
