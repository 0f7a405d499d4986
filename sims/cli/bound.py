"""``pruneleak bound``: evaluate the source papers' bounds, published beside corrected.

Sub-subcommands: ``priprune`` (Theorem 1 / Corollary 1), ``equivalence`` (Huang et al.
Theorem E.2 and the width of Part 2), ``fedltp`` (Fed-LTP Theorem 1). Each prints the
published and corrected values with units; ``--symbolic`` prints the published sympy
expression (``--latex`` as LaTeX), ``--json`` one JSON object with the inputs, ``unit``,
``published`` and ``corrected``.

An infinite value is printed only where it is an answer, with what it means: an epsilon
of inf (no privacy guarantee), a width of inf (no finite width suffices); in JSON as the
string "inf". PriPrune's bound of finite inputs is finite: if it leaves the floating-point
range the command says so and exits with status 2 instead of printing inf or -inf.
"""

from __future__ import annotations

import json
import math

import numpy as np
import sympy as sp

from pruneleak.bounds import accounting, equivalence, priprune
from pruneleak.bounds.validation import check_int, check_real
from pruneleak.sims.cli import add_command, add_subcommands
from pruneleak.sims.cli.arguments import (
    finite_float,
    nonnegative_int,
    positive_float,
    positive_int,
)
from pruneleak.sims.cli.summaries import SUMMARIES

# What +inf means where it is an answer; any other non-finite value is refused.
NO_GUARANTEE = "no privacy guarantee"
NO_WIDTH = "no finite width suffices"


def register(subparsers) -> None:
    parser = add_command(
        subparsers,
        "bound",
        help=SUMMARIES["bound"],
        description="Evaluate the published and corrected bounds of the source papers.",
    )
    kinds = add_subcommands(parser, dest="bound", metavar="BOUND")
    parser.set_defaults(uses_torch=False)  # pure math: main leaves torch unimported
    _add_priprune(kinds)
    _add_equivalence(kinds)
    _add_fedltp(kinds)


