"""The papers' applications as estimators.

DP coordinate descent (flipped-huber-mechanism, Sec. VI): ``DPLasso`` /
``DPLogisticRegression`` (scikit-learn style, certified ``epsilon_`` / ``delta_``), the core
:func:`dp_coordinate_descent` and its zCDP noise :func:`calibrate_dpcd_noise`.  DP-PCA
(inid-noise-laplace-beats-gaussian, Sec. VI-B): ``DPPCA``.
"""

from dpjax.apps.coordinate_descent import dp_coordinate_descent, dp_coordinate_descent_seeds
from dpjax.apps.estimators import DPLasso, DPLogisticRegression
from dpjax.apps.pca import DPPCA, subspace_error, upper_triangle_profile
from dpjax.apps.privacy import UnitNoise, calibrate_dpcd_noise

__all__ = [
    "DPLasso",
    "DPLogisticRegression",
    "DPPCA",
    "UnitNoise",
    "calibrate_dpcd_noise",
    "dp_coordinate_descent",
    "dp_coordinate_descent_seeds",
    "subspace_error",
    "upper_triangle_profile",
]
