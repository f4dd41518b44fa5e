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

The improved DP-CD of inid-noise-laplace-beats-gaussian (Sec. VI-A, App. C, Algorithm 2)
is ``allocation="inid"``: the same clipped updates, with the per-pass zCDP share divided
across coordinates by Theorem 4 of that paper (:func:`dpjax.apps.privacy.calibrate_dpcd_inid`,
noise ``sigma_i^2 propto lambda_i`` on the parameter-space sensitivities
``lambda_i = 2 C_i / (n M_i)``) instead of DP-CD's ``sigma_i propto lambda_i``.  With one
bound for every feature the profile is flat and the two coincide; the gain needs unequal
``M_i``, which ``smoothness="private"`` supplies: a fraction ``smoothness_fraction`` of
``epsilon`` buys an ``epsilon'``-DP Laplace estimate of ``M_i = c mean_n x_ni^2``
(:func:`dpjax.apps.smoothness.private_smoothness`), and the optimisation runs on the
remaining ``epsilon - epsilon'`` (basic composition; ``epsilon_`` is the certified sum).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.apps.coordinate_descent import dp_coordinate_descent
from dpjax.apps.privacy import calibrate_dpcd_inid, calibrate_dpcd_noise
from dpjax.apps.smoothness import private_smoothness, smoothness_statistic
from dpjax.certificate import CertificationError
from dpjax.noise.flipped_huber import FlippedHuber

ALLOCATIONS = ("proportional", "inid")
SMOOTHNESS = ("bound", "private")
_SAFETY = 1.0 - 2.0**-40  # the optimisation's share stays a hair below the remaining budget


