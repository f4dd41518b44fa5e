r"""DP-PCA: noise on the upper triangle of ``X^T X`` (inid-noise-laplace-beats-gaussian, VI-B).

With a *public* per-feature bound ``|x_a| <= B_a``, replacing one row changes entry
``(a, b)`` of ``X^T X`` by at most

.. math:: \lambda_{ab} = 2 B_a B_b \ (a < b),\qquad \lambda_{aa} = B_a^2,

(diagonal entries lie in ``[0, B_a^2]``).  The ``d(d+1)/2`` entries are released with
Gaussian or Laplace noise, i.i.d. (one scale from ``||lambda||_2`` / ``||lambda||_1``) or
i.n.i.d. (the certified design of :func:`dpjax.inid.design`, Theorems 4-5), the noisy
matrix is symmetrised and its top ``r`` eigenvectors returned.  Subspace error:
``||U U^T - V V^T||_F^2 / (2 r)`` (``0``: same subspace, ``1``: orthogonal).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.inid import design


def upper_triangle_profile(feature_bound) -> np.ndarray:
    """Sensitivity profile ``lambda`` of the upper triangle (row-major, diagonal included).

    Args:
      feature_bound: ``(d,)`` public bounds ``B_a >= |x_a|``.

    Returns:
      ``(d(d+1)/2,)`` the profile of the module docstring.
    """
    B = np.asarray(feature_bound, dtype=np.float64)
    iu = np.triu_indices(B.size)
    lam = 2.0 * B[iu[0]] * B[iu[1]]
    return np.where(iu[0] == iu[1], lam / 2.0, lam)


def subspace_error(U, V) -> float:
    r"""``||U U^T - V V^T||_F^2 / (2 r)`` for orthonormal ``(d, r)`` bases ``U``, ``V``."""
    U, V = np.asarray(U), np.asarray(V)
    return float(np.sum((U @ U.T - V @ V.T) ** 2) / (2 * U.shape[1]))


class DPPCA:
    r"""Differentially private PCA (module docstring), scikit-learn style.

    Args:
      n_components: ``r``.
      epsilon, delta: privacy target (``epsilon=None``: non-private).
      feature_bound: public bound on ``|x_a|`` (scalar or per feature); required.
      mechanism: ``"gaussian"`` or ``"laplace"``.
      allocation: ``"inid"`` (certified per-entry scales) or ``"iid"``.
      random_state: seed of the noise.

    Attributes (after ``fit``): ``components_`` ``(r, d)``, ``scales_`` per entry,
    ``epsilon_``, ``delta_`` (the design's certified target), ``design_``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import numpy as np
      >>> X = np.random.default_rng(0).uniform(-1, 1, (500, 4)) * [1, 1, 0.1, 0.1]
      >>> p = DPPCA(2, epsilon=2.0, delta=1e-5, feature_bound=1.0).fit(X)
      >>> p.components_.shape
      (2, 4)
    """

    def __init__(self, n_components, epsilon=1.0, delta=1e-5, feature_bound=None,
                 mechanism="gaussian", allocation="inid", random_state=0):
        self.n_components, self.epsilon, self.delta = n_components, epsilon, delta
        self.feature_bound, self.mechanism = feature_bound, mechanism
        self.allocation, self.random_state = allocation, random_state

    def fit(self, X, y=None):
        """Fit on ``X`` ``(n, d)``; returns ``self``."""
        if self.feature_bound is None:
            raise ValueError("feature_bound (a public bound on |x_a|) is required")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            raise ValueError(f"X must be a finite (n, d) array, got shape {X.shape}")
        d = X.shape[1]
        if int(self.n_components) != self.n_components or not 1 <= self.n_components <= d:
            raise ValueError(f"n_components must be an integer in [1, {d}]")
        if self.allocation not in ("inid", "iid"):
            raise ValueError(f"allocation must be 'inid' or 'iid', got {self.allocation!r}")
        bound = np.broadcast_to(np.asarray(self.feature_bound, dtype=np.float64), (d,))
        if not np.all(np.isfinite(bound) & (bound > 0)):
            raise ValueError(f"feature_bound must be finite and > 0, got {self.feature_bound}")
        iu = np.triu_indices(d)
        entries = (X.T @ X)[iu]
        if self.epsilon is None:
            self.design_, self.scales_ = None, np.zeros(entries.size)
            self.epsilon_, self.delta_ = float("inf"), 0.0
        else:
            delta = self.delta if self.mechanism == "gaussian" else 0.0
            des = design(self.mechanism, upper_triangle_profile(bound), self.epsilon, delta)
            self.design_ = des
            self.scales_ = (np.asarray(des.scales) if self.allocation == "inid"
                            else np.full(entries.size, float(des.iid_scale)))
            self.epsilon_, self.delta_ = float(des.epsilon), float(des.delta)
            key = jax.random.key(self.random_state)
            draw = (jax.random.normal if self.mechanism == "gaussian" else jax.random.laplace)
            entries = entries + self.scales_ * np.asarray(
                draw(key, (entries.size,), dtype=jnp.float64))
        A = np.zeros((d, d))
        A[iu] = entries
        A = A + np.triu(A, 1).T
        _, vecs = np.linalg.eigh(A)
        self.components_ = vecs[:, ::-1][:, : self.n_components].T
        return self

    def transform(self, X):
        """Project ``X`` on the components."""
        return np.asarray(X, dtype=np.float64) @ self.components_.T
