"""Calibration kernels: least-error parameters meeting a target, certified."""

from dpjax.calibration.gaussian import mu_gaussian, sigma_gaussian
from dpjax.calibration.laplace import scale_laplace_1d, scale_laplace_pure
from dpjax.calibration.result import Calibration

__all__ = ["Calibration", "mu_gaussian", "scale_laplace_1d", "scale_laplace_pure", "sigma_gaussian"]
