"""Invalid inputs of priprune: rows of test_invalid_inputs.

``bounds.priprune`` (Theorem 1 and its parts), ``bounds.leakage`` (exact leakage and the
bounds around it), ``bounds.validation`` (the shared checks), ``bounds.claims`` (the claim
registry) and ``pruneleak bound priprune``. Each row names the parameter and the value or the
allowed range the message must show.
"""

import math

import numpy as np
from invalid_case import ApiCase, CliCase

from pruneleak.bounds import claims, leakage, priprune, validation

NAN, INF = math.nan, math.inf
EYE4 = np.eye(4)


def _api(case_id, call, *names):
    """A row whose call ignores the temporary folder."""
    return ApiCase(f"priprune-{case_id}", lambda _tmp: call(), names)


def _cli(case_id, argv, names):
    """``pruneleak bound priprune *argv``."""
    return CliCase(f"priprune-cli-{case_id}", ["bound", "priprune", *argv], names)


def _bound_args(**override):
    """``--p 0.5 --B 8 --d-star 5 --delta 1.0`` with some values replaced (None drops one)."""
    args = {"--p": "0.5", "--B": "8", "--d-star": "5", "--delta": "1.0"} | override
    return [part for key, value in args.items() if value is not None for part in (key, value)]


PRIPRUNE = [
    # The measured failure: a Delta no float64 covariance can have printed inf and -inf.
    _api(
        "single-delta-1e308",
        lambda: priprune.single_round_bound(0.5, 8, 5, 1e308),
        "'delta'",
        "single_round_bound",
        "[-1862.5, 1862.5]",
        "1e+308",
    ),
    _api(
        "multi-delta-minus-1e308",
        lambda: priprune.multi_round_bound(0.5, 8, 5, -1e308, 3),
        "'delta'",
        "-1e+308",
    ),
    _api("p-nan", lambda: priprune.single_round_bound(NAN, 8, 5, 0.0), "'p'", "[0, 1]", "nan"),
    _api("p-above-1", lambda: priprune.binary_entropy(1.0000001), "'p'", "[0, 1]", "1.0000001"),
    _api("p-string", lambda: priprune.single_round_bound("0.5", 8, 5, 0.0), "'p'", "'0.5'"),
    _api(
        "p-complex-array",
        lambda: priprune.single_round_bound(np.array([0.5 + 1j]), 8, 5, 0.0),
        "'p'",
        "complex128",
    ),
    _api(
        "p-ragged",
        lambda: priprune.single_round_bound([[0.1], [0.2, 0.3]], 8, 5, 0.0),
        "'p'",
        "rectangular",
    ),
    _api("B-below-1", lambda: priprune.single_round_bound(0.5, 0.5, 5, 0.0), "'B'", "[1, inf)"),
    _api("B-tiny", lambda: priprune.part_b_published(1e-300, 5, 0.0), "'B'", "1e-300"),
    _api("B-inf", lambda: priprune.part_d_corrected(INF, 5), "'B'", "inf"),
    _api(
        "d-star-zero", lambda: priprune.part_d_published(0), "'d_star'", "[1, 9223372036854775807]"
    ),
    _api("d-star-float", lambda: priprune.part_d_published(5.0), "'d_star'", "integer", "5.0"),
    _api(
        "d-star-uint64-wraps",
        lambda: priprune.single_round_bound(0.5, 8, np.array([2**64 - 1], np.uint64), 0.0),
        "'d_star'",
        "18446744073709551615",
    ),
    _api(
        "T-beyond-int64",
        lambda: priprune.multi_round_bound(0.5, 8, 5, 0.0, 10**30),
        "'T'",
        "9223372036854775807",
    ),
    _api(
        "d-below-d-star",
        lambda: priprune.single_round_bound_corrected(0.5, 3, 8, 5, 0.0),
        "'d'",
        "d_star=5 > d=3",
    ),
    _api(
        "kept-above-d",
        lambda: priprune.prunefl_single_round_bound(10, 5, 8, 5, 0.0),
        "'kept'",
        "kept=10 > d=5",
    ),
    _api(
        "kept-negative",
        lambda: priprune.prunefl_single_round_bound_corrected(-1, 5, 8, 5, 0.0),
        "'kept'",
        "-1",
    ),
    _api(
        "prunefl-form",
        lambda: priprune.prunefl_single_round_bound(1, 5, 8, 5, 0.0, form="both"),
        "'form'",
        "'union', 'pbar'",
        "'both'",
    ),
    _api(
        "unit",
        lambda: priprune.mask_entropy_published(0.5, unit="dits"),
        "'unit'",
        "'bits', 'nats'",
        "'dits'",
    ),
    _api(
        "shapes-do-not-broadcast",
        lambda: priprune.single_round_bound([0.1, 0.2], [8, 8, 8], 5, 0.0),
        "single_round_bound",
        "broadcast",
        "p (2,)",
        "B (3,)",
    ),
    _api(
        "per-round-empty",
        lambda: priprune.multi_round_bound_per_round([], 8, 5, 0.0),
        "multi_round_bound_per_round",
        "at least one round",
        "shape (0,)",
    ),
    _api(
        "per-round-scalars",
        lambda: priprune.multi_round_bound_corrected_per_round(0.5, 5, 8, 5, 0.0),
        "multi_round_bound_corrected_per_round",
        "scalars",
    ),
    _api(
        "taylor-terms-huge",
        lambda: priprune.binary_entropy_taylor(0.3, 10**9),
        "'n_terms'",
        "1048576",
        "1000000000",
    ),
    _api("taylor-terms-negative", lambda: priprune.binary_entropy_taylor(0.3, -1), "'n_terms'"),
    _api("spectrum-empty", lambda: priprune.spectrum_summary([]), "'eigenvalues'", "non-empty"),
    _api(
        "spectrum-not-psd",
        lambda: priprune.spectrum_summary([1.0, -1.0]),
        "'eigenvalues'",
        "positive semi-definite",
        "-1.0",
    ),
    _api(
        "spectrum-all-zero",
        lambda: priprune.spectrum_summary([0.0, 0.0]),
        "'eigenvalues'",
        "positive eigenvalue",
    ),
    _api("spectrum-nan", lambda: priprune.spectrum_summary([1.0, NAN]), "'eigenvalues'", "NaN"),
    _api(
        "spectrum-matrix",
        lambda: priprune.spectrum_summary([[1.0]]),
        "'eigenvalues'",
        "1-dimensional",
        "(1, 1)",
    ),
    _api(
        "spectrum-strings",
        lambda: priprune.spectrum_summary(["1.0", "2.0"]),
        "'eigenvalues'",
        "real numbers",
    ),
    _api(
        "spectrum-rtol-1",
        lambda: priprune.spectrum_summary([2.0, 1.0], rtol=1.0),
        "'rtol'",
        "(0, 1)",
        "1.0",
    ),
    _api(
        "log-pdet-inf",
        lambda: priprune.delta_from_log_pseudo_det(INF),
        "'log_pdet'",
        "inf",
    ),
    _api(
        "expr-corrected-string",
        lambda: priprune.single_round_bound_expr(corrected="yes"),
        "'corrected'",
        "'yes'",
    ),
    _api("expr-part", lambda: priprune.part_expr("E"), "'part'", "'A', 'B', 'C', 'D'", "'E'"),
]

