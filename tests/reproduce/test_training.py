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
    # the schedule of tests/train/test_laplace.py (q = 64 / 640 = 0.1, T = ceil(1.15 / q) =
    # 12, epsilon 2): its subsampled-Laplace calibration and accountant programs are compiled
    # there (the reproduction's own dataset size gives programs of their own)
    plan = training._plan("laplace", 2.0, 640, 1.15)
    assert (plan.sampling_rate, plan.steps) == (0.1, 12)
    assert plan.noise == "laplace" and plan.clip_norm_order == 1
    assert plan.groups.clip_norms.tolist() == [training.L1_CLIP]
    assert plan.laplace_scale[0] >= training.L1_CLIP * plan.noise_multiplier * (1 - 1e-15)
    assert plan.accountant().epsilon(plan.steps) <= 2.0
