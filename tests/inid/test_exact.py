"""Exact (PLD) profile of i.n.i.d. Laplace: against dp_accounting and the Corollary 6 bound."""

import math

import numpy as np
import pytest

from dpjax.inid.exact import laplace_inid_delta


def test_pld_profile_against_dp_accounting_and_corollary6():
    from dp_accounting.pld import privacy_loss_distribution as pld_ref

    lam = np.array([0.85, 0.15])
    b = np.array([1.0, 0.4])
    eps = 0.5
    ours = laplace_inid_delta(lam, b, eps)

    def ref(pessimistic):
        out = None
        for li, bi in zip(lam, b, strict=True):
            p = pld_ref.from_laplace_mechanism(bi, sensitivity=li, pessimistic_estimate=pessimistic,
                                               value_discretization_interval=1e-5)
            out = p if out is None else out.compose(p)
        return out.get_delta_for_epsilon(eps)

    lower, upper = ref(False), ref(True)
    # ours (bin 1e-3, pessimistic) is an upper bound, close to the fine-grid reference
    assert ours >= lower
    assert ours == pytest.approx(upper, rel=1e-7)
    # and below the Corollary 6 bound 1 - exp(eps - sum lambda / b)
    assert ours <= 1 - math.exp(eps - np.sum(lam / b))
