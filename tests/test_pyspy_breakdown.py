"""``bench/pyspy_breakdown.py`` (issue 36): py-spy's samples go to the stage and test they show.

A synthetic raw file (py-spy's collapsed stacks) with known counts: each stage and test
gets exactly its samples, the first matching stage wins, and the command prints them.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import pyspy_breakdown  # noqa: E402

_RAW = [
    # a test's tracing, then its lowering with the MLIR context, then mpmath in the test
    "process 1:\"w\";test_a (mech/test_x.py:5);jit (jax/_src/pjit.py:1);"
    "trace_to_jaxpr (jax/_src/pe.py:9);f (dpjax/a.py:2) 58",
    "process 1:\"w\";test_a (mech/test_x.py:5);lower_jaxpr_to_module (jax/mlir.py:1);"
    "make_ir_context (jax/mlir.py:627) 29",
    "process 1:\"w\";test_a (mech/test_x.py:5);mpf_exp (mpmath/libmp/libelefun.py:3) 29",
    # a fixture of another file writing the compilation cache while compiling
    "process 1:\"w\";fixture (calib/test_y.py:9);compile_or_get_cached (jax/c.py:1);"
    "_cache_write (jax/c.py:2) 87",
    # pytest's collections at the session's end, outside any test
    "process 1:\"w\";cleanup (_pytest/unraisableexception.py:1);"
    "gc_collect_harder (_pytest/unraisableexception.py:2) 29",
    "",
]


def test_each_sample_goes_to_its_stage_and_test():
    out = pyspy_breakdown.breakdown(_RAW, rate=29.0)
    assert out["total"] == 8.0
    assert out["stages"] == {"tracing": 2.0, "MLIR context per program": 1.0,
                             "run: mpmath": 1.0, "persistent cache write": 3.0,
                             "pytest's session-end collections": 1.0}
    assert out["tests"] == {"mech/test_x.py::test_a": 4.0,
                            "calib/test_y.py::fixture (fixture)": 3.0,
                            "(outside tests)": 1.0}


def test_command_prints_the_stages_and_tests(tmp_path, capsys):
    raw = tmp_path / "run.txt"
    raw.write_text("\n".join(_RAW))
    assert pyspy_breakdown.main([str(raw), "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "sampled thread time 8.0 s"
    assert "persistent cache write" in text and "mech/test_x.py::test_a" in text
    assert "(outside tests)" not in text  # the third test is past --top 2
