"""Invalid inputs of accounting: rows of test_invalid_inputs.

``bounds.accounting``, ``bounds.equivalence``, ``bounds.gaussian`` and the command lines
``pruneleak bound fedltp`` / ``pruneleak bound equivalence``. Every row is an input outside
the documented domain (wrong type, NaN, inf, out of range, wrong shape, an impossible
negative RDP, a resource that cannot fit); inputs whose honest answer is finite or a
documented inf (zero noise, a noise multiplier of 1e-300 or 1e308) are not rows.
"""

import math

import numpy as np
from invalid_case import ApiCase, CliCase

from pruneleak.bounds import accounting as acc
from pruneleak.bounds import equivalence as eq
from pruneleak.bounds import gaussian

_FEDLTP = {"q": 0.1, "noise_multiplier": 1.0, "lambda_val": 1.0, "delta": 1e-3}
_PART2 = {"a": 1.0, "sigma": 1.0, "sigma_a": 1.0}
_MASK = {"cov": np.eye(2), "keep": np.array([True, True]), "batch_size": 1.0, "noise_std": 1.0}


def _fedltp_cli(*extra):
    base = {"--q": "0.1", "--sigma": "1", "--lambda-val": "1", "--t": "3"}
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        base[flag] = value
    return ["bound", "fedltp", *[item for pair in base.items() for item in pair]]


def _equivalence_cli(*extra):
    base = {"--sigma": "1", "--sigma-a": "1", "--m": "10", "--d": "10"}
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        base[flag] = value
    return ["bound", "equivalence", *[item for pair in base.items() for item in pair]]


