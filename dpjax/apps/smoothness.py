r"""Private estimation of DP-CD's coordinate-wise smoothness constants.

G. Muthukrishnan and S. Kalyani, "Differential Privacy with Higher Utility by Exploiting
Coordinate-wise Disparity: Laplace Mechanism Can Beat Gaussian in High Dimensions"
(inid-noise-laplace-beats-gaussian), App. C, after P. Mangold, A. Bellet, J. Salmon and
M. Tommasi, "Differentially private coordinate descent for composite empirical risk
minimization", ICML 2022, App. F.  For the generalised linear models of DP-CD the
coordinate-wise smoothness is
``M_i = c (1/N) sum_n x_{n,i}^2`` (``c = 1`` squared loss, ``c = 1/4`` logistic loss).
With a *public* bound ``b_i >= |x_{n,i}|`` the released statistic is the clipped mean

.. math:: s_i = \frac1N \sum_{n=1}^N \min\big(x_{n,i}^2,\ b_i^2\big),\qquad
          \lambda_i = \frac{b_i^2}{N}

(``lambda_i``: its replace-one sensitivity, each term lies in ``[0, b_i^2]``), perturbed
with Laplace noise of the certified least-MSE i.n.i.d. design at ``epsilon'``
(:func:`dpjax.inid.design`, Theorem 5; with one bound for every feature it is the paper's
``b_i^2 K / (N epsilon')`` per coordinate).  The release is ``epsilon'``-DP; what follows
is post-processing: ``M_i = c min(b_i^2, max(s_i + T_i, beta_i))`` with ``beta_i`` the
Laplace scale of coordinate ``i`` (a floor, so that the step ``1 / M_i`` stays finite; the
paper does not state one).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.inid import InidDesign, design


class SmoothnessEstimate(NamedTuple):
    """A privately estimated smoothness profile.

    Attributes:
      smoothness: ``(K,)`` the constants ``M_i`` (post-processed, module docstring).
      statistic: ``(K,)`` the released noisy clipped means ``s_i + T_i``.
      sensitivity: ``(K,)`` ``b_i^2 / N``.
      epsilon: the certified epsilon of the release (pure DP, ``delta = 0``).
      design: the certified Laplace :class:`dpjax.inid.InidDesign`.
    """

    smoothness: np.ndarray
    statistic: np.ndarray
    sensitivity: np.ndarray
    epsilon: float
    design: InidDesign


def smoothness_statistic(X, feature_bound) -> tuple[np.ndarray, np.ndarray]:
    r"""The clipped second moments ``s_i`` and their replace-one sensitivity (module docstring).

    Args:
      X: ``(N, K)`` features.
      feature_bound: ``(K,)`` (or scalar) public bounds ``b_i > 0``.

    Returns:
      ``(s, lambda)``: ``s_i = mean_n min(x_{n,i}^2, b_i^2)`` and ``lambda_i = b_i^2 / N``.

    Example:
      >>> s, lam = smoothness_statistic([[0.5, 3.0], [1.0, -1.0]], 2.0)
      >>> s.tolist(), lam.tolist()
      ([0.625, 2.5], [2.0, 2.0])
    """
    X = np.asarray(X, dtype=np.float64)
    b2 = np.broadcast_to(np.asarray(feature_bound, dtype=np.float64), X.shape[1:]) ** 2
    return np.mean(np.minimum(X * X, b2), axis=0), b2 / X.shape[0]


def private_smoothness(X, feature_bound, epsilon: float, key, curvature: float = 1.0
                       ) -> SmoothnessEstimate:
    r"""``epsilon``-DP estimate of the smoothness constants ``M_i`` (module docstring).

    Args:
      X: ``(N, K)`` features.
      feature_bound: ``(K,)`` (or scalar) public bounds ``b_i > 0``.
      epsilon: the budget ``epsilon' > 0`` of the release.
      key: a ``jax.random`` key.
      curvature: ``c`` (``1`` squared loss, ``1/4`` logistic loss).

    Returns:
      A :class:`SmoothnessEstimate` whose ``epsilon`` is certified (``<= epsilon``).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import numpy as np
      >>> X = np.random.default_rng(0).uniform(-1, 1, (10_000, 2)) * [1.0, 0.1]
      >>> est = private_smoothness(X, 1.0, 1.0, jax.random.key(0))
      >>> [round(float(m), 2) for m in est.smoothness], bool(est.epsilon <= 1.0)
      ([0.33, 0.0], True)
    """
    stat, lam = smoothness_statistic(X, feature_bound)
    des = design("laplace", lam, float(epsilon), 0.0)
    scales = np.asarray(des.scales)
    noisy = stat + scales * np.asarray(
        jax.random.laplace(key, stat.shape, dtype=jnp.float64))
    b2 = lam * np.asarray(X).shape[0]
    smooth = curvature * np.minimum(b2, np.maximum(noisy, scales))
    return SmoothnessEstimate(smooth, noisy, lam, float(des.epsilon), des)
