"""Non-identical (i.n.i.d.) noise from a sensitivity profile (inid-noise-laplace-beats-gaussian).

Profiles (Definition 4) and their families, ``mu0`` of (P2) by the
Appendix B bisection, optimal per-coordinate Gaussian (eq. 9, Theorem 4)
and Laplace (eq. 12, Theorem 5, Corollary 6) scales for weighted ``l_p^p``
errors (Remark 4), SPR and i.i.d. baselines, the privacy-resource view
(Sec. IV-B), and the l1-optimal 2-D staircase comparator (Table II).
"""

from dpjax.inid._kernels import (
    expected_error,
    gaussian_abs_moment,
    gaussian_mu_of,
    gaussian_scales,
    laplace_abs_moment,
    laplace_loss_of,
    laplace_scales,
    log_delta_laplace_corollary6,
)
from dpjax.inid.design import design, resource_shares
from dpjax.inid.exact import laplace_exact_multiplier, laplace_inid_delta, laplace_inid_epsilon
from dpjax.inid.gaussian import gaussian_design, gaussian_scales_for_rho
from dpjax.inid.laplace import laplace_design
from dpjax.inid.mu0 import Mu0Result, appendix_b_bracket, bracket_root, mu0
from dpjax.inid.profiles import (
    KINDS,
    gini,
    make_profile,
    normalize,
    sensitivity_norm,
    validate_profile,
    validate_weights,
)
from dpjax.inid.result import InidDesign
from dpjax.inid.staircase2d import staircase_2d_l1_error

__all__ = [
    "KINDS",
    "InidDesign",
    "Mu0Result",
    "appendix_b_bracket",
    "bracket_root",
    "design",
    "expected_error",
    "gaussian_abs_moment",
    "gaussian_design",
    "gaussian_mu_of",
    "gaussian_scales",
    "gaussian_scales_for_rho",
    "gini",
    "laplace_abs_moment",
    "laplace_design",
    "laplace_exact_multiplier",
    "laplace_inid_delta",
    "laplace_inid_epsilon",
    "laplace_loss_of",
    "laplace_scales",
    "log_delta_laplace_corollary6",
    "make_profile",
    "mu0",
    "normalize",
    "resource_shares",
    "sensitivity_norm",
    "staircase_2d_l1_error",
    "validate_profile",
    "validate_weights",
]
