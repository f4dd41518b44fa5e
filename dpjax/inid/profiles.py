r"""Sensitivity profiles (Definition 4 of inid-noise-laplace-beats-gaussian).

A profile ``lambda = [lambda_1, ..., lambda_K]`` holds the per-coordinate
sensitivities ``lambda_i = sup |[f(D) - f(D')]_i|`` over neighbouring
datasets.  Entries must be finite and ``>= 0`` and not all zero; a zero
entry is a coordinate that never changes (it needs no noise).  A positive entry
below the least normal float64 ``2.2250738585072014e-308`` (a subnormal, which
XLA flushes to zero: the coordinate would get no noise) is rounded *up* to it,
an upper bound on that coordinate's sensitivity, so the designs stay sound.

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

from dpjax._validate import TINY, as_array, shown
from dpjax.numerics import logsumexp_host

KINDS = ("uniform", "linear", "quadratic", "power", "exponential", "one-hot")
NORMS = ("l1", "l2")


def _has_non_real_entries(profile) -> bool:
    """True if ``profile`` holds strings, booleans or complex numbers, which ``np.array(...,
    float64)`` would turn into numbers (``[True, 1.0]`` became ``[1.0, 1.0]``)."""
    if isinstance(profile, np.ndarray):
        return profile.dtype.kind not in "iuf"
    if isinstance(profile, (str, bytes, bool, np.bool_, complex)):
        return True
    if isinstance(profile, (list, tuple)):
        return any(_has_non_real_entries(x) for x in profile)
    return False


def validate_profile(profile, name: str = "profile") -> np.ndarray:
    """A float64 1-D copy of ``profile`` (Definition 4 of inid-noise-laplace-beats-gaussian).

    Args:
      profile: the sensitivities ``lambda_i`` (a scalar is one coordinate).
      name: what to call it in error messages.

    Returns:
      The profile as a 1-D float64 array; positive entries below the least normal float64
      (subnormals, which XLA flushes to zero) rounded up to it (an upper bound: sound).

    Raises:
      ValueError: if it is empty, non-finite, negative or all zero.
    """
    if _has_non_real_entries(profile):
        raise ValueError(
            f"{name} must be a list of real numbers (not strings or booleans), got "
            f"{shown(profile)}"
        )
    try:
        lam = np.array(profile, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of real numbers, got {shown(profile)}") from None
    if lam.ndim == 0:
        lam = lam.reshape(1)
    if lam.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {lam.shape}")
    if lam.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(lam)):
        bad = lam[~np.isfinite(lam)][0]
        raise ValueError(f"{name} entries must be finite (no NaN or inf), got {shown(bad)}")
    if np.any(lam < 0):
        raise ValueError(
            f"{name} entries must be >= 0 (sensitivities), got {shown(lam[lam < 0][0])}"
        )
    if not np.any(lam > 0):
        raise ValueError(f"{name} must have an entry > 0 (all are zero: nothing to protect)")
    return np.where((lam > 0) & (lam < TINY), TINY, lam)


def subnormal_count(profile) -> int:
    """How many entries of ``profile`` :func:`validate_profile` rounds up to the least normal
    float64 (positive and below ``2.2250738585072014e-308``).

    Args:
      profile: the sensitivity profile as given.
    """
    lam = np.asarray(profile, dtype=np.float64)
    return int(np.count_nonzero((lam > 0) & (lam < TINY)))


def validate_weights(weights, dim: int) -> np.ndarray:
    """Error weights ``w_i`` of the weighted error ``sum_i w_i E|T_i|^p`` (Remark 4).

    Args:
      weights: ``dim`` finite entries ``> 0``, or ``None`` (ones).
      dim: the number of coordinates.

    Returns:
      The weights as a 1-D float64 array.
    """
    if weights is None:
        return np.ones(dim)
    try:
        w = np.array(weights, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be a list of real numbers, got {weights!r}") from None
    if w.size != dim:
        raise ValueError(f"weights has {w.size} entries but the profile has {dim}")
    bad = ~np.isfinite(w) | ~(w > 0)
    if np.any(bad):
        raise ValueError(f"weights must be finite and > 0, got {shown(w[bad][0])}")
    return w


def normalize(profile, norm: str = "l2") -> np.ndarray:
    r"""``lambda / ||lambda||`` with ``norm`` in ``("l1", "l2")``.

    Sec. V normalises to unit l2 for the Gaussian and unit l1 for the Laplace.

    Args:
      profile: the sensitivity profile.
      norm: ``"l1"`` or ``"l2"``.

    Returns:
      The normalised profile (entries that fall below the least normal float64 rounded up
      to it, as :func:`validate_profile` does).
    """
    lam = validate_profile(profile)
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    unit = lam / np.max(lam)  # its l_p norms cannot overflow
    size = np.sum(unit) if norm == "l1" else np.sqrt(np.sum(unit * unit))
    # a positive entry stays positive: what underflows is rounded up to TINY (upper bound)
    return np.where(lam > 0, np.maximum(unit / size, TINY), 0.0)


def _from_log(log_lam: np.ndarray, norm: str | None) -> np.ndarray:
    """``exp(log_lam)`` normalised in log space (the log of ``||.||_p^p`` by
    :func:`dpjax.numerics.logsumexp_host`, shifted by the largest term), so that no entry
    overflows; every entry rounded up to at least the least normal float64 (none may
    underflow to 0: a coordinate without noise)."""
    if norm is not None:
        power = 1.0 if norm == "l1" else 2.0
        log_lam = log_lam - logsumexp_host(power * log_lam) / power
    return np.maximum(np.exp(log_lam), TINY)


def make_profile(kind: str, dim: int, norm: str | None = "l2", exponent=None) -> np.ndarray:
    r"""The paper's profile families (Sec. V), optionally normalised.

    ``uniform``: ``lambda_i = 1``; ``linear``: ``i``; ``quadratic``: ``i^2``; ``power``:
    ``i^a`` for a real ``exponent = a`` (``a = 1, 2`` are ``linear`` and ``quadratic``,
    ``a < 0`` a decaying power law, the ``nu = O(K^{-1})`` disparity of Sec. IV-B);
    ``exponential``: ``e^i``; ``one-hot``: ``e_K`` (last coordinate).  ``i = 1..K``.  The
    exponential is generated as ``e^{i-K}`` and the power as ``(i / i_max)^a`` (``i_max`` the
    index of the largest entry), the same directions, so that they do not overflow for any
    ``K`` or ``a``; both are normalised in log space.  Entries below the least normal float64
    (the exponential's first ``K - 708`` or so) are rounded up to it
    (:func:`validate_profile`): an upper bound on their true, positive sensitivity, where
    an underflow to 0 would leave those coordinates without noise.

    Args:
      kind: one of :data:`KINDS`.
      dim: the number of coordinates ``K >= 1``.
      norm: ``"l1"``, ``"l2"`` or ``None`` (not normalised).
      exponent: the real exponent ``a`` of ``kind = "power"`` (required there, and only
        there).

    Returns:
      The profile.

    Example:
      >>> make_profile("power", 4, None, exponent=-1.0).tolist()
      [1.0, 0.5, 0.3333333333333333, 0.25]
    """
    if kind not in KINDS:
        raise ValueError(f"profile kind must be one of {KINDS}, got {kind!r}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    if norm is not None and norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if (kind == "power") != (exponent is not None):
        raise ValueError("exponent goes with profile kind 'power' only, and 'power' needs it "
                         f"(lambda_i = i^exponent); got kind {kind!r}, exponent {exponent!r}")
    i = np.arange(1, dim + 1, dtype=np.float64)
    if kind == "exponential":
        return _from_log(i - dim, norm)
    if kind == "power":
        a = as_array("exponent", exponent)
        if a.ndim != 0 or not np.isfinite(a):
            raise ValueError(f"exponent must be a finite real number, got {shown(exponent)}")
        a = float(a)
        log_i = np.log(i)
        return _from_log(a * (log_i - (log_i[-1] if a > 0 else 0.0)), norm)
    lam = {
        "uniform": np.ones(dim),
        "linear": i,
        "quadratic": i * i,
        "one-hot": (i == dim).astype(np.float64),
    }[kind]
    return lam if norm is None else normalize(lam, norm)


def gini(profile) -> float:
    r"""Gini coefficient ``sum_i sum_j |lambda_i - lambda_j| / (2 K ||lambda||_1)`` (Sec. V).

    0 for a uniform profile, ``1 - 1/K`` for one-hot.  Computed in
    ``O(K log K)`` from the sorted profile:
    ``sum_{i,j} |x_i - x_j| = 2 sum_i (2i - K - 1) x_(i)``.

    Args:
      profile: the sensitivity profile.

    Returns:
      The Gini coefficient.
    """
    lam = np.sort(validate_profile(profile))
    k = lam.size
    coef = 2.0 * np.arange(1, k + 1) - k - 1.0
    return float(2.0 * np.sum(coef * lam) / (2.0 * k * np.sum(lam)))


def sensitivity_norm(profile, p: float) -> float:
    r"""``||lambda||_p``: an upper bound on ``Delta_p`` (Remark 1; see module caveat).

    .. math:: \|\lambda\|_p = \Big(\sum_i \lambda_i^p\Big)^{1/p} \ge \Delta_p .

    Exact for ``p = inf``; for finite ``p`` exact only for decoupled coordinates.

    Args:
      profile: the sensitivity profile.
      p: ``p >= 1`` or ``inf``.

    Returns:
      ``||lambda||_p``.
    """
    lam = validate_profile(profile)
    if p == np.inf:
        return float(np.max(lam))
    if not (p >= 1):
        raise ValueError(f"p must be >= 1 (or inf), got {p!r}")
    return float(np.sum(lam**p) ** (1.0 / p))
