"""The DP-SGD training reproduction: registered, and its jitted training loop runs (tiny)."""

import jax
import numpy as np

from dpjax.reproduce import PAPERS, training
from dpjax.train import make_plan


def test_registered():
    assert PAPERS["training"].module == "dpjax.reproduce.training"


def test_tiny_training_run_is_private_and_learns_something():
    data = training._data()
    shapes = jax.eval_shape(training._init, jax.random.key(0))
    n = len(data[2])
    # q = 1 (closed-form calibration), 40 full-batch steps at a loose target
    plan = make_plan(shapes, dataset_size=n, sampling_rate=1.0, steps=40, epsilon=50.0,
                     delta=1e-5)
    acc = training.train(plan, data, seeds=2)
    assert acc.shape == (2,)
    assert np.all(acc > 0.5)  # well above chance (0.1)
    assert plan.accountant().epsilon(plan.steps) <= 50.0


def test_laplace_method_plan_is_l1_clipped_and_certified():
    data = training._data()
    plan = training._plan("laplace", 3.0, len(data[2]), 1)
    assert plan.noise == "laplace" and plan.clip_norm_order == 1
    assert plan.groups.clip_norms.tolist() == [training.L1_CLIP]
    assert plan.laplace_scale[0] >= training.L1_CLIP * plan.noise_multiplier * (1 - 1e-15)
    assert plan.accountant().epsilon(plan.steps) <= 3.0
