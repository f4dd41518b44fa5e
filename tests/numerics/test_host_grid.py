"""Host (NumPy) zooming grid and log1mexp: closed forms and parity with the traced twins."""

import jax.numpy as jnp
import numpy as np

from dpjax.numerics import log1mexp, zoom_minimize
from dpjax.numerics.host_grid import log1mexp_host, zoom_minimize_array


def test_zoom_minimize_array_matches_the_traced_zoom():
    """Same rounds, same points: the host and traced searches return the same minimiser,
    here of a kinked objective (the optimum sits where two branches meet)."""

    def f(x):
        return jnp.maximum(jnp.abs(x - 0.37), 2.0 * (x - 0.37) + 0.01)

    grid = np.linspace(-1.0, 2.0, 17)
    traced = zoom_minimize(lambda x: (f(x), x), jnp.asarray(grid), 10, 0.0, 0.0)
    rows = np.stack([grid, grid + 0.5])
    x, value, aux = zoom_minimize_array(lambda p: (np.asarray(f(p)), 2 * p), rows, 10)
    assert x[0] == float(traced.x) and value[0] == float(traced.value)
    np.testing.assert_allclose(aux, 2 * x)
    # the kink where 0.37 - x = 2 (x - 0.37) + 0.01, x = 1.1 / 3: both rows reach it
    assert abs(x[0] - 1.1 / 3) < 1e-9 and abs(x[1] - 1.1 / 3) < 1e-9


def test_zoom_minimize_array_infeasible_row_stays_infinite():
    rows = np.linspace(0.0, 1.0, 9)[None, :]
    x, value, _ = zoom_minimize_array(lambda p: (np.full(p.shape, np.inf), p), rows, 3)
    assert value[0] == np.inf and x[0] == 0.0


def test_log1mexp_host_matches_the_traced_kernel():
    x = -np.geomspace(1e-300, 700.0, 401)
    np.testing.assert_allclose(log1mexp_host(x), np.asarray(log1mexp(jnp.asarray(x))), rtol=1e-15)
    assert log1mexp_host(0.0) == -np.inf