CASES: list[ApiCase | CliCase] = [
    # --- bounds.accounting: mechanisms -------------------------------------------------
    ApiCase(
        "accounting-rdp-gaussian-negative-noise",
        lambda tmp: acc.rdp_gaussian(2.0, -1.0),
        ["'noise_multiplier'", "rdp_gaussian", "[0, inf)", "-1.0"],
    ),
    ApiCase(
        "accounting-rdp-sampled-q-above-one",
        lambda tmp: acc.rdp_sampled_gaussian(2.0, q=1.3, noise_multiplier=1.0),
        ["'q'", "[0, 1]", "1.3"],
    ),
    ApiCase(
        "accounting-rdp-sampled-q-nan",
        lambda tmp: acc.rdp_sampled_gaussian(2.0, q=math.nan, noise_multiplier=1.0),
        ["'q'", "nan"],
    ),
    ApiCase(
        "accounting-rdp-sampled-noise-inf",
        lambda tmp: acc.rdp_sampled_gaussian(2.0, q=0.1, noise_multiplier=math.inf),
        ["'noise_multiplier'", "inf"],
    ),
    ApiCase(
        "accounting-rdp-sampled-order-one",
        lambda tmp: acc.rdp_sampled_gaussian([1.0, 2.0], q=0.1, noise_multiplier=1.0),
        ["'orders'", "(1, 1048576]", "1.0"],
    ),
    ApiCase(
        "accounting-rdp-sampled-order-1e308",  # once a numpy "Maximum allowed size" error
        lambda tmp: acc.rdp_sampled_gaussian(1e308, q=0.1, noise_multiplier=1.0),
        ["'orders'", "1048576", "1e+308"],
    ),
    ApiCase(
        "accounting-rdp-sampled-order-string",
        lambda tmp: acc.rdp_sampled_gaussian("two", q=0.1, noise_multiplier=1.0),
        ["'orders'", "'two'"],
    ),
    ApiCase(
        "accounting-rdp-laplace-noise-string",
        lambda tmp: acc.rdp_laplace(2.0, "1"),
        ["'noise_multiplier'", "'1'"],
    ),
    ApiCase(
        "accounting-zcdp-epsilon-negative",
        lambda tmp: acc.zcdp_from_pure_dp(-0.5),
        ["'epsilon'", "[0, inf)", "-0.5"],
    ),
    ApiCase(
        "accounting-zcdp-gaussian-bool",
        lambda tmp: acc.zcdp_gaussian(True),
        ["'noise_multiplier'", "True"],
    ),
    ApiCase(
        "accounting-zcdp-rho-inf",
        lambda tmp: acc.rdp_from_zcdp(math.inf, 2.0),
        ["'rho'", "inf"],
    ),
    ApiCase(
        "accounting-zcdp-broadcast",  # once numpy's "operands could not be broadcast"
        lambda tmp: acc.rdp_from_zcdp([0.1, 0.2], [2.0, 3.0, 4.0]),
        ["'rho'", "'orders'", "(2,)", "(3,)"],
    ),
    ApiCase(
        "accounting-quad-ratio",
        lambda tmp: acc.log_a_sampled_gaussian_quad(5000.0, q=0.1, noise_multiplier=1.0),
        ["'alpha'", "2000", "5000.0"],
    ),
    ApiCase(
        "accounting-quad-zero-noise",
        lambda tmp: acc.log_a_sampled_gaussian_quad(2.0, q=0.1, noise_multiplier=0.0),
        ["'noise_multiplier'", "(0, inf)", "0.0"],
    ),
    # --- bounds.accounting: composition and conversion --------------------------------
    ApiCase(
        "accounting-epsilon-negative-rdp",  # issue 13: once epsilon = 0
        lambda tmp: acc.epsilon_from_rdp([2.0, 3.0], [-1.0, -2.0], 1e-5),
        ["'rdp'", "[0, inf]", "-1.0"],
    ),
    ApiCase(
        "accounting-epsilon-nan-rdp",
        lambda tmp: acc.epsilon_from_rdp([2.0], [math.nan], 1e-5),
        ["'rdp'", "nan"],
    ),
    ApiCase(
        "accounting-epsilon-empty-orders",  # once numpy's "argmin of an empty sequence"
        lambda tmp: acc.epsilon_from_rdp([], [], 1e-5),
        ["'orders'", "non-empty", "(0,)"],
    ),
    ApiCase(
        "accounting-epsilon-orders-2d",
        lambda tmp: acc.epsilon_from_rdp([[2.0, 3.0]], [[1.0, 1.0]], 1e-5),
        ["'orders'", "1-dimensional", "(1, 2)"],
    ),
    ApiCase(
        "accounting-epsilon-shape-mismatch",
        lambda tmp: acc.epsilon_from_rdp([2.0, 3.0], [1.0], 1e-5),
        ["'rdp'", "(2,)", "(1,)"],
    ),
    ApiCase(
        "accounting-epsilon-delta-zero",
        lambda tmp: acc.epsilon_from_rdp([2.0], [1.0], 0.0),
        ["'delta'", "(0, 1)", "0.0"],
    ),
    ApiCase(
        "accounting-epsilon-delta-1e308",
        lambda tmp: acc.epsilon_from_rdp([2.0], [1.0], 1e308),
        ["'delta'", "(0, 1)", "1e+308"],
    ),
    ApiCase(
        "accounting-epsilon-conversion-typo",
        lambda tmp: acc.epsilon_from_rdp([2.0], [1.0], 1e-5, conversion="tigth"),
        ["'conversion'", "'tight'", "'tigth'"],
    ),
    ApiCase(
        "accounting-delta-negative-epsilon",
        lambda tmp: acc.delta_from_rdp([2.0], [1.0], -1.0),
        ["'epsilon'", "[0, inf)", "-1.0"],
    ),
    ApiCase(
        "accounting-compose-nothing",
        lambda tmp: acc.compose(),
        ["compose", "at least one RDP curve"],
    ),
    ApiCase(
        "accounting-compose-counts-scalar",  # once "object of type 'int' has no len()"
        lambda tmp: acc.compose([1.0], [2.0], counts=3),
        ["'counts'", "one integer per curve", "3"],
    ),
    ApiCase(
        "accounting-compose-shapes",
        lambda tmp: acc.compose([1.0, 2.0], [1.0, 2.0, 3.0]),
        ["'rdp_curves'", "(2,)", "(3,)"],
    ),
    ApiCase(
        "accounting-compose-negative-count",
        lambda tmp: acc.compose([1.0], counts=[-1]),
        ["'counts'", "-1"],
    ),
    ApiCase(
        "accounting-compose-complex-curve",  # once a TypeError from float(complex)
        lambda tmp: acc.compose([1 + 1j]),
        ["'rdp_curves'", "(1+1j)"],
    ),
    ApiCase(
        "accounting-sampled-steps-float",
        lambda tmp: acc.epsilon_sampled_gaussian(0.1, 1.0, 10.5, 1e-5),
        ["'steps'", "10.5"],
    ),
    ApiCase(
        "accounting-sampled-steps-huge",
        lambda tmp: acc.epsilon_sampled_gaussian(0.1, 1.0, 10**30, 1e-5),
        ["'steps'", "9007199254740992", str(10**30)],
    ),
    # --- bounds.accounting: Fed-LTP ---------------------------------------------------
    ApiCase(
        "accounting-fedltp-t-negative",
        lambda tmp: acc.fedltp_epsilon_corrected(-1, **_FEDLTP),
        ["'t'", "fedltp_epsilon_corrected", "-1"],
    ),
    ApiCase(
        "accounting-fedltp-alpha-one",  # once reported as 'orders' of rdp_sampled_gaussian
        lambda tmp: acc.fedltp_epsilon_published(0, alpha=1.0, **_FEDLTP),
        ["'alpha'", "fedltp_epsilon_published", "1.0"],
    ),
    ApiCase(
        "accounting-fedltp-steps-zero",
        lambda tmp: acc.fedltp_epsilon_corrected(0, steps_per_round=0, **_FEDLTP),
        ["'steps_per_round'", "0"],
    ),
    ApiCase(
        "accounting-fedltp-validation-typo",
        lambda tmp: acc.fedltp_epsilon_corrected(0, validation="exakt", **_FEDLTP),
        ["'validation'", "'exakt'"],
    ),
    ApiCase(
        "accounting-fedltp-optimal-empty-orders",
        lambda tmp: acc.fedltp_epsilon_published_optimal(0, orders=(), **_FEDLTP),
        ["'orders'", "non-empty"],
    ),
    ApiCase(
        "accounting-fedltp-rho-v-lambda-nan",
        lambda tmp: acc.fedltp_rho_v_published(0, lambda_val=math.nan, alpha=2.0),
        ["'lambda_val'", "nan"],
    ),
    # --- bounds.equivalence -------------------------------------------------------------
    ApiCase(
        "accounting-equivalence-sigma-zero",
        lambda tmp: eq.epsilon_dp_theorem_e2(0.0, 0.1, 10, 5, 0.1),
        ["'sigma'", "(0, inf)", "0.0"],
    ),
    ApiCase(
        "accounting-equivalence-m-float",
        lambda tmp: eq.epsilon_dp_theorem_e2(1.0, 0.1, 10.5, 5, 0.1),
        ["'m'", "10.5"],
    ),
    ApiCase(
        "accounting-equivalence-m-huge",  # once a TypeError from numpy's object arrays
        lambda tmp: eq.gs1_bound(10**30, 1, 1.0, 0.1),
        ["'m'", "gs1_bound", "9007199254740992"],
    ),
    ApiCase(
        "accounting-equivalence-lemma-delta",
        lambda tmp: eq.lemma_b1_threshold(1.0, 1.0, 1.0, 0.2),
        ["'delta'", "(0, 0.1)", "0.2"],
    ),
    ApiCase(
        "accounting-equivalence-gs2-form",
        lambda tmp: eq.gs2_bound(10, 5, 0.1, 0.1, form="lemma"),
        ["'form'", "'lemma'"],
    ),
    ApiCase(
        "accounting-equivalence-broadcast",
        lambda tmp: eq.lemma_a4_gaussian_tail([1.0, 2.0], [1.0, 2.0, 3.0]),
        ["'t'", "'sigma'", "(2,)", "(3,)"],
    ),
    ApiCase(
        "accounting-equivalence-b5-regime",
        lambda tmp: eq.lemma_b5_part2_floor(1.0, 1.0, 10, 0.05),
        ["'a'", "'sigma_a'", "20 log(m / delta)"],
    ),
    ApiCase(
        "accounting-equivalence-row-m4-below-m2-squared",
        lambda tmp: eq.required_width_corrected(0.1, 0.1, sigma=1.0, row_m2=2.0, row_m4=1.0),
        ["'row_m4'", "row_m2**2 = 4", "1.0"],
    ),
    ApiCase(
        "accounting-equivalence-width-eps-nan",
        lambda tmp: eq.required_width(math.nan, 0.1, **_PART2),
        ["'eps_ap'", "nan"],
    ),
    ApiCase(
        "accounting-equivalence-moment-order",
        lambda tmp: eq.truncated_gaussian_moment(9, 1.0, 1.0),
        ["'order'", "[0, 8]", "9"],
    ),
    ApiCase(
        "accounting-equivalence-privacy-loss-scalars",  # once numpy's AxisError
        lambda tmp: eq.privacy_loss(0.0, 0.0, 1.0, 0.0, 1.0),
        ["privacy_loss", "at least 1-dimensional"],
    ),
    ApiCase(
        "accounting-equivalence-privacy-loss-shapes",
        lambda tmp: eq.privacy_loss([1.0, 2.0], [0.0], [1.0], [0.0, 0.0, 0.0], [1.0]),
        ["'y'", "'loc2'", "(2,)", "(3,)"],
    ),
    ApiCase(
        "accounting-equivalence-remark-theorem",
        lambda tmp: eq.remark_e3_parameters(10, theorem="E.3"),
        ["'theorem'", "'E.3'"],
    ),
    ApiCase(
        "accounting-equivalence-pruning-typo",
        lambda tmp: eq.pruned_row_moments(np.ones(3), a=1.0, sigma_a=1.0, pruning="x"),
        ["'pruning'", "'x'"],
    ),
    ApiCase(
        "accounting-equivalence-x-2d",
        lambda tmp: eq.pruned_row_moments(np.ones((2, 2)), a=1.0, sigma_a=1.0),
        ["'x'", "1-dimensional", "(2, 2)"],
    ),
    # --- bounds.gaussian ----------------------------------------------------------------
    ApiCase(
        "accounting-gaussian-quantised-ratio",  # once OverflowError (ceil of inf)
        lambda tmp: gaussian.quantised_coordinate_entropy(1e308, 1.0),
        ["'std'", "'step'", "1e+308"],
    ),
    ApiCase(
        "accounting-gaussian-sample-round-huge",  # once a 44.7 GiB allocation
        lambda tmp: gaussian.sample_round(np.eye(2), batch_size=10**9, n_rounds=3, seed=0),
        ["'n_rounds'", "'batch_size'", "6000000000", "134217728"],
    ),
    ApiCase(
        "accounting-gaussian-noise-negative",
        lambda tmp: gaussian.masked_update_mi(**{**_MASK, "noise_std": -1.0}),
        ["'noise_std'", "[0, inf)", "-1.0"],
    ),
    ApiCase(
        "accounting-gaussian-keep-not-boolean",
        lambda tmp: gaussian.masked_update_mi(**{**_MASK, "keep": np.array([1, 0])}),
        ["'keep'", "boolean", "(2,)"],
    ),
    ApiCase(
        "accounting-gaussian-cov-not-psd",
        lambda tmp: gaussian.masked_update_mi(**{**_MASK, "cov": -np.eye(2)}),
        ["'cov'", "positive semi-definite", "-1.0"],
    ),
    ApiCase(
        "accounting-gaussian-variances-zero",
        lambda tmp: gaussian.random_mask_mi(
            [1.0, 0.0], keep_prob=0.5, batch_size=1.0, noise_std=1.0
        ),
        ["'variances'", "positive", "0.0"],
    ),
    ApiCase(
        "accounting-gaussian-unit",
        lambda tmp: gaussian.quantised_coordinate_entropy(1.0, 0.1, unit="dB"),
        ["'unit'", "'bits'", "'dB'"],
    ),
    ApiCase(
        "accounting-gaussian-small-noise-zero",
        lambda tmp: gaussian.masked_update_mi_small_noise(**{**_MASK, "noise_std": 0.0}),
        ["'noise_std'", "(0, inf)", "0.0"],
    ),
    # --- pruneleak bound fedltp -----------------------------------------------------------
    CliCase(
        "accounting-cli-fedltp-q-above-one", _fedltp_cli("--q", "1.5"), ["'q'", "[0, 1]", "1.5"]
    ),
    CliCase("accounting-cli-fedltp-q-nan", _fedltp_cli("--q", "nan"), ["--q", "Got nan"]),
    CliCase(
        "accounting-cli-fedltp-sigma-negative",
        _fedltp_cli("--sigma", "-1"),
        ["--sigma", "Got -1"],
    ),
    CliCase(
        "accounting-cli-fedltp-sigma-inf",
        _fedltp_cli("--sigma", "inf"),
        ["--sigma", "Got inf"],
    ),
    CliCase(
        "accounting-cli-fedltp-lambda-negative",
        _fedltp_cli("--lambda-val", "-2"),
        ["--lambda-val", "Got -2"],
    ),
    CliCase("accounting-cli-fedltp-delta-zero", _fedltp_cli("--delta", "0"), ["'delta'", "(0, 1)"]),
    CliCase(
        "accounting-cli-fedltp-delta-1e308",
        _fedltp_cli("--delta", "1e308"),
        ["'delta'", "(0, 1)", "1e+308"],
    ),
    CliCase("accounting-cli-fedltp-t-negative", _fedltp_cli("--t", "-1"), ["--t", "Got -1"]),
    CliCase(
        "accounting-cli-fedltp-steps-zero",
        _fedltp_cli("--steps-per-round", "0"),
        ["--steps-per-round", "Got 0"],
    ),
    CliCase("accounting-cli-fedltp-alpha-one", _fedltp_cli("--alpha", "1"), ["'alpha'", "1.0"]),
    CliCase(
        "accounting-cli-fedltp-alpha-1e308",  # once a numpy "Maximum allowed size" error
        _fedltp_cli("--alpha", "1e308"),
        ["'alpha'", "1048576", "1e+308"],
    ),
    # --- pruneleak bound equivalence ------------------------------------------------------
    CliCase(
        "accounting-cli-equivalence-d-too-large-to-allocate",
        _equivalence_cli("--a", "0.5", "--d", "1000000000"),
        ["'--d'", "[1, 16777216]", "1000000000"],
    ),
    CliCase(
        "accounting-cli-equivalence-sigma-zero",
        _equivalence_cli("--sigma", "0"),
        ["--sigma", "Got 0"],
    ),
    CliCase("accounting-cli-equivalence-m-zero", _equivalence_cli("--m", "0"), ["--m", "Got 0"]),
    CliCase(
        "accounting-cli-equivalence-m-huge",
        _equivalence_cli("--m", str(10**20)),
        ["'m'", "9007199254740992", str(10**20)],
    ),
    CliCase(
        "accounting-cli-equivalence-delta-dp",
        _equivalence_cli("--delta-dp", "1.5"),
        ["'delta_dp'", "(0, 1)", "1.5"],
    ),
    CliCase(
        "accounting-cli-equivalence-sigma-a-nan",
        _equivalence_cli("--sigma-a", "nan"),
        ["--sigma-a", "Got nan"],
    ),
    CliCase(
        "accounting-cli-equivalence-a-negative", _equivalence_cli("--a", "-1"), ["--a", "Got -1"]
    ),
    CliCase(
        "accounting-cli-equivalence-eps-ap-zero",
        _equivalence_cli("--a", "1", "--eps-ap", "0"),
        ["--eps-ap", "Got 0"],
    ),
    CliCase(
        "accounting-cli-equivalence-delta-ap-one",
        _equivalence_cli("--a", "1", "--delta-ap", "1"),
        ["'delta_ap'", "(0, 1)", "1.0"],
    ),
]
