"""dpjax.numerics.minimize: the zooming grid's host (NumPy) twin against the traced search."""

import jax.numpy as jnp
import numpy as np

from dpjax.numerics import zoom_minimize, zoom_minimize_array


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