LEAKAGE = [
    _api(
        "exact-nan-release",
        lambda: leakage.exact_leakage([[0.0], [NAN]], 1.0),
        "'releases'",
        "exact_leakage",
        "NaN",
    ),
    _api(
        "exact-no-candidates",
        lambda: leakage.exact_leakage(np.zeros((0, 3)), 1.0),
        "'releases'",
        "(0, 3)",
    ),
    _api(
        "exact-1d-releases",
        lambda: leakage.exact_leakage([1.0, 2.0], 1.0),
        "'releases'",
        "2-dimensional",
        "(2,)",
    ),
    _api(
        "exact-complex-releases",
        lambda: leakage.exact_leakage(EYE4 + 1j, 1.0),
        "'releases'",
        "complex128",
    ),
    _api(
        "exact-ragged-releases",
        lambda: leakage.exact_leakage([[1.0], [1.0, 2.0]], 1.0),
        "'releases'",
        "rectangular",
    ),
    _api(
        "exact-negative-noise",
        lambda: leakage.exact_leakage(EYE4, -1.0),
        "'noise_std'",
        "[0, inf)",
        "-1.0",
    ),
    _api(
        "exact-noise-too-small",
        lambda: leakage.exact_leakage(EYE4, 1e-300),
        "'noise_std'",
        "too small",
        "1e-300",
    ),
    _api("exact-one-sample", lambda: leakage.exact_leakage(EYE4, 1.0, samples=1), "'samples'"),
    _api(
        "exact-confidence-1",
        lambda: leakage.exact_leakage(EYE4, 1.0, confidence=1.0),
        "'confidence'",
        "(0, 1)",
    ),
    _api(
        "exact-method",
        lambda: leakage.exact_leakage(EYE4, 1.0, method="exact"),
        "'method'",
        "'exact'",
    ),
    _api(
        "batch-larger-than-candidates",
        lambda: leakage.batch_leakage(EYE4, 1.0, 5),
        "'batch_size'",
        "[1, 4]",
        "5",
    ),
    _api("batch-zero", lambda: leakage.batch_leakage(EYE4, 1.0, 0), "'batch_size'", "0"),
    _api(
        "batch-no-negatives",
        lambda: leakage.batch_leakage(EYE4, 1.0, 2, negatives=0),
        "'negatives'",
        "0",
    ),
    _api(
        "batch-equal-rows-assumed-distinct",
        lambda: leakage.batch_leakage(
            np.array([[0.0], [0.0], [1.0], [2.0]]), 0.0, 2, max_enumerated=0
        ),
        "max_enumerated",
        "6",
    ),
    _api(
        "binary-distance-nan",
        lambda: leakage.binary_channel_bits(NAN, 1.0),
        "'distance'",
        "nan",
    ),
    _api(
        "binary-negative-noise",
        lambda: leakage.binary_channel_success(1.0, -0.1),
        "'noise_std'",
        "-0.1",
    ),
    _api("ceiling-no-candidates", lambda: leakage.ceiling_bits(0), "'candidates'", "0"),
    _api(
        "ceiling-batch-above-candidates",
        lambda: leakage.ceiling_bits(4, 5, replacement=False),
        "'batch_size'",
        "[1, 4]",
        "5",
    ),
    _api(
        "ceiling-beyond-float",
        lambda: leakage.ceiling_bits(2**2000, 10**306),
        "'batch_size'",
        "1.8e308",
    ),
    _api(
        "ceiling-replacement-string",
        lambda: leakage.ceiling_bits(4, 2, replacement="no"),
        "'replacement'",
        "'no'",
    ),
    _api(
        "fano-error-above-1",
        lambda: leakage.fano_lower_bound_bits(4, 1.1),
        "'error_probability'",
        "[0, 1]",
        "1.1",
    ),
    _api("fano-no-candidates", lambda: leakage.fano_lower_bound_bits(0, 0.1), "'candidates'"),
    _api(
        "fano-errors-above-trials",
        lambda: leakage.fano_lower_confidence_bits(4, 11, 10),
        "'errors'",
        "[0, 10]",
        "11",
    ),
    _api(
        "fano-confidence-0",
        lambda: leakage.fano_lower_confidence_bits(4, 1, 10, 0.0),
        "'confidence'",
        "fano_lower_confidence_bits",
    ),
    _api(
        "clopper-successes-above-trials",
        lambda: leakage.clopper_pearson_interval(11, 10),
        "'successes'",
        "[0, 10]",
        "11",
    ),
    _api("clopper-no-trials", lambda: leakage.clopper_pearson_interval(0, 0), "'trials'", "0"),
    _api(
        "clopper-trials-beyond-2-53",
        lambda: leakage.clopper_pearson_interval(1, 10**30),
        "'trials'",
        "9007199254740992",
    ),
    _api(
        "gaussian-channel-noiseless",
        lambda: leakage.gaussian_channel_bound_bits([[0.0], [1.0]], 0.0),
        "'noise_std'",
        "(0, inf)",
        "0.0",
    ),
    _api(
        "gaussian-channel-inf-release",
        lambda: leakage.gaussian_channel_bound_bits([[0.0], [INF]], 1.0),
        "'releases'",
        "NaN or infinite",
    ),
    _api(
        "mechanism-no-candidates",
        lambda: leakage.gaussian_mechanism_success_bound(0, 1.0, 1.0),
        "'candidates'",
    ),
    _api(
        "mechanism-sensitivity-nan",
        lambda: leakage.gaussian_mechanism_success_bound(4, NAN, 1.0),
        "'sensitivity'",
        "nan",
    ),
    _api(
        "max-distance-beyond-float",
        lambda: leakage.max_pairwise_distance([[1.7e308], [-1.7e308]]),
        "'releases'",
        "1.8e308",
    ),
    _api(
        "status-ceiling-nan",
        lambda: leakage.theorem1_status(5.0, ceiling_bits=NAN),
        "'ceiling_bits'",
        "nan",
    ),
    _api(
        "status-lower-limit-above-ceiling",
        lambda: leakage.theorem1_status(5.0, ceiling_bits=10.0, exact_low_bits=11.0),
        "'exact_low_bits'",
        "exact_low_bits=11.0 > ceiling_bits=10.0",
    ),
    _api(
        "status-bound-string",
        lambda: leakage.theorem1_status("5", ceiling_bits=10.0),
        "'bound_bits'",
        "'5'",
    ),
]