class _DPCoordinateDescent:
    _loss = "squared"
    _penalty = "l1"
    _curvature = 1.0

    def __init__(self, epsilon=1.0, delta=1e-5, lam=0.1, feature_bound=None, passes=10,
                 mechanism="gaussian", clip=1.0, random_state=0, allocation="proportional",
                 smoothness="bound", smoothness_fraction=0.1):
        self.epsilon, self.delta, self.lam = epsilon, delta, lam
        self.feature_bound, self.passes, self.mechanism = feature_bound, passes, mechanism
        self.clip, self.random_state = clip, random_state
        self.allocation, self.smoothness = allocation, smoothness
        self.smoothness_fraction = smoothness_fraction

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
        if self.allocation not in ALLOCATIONS:
            raise ValueError(f"allocation must be one of {ALLOCATIONS}, got {self.allocation!r}")
        if self.allocation == "inid" and self.mechanism != "gaussian":
            raise ValueError("allocation='inid' (improved DP-CD) needs mechanism='gaussian'")
        if self.smoothness not in SMOOTHNESS:
            raise ValueError(f"smoothness must be one of {SMOOTHNESS}, got {self.smoothness!r}")
        if self.smoothness == "private" and not 0 < self.smoothness_fraction < 1:
            raise ValueError(f"smoothness_fraction must lie in (0, 1), got "
                             f"{self.smoothness_fraction}")
        return X, y, bound

    def _smoothness(self, X, bound, key):
        """``(M, epsilon')``: the public bound ``c B^2``, or the private estimate."""
        if self.smoothness == "bound":
            return self._curvature * bound**2, 0.0
        if self.epsilon is None:  # the non-private limit: the exact clipped statistic
            stat = smoothness_statistic(X, bound)[0]
            return self._curvature * np.maximum(stat, 1e-12 * bound**2), 0.0
        est = private_smoothness(X, bound, self.smoothness_fraction * self.epsilon, key,
                                 self._curvature)
        self.smoothness_estimate_ = est
        return est.smoothness, est.epsilon

    def _noise(self, key, steps, sens, epsilon):
        """``(L, K)`` gradient-space noise and the certified ``(epsilon, delta)`` of the run."""
        shape = (self.passes, steps.size)
        if self.allocation == "inid":  # improved DP-CD: Theorem 4 in the parameter space
            nz = calibrate_dpcd_inid(epsilon, self.delta, steps * sens, self.passes)
            self.noise_, self.noise_std_ = nz, nz.scales / steps
            draws = jax.random.normal(key, shape, dtype=jnp.float64)
            return np.asarray(draws) * self.noise_std_, nz.epsilon, nz.delta
        unit = calibrate_dpcd_noise(epsilon, self.delta, steps.size, self.passes,
                                    self.mechanism)
        if unit.alpha == 0.0:  # FH(0, g^2) is N(0, g^2)
            draws = unit.gamma * jax.random.normal(key, shape, dtype=jnp.float64)
        else:
            draws = FlippedHuber(unit.alpha, unit.gamma).sample(key, shape, dtype=jnp.float64)
        self.noise_, self.noise_std_ = unit, np.sqrt(unit.variance) * sens
        return np.asarray(draws) * sens, unit.epsilon, unit.delta

    def _fit(self, X, y, bound):
        n, K = X.shape
        key = jax.random.key(self.random_state)
        smooth, eps_smooth = self._smoothness(X, bound, jax.random.fold_in(key, 1))
        steps = 1.0 / smooth
        self.smoothness_, self.smoothness_epsilon_ = smooth, eps_smooth
        if self.epsilon is None:
            clips = np.full(K, np.inf)
            noise = np.zeros((self.passes, K))
            self.noise_, self.noise_std_ = None, np.zeros(K)
            self.epsilon_, self.delta_ = float("inf"), 0.0
        else:
            clips = self.clip * np.sqrt(smooth)
            target = (self.epsilon - eps_smooth) * _SAFETY if eps_smooth else self.epsilon
            noise, eps_cd, self.delta_ = self._noise(key, steps, 2.0 * clips / n, target)
            # basic composition of the epsilon'-DP estimate and the (eps_cd, delta) run
            self.epsilon_ = (float(np.nextafter(eps_smooth + eps_cd, np.inf)) if eps_smooth
                             else eps_cd)
            if not self.epsilon_ <= self.epsilon:
                raise CertificationError(f"DP-CD: epsilon {self.epsilon_} > {self.epsilon}")
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
      allocation: ``"proportional"`` (DP-CD: noise proportional to each update's
        sensitivity) or ``"inid"`` (improved DP-CD, Gaussian only; module docstring).
      smoothness: ``"bound"`` (``M_j = B_j^2``, public) or ``"private"`` (estimated with
        ``smoothness_fraction * epsilon``; the exact statistic when ``epsilon=None``).
      smoothness_fraction: the share ``epsilon' / epsilon`` in ``(0, 1)``.

    Attributes (after ``fit``): ``coef_``; ``epsilon_``, ``delta_`` (certified, the
    estimate's ``epsilon'`` included); ``smoothness_`` (the ``M_j`` used),
    ``smoothness_epsilon_`` (``epsilon'``, 0 when nothing is estimated) and
    ``smoothness_estimate_`` (private estimates only); ``sensitivities_`` (``2 C_j / n``);
    ``noise_`` (:class:`dpjax.apps.privacy.UnitNoise` or ``InidNoise``) and ``noise_std_``
    (each update's noise standard deviation).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import numpy as np
      >>> X = np.random.default_rng(0).uniform(-1, 1, (200, 3)); y = X @ [1.0, 0.0, -1.0]
      >>> m = DPLasso(epsilon=1.0, delta=1e-5, lam=0.01, feature_bound=1.0).fit(X, y)
      >>> m.coef_.shape, bool(m.epsilon_ <= 1.0)
      ((3,), True)
      >>> imp = DPLasso(epsilon=1.0, lam=0.01, feature_bound=1.0, allocation="inid",
      ...               smoothness="private").fit(X, y)
      >>> bool(imp.smoothness_epsilon_ < imp.epsilon_ <= 1.0)
      True
    """

    def fit(self, X, y):
        """Fit on ``X`` ``(n, K)`` and real targets ``y`` ``(n,)``; returns ``self``.

        Needs float64: enable x64 first (``jax.config.update("jax_enable_x64", True)``, or
        call ``fit`` inside ``with jax.enable_x64(True):``); with x64 off the privacy
        calibration raises :class:`dpjax.numerics.Float64RequiredError` before any noise
        is drawn.
        """
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
