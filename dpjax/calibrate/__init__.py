"""Calibration kernels: least-error parameters meeting a target, certified."""

from dpjax.calibrate._result import Calibration
from dpjax.calibrate.gaussian import mu_gaussian, sigma_gaussian
from dpjax.calibrate.laplace import scale_laplace_1d, scale_laplace_pure

__all__ = ["Calibration", "mu_gaussian", "scale_laplace_1d", "scale_laplace_pure", "sigma_gaussian"]