VALIDATION = [
    _api(
        "check-real-int-beyond-float",
        lambda: validation.check_real("x", 10**400, func="f"),
        "'x'",
        "1.8e308",
    ),
    _api(
        "check-real-numpy-complex",
        lambda: validation.check_real("x", np.complex128(1 + 2j), func="f"),
        "'x'",
        "real number",
        "(1+2j)",
    ),
    _api(
        "check-int-string",
        lambda: validation.check_int("n", "3", func="f", low=0),
        "'n'",
        "integer",
        "'3'",
    ),
    _api(
        "check-choice-array",
        lambda: validation.check_choice("unit", np.array(["bits"]), func="f", choices=("bits",)),
        "'unit'",
        "'bits'",
    ),
    _api(
        "check-finite-array-none",
        lambda: validation.check_finite_array("x", None, func="f"),
        "'x'",
        "None",
    ),
    _api(
        "check-finite-array-strings",
        lambda: validation.check_finite_array("x", ["1", "2"], func="f"),
        "'x'",
        "<U1",
    ),
    _api(
        "check-open-unit-0",
        lambda: validation.check_open_unit("c", 0.0, func="f"),
        "'c'",
        "(0, 1)",
        "0.0",
    ),
    _api("check-bool", lambda: validation.check_bool("b", "yes", func="f"), "'b'", "'yes'"),
]

