"""``pruneleak bound``: evaluate the source papers' bounds, published beside corrected.

Sub-subcommands: ``priprune`` (Theorem 1 / Corollary 1), ``equivalence`` (Huang et al.
Theorem E.2 and the width of Part 2), ``fedltp`` (Fed-LTP Theorem 1). Each prints the
published and corrected values with units; ``--symbolic`` prints the published sympy
expression (``--latex`` as LaTeX), ``--json`` one JSON object with the inputs, ``unit``,
``published`` and ``corrected`` (non-finite numbers as the strings "inf"/"-inf").
"""

from __future__ import annotations

import json
import math

import numpy as np
import sympy as sp

from bounds import accounting, equivalence, priprune


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bound",
        help="evaluate a paper's bound, published and corrected",
        description="Evaluate the published and corrected bounds of the source papers.",
    )
    kinds = parser.add_subparsers(dest="bound", required=True, metavar="BOUND")
    _add_priprune(kinds)
    _add_equivalence(kinds)
    _add_fedltp(kinds)


def _add_output_options(parser) -> None:
    parser.add_argument("--symbolic", action="store_true", help="print the sympy expression")
    parser.add_argument("--latex", action="store_true", help="with --symbolic: print LaTeX")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _add_priprune(kinds) -> None:
    parser = kinds.add_parser(
        "priprune",
        help="PriPrune Theorem 1 / Corollary 1",
        description="PriPrune single-round (T=1) or T-round leakage bound.",
    )
    parser.add_argument("--p", type=float, required=True, help="pruning rate in [0, 1]")
    parser.add_argument("--B", type=float, required=True, help="batch size >= 1")
    parser.add_argument("--d-star", type=int, required=True, help="non-singular dimension d*")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--delta", type=float, help="Delta = log|det Sigma^(-1/2)| in nats")
    group.add_argument("--log-pdet", type=float, help="natural log pseudo-determinant of Sigma")
    parser.add_argument("--d", type=int, help="parameters under the mask (default: d*)")
    parser.add_argument("--T", type=int, default=1, help="rounds (default: %(default)s)")
    parser.add_argument("--unit", choices=priprune.UNITS, default="bits")
    _add_output_options(parser)
    parser.set_defaults(func=run_priprune)


def _add_equivalence(kinds) -> None:
    parser = kinds.add_parser(
        "equivalence",
        help="Huang et al. Theorem E.2 epsilon_dp and Part 2 width",
        description="Pruning as Laplace noise: epsilon_dp (nats) and required width m.",
    )
    parser.add_argument("--sigma", type=float, required=True, help="Laplace scale sigma")
    parser.add_argument("--sigma-a", type=float, required=True, help="weight std sigma_A")
    parser.add_argument("--m", type=int, required=True, help="layer width m")
    parser.add_argument("--d", type=int, required=True, help="input dimension d")
    parser.add_argument("--delta-dp", type=float, default=0.1, help="default: %(default)s")
    parser.add_argument("--a", type=float, help="pruning threshold a (proof form, width)")
    parser.add_argument("--eps-ap", type=float, default=0.05, help="default: %(default)s")
    parser.add_argument("--delta-ap", type=float, default=0.1, help="default: %(default)s")
    _add_output_options(parser)
    parser.set_defaults(func=run_equivalence)


def _add_fedltp(kinds) -> None:
    parser = kinds.add_parser(
        "fedltp",
        help="Fed-LTP Theorem 1 accountant",
        description="Fed-LTP accumulated epsilon (nats) after round t (0-based).",
    )
    parser.add_argument("--q", type=float, required=True, help="mini-batch sampling rate")
    parser.add_argument("--sigma", type=float, required=True, help="noise multiplier")
    parser.add_argument("--lambda-val", type=float, required=True, help="Laplace scale (eq. 17)")
    parser.add_argument("--t", type=int, required=True, help="0-based round index")
    parser.add_argument("--delta", type=float, default=1e-3, help="default: %(default)s")
    parser.add_argument(
        "--steps-per-round",
        type=int,
        default=1,
        help="noisy local steps per round for the corrected accountant",
    )
    parser.add_argument("--alpha", type=float, help="evaluate eq. 20 at this order only")
    _add_output_options(parser)
    parser.set_defaults(func=run_fedltp)


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, np.generic):
        return value.item()
    return value


def _emit(args, *, kind, inputs, unit, published, corrected, extra=None, expr=None) -> int:
    if args.symbolic:
        print(sp.latex(expr) if args.latex else str(expr))
        return 0
    record = {
        "bound": kind,
        "inputs": inputs,
        "unit": unit,
        "published": published,
        "corrected": corrected,
        **(extra or {}),
    }
    if args.json:
        print(json.dumps(_jsonable(record), sort_keys=False))
        return 0
    print(f"{kind}: " + ", ".join(f"{k}={v}" for k, v in inputs.items()))
    for label, value in (("published", published), ("corrected", corrected)):
        print(f"  {label:<10} {_format(value)} {unit}")
    for key, value in (extra or {}).items():
        print(f"  {key:<10} {_format(value)}")
    return 0


def _format(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_format(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def run_priprune(args) -> int:
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
    )
