r"""Sensitivity profiles (Definition 4 of inid-noise-laplace-beats-gaussian).

A profile ``lambda = [lambda_1, ..., lambda_K]`` holds the per-coordinate
sensitivities ``lambda_i = sup |[f(D) - f(D')]_i|`` over neighbouring
datasets.  Entries must be finite and ``>= 0`` and not all zero; a zero
entry is a coordinate that never changes (it needs no noise).

**Caveat (Remark 1).** ``||lambda||_p`` is only an *upper bound* on the
l_p-sensitivity: ``Delta_p <= ||lambda||_p``, tight for ``p = inf`` and
tight for every ``p`` only when some sign pattern ``u * lambda`` (``u`` in
``{-1, 1}^K``) is itself a realisable difference ``f(D) - f(D')``
("decoupled" coordinates).  For tightly coupled coordinates (e.g. ``f(i) =
e_i``) it overstates ``Delta_p``, so i.i.d. mechanisms calibrated to it are
over-noised and the i.n.i.d. "gain" over them is overstated.  The i.n.i.d.
conditions (Lemma 3, Theorem 5, Corollary 6) use the box ``|d_i| <=
lambda_i`` and are sufficient for any coupling; they are also necessary when
the coordinates are decoupled (Remark 3).
"""

from __future__ import annotations

import numpy as np

KINDS = ("uniform", "linear", "quadratic", "exponential", "one-hot")
NORMS = ("l1", "l2")


def validate_profile(profile, name: str = "profile") -> np.ndarray:
    r"""A float64 1-D copy of a sensitivity profile (Def. 4 of inid-noise-laplace-beats-gaussian).

    .. math:: \lambda_i = \sup_{D \simeq D'} |[f(D) - f(D')]_i|,\qquad \lambda_i \ge 0,\
              \lambda \ne 0

    Args:
      profile: the per-coordinate sensitivities (a number is a 1-entry profile).
      name: the argument's name, for the message.

    Returns:
      ``lambda`` as a 1-D float64 array.

    Raises:
      ValueError: not real, not 1-D, empty, non-finite, negative or all zero.
    """
    try:
        lam = np.array(profile, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of real numbers, got {profile!r}") from None
    if lam.ndim == 0:
        lam = lam.reshape(1)
    if lam.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {lam.shape}")
    if lam.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(lam)):
        bad = lam[~np.isfinite(lam)][0]
        raise ValueError(f"{name} entries must be finite (no NaN or inf), got {bad!r}")
    if np.any(lam < 0):
        raise ValueError(f"{name} entries must be >= 0 (sensitivities), got {lam[lam < 0][0]!r}")
    if not np.any(lam > 0):
        raise ValueError(f"{name} must have an entry > 0 (all are zero: nothing to protect)")
    return lam


