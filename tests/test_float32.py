"""float32 behaviour: sampling in the caller's dtype; privacy decisions stay float64.

Every public kernel that computes a profile, a PLD, an epsilon or a calibration
carries :func:`dpjax.numerics.float64_kernel`: without x64 (global flag or scoped
context) or with float32 input it raises ``Float64RequiredError`` instead of
returning a float32 answer.  The façade runs its kernels in a scoped x64 context.
"""

import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dpjax
from dpjax.accounting import delta_gaussian, log_delta_gaussian
from dpjax.calibration import sigma_gaussian
from dpjax.noise import Gaussian
from dpjax.numerics import Float64RequiredError


def test_facade_is_float64_even_without_global_x64():
    with jax.enable_x64(False):
        cal = dpjax.calibrate("gaussian", epsilon=5.0, delta=1e-30, l2=1.0)
        assert abs(float(cal.params["sigma"]) - 2.278988) < 1e-6
        assert cal.params["sigma"].dtype == np.float64


def test_facade_answers_do_not_depend_on_global_x64():
    def run():
        return (
            dpjax.calibrate("laplace", epsilon=0.5, delta=1e-8, l1=1.0).params["scale"],
            dpjax.profile("gaussian", {"sigma": 2.0}, epsilon=[0.5, 1.0], l2=1.0),
            dpjax.account("gaussian", {"sigma": 1.0}, compositions=10, delta=1e-5),
        )

    on = run()
    with jax.enable_x64(False):
        off = run()
    for a, b in zip(on, off, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert np.asarray(b).dtype == np.float64


def test_sampling_in_float32_and_bfloat16():
    with jax.enable_x64(False):
        # 20k draws: the program tests/noise/test_tails.py compiles (the run's shared cache)
        x = Gaussian(1.0).sample(jax.random.key(1), (20_000,))
        assert x.dtype == jnp.float32
        y = Gaussian(1.0).sample(jax.random.key(1), (1000,), dtype=jnp.bfloat16)
        assert y.dtype == jnp.bfloat16
        assert 0.8 < float(jnp.std(x)) < 1.2


_ISSUE_EXAMPLE = textwrap.dedent(
    """
    import jax
    from dpjax.accounting import pld
    from dpjax.numerics import Float64RequiredError
    from dpjax.spherical.calibrate import calibrate_spherical

    assert not jax.config.jax_enable_x64
    try:  # issue 10: 10 x Gaussian(1) + 5 x Laplace(10), epsilon at delta = 1e-5
        g = pld.from_gaussian(1.0, bin_width=1e-3)
        lap = pld.from_laplace(10.0, bin_width=1e-3)
        g10 = pld.self_compose(g, 10, pld.self_compose_size(g, 10))
        l5 = pld.self_compose(lap, 5, pld.self_compose_size(lap, 5))
        print("RETURNED", pld.epsilon_for_delta(pld.compose([g10, l5]), 1e-5))
    except Float64RequiredError as e:
        print("RAISED", e)
    try:
        calibrate_spherical(1.0, 1e-5, 3, 1.0)
    except Float64RequiredError:
        print("SPHERICAL RAISED")
    """
)


def test_raw_pld_kernels_without_x64_raise_in_a_fresh_process():
    """A user of dpjax.accounting.pld outside the façade, x64 never enabled."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(dpjax.__file__)))
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", _ISSUE_EXAMPLE], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "RAISED from_gaussian: x64 is disabled" in out.stdout
    assert "jax.config.update('jax_enable_x64', True)" in out.stdout
    assert "SPHERICAL RAISED" in out.stdout
    assert "RETURNED" not in out.stdout
    assert "truncated to dtype float32" not in out.stderr  # no screen of warnings


def test_same_composition_with_x64_is_bracketed_by_dp_accounting():
    """With x64 the issue's example returns a float64 epsilon between dp_accounting's
    optimistic (a lower bound) and pessimistic PLDs at the same discretisation."""
    from dp_accounting.pld import privacy_loss_distribution as dpa

    from dpjax.accounting import pld

    g = pld.from_gaussian(1.0, bin_width=1e-3)
    lap = pld.from_laplace(10.0, bin_width=1e-3)
    g10 = pld.self_compose(g, 10, pld.self_compose_size(g, 10))
    l5 = pld.self_compose(lap, 5, pld.self_compose_size(lap, 5))
    eps = pld.epsilon_for_delta(pld.compose([g10, l5]), 1e-5)
    assert eps.dtype == jnp.float64

    def reference(pessimistic):
        kw = dict(value_discretization_interval=1e-3, pessimistic_estimate=pessimistic)
        if not pessimistic:
            kw["use_connect_dots"] = False
        ga = dpa.from_gaussian_mechanism(1.0, **kw).self_compose(10)
        la = dpa.from_laplace_mechanism(10.0, **kw).self_compose(5)
        return ga.compose(la).get_epsilon_for_delta(1e-5)

    assert reference(False) <= float(eps) <= reference(True) * (1 + 1e-3)  # 17.9075, 17.9126


@pytest.mark.parametrize(
    "args,name,dtype",
    [
        ((np.float32(1.0), 2.0, 1.0), "'epsilon'", "float32"),
        ((1.0, jnp.asarray([2.0, 3.0], jnp.float32), 1.0), "'sigma'", "float32"),
        ((1.0, 2.0, jnp.asarray(1.0, jnp.bfloat16)), "'sensitivity'", "bfloat16"),
    ],
)
def test_narrow_float_input_raises(args, name, dtype):
    with pytest.raises(Float64RequiredError, match=f"argument {name} is {dtype}"):
        delta_gaussian(*args)
    # both a ValueError (bad input) and a RuntimeError
    with pytest.raises(ValueError):
        log_delta_gaussian(*args)
    with pytest.raises(RuntimeError):
        log_delta_gaussian(*args)


def test_guard_under_user_jit_and_vmap():
    f = jax.jit(jax.vmap(lambda s: log_delta_gaussian(1.0, s, 1.0)))
    out = f(jnp.asarray([1.0, 2.0]))
    assert out.dtype == jnp.float64
    np.testing.assert_allclose(out, [log_delta_gaussian(1.0, s, 1.0) for s in (1.0, 2.0)])
    with pytest.raises(Float64RequiredError, match="float32"):
        f(jnp.asarray([1.0, 2.0], jnp.float32))


def test_guard_follows_the_scoped_x64_context():
    expected = float(delta_gaussian(1.0, 2.0, 1.0))
    sigma_gaussian(1.0, 1e-5, 1.0)  # compiled under x64 ...
    with jax.enable_x64(False):
        with pytest.raises(Float64RequiredError, match="x64 is disabled"):
            delta_gaussian(1.0, 2.0, 1.0)
        with pytest.raises(Float64RequiredError, match="x64 is disabled"):
            sigma_gaussian(1.0, 1e-5, 1.0)  # ... retraced without it: raises, no float32 answer
        with jax.enable_x64(True):
            inner = delta_gaussian(1.0, 2.0, 1.0)
            jitted = jax.jit(delta_gaussian)(1.0, 2.0, 1.0)
    assert inner.dtype == jnp.float64 and float(inner) == expected
    assert float(jitted) == pytest.approx(expected, rel=1e-15)


# --------------------------------------------------------------------------- coverage

_PACKAGES = (
    "dpjax.certificate",
    "dpjax.accounting",
    "dpjax.calibration",
    "dpjax.spherical",
    "dpjax.inid",
)

#: Public callables of those packages that do not decide privacy themselves, and why.
_EXEMPT = {
    # sizes, factories, generic root finders, certification plumbing
    "dpjax.certificate.log_target": "log(delta (1 - margin)): a target, no privacy",
    "dpjax.accounting.staircase.shift_candidates": "geometry of the shifts a profile maximises",
    "dpjax.calibration.truncated_laplace.composed_event": "an event factory (no numerics)",
    "dpjax.calibration.one_coin_family.one_coin_event": "an event factory (no numerics)",
    "dpjax.calibration.one_coin_family.calibrate_one_coin": "host driver of PLDAccountant "
    "(calibrate_event_scale), which runs its kernels in float64 itself",
    "dpjax.calibration.flipped_huber_kdim.variance_by_shape": "NumPy float64 variance of a "
    "returned member, no privacy",
    "dpjax.accounting.pld.amplification.sampled_loss": "a Python-float grid extent (math "
    "module, float64), no JAX",
    "dpjax.spherical.mechanism.adjacencies": "a relation's adjacency names (no numerics)",
    **{
        f"dpjax.inid._design.{n}": "shared step of gaussian_design / laplace_design, called "
        "only inside their scoped jax.enable_x64(True)"
        for n in "assemble certify check_inputs compiled run_padded solve_scales".split()
    },
    "dpjax.accounting.pld.compose.fast_size": "integer sizing",
    "dpjax.accounting.pld.compose.ceil_pow2": "integer sizing",
    "dpjax.accounting.pld.engine.tilted_groups": "host grouping by static sizes",
    "dpjax.accounting.pld.engine.run_padded": "host padding around a guarded kernel",
    "dpjax.accounting.pld.atoms.delta_of_atoms": "NumPy float64 host sum (no JAX arrays)",
    "dpjax.certificate.certify_scale": "re-check loop on a guarded profile",
    "dpjax.certificate.require_certified": "host check of a certificate",
    "dpjax.certificate.log_target_host": "NumPy twin of log_target (no JAX arrays)",
    "dpjax.certificate.reported_delta_host": "NumPy float64 host twin (no JAX arrays)",
    "dpjax.certificate.certify_scale_host": "NumPy host loop; runs under enable_x64",
    "dpjax.calibration.members.name_member": "labels a returned shape, no privacy",
    "dpjax.calibration.members.name_by_variance": "labels a returned variance, no privacy",
    # spherical: the KL programme designs the density; its privacy goes through the
    # guarded PLD of SphericalMechanism (pld/epsilon/epsilons/delta)
    **{
        f"dpjax.spherical.design.{n}": "KL programme (privacy via SphericalMechanism)"
        for n in (
            "programme design gaussian_core_shells scale_programme scale_summary scale_design "
            "coefficients_for design_mechanism epsilon_criterion kl_criterion search_r JAX_SOLVE"
        ).split()
    },
    **{
        f"dpjax.spherical.{n}": "NumPy float64 host coefficients"
        for n in (
            "coefficients.log_cell_volumes coefficients.log_gamma coefficients.coefficients "
            "shells.log_unit_ball_volume shells.log_A shells.log_diff_powers "
            "shells.log_shell_volumes shells.log_shell_volume_at shells.log_power_cost_at "
            "shells.log_radial_cost_at shells.log_cost_coefficients "
            "cells_quadrature.unit_gauss_legendre cells_quadrature.log_cell_volumes_quadrature "
            "cells_beta.log_cell_volumes_beta cells_beta.thin_nodes tails.log_tail_sum "
            "tails.tail_rows tails.tail_sums"
        ).split()
    },
    **{
        f"dpjax.inid.groups.{n}": "runs its kernels in a scoped jax.enable_x64(True)"
        for n in "grouped_pld grouped_delta grouped_epsilon calibrate_grouped".split()
    },
    "dpjax.inid.groups.group_coordinates": "NumPy grouping, no privacy value",
    "dpjax.inid.groups.default_bin_width": "grid sizing, no privacy value",
    **{
        f"dpjax.spherical.windowed.{n}": "designs the density (privacy via SphericalMechanism)"
        for n in "slope_rule_r default_last_shell design_windowed mechanism_from_window".split()
    },
    "dpjax.accounting.pld.compose.max_grid_points": (
        "host configuration (memory cap), no privacy value"
    ),
    "dpjax.accounting.pld.plan.tilt_level": "host integer grid level (sizing), no privacy value",
    "dpjax.accounting.pld.tilted.fold.saddle_lambdas": "places the tilts; any lambda gives a "
    "certified bound (the tilted kernels that use them are guarded)",
    **{
        f"dpjax.spherical.{n}": "designs the density on the host in NumPy float64 (privacy via "
        "SphericalMechanism)"
        for n in (
            "banded.derivatives banded.solve_banded_kl cells_beta.log_cell_volumes_beta_symmetric "
            "geometric.design_geometric geometric.plan geometric.programme "
            "geometric.shells_per_unit geometric.solve_plan geometric.verdict"
        ).split()
    },
    **{
        f"dpjax.spherical._banded_newton.{n}": "formulas of the banded Newton step on any array "
        "namespace (the host solver is NumPy float64; the JAX solver that calls them is guarded)"
        for n in "flows barrier barrier_terms close_direction".split()
    },
    "dpjax.spherical.mechanism.check_use": "host check of a use's arguments, no privacy value",
    "dpjax.spherical.calibrate.default_shells": "host shell count of the design grid (an int), "
    "no privacy value",
    "dpjax.accounting.pld.compose.floored_size": "integer sizing of a PLD grid or FFT "
    "(the least compiled length >= n), no privacy value",
    "dpjax.accounting.events.plds.staircase_as_pure_dp": (
        "host rewrite of a leaf event in exact rational arithmetic (no arrays)"
    ),
    "dpjax.accounting.events.plds.staircase_replace_poisson_pure_dp": (
        "host rewrite of a leaf event with Python float64 math (no arrays)"
    ),
    "dpjax.spherical.windowed.check_budget": "host check of the budget, no privacy value",
    "dpjax.calibration.truncated_laplace.shape_range": "host range of the shape search; every "
    "shape it brackets is certified by the guarded profile",
    "dpjax.inid._design.fsum_or_inf": "NumPy float64 host sum (inf where it overflows)",
    "dpjax.inid.profiles.subnormal_count": "host count for a note, no privacy value",
    "dpjax.spherical.io.save": "host file I/O of a designed mechanism, no privacy value",
    "dpjax.spherical.io.load": "host file I/O of a designed mechanism, no privacy value",
    # events: data and their conversions (the accountant scopes x64 for its kernels)
    "dpjax.accounting.events.json_form.event_from_json": "parses JSON into events, "
    "no privacy value",
    "dpjax.accounting.events.json_form.event_to_json": "serialises events, no privacy value",
    "dpjax.accounting.events.from_dp_accounting.from_dp_accounting": "converts events, "
    "no privacy value",
    "dpjax.accounting.events.plds.flatten": "flattens the event tree, no privacy value",
    "dpjax.accounting.events.plds.unsupported": "builds an error message",
    "dpjax.accounting.events.plds.check_leaf": "host check of an event's structure",
    "dpjax.accounting.events.basic_composition.pure_cap": "host rational arithmetic on event "
    "parameters (basic composition), no JAX kernel",
    "dpjax.accounting.events.basic_composition.fraction_up": "host rounding of a rational, "
    "no JAX kernel",
    "dpjax.accounting.events.vocabulary.check_values": "host check of an event's values",
    "dpjax.accounting.accountant.gaussian_equivalent": "host rational arithmetic on event "
    "parameters (the equivalent Gaussian); its profile kernels are guarded",
    "dpjax.accounting.pld.mixture.check_shifts": "host check of the shifts",
    "dpjax.accounting.events.plds.randomized_response_special_pair": "exact NumPy float64 pair "
    "(two atoms each), no JAX kernel; the accountant's PLD kernels are guarded",
    "dpjax.accounting.events.plds.truncation_probabilities": "host SciPy float64 binomial "
    "weights, padded to the requested side; no JAX kernel",
    **{
        f"dpjax.accounting.pld.plan.{n}": "host grid sizing / bin-width choice; every size and "
        "width gives a certified bound through the guarded kernels"
        for n in "long_grid_tail loss_spread refined refinement step_width".split()
    },
    "dpjax.accounting.pld.query.roundoff_weight": "an error weight W(c) evaluated inside the "
    "guarded query kernels, not a privacy value by itself",
    **{
        f"dpjax.calibration.event_scale.{n}": "host driver of PLDAccountant, which runs its "
        "kernels in a scoped jax.enable_x64(True)"
        for n in "calibrate_event_scale event_answer event_delta least_event_scale".split()
    },
    "dpjax.certificate.kernel_error": "host declaration of a constant (checked at import)",
    "dpjax.calibration.gaussian.calibrate_sigma": (
        "host driver: its kernels (calibrate_sigma_host, then _gap_and_slope where the host "
        "declines) are float64_kernel-guarded and run inside jax.enable_x64(True); NumPy "
        "float64 in and out"
    ),
    "dpjax.certificate.certify_epsilon": "host function; the profile it calls is guarded",
    **{
        f"dpjax.calibration.composed_family.{n}": (
            "host bracket end (NumPy float64); every scale it brackets is certified by the "
            "engine"
        )
        for n in "bracket_upper laplace_zcdp_scale".split()
    },
    "dpjax.calibration.composed_family.with_gaussian_end": (
        "host selection (NumPy) between two results already certified in float64"
    ),
    # package-internal steps shared between modules (public names so that no module imports
    # another's private name); each runs only inside a guarded kernel or is host bookkeeping
    **{
        n: "an internal step of the guarded kernels that call it, never a privacy value "
        "handed to a user"
        for n in (
            "dpjax.accounting._flipped_huber_terms.log_expm1",
            "dpjax.accounting._flipped_huber_terms.log_inv_b_minus_mills",
            "dpjax.accounting._flipped_huber_terms.log_neg_expm1",
            "dpjax.accounting._flipped_huber_terms.log_two_w_of",
            "dpjax.accounting.flipped_huber_kdim.log_delta_sufficient_theta",
            "dpjax.accounting.pld.compose.read_window",
            "dpjax.accounting.pld.compose.wrap_cyclic",
            "dpjax.accounting.pld.discretise.connect_dots",
            "dpjax.accounting.pld.discretise.intervals",
            "dpjax.accounting.pld.discretise.materialise",
            "dpjax.accounting.pld.engine.stacked_plds",
            "dpjax.accounting.pld.query.first_ok",
            "dpjax.accounting.pld.query.first_settled",
            "dpjax.accounting.pld.query.grid_segment",
            "dpjax.accounting.pld.tail_bounds.log_c_terms",
            "dpjax.accounting.pld.tail_bounds.split_by_sign",
            "dpjax.accounting.pld.tilted.fold.discounted_sums",
            "dpjax.accounting.pld.tilted.fold.tilted_pmf",
            "dpjax.accounting.rdp.laplace.log_sinhc",
        )
    },
    **{
        n: "host bookkeeping (sizes, indices, argument packing, validation), no privacy value"
        for n in (
            "dpjax.accounting.bracket.refine.validate_epsilon_error",
            "dpjax.accounting.events.plds.subnormal_scale",
            "dpjax.accounting.pld.compose.fft_error_constant",
            "dpjax.accounting.pld.compose.floor_pow2",
            "dpjax.accounting.pld.compose.grid_index",
            "dpjax.accounting.pld.engine.scalar_args",
            "dpjax.accounting.pld.plan.traced_tail",
            "dpjax.accounting.pld.query.suffix_levels",
        )
    },
    "dpjax.accounting.bracket.refine.refine_bracket": "host loop over grids; the bracket "
    "ends it combines come from guarded kernels",
    # i.n.i.d.: errors (not privacy), NumPy validation, and functions that scope x64 themselves
    "dpjax.inid._kernels.gaussian_abs_moment": "error moment, not privacy",
    "dpjax.inid._kernels.laplace_abs_moment": "error moment, not privacy",
    "dpjax.inid._kernels.expected_error": "error, not privacy",
    "dpjax.inid.staircase2d.staircase_2d_mae": "error, not privacy",
    "dpjax.inid.staircase2d.staircase_2d_l1_error": "error, not privacy",
    **{
        f"dpjax.inid.profiles.{n}": "NumPy validation"
        for n in "validate_profile validate_weights normalize make_profile gini "
        "sensitivity_norm".split()
    },
    **{
        f"dpjax.inid.{n}": "runs its kernels in a scoped jax.enable_x64(True)"
        for n in "gaussian.gaussian_design laplace.laplace_design design.design "
        "design.resource_shares gaussian.gaussian_scales_for_rho".split()
    },
    **{
        f"dpjax.inid.exact.{n}": "runs its kernels in a scoped jax.enable_x64(True)"
        for n in "laplace_inid_delta laplace_inid_epsilon laplace_exact_multiplier".split()
    },
}


def _public_kernels():
    found = {}
    for package in _PACKAGES:
        pkg = importlib.import_module(package)
        names = [package] + [
            m.name for m in pkgutil.walk_packages(getattr(pkg, "__path__", []), package + ".")
        ]
        for modname in names:
            mod = importlib.import_module(modname)
            for name, obj in vars(mod).items():
                if name.startswith("_") or inspect.isclass(obj) or not callable(obj):
                    continue
                if getattr(obj, "__module__", None) == modname:
                    found[f"{modname}.{name}"] = obj
    from dpjax.accounting.pld.iterative import IterativeProfile
    from dpjax.spherical.mechanism import SphericalMechanism

    for cls, methods in (
        (IterativeProfile, ("delta_at", "epsilon_at")),
        (SphericalMechanism, ("pld", "epsilon", "epsilons", "delta")),
    ):
        for m in methods:
            found[f"{cls.__module__}.{cls.__name__}.{m}"] = getattr(cls, m)
    return found


_KERNELS = _public_kernels()


def _is_guarded(fn) -> bool:
    while fn is not None:
        if getattr(fn, "float64_kernel", False) is True:
            return True
        fn = getattr(fn, "__wrapped__", None)
    return False


def _dummy_call(fn):
    """Call ``fn`` with placeholder arguments (the guard runs before any is used)."""
    sig = inspect.signature(fn)
    args, kwargs = [], {}
    for p in sig.parameters.values():
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = 1
        else:
            args.append(1.0)
    return fn(*args, **kwargs)


def test_exemptions_are_current():
    assert set(_EXEMPT) <= set(_KERNELS), set(_EXEMPT) - set(_KERNELS)


@pytest.mark.parametrize("name", sorted(set(_KERNELS) - set(_EXEMPT)))
def test_every_public_privacy_kernel_is_guarded(name):
    fn = _KERNELS[name]
    assert _is_guarded(fn), f"{name}: add @float64_kernel (or an exemption with a reason)"
    with jax.enable_x64(False):
        with pytest.raises(Float64RequiredError, match="x64 is disabled"):
            _dummy_call(fn)
