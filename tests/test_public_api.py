"""Each package declares its public names (``__all__``), and this test pins them.

A name added to or removed from a package's public surface is a deliberate change: update the
pin here in the same commit.  Every pinned name must resolve, and no name may be listed twice.
"""

import importlib

import pytest

PUBLIC = {
    "dpjax": [
        'Calibration', 'CertificationError', 'InfeasibleTargetError', 'Sensitivity',
        'TrivialTargetError', 'account', 'accounting', 'calibrate', 'design', 'errors',
        'mechanisms', 'noise', 'numerics', 'papers', 'profile'
    ],
    "dpjax.accounting": [
        'PLDAccountant', 'UnsupportedEventError', 'delta_from_zcdp', 'delta_gaussian',
        'delta_laplace', 'epsilon_from_zcdp', 'epsilon_from_zcdp_bun_steinke', 'epsilon_gaussian',
        'epsilon_laplace', 'events', 'from_dp_accounting', 'log_delta_from_zcdp',
        'log_delta_gaussian', 'log_delta_gaussian_mu', 'log_delta_laplace', 'rho_gaussian',
        'scale_laplace'
    ],
    "dpjax.accounting.bracket": [
        'EpsilonBracket', 'MAX_REFINEMENTS', 'epsilon_lower', 'epsilon_lower_of_pld',
        'epsilon_lower_of_tilted',
        'log_delta_lower', 'lower_tilts', 'product_lower_kernel', 'refine_bracket',
        'tilted_epsilon_lower', 'tilted_lower_kernel', 'validate_epsilon_error'
    ],
    "dpjax.accounting.events": [
        'Composed', 'DiscreteGaussian', 'DiscreteLaplace', 'EpsilonDelta', 'Event', 'Gaussian',
        'Laplace', 'MixtureOfGaussians', 'NoOp', 'Noise', 'NonPrivate', 'PoissonSampled',
        'RELATIONS', 'RandomizedResponse', 'SampledWithReplacement', 'SampledWithoutReplacement',
        'SelfComposed', 'TruncatedSubsampledGaussian', 'ZCDP', 'check_values', 'event_from_json',
        'event_to_json', 'noise_family'
    ],
    "dpjax.accounting.pld": [
        'LAMBDAS', 'MonotonePair', 'PLD', 'compose', 'delta_for_epsilon', 'delta_of_atoms',
        'discretise_pair', 'epsilon_for_delta', 'from_atoms', 'from_gaussian', 'from_laplace',
        'from_noise', 'from_pair', 'log_delta_for_epsilon', 'noise_pair', 'self_compose',
        'self_compose_size'
    ],
    "dpjax.accounting.pld.tilted": [
        'CUT_GAIN', 'CUT_SHARE', 'Tilted', 'cut_top', 'least_over_tilts', 'placed_pair',
        'product_size', 'query', 'saddle_lambdas',
        'tilted_epsilon_for_delta', 'tilted_kernel', 'tilted_log_delta_for_epsilon',
        'tilted_product', 'tilted_product_answer', 'tilted_product_kernel', 'tilted_self_compose'
    ],
    "dpjax.accounting.rdp": [
        'FRACTIONAL_ORDERS', 'RDP_ORDERS', 'delta_from_zcdp', 'epsilon_from_zcdp',
        'epsilon_from_zcdp_bun_steinke', 'family_log_moments', 'family_rdp_delta',
        'family_rdp_epsilon', 'gaussian_fractional_log_moments', 'gaussian_log_moments',
        'gaussian_moment_bounds', 'gaussian_rdp_epsilon', 'gaussian_rdp_log_delta',
        'gaussian_rdp_sigma', 'laplace_log_moments', 'laplace_log_moments_lower',
        'laplace_rdp_epsilon', 'laplace_rdp_log_delta', 'laplace_rdp_scale',
        'least_with_laplace_rdp_delta', 'least_with_laplace_rdp_epsilon', 'ledger_rdp_delta',
        'ledger_rdp_delta_exceeds', 'ledger_rdp_epsilon', 'ledger_rdp_epsilon_exceeds',
        'log_delta_from_zcdp', 'rdp_epsilon', 'rdp_log_delta'
    ],
    "dpjax.apps": [
        'DPLasso', 'DPLogisticRegression', 'DPPCA', 'InidNoise', 'SmoothnessEstimate',
        'UnitNoise', 'calibrate_dpcd_inid', 'calibrate_dpcd_noise', 'dp_coordinate_descent',
        'dp_coordinate_descent_seeds', 'private_smoothness', 'smoothness_statistic',
        'subspace_error', 'upper_triangle_profile'
    ],
    "dpjax.bcdp": [
        'BudgetVector', 'CDPBudget', 'Channel', 'ChannelParameters', 'DUCHI', 'LeastSquaresFit',
        'MeanEstimate', 'PRIVUNIT', 'cdp_to_bcdp', 'corollary1_bound', 'get_channel',
        'mean_guarantees', 'mean_mechanism', 'mse_rate', 'private_least_squares',
        'proposition6_budget', 'server_estimate', 'theorem2_budget', 'theorem3_bound',
        'variance_bound'
    ],
    "dpjax.calibration": [
        'Calibration', 'mu_gaussian', 'scale_laplace_1d', 'scale_laplace_pure', 'sigma_gaussian'
    ],
    "dpjax.inid": [
        'InidDesign', 'KINDS', 'Mu0Result', 'appendix_b_bracket', 'bracket_root', 'design',
        'expected_error', 'gaussian_abs_moment', 'gaussian_design', 'gaussian_mu_of',
        'gaussian_scales', 'gaussian_scales_for_rho', 'gini', 'laplace_abs_moment',
        'laplace_design', 'laplace_exact_multiplier', 'laplace_inid_delta',
        'laplace_inid_epsilon', 'laplace_loss_of', 'laplace_scales',
        'log_delta_laplace_corollary6', 'make_profile', 'mu0', 'normalize', 'resource_shares',
        'sensitivity_norm', 'staircase_2d_l1_error', 'validate_profile', 'validate_weights'
    ],
    "dpjax.mechanisms": [
        'CONDITIONS', 'ELSEWHERE', 'Mechanism', 'Query', 'RELATIONS', 'accounted_under',
        'calibrate_under',
        'describe', 'get', 'make_query', 'names', 'parameter_help'
    ],
    "dpjax.noise": [
        'FlippedHuber', 'Gaussian', 'InvertibleLoss', 'KnownTail', 'Laplace', 'NoiseFamily',
        'OSGT', 'ScaleFamily', 'Staircase', 'TailWords', 'TruncatedLaplace', 'deep_capacity',
        'family', 'make', 'names', 'random_words', 'tail_floor'
    ],
    "dpjax.noise.flipped_huber": [
        'FlippedHuber', 'centred_privacy_loss', 'centred_privacy_loss_inverse',
        'flipped_huber_loss', 'log_half_gauss_mass', 'log_half_laplace_mass', 'log_normaliser',
        'log_omega', 'standard_fisher_information', 'standard_isf_log', 'standard_log_mgf',
        'standard_log_sf', 'standard_loss', 'standard_variance', 'theta_over_gamma'
    ],
    "dpjax.numerics": [
        'Float64RequiredError', 'HALF_LOG_2PI', 'LOG_2', 'Q_inv', 'Root',
        'Status', 'ZoomResult', 'bisect_bracket', 'bisect_host', 'bisect_monotone',
        'float64_kernel', 'gauss_legendre', 'golden_section', 'illinois', 'illinois_host',
        'integrate_panels', 'least_feasible', 'least_integer_host', 'log1mexp',
        'log1mexp_host', 'log_Q', 'log_Q_host', 'log_Q_inv', 'log_Q_inv_host',
        'log_binomial_host', 'log_binomial_magnitude_host', 'log_expm1', 'log_expm1_host',
        'log_gamma_host', 'log_hockey_stick', 'log_hockey_stick_straddle', 'log_mills',
        'log_mills_step',
        'logaddexp', 'logsubexp', 'logsumexp_host', 'newton_host', 'quotient',
        'require_float64', 'sum3', 'two_product', 'two_sum', 'warm_bracket', 'x64_enabled',
        'zoom_minimize', 'zoom_minimize_array'
    ],
    "dpjax.spherical": [
        'Coefficients', 'SphericalMechanism', 'calibrate_spherical', 'design_geometric',
        'design_mechanism', 'design_windowed', 'epsilon_criterion', 'kl_criterion', 'load',
        'save', 'search_r'
    ],
    "dpjax.train": [
        'Accountant', 'Batch', 'DPAggregateState', 'EpsilonBracket', 'FixedBatchSampler',
        'Groups', 'PoissonSampler', 'PrivacyPlan', 'clipped_sum', 'dp_optimizer', 'dp_transform',
        'flat_per_layer', 'make_groups', 'make_plan', 'make_sampler'
    ],
    "solvers": [
        'BarrierNewton', 'ClosedForm', 'ConvexProblem', 'CvxpyModel', 'CvxpySolver',
        'DefaultJaxSolver', 'IterativeSolver', 'KKTPolish', 'LinearProgram', 'PowerAllocation',
        'RawResult', 'Residual', 'Solution', 'Solver', 'SphericalKL', 'Status', 'backends',
        'get_backend', 'register_backend', 'require_hooks', 'solve'
    ],
    "solvers.bench": [
        'ENTRY_POINT_GROUP', 'Family', 'Instance', 'families', 'get_family', 'load_entry_points',
        'register_family'
    ],
}

