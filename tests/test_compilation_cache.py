"""dpjax turns JAX's persistent compilation cache on at import, in a user cache folder, unless
the user opted out or configured one (dpjax/_compilation_cache.py)."""

import os
import subprocess
import sys

import pytest

PROBE = "import dpjax, jax; print(jax.config.jax_compilation_cache_dir)"


def _probe(tmp_path, **env):
    base = {k: v for k, v in os.environ.items()
            if k not in ("DPJAX_NO_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    base.update(XDG_CACHE_HOME=str(tmp_path), **env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=base, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def test_on_by_default_in_the_user_cache_folder(tmp_path):
    assert _probe(tmp_path) == str(tmp_path / "dpjax" / "xla")
    assert (tmp_path / "dpjax" / "xla").is_dir()


@pytest.mark.parametrize("env", [{"DPJAX_NO_COMPILATION_CACHE": "1"}])
def test_opt_out(tmp_path, env):
    assert _probe(tmp_path, **env) == "None"
    assert not (tmp_path / "dpjax").exists()


def test_the_users_own_folder_wins(tmp_path):
    mine = tmp_path / "mine"
    assert _probe(tmp_path, JAX_COMPILATION_CACHE_DIR=str(mine)) == str(mine)
    assert not (tmp_path / "dpjax").exists()