CLAIMS = [
    _api("claims-unknown-id", lambda: claims.get_claim("nope.x"), "Unknown claim id", "'nope.x'"),
    _api("claims-id-not-a-string", lambda: claims.get_claim(None), "'claim_id'", "None"),
    _api("claims-paper", lambda: claims.select_claims(paper="xyz"), "'paper'", "'xyz'"),
    _api(
        "claims-ids-one-string",
        lambda: claims.select_claims(claim_ids="huang.C4.small_a"),
        "'claim_ids'",
        "'huang.C4.small_a'",
    ),
    _api(
        "claims-select-unknown-id",
        lambda: claims.select_claims(claim_ids=["nope"]),
        "Unknown claim id",
        "'nope'",
    ),
    _api(
        "claims-run-unknown-id",
        lambda: claims.run_claims(["huang.nope"]),
        "Unknown claim id",
        "'huang.nope'",
    ),
    _api("claims-run-a-string", lambda: claims.run_claims("huang.B4"), "'claims'", "'huang.B4'"),
    _api(
        "claims-effort-0",
        lambda: claims.run_claim(claims.get_claim("huang.B4"), effort=0),
        "'effort'",
        "(0, 1000]",
        "0.0",
    ),
    _api(
        "claims-effort-1e308",
        lambda: claims.run_claim(claims.get_claim("huang.B4"), effort=1e308),
        "'effort'",
        "1e+308",
    ),
    _api("claims-run-not-a-claim", lambda: claims.run_claim("huang.B4"), "'claim'", "'huang.B4'"),
    _api(
        "claims-seed-negative",
        lambda: claims.run_claims([], seed=-1),
        "'seed'",
        "run_claims",
        "-1",
    ),
    _api(
        "claims-thorough-string",
        lambda: claims.run_claims([], thorough="yes"),
        "'thorough'",
        "'yes'",
    ),
    _api("claims-table-width", lambda: claims.render_table([], width=-5), "'width'", "-5"),
]

