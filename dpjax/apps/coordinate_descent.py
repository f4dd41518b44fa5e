r"""DP proximal coordinate descent (Algorithm 3 of flipped-huber-mechanism, App. D).

One pass updates every coordinate ``j`` in turn with a clipped, noisy gradient and a
proximal step:

.. math:: g_j = \frac1n \sum_{i=1}^n \mathrm{clip}_{C_j}\big(\nabla_j \ell(\theta; x_i, y_i)\big)
          + \lambda_j Z_{l,j},\qquad
          \theta_j \leftarrow \mathrm{prox}_{\gamma_j r}\big(\theta_j - \gamma_j g_j\big),

with ``clip_C(u) = max(-C, min(C, u))``, step ``gamma_j = 1 / M_j`` (``M_j`` the
coordinate-wise smoothness), ``lambda_j = 2 C_j / n`` the replace-one sensitivity of the
clipped mean and ``Z`` the unit noise (drawn beforehand, so the loop is pure).  Losses:
squared ``(x^T theta - y)^2 / 2`` and logistic ``log(1 + exp(-y x^T theta))``
(``y in {-1, 1}``); regularisers: ``l1`` (soft thresholding, the lasso) and ``l2``
(``r = lam |theta|^2 / 2``, prox ``theta / (1 + gamma lam)``).  The margins ``X theta``
are kept up to date, so one coordinate costs ``O(n)``.  ``lax.fori_loop`` over passes
and coordinates; ``vmap`` over noise draws for several seeds.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import Array

LOSSES = ("squared", "logistic")
PENALTIES = ("l1", "l2")


def coordinate_gradients(loss: str, X: Array, y: Array, margins: Array, j) -> Array:
    r"""Per-sample ``nabla_j l`` for every row (``(n,)``), from the margins ``X theta``.

    .. math:: \nabla_j \ell = (x^\top\theta - y)\,x_j \ \text{(squared)},\qquad
              -y\,x_j\,\sigma(-y\,x^\top\theta) \ \text{(logistic)}

    Args:
      loss: ``"squared"`` or ``"logistic"``.
      X: ``(n, K)`` features.  y: ``(n,)`` targets.  margins: ``(n,)`` ``X theta``.
      j: coordinate index (traceable).

    Returns:
      ``(n,)`` per-sample gradients of coordinate ``j``.
    """
    xj = jax.lax.dynamic_index_in_dim(X, j, axis=1, keepdims=False)
    if loss == "squared":
        return (margins - y) * xj
    return -y * xj * jax.nn.sigmoid(-y * margins)


def _prox(penalty, value, step, lam):
    if penalty == "l1":
        return jnp.sign(value) * jnp.maximum(jnp.abs(value) - step * lam, 0.0)
    return value / (1.0 + step * lam)


@partial(jax.jit, static_argnames=("loss", "penalty"))
def dp_coordinate_descent(
    X: Array,
    y: Array,
    theta0: Array,
    noise: Array,
    steps: Array,
    clips: Array,
    lam: float,
    loss: str = "squared",
    penalty: str = "l1",
) -> Array:
    r"""Run ``L = noise.shape[0]`` passes of DP proximal coordinate descent (module docstring).

    Args:
      X: ``(n, K)`` features.
      y: ``(n,)`` targets (``{-1, 1}`` for the logistic loss).
      theta0: ``(K,)`` start.
      noise: ``(L, K)`` noise already scaled by each coordinate's sensitivity (zeros: the
        non-private algorithm).
      steps: ``(K,)`` step sizes ``1 / M_j``.
      clips: ``(K,)`` clipping thresholds ``C_j`` (``inf``: no clipping).
      lam: regularisation strength.
      loss: ``"squared"`` or ``"logistic"``.
      penalty: ``"l1"`` or ``"l2"``.

    Returns:
      ``(K,)`` the final iterate.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> jax.config.update("jax_enable_x64", True)
      >>> X = jnp.eye(2); y = jnp.array([1.0, -2.0])
      >>> th = dp_coordinate_descent(X, y, jnp.zeros(2), jnp.zeros((3, 2)), 2 * jnp.ones(2),
      ...                            jnp.full(2, jnp.inf), 0.0)
      >>> [round(float(v), 6) for v in th]
      [1.0, -2.0]
    """
    if loss not in LOSSES or penalty not in PENALTIES:
        raise ValueError(f"loss in {LOSSES}, penalty in {PENALTIES}; got {loss!r}, {penalty!r}")
    K = X.shape[1]

    def coordinate(j, state):
        theta, margins, row = state
        grads = coordinate_gradients(loss, X, y, margins, j)
        g = jnp.mean(jnp.clip(grads, -clips[j], clips[j])) + row[j]
        new = _prox(penalty, theta[j] - steps[j] * g, steps[j], lam)
        xj = jax.lax.dynamic_index_in_dim(X, j, axis=1, keepdims=False)
        margins = margins + xj * (new - theta[j])
        return theta.at[j].set(new), margins, row

    def one_pass(p, carry):
        theta, margins = carry
        theta, margins, _ = jax.lax.fori_loop(0, K, coordinate, (theta, margins, noise[p]))
        return theta, margins

    theta, _ = jax.lax.fori_loop(0, noise.shape[0], one_pass, (theta0, X @ theta0))
    return theta


def dp_coordinate_descent_seeds(X, y, theta0, noises, steps, clips, lam, loss, penalty) -> Array:
    """:func:`dp_coordinate_descent` ``vmap``-ed over a leading seed axis of ``noises``.

    Args:
      noises: ``(S, L, K)`` scaled noise, one ``(L, K)`` block per seed; the other
        arguments as in :func:`dp_coordinate_descent`.

    Returns:
      ``(S, K)`` final iterates.
    """
    run = partial(dp_coordinate_descent, loss=loss, penalty=penalty)
    return jax.vmap(run, in_axes=(None, None, None, 0, None, None, None))(
        X, y, theta0, noises, steps, clips, lam
    )
