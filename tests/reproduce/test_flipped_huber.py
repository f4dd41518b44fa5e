"""flipped-huber-mechanism Sec. V reproduction: the numbers that reproduce are regression tests;
the ones that do not are pinned to what dpjax certifies and to what the prints correspond to."""

import numpy as np
import pytest

from dpjax.reproduce import PAPERS
from dpjax.reproduce import flipped_huber as rep


@pytest.fixture(scope="module")
def fig3a():
    return rep.fig3a(np.array([0.3, 3.0]))


@pytest.fixture(scope="module")
def table():
    return rep.table_ii()


def test_registered():
    assert PAPERS["flipped-huber"].module == "dpjax.reproduce.flipped_huber"


def test_fig3a_values_that_reproduce(fig3a):
    # paper Sec. V-A: Gaussian 168.80 / 2.38, flipped Huber and truncated Laplace 22.21 at eps 0.3
    assert np.round(fig3a["gaussian"].variance, 2).tolist() == [168.80, 2.38]
    assert round(float(fig3a["flipped-huber"].variance[0]), 2) == 22.21
    assert round(float(fig3a["truncated-laplace"].variance[0]), 2) == 22.21
    # "for flipped Huber and truncated Laplace, the variances decrease by 100 times"
    for name in ("flipped-huber", "truncated-laplace"):
        v = np.asarray(fig3a[name].variance)
        assert round(v[0] / v[1]) == 100
    for name in ("gaussian", "flipped-huber", "truncated-laplace"):
        assert np.all(fig3a[name].delta_at_params <= 1e-6)


def test_fig3a_osgt_does_not_reproduce(fig3a):
    box, free = fig3a["osgt-box"], fig3a["osgt"]
    assert np.all(box.certified) and np.all(free.certified)
    # the paper's own domain already allows far less than the printed 108.94 / 1.54
    assert np.all((box.vartheta <= 150 * (1 + 1e-12)) & (box.rho >= 0.02) & (box.rho <= 50))
    assert box.variance[0] < 30 and box.variance[1] < 0.25
    # unconstrained, OSGT reaches the 1-D Laplace optimum (its vartheta/rho -> inf limit)
    assert np.allclose(free.variance, fig3a["laplace"], rtol=1e-4)


def test_table_ii_laplace_and_staircase_rows(table):
    assert np.round(table["laplace"], 2).tolist() == list(rep.PAPER_TABLE_II["laplace"])
    printed = list(rep.PAPER_TABLE_II["staircase (independent)"])
    assert np.round(table["staircase"].variance, 2).tolist() == printed
    # the alternative convention (width Delta_1, full eps per coordinate) does not match
    assert np.round(table["staircase_width_l1"], 2).tolist() != printed


def test_table_ii_flipped_huber_row(table):
    fh8, fh6, g8 = table["fh8"], table["fh6"], table["gauss8"]
    assert np.all(fh8.delta_at_params <= 1e-8) and fh8.condition == "sufficient"
    # at delta = 1e-8 the Theorem-8 optimum is (numerically) the Gaussian member alpha = 0
    assert np.allclose(fh8.variance, g8.variance, rtol=1e-6)
    # the printed row is not the delta = 1e-8 optimum ...
    printed = np.asarray(rep.PAPER_TABLE_II["flipped-huber (sufficient)"])
    assert np.all(printed < 0.8 * fh8.variance)
    # ... but sits just above the delta = 1e-6 optimum (a grid search lands above it)
    rel = printed / fh6.variance - 1
    assert np.all((rel > 0) & (rel < 0.05))


def test_heatmap_signs():
    h = rep.heatmaps(np.array([0.05, 10.0]), np.array([1e-2]))
    # FH beats Laplace at small eps with delta > 0 and equals it at large eps (Fig. 3b);
    # it loses to the staircase at large eps (Fig. 3c)
    assert h["db_laplace"][0, 0] < -1.0
    assert abs(h["db_laplace"][0, 1]) < 0.01
    assert h["db_staircase"][0, 1] > 10.0


def test_fig6_equal_variance_profiles():
    from dpjax.noise import OSGT, FlippedHuber

    p = rep.fig6(np.array([0.0, 0.05, 1.0, 2.0]))
    assert abs(float(OSGT(p["vartheta"], 7.0).variance) - 16.0) < 1e-9
    assert abs(float(FlippedHuber(p["alpha"], 7.0).variance) - 16.0) < 1e-9
    # at eps >= 1 FH has the least delta of the three (App. E-A)
    assert np.all(p["fh"][2:] < p["osgt"][2:]) and np.all(p["fh"][2:] < p["gaussian"][2:])
