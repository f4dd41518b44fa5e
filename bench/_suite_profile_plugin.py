"""pytest plugin of :mod:`bench.profile_suite`: where a test run's time goes in XLA.

Loaded with ``-p _suite_profile_plugin`` (``bench/`` on ``PYTHONPATH``), in the controlling
process and in every pytest-xdist worker.  It listens to JAX's compile events
(:func:`jax.monitoring.register_event_duration_secs_listener`: tracing, lowering, the
backend compile with the program's name, persistent-cache hits) and writes, at the end of
the session, one JSON file per process into ``$DPJAX_SUITE_PROFILE_DIR``:

* ``events``: seconds and count of each JAX duration event;
* ``programs``: backend-compile seconds and count per program name (``jit(kernel)``, ...);
* ``tests``: per test id, ``[wall seconds, backend-compile seconds, compiles]``;
* ``sites``: the small compiles (at most :data:`SMALL_SECONDS` each: op-by-op dispatch of
  eager ``jnp`` calls, mostly) per call site, the deepest frame of the stack in the
  ``dpjax`` package (``path:line:function``; ``(outside dpjax)`` where none is),
  ``[backend-compile seconds, compiles]``.

It measures only: no test is changed, skipped or reordered.
"""

from __future__ import annotations

import collections
import json
import os
import time
import traceback

import jax.monitoring
import pytest

_BACKEND = "/jax/core/compile/backend_compile_duration"

_events: dict = collections.defaultdict(lambda: [0.0, 0])
_programs: dict = collections.defaultdict(lambda: [0.0, 0])
_tests: dict = {}
_sites: dict = collections.defaultdict(lambda: [0.0, 0])
_running = {"seconds": 0.0, "count": 0}

#: Backend compiles up to this many seconds count as small (:data:`_sites`).
SMALL_SECONDS = 0.12
_PACKAGE = os.sep + "dpjax" + os.sep


def _site() -> str:
    """The deepest frame of the current stack inside the ``dpjax`` package."""
    for frame in reversed(traceback.extract_stack()):
        if _PACKAGE in frame.filename and "site-packages" not in frame.filename:
            path = frame.filename[frame.filename.rindex(_PACKAGE) + 1:]
            return f"{path}:{frame.lineno}:{frame.name}"
    return "(outside dpjax)"


def _listen(event: str, duration: float, **kwargs) -> None:
    _events[event][0] += duration
    _events[event][1] += 1
    if event == _BACKEND:
        name = str(kwargs.get("fun_name", "?"))
        _programs[name][0] += duration
        _programs[name][1] += 1
        _running["seconds"] += duration
        _running["count"] += 1
        if duration <= SMALL_SECONDS:
            site = _sites[_site()]
            site[0] += duration
            site[1] += 1


jax.monitoring.register_event_duration_secs_listener(_listen)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    seconds, count, start = _running["seconds"], _running["count"], time.perf_counter()
    yield
    _tests[item.nodeid] = [
        time.perf_counter() - start, _running["seconds"] - seconds, _running["count"] - count,
    ]


def pytest_sessionfinish(session):
    folder = os.environ.get("DPJAX_SUITE_PROFILE_DIR")
    if not folder:
        return
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(folder, f"{name}.json"), "w") as f:
        json.dump({"events": _events, "programs": _programs, "tests": _tests,
                   "sites": _sites}, f)
