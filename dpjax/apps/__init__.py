"""The papers' applications as estimators.

DP coordinate descent (flipped-huber-mechanism, Sec. VI): ``DPLasso`` /
``DPLogisticRegression`` (scikit-learn style, certified ``epsilon_`` / ``delta_``), the core
:func:`dp_coordinate_descent` and its zCDP noise :func:`calibrate_dpcd_noise`; the improved
DP-CD of inid-noise-laplace-beats-gaussian (Sec. VI-A, App. C): its i.n.i.d. noise
:func:`calibrate_dpcd_inid` and the private smoothness estimate
:func:`private_smoothness`.  DP-PCA (inid-noise-laplace-beats-gaussian, Sec. VI-B):
``DPPCA``.
"""

from dpjax.apps.coordinate_descent import dp_coordinate_descent, dp_coordinate_descent_seeds
from dpjax.apps.estimators import DPLasso, DPLogisticRegression
from dpjax.apps.pca import DPPCA, subspace_error, upper_triangle_profile
from dpjax.apps.privacy import InidNoise, UnitNoise, calibrate_dpcd_inid, calibrate_dpcd_noise
from dpjax.apps.smoothness import SmoothnessEstimate, private_smoothness, smoothness_statistic

__all__ = [
    "DPLasso",
    "DPLogisticRegression",
    "DPPCA",
    "InidNoise",
    "SmoothnessEstimate",
    "UnitNoise",
    "calibrate_dpcd_inid",
    "calibrate_dpcd_noise",
    "dp_coordinate_descent",
    "dp_coordinate_descent_seeds",
    "private_smoothness",
    "smoothness_statistic",
    "subspace_error",
    "upper_triangle_profile",
]