def _add_output_options(parser) -> None:
    parser.add_argument("--symbolic", action="store_true", help="print the sympy expression")
    parser.add_argument("--latex", action="store_true", help="with --symbolic: print LaTeX")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _add_priprune(kinds) -> None:
    parser = add_command(
        kinds,
        "priprune",
        help="PriPrune Theorem 1 / Corollary 1",
        description="PriPrune single-round (T=1) or T-round leakage bound, in bits or nats.",
    )
    parser.add_argument(
        "--p", type=finite_float, required=True, help="pruning rate, a fraction in [0, 1]"
    )
    parser.add_argument(
        "--B", type=finite_float, required=True, help="batch size B, in images, >= 1"
    )
    parser.add_argument(
        "--d-star",
        type=positive_int,
        required=True,
        help="non-singular dimension d* of the gradient covariance",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--delta", type=finite_float, help="Delta = log|det Sigma^(-1/2)|, in nats")
    group.add_argument(
        "--log-pdet",
        type=finite_float,
        help="natural log of the pseudo-determinant of Sigma, in nats (Delta = -log_pdet / 2)",
    )
    parser.add_argument(
        "--d",
        type=positive_int,
        help="parameters under the mask, >= d* (default: d*)",
    )
    parser.add_argument("--T", type=positive_int, default=1, help="number of rounds T")
    parser.add_argument(
        "--unit", choices=priprune.UNITS, default="bits", help="unit of the printed bound"
    )
    _add_output_options(parser)
    parser.set_defaults(func=run_priprune)


def _add_equivalence(kinds) -> None:
    parser = add_command(
        kinds,
        "equivalence",
        help="Huang et al. Theorem E.2 epsilon_dp and Part 2 width",
        description="Pruning as Laplace noise: epsilon_dp (nats) and required width m.",
    )
    parser.add_argument(
        "--sigma", type=positive_float, required=True, help="Laplace scale sigma, > 0"
    )
    parser.add_argument(
        "--sigma-a",
        type=positive_float,
        required=True,
        help="standard deviation sigma_A of the weights, > 0",
    )
    parser.add_argument("--m", type=positive_int, required=True, help="layer width m, neurons")
    parser.add_argument("--d", type=positive_int, required=True, help="input dimension d")
    parser.add_argument(
        "--delta-dp", type=finite_float, default=0.1, help="delta of (epsilon, delta)-DP, in (0, 1)"
    )
    parser.add_argument(
        "--a",
        type=positive_float,
        help="pruning threshold a, in the units of the weights: adds the proof form of "
        "epsilon_dp and the width (default: not evaluated)",
    )
    parser.add_argument(
        "--eps-ap", type=positive_float, default=0.05, help="epsilon of the closeness, > 0"
    )
    parser.add_argument(
        "--delta-ap", type=finite_float, default=0.1, help="delta of the closeness, in (0, 1)"
    )
    _add_output_options(parser)
    parser.set_defaults(func=run_equivalence)


def _add_fedltp(kinds) -> None:
    parser = add_command(
        kinds,
        "fedltp",
        help="Fed-LTP Theorem 1 accountant",
        description="Fed-LTP accumulated epsilon (nats) after round t (0-based).",
    )
    parser.add_argument(
        "--q", type=finite_float, required=True, help="mini-batch sampling rate, in [0, 1]"
    )
    parser.add_argument(
        "--sigma",
        type=positive_float,
        required=True,
        help="noise multiplier: noise standard deviation / clipping norm",
    )
    parser.add_argument(
        "--lambda-val",
        type=positive_float,
        required=True,
        help="Laplace scale of the noisy validation (eq. 17)",
    )
    parser.add_argument(
        "--t",
        type=nonnegative_int,
        required=True,
        help="round index t, 0-based (0: after the first round)",
    )
    parser.add_argument(
        "--delta", type=finite_float, default=1e-3, help="delta of (epsilon, delta)-DP, in (0, 1)"
    )
    parser.add_argument(
        "--steps-per-round",
        type=positive_int,
        default=1,
        help="noisy local steps per round for the corrected accountant",
    )
    parser.add_argument(
        "--alpha",
        type=finite_float,
        help="evaluate eq. 20 at this Renyi order > 1 only (default: the best of the "
        "accountant's orders)",
    )
    _add_output_options(parser)
    parser.set_defaults(func=run_fedltp)


def _checked(values: dict, *, kind: str, inputs: dict, infinite: dict, path=()) -> None:
    """Refuse a non-finite number that is not an answer: +inf is one only where
    ``infinite`` says what it means (e.g. epsilon = inf, no privacy guarantee).

    NaN is a bug of the formula's code (its inputs passed validation); another
    infinity is a value outside floating point, for which no number can be printed.
    """
    for key, value in values.items():
        where = (*path, key)
        if isinstance(value, dict):
            _checked(value, kind=kind, inputs=inputs, infinite=infinite, path=where)
        elif isinstance(value, float | np.floating) and not math.isfinite(value):
            name = f"The {' '.join(where)} value of the {kind} bound"
            given = ", ".join(f"{k}={v}" for k, v in inputs.items())
            if math.isnan(value):
                raise FloatingPointError(f"{name} is NaN for {given}.")
            if not (value > 0 and key in infinite):
                raise ValueError(
                    f"{name} is {value} for {given}: it lies outside the floating-point "
                    "range (about +-1.8e308), so there is no number to print."
                )


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, float | np.floating) and math.isinf(value):
        return "inf"  # only +inf reaches here (_checked)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _emit(
    args, *, kind, inputs, unit, published, corrected, extra=None, expr=None, infinite=None
) -> int:
    """Print the bound as text, JSON or a symbolic expression; ``infinite`` maps the
    name of a value that may be +inf to what +inf means there."""
    if args.symbolic:
        print(sp.latex(expr) if args.latex else str(expr))
        return 0
    infinite = infinite or {}
    results = {"published": published, "corrected": corrected, **(extra or {})}
    _checked(results, kind=kind, inputs=inputs, infinite=infinite)
    record = {"bound": kind, "inputs": inputs, "unit": unit, **results}
    if args.json:
        print(json.dumps(_jsonable(record), sort_keys=False, allow_nan=False))
        return 0
    print(f"{kind}: " + ", ".join(f"{k}={v}" for k, v in inputs.items()))
    for label, value in (("published", published), ("corrected", corrected)):
        print(f"  {label:<10} {_format(value, label, infinite, unit=unit)}")
    for key, value in (extra or {}).items():
        print(f"  {key:<10} {_format(value, key, infinite)}")
    return 0


def _format(value, key: str, infinite: dict, *, unit: str = "") -> str:
    """``value`` as printed: a float with its unit and, when infinite, what inf means."""
    if isinstance(value, dict):
        text = ", ".join(f"{k}={_format(v, k, infinite)}" for k, v in value.items())
        return f"{text} {unit}".rstrip()
    if isinstance(value, float | np.floating):
        text = f"{value:.6g} {unit}".rstrip()
        return f"{text} ({infinite[key]})" if math.isinf(value) else text
    return str(value)


