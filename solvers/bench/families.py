r"""Problem families as data: named, seeded, reproducible instance generators.

A :class:`Family` maps a size label and a seed to an :class:`Instance`
(name, parameters, seed, problem).  The name spells every parameter, so an
instance is rebuilt exactly from its name's parts: ``family.make(size,
seed)`` twice gives bit-identical problem data (NumPy ``default_rng(seed)``,
float64 on the host).  Families registered here come from :mod:`solvers`
alone (the power allocation programmes); families whose data need another
package (the spherical KL programme needs the shell geometry of
``dpjax.spherical``) register themselves from that package with
:func:`register_family`, and the package declares the registering module as
an entry point of the group :data:`ENTRY_POINT_GROUP` (dpjax's
``pyproject.toml``: ``spherical-kl = "dpjax.spherical.benchmark_family"``).
:func:`families` and :func:`get_family` import those modules on first use, so
every installed family is listed and found while :mod:`solvers` imports
nothing from the packages that provide them.

Allocation families (``min sum w x^p s.t. sum a x^-q <= c``,
:class:`solvers.PowerAllocation`; size label ``K``):

* ``allocation-uniform`` ... ``allocation-loguniform``: coefficient profiles
  ``a`` (uniform, linear, quadratic, lognormal, log-uniform on ``[1e-6, 1]``),
  powers ``(p, q)`` drawn from ``{1, 2}^2`` by the seed;
* hard corners: ``allocation-exponential`` (``a_i ~ e^{-i}``, spans of
  ``e^{-K}``, up to the float64 boundary near ``K = 700``) and
  ``allocation-tiny`` (most masses at ``1e-300``, a few at 1).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from solvers._names import NameRegistry

#: the entry-point group under which a package names the module that registers its families
ENTRY_POINT_GROUP = "solvers.bench.families"


class Instance(NamedTuple):
    """One benchmark instance.

    Attributes:
      name: unique and reproducible (family, size, parameters, seed).
      family: the family's name.
      size: the size label it was made for (e.g. ``"50,150"`` or ``"100"``).
      seed: the seed.
      params: every parameter that built it (JSON-serialisable).
      problem: the :class:`solvers.ConvexProblem`.
    """

    name: str
    family: str
    size: str
    seed: int
    params: dict
    problem: Any


@dataclasses.dataclass(frozen=True)
class Family:
    """A named generator ``make(size, seed) -> Instance``.

    Attributes:
      name: the family's name.
      build: ``build(size: str, seed: int) -> (params, problem)``, deterministic
        (draws from ``numpy.random.default_rng(seed)``).
      sizes: default size labels, smallest first.
      description: one line shown by ``python -m solvers.bench --list``.
      batchable: instances of one size share array shapes (can be stacked and vmapped).
      quick_size: the size of ``python -m solvers.bench --quick`` (default: the smallest
        of ``sizes``); a smaller one keeps the quick run within minutes.
    """

    name: str
    build: Callable[[str, int], tuple[dict, Any]]
    sizes: tuple[str, ...]
    description: str = ""
    batchable: bool = True
    quick_size: str | None = None

    @property
    def quick(self) -> str:
        """The size label of the quick run (``quick_size``, else ``sizes[0]``)."""
        return self.quick_size or self.sizes[0]

    def make(self, size: str, seed: int = 0) -> Instance:
        """The instance of this family for ``size`` and ``seed`` (deterministic).

        Args:
          size: a size label (e.g. ``"50,150"``).
          seed: non-negative seed of ``numpy.random.default_rng``.

        Raises:
          ValueError: negative seed or a size the family rejects.
        """
        if int(seed) < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        params, problem = self.build(str(size), int(seed))
        tag = ",".join(f"{k}={_fmt(v)}" for k, v in params.items())
        return Instance(f"{self.name}[{tag};seed={int(seed)}]", self.name, str(size), int(seed),
                        params, problem)


def _fmt(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


_FAMILIES = NameRegistry(
    "family",
    " (families of other packages are registered by their entry points "
    f"({ENTRY_POINT_GROUP!r}) or by importing a module: --families-from MODULE)",
)
#: entry-point name -> import error of the modules :func:`load_entry_points` could not import
_ENTRY_POINT_ERRORS: dict[str, str] = {}
_ENTRY_POINTS_LOADED = False


def load_entry_points() -> dict[str, str]:
    """Import every module declared under :data:`ENTRY_POINT_GROUP` (once per process).

    Each such module registers its families with :func:`register_family` when
    imported.  A module that fails to import is skipped with a warning (its
    families are then missing, the others still load).

    Returns:
      ``{entry point name: error}`` of the modules that could not be imported.
    """
    global _ENTRY_POINTS_LOADED
    if not _ENTRY_POINTS_LOADED:
        _ENTRY_POINTS_LOADED = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                ep.load()
            except Exception as err:  # noqa: BLE001 - a broken plugin must not hide the others
                _ENTRY_POINT_ERRORS[ep.name] = f"{ep.value}: {type(err).__name__}: {err}"
                warnings.warn(f"benchmark families {ep.name!r} not loaded: "
                              f"{_ENTRY_POINT_ERRORS[ep.name]}", RuntimeWarning, stacklevel=2)
    return dict(_ENTRY_POINT_ERRORS)


def register_family(family: Family) -> Family:
    """Register ``family`` under its name (replaces an existing one).

    Args:
      family: the :class:`Family`.
    """
    return _FAMILIES.register(family)


def get_family(name: str) -> Family:
    """The family registered as ``name`` (entry-point families included).

    Args:
      name: a registered name (:func:`families`).

    Raises:
      ValueError: unknown name.
    """
    load_entry_points()
    return _FAMILIES.get(name)


def families() -> tuple[str, ...]:
    """Names of the registered families (entry-point families included), sorted."""
    load_entry_points()
    return _FAMILIES.names()


# ---------------------------------------------------------------------- allocation
def _profile(kind: str, K: int, rng: np.random.Generator) -> np.ndarray:
    i = np.arange(1, K + 1, dtype=np.float64)
    if kind == "uniform":
        return np.ones(K)
    if kind == "linear":
        return i / K
    if kind == "quadratic":
        return (i / K) ** 2
    if kind == "lognormal":
        return np.exp(rng.normal(0.0, 2.0, K))
    if kind == "loguniform":
        return 10.0 ** rng.uniform(-6.0, 0.0, K)
    if kind == "exponential":  # a_i = e^{-(i-1)}: spans e^{-(K-1)}, normal float64 up to K ~ 708
        return np.exp(-(i - 1.0))
    if kind == "tiny":
        a = np.full(K, 1e-300)
        a[rng.choice(K, size=max(1, K // 10), replace=False)] = 1.0
        return a
    raise ValueError(f"unknown profile {kind!r}")


def _allocation_builder(kind: str) -> Callable:
    def build(size: str, seed: int):
        from solvers.allocation import PowerAllocation

        rng = np.random.default_rng(seed)
        K = int(size)
        if K < 1:
            raise ValueError(f"K must be >= 1, got {K}")
        p, q = (float(v) for v in rng.choice([1, 2], size=2))
        a = _profile(kind, K, rng)
        budget = float(10.0 ** rng.uniform(-1.0, 1.0))
        params = {"K": K, "profile": kind, "p": p, "q": q, "budget": budget}
        return params, PowerAllocation.create(a, budget, objective_power=p, constraint_power=q)

    return build


for _kind, _sizes, _desc in (
    ("uniform", ("10", "100", "1000"), "uniform coefficients"),
    ("linear", ("10", "100", "1000"), "a_i = i / K"),
    ("quadratic", ("10", "100", "1000"), "a_i = (i / K)^2"),
    ("lognormal", ("10", "100", "1000"), "a_i = exp(N(0, 4))"),
    ("loguniform", ("10", "100", "1000"), "a_i log-uniform on [1e-6, 1]"),
    ("exponential", ("50", "200", "700"), "hard corner: a_i = e^-(i-1), near the float64 edge"),
    ("tiny", ("10", "100", "1000"), "hard corner: 90% of the masses at 1e-300"),
):
    register_family(Family(f"allocation-{_kind}", _allocation_builder(_kind), _sizes, _desc))
del _kind, _sizes, _desc


__all__ = ["ENTRY_POINT_GROUP", "Family", "Instance", "families", "get_family",
           "load_entry_points", "register_family"]