CLI = [
    # Measured failure of issue 13: printed "inf bits" and "-inf bits" with exit 0.
    _cli("delta-1e308", _bound_args(**{"--delta": "1e308"}), ["'delta'", "1e+308"]),
    _cli(
        "delta-minus-1e308",
        [*_bound_args(**{"--delta": None}), "--delta=-1e308"],
        ["'delta'", "-1e+308"],
    ),
    _cli(
        "log-pdet-1e308",
        [*_bound_args(**{"--delta": None}), "--log-pdet=1e308"],
        ["'--log-pdet'", "[-", "1e+308"],
    ),
    _cli(
        "log-pdet-inf",
        [*_bound_args(**{"--delta": None}), "--log-pdet", "inf"],
        ["--log-pdet", "finite", "inf"],
    ),
    _cli("delta-nan", _bound_args(**{"--delta": "nan"}), ["--delta", "finite", "nan"]),
    _cli("p-above-1", _bound_args(**{"--p": "1.5"}), ["'p'", "[0, 1]", "1.5"]),
    _cli("p-nan", _bound_args(**{"--p": "nan"}), ["--p", "finite", "nan"]),
    _cli("B-below-1", _bound_args(**{"--B": "0.5"}), ["'B'", "[1, inf)", "0.5"]),
    _cli("B-overflows", _bound_args(**{"--B": "1e309"}), ["--B", "finite", "1e309"]),
    _cli("d-star-zero", _bound_args(**{"--d-star": "0"}), ["--d-star", "[1, inf)", "0"]),
    _cli(
        "d-star-beyond-int64",
        _bound_args(**{"--d-star": "99999999999999999999"}),
        ["'d_star'", "99999999999999999999"],
    ),
    _cli("d-star-not-int", _bound_args(**{"--d-star": "5.5"}), ["--d-star", "'5.5'"]),
    _cli("d-below-d-star", [*_bound_args(), "--d", "3"], ["'d'", "d_star=5 > d=3"]),
    _cli("T-zero", [*_bound_args(), "--T", "0"], ["--T", "[1, inf)", "0"]),
    _cli("unit", [*_bound_args(), "--unit", "dits"], ["--unit", "'dits'"]),
    _cli("no-delta", _bound_args(**{"--delta": None}), ["--delta", "--log-pdet", "required"]),
]

CASES: list[ApiCase | CliCase] = PRIPRUNE + LEAKAGE + VALIDATION + CLAIMS + CLI
