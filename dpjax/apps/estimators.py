r"""scikit-learn style DP estimators on DP coordinate descent (flipped-huber-mechanism, Sec. VI-A).

:class:`DPLasso` minimises ``(1/2n) |y - X theta|^2 + lam |theta|_1`` (scikit-learn's
``Lasso(alpha=lam, fit_intercept=False)``); :class:`DPLogisticRegression` minimises
``(1/n) sum log(1 + exp(-y x^T theta)) + (lam/2) |theta|^2`` (scikit-learn's
``LogisticRegression(C=1/(n lam), fit_intercept=False)``).  The step sizes come from a
*public* bound ``B_j >= |x_ij|`` (``feature_bound``, never read off the data):
``M_j = B_j^2`` (squared) or ``B_j^2 / 4`` (logistic), and the clipping thresholds are
``C_j = clip sqrt(M_j)`` (per-coordinate clipping in proportion to the coordinate-wise
smoothness).  Privacy does not depend on the bound being right: every per-sample update is
clipped, so update ``j`` has replace-one sensitivity ``lambda_j = 2 C_j / n`` and the run is
certified by :func:`dpjax.apps.privacy.calibrate_dpcd_noise` (``epsilon_``, ``delta_``).
``epsilon=None`` fits the non-private algorithm (no clipping, no noise; ``epsilon_ = inf``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.apps.coordinate_descent import dp_coordinate_descent
from dpjax.apps.privacy import calibrate_dpcd_noise
from dpjax.noise.flipped_huber import FlippedHuber


class _DPCoordinateDescent:
    _loss = "squared"
    _penalty = "l1"
    _curvature = 1.0

    def __init__(self, epsilon=1.0, delta=1e-5, lam=0.1, feature_bound=None, passes=10,
                 mechanism="gaussian", clip=1.0, random_state=0):
        self.epsilon, self.delta, self.lam = epsilon, delta, lam
        self.feature_bound, self.passes, self.mechanism = feature_bound, passes, mechanism
        self.clip, self.random_state = clip, random_state

    def _check(self, X, y):
        if self.feature_bound is None:
            raise ValueError("feature_bound (a public bound on |x_ij|) is required; it must "
                             "not be derived from the private data")
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] < 1:
            raise ValueError(f"X must be (n, K) and y (n,); got {X.shape} and {y.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or inf")
        bound = np.broadcast_to(np.asarray(self.feature_bound, dtype=np.float64), X.shape[1:])
        if not np.all(np.isfinite(bound) & (bound > 0)):
            raise ValueError(f"feature_bound must be finite and > 0, got {self.feature_bound}")
        if not (np.isfinite(self.lam) and self.lam >= 0):
            raise ValueError(f"lam must be finite and >= 0, got {self.lam}")
        if int(self.passes) != self.passes or self.passes < 1:
            raise ValueError(f"passes must be a positive integer, got {self.passes}")
        if not (np.isfinite(self.clip) and self.clip > 0):
            raise ValueError(f"clip must be finite and > 0, got {self.clip}")
        return X, y, bound

    def _fit(self, X, y, bound):
        n, K = X.shape
        smooth = self._curvature * bound**2
        steps = 1.0 / smooth
        if self.epsilon is None:
            clips = np.full(K, np.inf)
            noise = np.zeros((self.passes, K))
            self.noise_, self.epsilon_, self.delta_ = None, float("inf"), 0.0
        else:
            clips = self.clip * np.sqrt(smooth)
            unit = calibrate_dpcd_noise(self.epsilon, self.delta, K, self.passes, self.mechanism)
            key = jax.random.key(self.random_state)
            shape = (self.passes, K)
            if unit.alpha == 0.0:  # FH(0, g^2) is N(0, g^2)
                draws = unit.gamma * jax.random.normal(key, shape, dtype=jnp.float64)
            else:
                draws = FlippedHuber(unit.alpha, unit.gamma).sample(key, shape, dtype=jnp.float64)
            noise = np.asarray(draws) * (2.0 * clips / n)
            self.noise_, self.epsilon_, self.delta_ = unit, unit.epsilon, unit.delta
        self.sensitivities_ = 2.0 * clips / n
        coef = dp_coordinate_descent(
            jnp.asarray(X), jnp.asarray(y, dtype=jnp.float64), jnp.zeros(K), jnp.asarray(noise),
            jnp.asarray(steps), jnp.asarray(clips), float(self.lam),
            loss=self._loss, penalty=self._penalty)
        self.coef_ = np.asarray(coef)
        self.n_features_in_ = K
        return self

    def _check_predict(self, X):
        if not hasattr(self, "coef_"):
            raise ValueError(f"{type(self).__name__} is not fitted; call fit first")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must be (m, {self.n_features_in_}), got {X.shape}")
        return X


class DPLasso(_DPCoordinateDescent):
    r"""Differentially private lasso by DP proximal coordinate descent (module docstring).

    Args:
      epsilon, delta: privacy target of the whole fit (``epsilon=None``: non-private).
      lam: l1 strength (scikit-learn's ``alpha``).
      feature_bound: public bound on ``|x_ij|`` (scalar or per feature); required.
      passes: number of passes ``L``.
      mechanism: ``"gaussian"`` or ``"flipped_huber"`` (Theorem 9 of flipped-huber-mechanism).
      clip: clipping thresholds ``C_j = clip sqrt(M_j)``.
      random_state: seed of the noise.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import numpy as np
      >>> X = np.random.default_rng(0).uniform(-1, 1, (200, 3)); y = X @ [1.0, 0.0, -1.0]
      >>> m = DPLasso(epsilon=1.0, delta=1e-5, lam=0.01, feature_bound=1.0).fit(X, y)
      >>> m.coef_.shape, bool(m.epsilon_ <= 1.0)
      ((3,), True)
    """

    def fit(self, X, y):
        """Fit on ``X`` ``(n, K)`` and real targets ``y`` ``(n,)``; returns ``self``."""
        X, y, bound = self._check(X, y)
        if not np.all(np.isfinite(y.astype(np.float64))):
            raise ValueError("y contains NaN or inf")
        return self._fit(X, y.astype(np.float64), bound)

    def predict(self, X):
        """``X theta``."""
        return self._check_predict(X) @ self.coef_


class DPLogisticRegression(_DPCoordinateDescent):
    r"""Differentially private l2-regularised logistic regression by DP coordinate descent.

    Same arguments as :class:`DPLasso`; ``lam`` is the l2 strength (scikit-learn's
    ``C = 1 / (n lam)``).  ``y`` must hold exactly two classes.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import numpy as np
      >>> X = np.random.default_rng(0).uniform(-1, 1, (200, 2)); y = (X[:, 0] > 0).astype(int)
      >>> m = DPLogisticRegression(epsilon=None, lam=0.01, feature_bound=1.0, passes=50)
      >>> float(np.mean(m.fit(X, y).predict(X) == y)) > 0.9
      True
    """

    _loss = "logistic"
    _penalty = "l2"
    _curvature = 0.25

    def fit(self, X, y):
        """Fit on ``X`` ``(n, K)`` and two-class labels ``y``; returns ``self``."""
        X, y, bound = self._check(X, y)
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(f"y must hold exactly two classes, got {classes.size}")
        self.classes_ = classes
        return self._fit(X, np.where(y == classes[1], 1.0, -1.0), bound)

    def decision_function(self, X):
        """``X theta`` (positive: ``classes_[1]``)."""
        return self._check_predict(X) @ self.coef_

    def predict(self, X):
        """The class of the sign of ``X theta``."""
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