def run_priprune(args) -> int:
    if args.delta is None:
        # Checked here so that the message names the option given, not the Delta derived
        # from it: no float64 spectrum has |ln pdet| above 745 per kept dimension.
        check_real(
            "--log-pdet",
            args.log_pdet,
            func="pruneleak bound priprune",
            low=-745 * args.d_star,
            high=745 * args.d_star,
        )
    delta = (
        args.delta if args.delta is not None else priprune.delta_from_log_pseudo_det(args.log_pdet)
    )
    d = args.d if args.d is not None else args.d_star
    common = {"p": args.p, "B": args.B, "d_star": args.d_star, "delta": delta, "unit": args.unit}
    published = priprune.multi_round_bound(T=args.T, **common)
    corrected = priprune.multi_round_bound_corrected(d=d, T=args.T, **common)
    expr = (
        priprune.multi_round_bound_expr(unit=args.unit)
        if args.T > 1
        else (priprune.single_round_bound_expr(unit=args.unit))
    )
    inputs = {
        "p": args.p,
        "B": args.B,
        "d_star": args.d_star,
        "delta_nats": delta,
        "d": d,
        "T": args.T,
    }
    return _emit(
        args,
        kind="priprune",
        inputs=inputs,
        unit=args.unit,
        published=published,
        corrected=corrected,
        expr=expr,
    )


def run_equivalence(args) -> int:
    common = {"sigma_a": args.sigma_a, "m": args.m, "d": args.d, "delta_dp": args.delta_dp}
    published = {
        "epsilon_dp": equivalence.epsilon_dp_theorem_e2(args.sigma, **common),
        "gs1": equivalence.gs1_bound(args.m, args.d, args.sigma_a, args.delta_dp),
    }
    corrected = {
        # The noise scale sigma*(A-bar x)_i depends on the input: no finite pure epsilon.
        "epsilon_dp": math.inf,
        "gs1": equivalence.gs1_bound_corrected(args.m, args.d, args.sigma_a, args.delta_dp),
    }
    if args.a is not None:
        published["epsilon_dp_proof"] = equivalence.epsilon_dp_proof_e2(
            args.sigma, a=args.a, **common
        )
        width_args = {"a": args.a, "sigma": args.sigma, "sigma_a": args.sigma_a}
        published["required_width"] = equivalence.required_width(
            args.eps_ap, args.delta_ap, **width_args
        )
        # The corrected width takes the row moments at the unit input x = 1/sqrt(d) in
        # every coordinate, d floats: a d beyond 2**24 (128 MiB) is refused, not allocated.
        check_int("--d", args.d, func="pruneleak bound equivalence --a", low=1, high=2**24)
        x = np.full(args.d, 1 / math.sqrt(args.d))
        m2, m4 = equivalence.pruned_row_moments(x, a=args.a, sigma_a=args.sigma_a, pruning="folded")
        corrected["required_width"] = equivalence.required_width_corrected(
            args.eps_ap, args.delta_ap, sigma=args.sigma, row_m2=m2, row_m4=m4
        )
    inputs = {
        "sigma": args.sigma,
        **common,
        "a": args.a,
        "eps_ap": args.eps_ap,
        "delta_ap": args.delta_ap,
    }
    return _emit(
        args,
        kind="equivalence",
        inputs=inputs,
        unit="nats",
        published=published,
        corrected=corrected,
        expr=equivalence.epsilon_dp_theorem_expr(theorem="E.2"),
        infinite={
            "epsilon_dp": NO_GUARANTEE,
            "epsilon_dp_proof": NO_GUARANTEE,
            "required_width": NO_WIDTH,
        },
    )


def run_fedltp(args) -> int:
    common = {
        "q": args.q,
        "noise_multiplier": args.sigma,
        "lambda_val": args.lambda_val,
        "delta": args.delta,
    }
    if args.alpha is not None:
        published = accounting.fedltp_epsilon_published(args.t, alpha=args.alpha, **common)
        published_order = args.alpha
    else:
        published, published_order = accounting.fedltp_epsilon_published_optimal(args.t, **common)
    corrected, corrected_order = accounting.fedltp_epsilon_corrected(
        args.t, steps_per_round=args.steps_per_round, **common
    )
    inputs = {
        "q": args.q,
        "sigma": args.sigma,
        "lambda_val": args.lambda_val,
        "t": args.t,
        "delta": args.delta,
        "steps_per_round": args.steps_per_round,
        "alpha": args.alpha,
    }
    extra = {"optimal_order": {"published": published_order, "corrected": corrected_order}}
    return _emit(
        args,
        kind="fedltp",
        inputs=inputs,
        unit="nats",
        published=published,
        corrected=corrected,
        extra=extra,
        expr=accounting.fedltp_epsilon_published_expr(),
        infinite={"published": NO_GUARANTEE, "corrected": NO_GUARANTEE},
    )
