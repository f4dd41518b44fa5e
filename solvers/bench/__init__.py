"""Benchmarking the solvers of :mod:`solvers` as a product (``python -m solvers.bench``).

Families of named, seeded instances (:mod:`solvers.bench.families`), a runner
that verifies every answer by the problem's shared KKT residual
(:mod:`solvers.bench.runner`), reports with shifted geometric means,
Dolan-More performance profiles and provenance (:mod:`solvers.bench.report`),
and export to the Conic Benchmark Format (:mod:`solvers.bench.cbf`).
"""

from solvers.bench.families import (
    ENTRY_POINT_GROUP,
    Family,
    Instance,
    families,
    get_family,
    load_entry_points,
    register_family,
)

__all__ = ["ENTRY_POINT_GROUP", "Family", "Instance", "families", "get_family",
           "load_entry_points", "register_family"]
