"""``bench/profile_suite.py`` (issue 36): the compile profile of a test run is what ran.

A nested pytest session on a generated test file that compiles one named program: the
report names that program with its compile count and its one distinct cached program, and
lists the test; the merge of per-worker reports adds their counts.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import profile_suite  # noqa: E402

_TEST = '''
import jax, jax.numpy as jnp

@jax.jit
def profiled_program(x):
    return jnp.sin(x) * 2.0

def test_compiles_one_program():
    assert float(profiled_program(jnp.float32(0.0))) == 0.0
'''


def test_report_names_the_compiled_program_and_the_test(tmp_path, capsys):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_generated.py").write_text(_TEST)
    out = tmp_path / "report.txt"
    code = profile_suite.main(["--top", "50", "--out", str(out), "--min-compile-time", "0",
                               "--", "-c",
                               str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
                               str(tmp_path / "test_generated.py")])
    assert code == 0
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith("jit(profiled_program)"))
    seconds, compiles, distinct = row.split()[1:]
    assert float(seconds) >= 0.0 and int(compiles) == 1 and int(distinct) == 1
    assert "test_generated.py::test_compiles_one_program" in text
    assert text.startswith("wall ") and "1 tests" in text.splitlines()[0]
    # the small compiles' call sites: the generated program lives outside dpjax
    sites = text[text.index("small compiles (<="):].splitlines()
    assert any(line.startswith("(outside dpjax)") for line in sites[1:]), sites


def test_merge_adds_the_workers():
    a = {"events": {"e": [1.0, 2]}, "programs": {"p": [2.0, 1]}, "tests": {"t": [3.0, 1.0, 2]},
         "sites": {"s": [0.5, 5]}}
    b = {"events": {"e": [0.5, 1]}, "programs": {"p": [1.0, 3]}, "tests": {"u": [1.0, 0.0, 0]}}
    merged = profile_suite.merge([a, b])
    assert merged["events"]["e"] == [1.5, 3] and merged["programs"]["p"] == [3.0, 4]
    assert merged["sites"] == {"s": [0.5, 5]}
    assert set(merged["tests"]) == {"t", "u"}