#: packages that declare no public names (namespaces of implementation modules only)
NO_PUBLIC_NAMES = ['dpjax.reproduce']


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_all_is_pinned_and_resolves(package):
    mod = importlib.import_module(package)
    declared = list(mod.__all__)
    assert len(declared) == len(set(declared)), f"{package}.__all__ lists a name twice"
    assert sorted(declared) == PUBLIC[package]
    for name in declared:
        assert getattr(mod, name) is not None, f"{package}.{name} does not resolve"


def test_every_package_is_pinned():
    import pkgutil

    import dpjax
    import solvers

    found = set()
    for root in (dpjax, solvers):
        found.add(root.__name__)
        for m in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
            leaf = m.name.split(".")[-1]
            if m.ispkg and ".cli" not in m.name and not leaf.startswith("_"):
                found.add(m.name)
    assert found == set(PUBLIC) | set(NO_PUBLIC_NAMES)


def _declared_objects() -> set:
    """``id`` of every object a pinned package declares."""
    return {
        id(getattr(mod, name))
        for mod in map(importlib.import_module, PUBLIC)
        for name in mod.__all__
    }


def test_api_reference_documents_only_declared_names():
    # docs/architecture.md, "Public names and implementation modules": the API reference is
    # generated from the packages' declared names, so every `::: path` of docs/api is a
    # pinned package or an object some pinned package declares (written at its defining
    # module's path, which mkdocstrings needs), never an undeclared implementation name
    import pathlib
    import re

    declared = _declared_objects()
    pages = sorted((pathlib.Path(__file__).parents[1] / "docs" / "api").glob("*.md"))
    assert pages
    seen = 0
    for page in pages:
        for path in re.findall(r"^::: *([\w.]+)", page.read_text(), re.M):
            seen += 1
            if path in PUBLIC:
                continue
            module, _, attr = path.rpartition(".")
            obj = getattr(importlib.import_module(module), attr)
            assert id(obj) in declared, f"{page.name}: {path} is not a declared public name"
    assert seen >= len(PUBLIC)