def validate_weights(weights, dim: int) -> np.ndarray:
    """Error weights (Remark 4 of inid-noise-laplace-beats-gaussian): ``dim`` entries ``> 0``.

    Args:
      weights: the weights, or ``None`` (all ones).
      dim: the profile's number of coordinates ``K``.

    Returns:
      A ``(dim,)`` float64 array.

    Raises:
      ValueError: not real, the wrong length, non-finite or ``<= 0``.
    """
    if weights is None:
        return np.ones(dim)
    try:
        w = np.array(weights, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be a list of real numbers, got {weights!r}") from None
    if w.size != dim:
        raise ValueError(f"weights has {w.size} entries but the profile has {dim}")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be finite and > 0")
    return w


def normalize(profile, norm: str = "l2") -> np.ndarray:
    r"""``lambda / ||lambda||`` with ``norm`` in ``("l1", "l2")``.

    .. math:: \lambda / \|\lambda\|_1 \quad\text{or}\quad \lambda / \|\lambda\|_2

    Sec. V of inid-noise-laplace-beats-gaussian normalises to unit l2 for the Gaussian and
    unit l1 for the Laplace.

    Args:
      profile: the sensitivity profile.
      norm: ``"l1"`` or ``"l2"``.

    Returns:
      The normalised profile.

    Raises:
      ValueError: an invalid profile or ``norm``.
    """
    lam = validate_profile(profile)
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    return lam / (np.sum(lam) if norm == "l1" else np.sqrt(np.sum(lam * lam)))


def make_profile(kind: str, dim: int, norm: str | None = "l2") -> np.ndarray:
    r"""The profile families of Sec. V of inid-noise-laplace-beats-gaussian, optionally normalised.

    .. math:: \lambda_i = 1,\ i,\ i^2,\ e^{i},\ [i = K] \qquad (i = 1 \ldots K)

    for ``uniform``, ``linear``, ``quadratic``, ``exponential`` (generated as ``e^{i-K}``,
    the same direction, so it does not overflow for ``K > 709``) and ``one-hot`` (the last
    coordinate).

    Args:
      kind: one of :data:`KINDS`.
      dim: number of coordinates ``K >= 1``.
      norm: ``"l1"``, ``"l2"`` or ``None`` (unnormalised).

    Returns:
      The ``(K,)`` profile.

    Raises:
      ValueError: an unknown ``kind``, a bad ``dim`` or ``norm``.

    Example:
      >>> make_profile("linear", 3, norm="l1").tolist()
      [0.16666666666666666, 0.3333333333333333, 0.5]
    """
    if kind not in KINDS:
        raise ValueError(f"profile kind must be one of {KINDS}, got {kind!r}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    i = np.arange(1, dim + 1, dtype=np.float64)
    lam = {
        "uniform": np.ones(dim),
        "linear": i,
        "quadratic": i * i,
        "exponential": np.exp(i - dim),
        "one-hot": (i == dim).astype(np.float64),
    }[kind]
    return lam if norm is None else normalize(lam, norm)


def gini(profile) -> float:
    r"""Gini coefficient of a profile (Sec. V of inid-noise-laplace-beats-gaussian).

    .. math:: G(\lambda) = \frac{\sum_i \sum_j |\lambda_i - \lambda_j|}{2K\|\lambda\|_1}
              = \frac{\sum_i (2i - K - 1)\,\lambda_{(i)}}{K\|\lambda\|_1}

    (the right form, on the sorted profile, in ``O(K log K)``): 0 for a uniform profile,
    ``1 - 1/K`` for one-hot.

    Args:
      profile: the sensitivity profile.

    Returns:
      ``G`` in ``[0, 1 - 1/K]``.

    Example:
      >>> gini([0.0, 0.0, 0.0, 1.0])  # one-hot: 1 - 1/K
      0.75
    """
    lam = np.sort(validate_profile(profile))
    k = lam.size
    coef = 2.0 * np.arange(1, k + 1) - k - 1.0
    return float(2.0 * np.sum(coef * lam) / (2.0 * k * np.sum(lam)))


def sensitivity_norm(profile, p: float) -> float:
    r"""``||lambda||_p``: an upper bound on ``Delta_p`` (Remark 1; see the module caveat).

    .. math:: \Delta_p \le \|\lambda\|_p = \Big(\sum_i \lambda_i^p\Big)^{1/p}

    (Remark 1 of inid-noise-laplace-beats-gaussian): exact for ``p = inf``; for finite
    ``p`` exact only for decoupled coordinates.

    Args:
      profile: the sensitivity profile.
      p: ``p >= 1`` or ``inf``.

    Returns:
      ``||lambda||_p``.

    Raises:
      ValueError: an invalid profile or ``p < 1``.
    """
    lam = validate_profile(profile)
    if p == np.inf:
        return float(np.max(lam))
    if not (p >= 1):
        raise ValueError(f"p must be >= 1 (or inf), got {p!r}")
    return float(np.sum(lam**p) ** (1.0 / p))
