"""The Poisson sampler: inclusion rate q, padding and mask, jittable; fixed mode needs a flag."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.train import PoissonSampler, make_plan


def test_inclusion_rate_is_q():
    n, q, draws = 400, 0.1, 400
    s = PoissonSampler(dataset_size=n, sampling_rate=q, max_batch_size=n)
    batches = jax.jit(jax.vmap(s.sample))(jax.random.split(jax.random.key(0), draws))
    counts = np.zeros(n)
    for idx, mask in zip(np.asarray(batches.indices), np.asarray(batches.mask), strict=True):
        counts[idx[mask]] += 1
    rate = counts.sum() / (n * draws)
    assert abs(rate - q) < 4 * np.sqrt(q * (1 - q) / (n * draws))
    # per index: no record is favoured (chi-square-like bound on the spread)
    assert np.std(counts / draws) < 2 * np.sqrt(q * (1 - q) / draws)
    sizes = np.asarray(batches.size)
    np.testing.assert_array_equal(sizes, np.asarray(batches.mask).sum(axis=1))
    # indices of one batch are distinct real records
    idx, mask = np.asarray(batches.indices[0]), np.asarray(batches.mask[0])
    assert len(set(idx[mask].tolist())) == int(mask.sum())


def test_padding_truncates_and_reshapes_for_accumulation():
    s = PoissonSampler(dataset_size=100, sampling_rate=0.9, max_batch_size=8,
                       accumulation_steps=2)
    b = s.sample(jax.random.key(1))
    assert b.indices.shape == (2, 4) and b.mask.shape == (2, 4)
    assert int(b.size) == 8 and bool(jnp.all(b.mask))


def test_sampler_from_plan_and_fixed_mode_flag():
    # the schedule of tests/train/test_plan.py: its calibration and its report's accounting
    # (the PLD bracket) are compiled programs the run shares
    params = {"w": jnp.zeros(3)}
    plan = make_plan(params, dataset_size=200, batch_size=20, steps=12, epsilon=2.0,
                     delta=1e-5)
    assert plan.sampler().max_batch_size == plan.max_batch_size
    with pytest.raises(ValueError, match="assume_poisson"):
        plan.sampler("fixed")
    fixed = plan.sampler("fixed", assume_poisson=True)
    assert "ASSUMES Poisson" in plan.accountant().report(plan.steps, fixed)["guarantee"]
    b = fixed.sample(jax.random.key(0))
    assert int(b.size) == 20 == round(plan.sampling_rate * plan.dataset_size)
    with pytest.raises(ValueError, match="mode"):
        plan.sampler("shuffle")
