"""One result type for the leakage of every release mechanism, whatever computed it."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pruneleak.bounds.leakage import BatchLeakage, ExactLeakage, PosteriorLeakage

#: What a value is: computed without Monte Carlo; an exact quantity estimated by Monte
#: Carlo with an interval; a certified bracket (lower, upper) of the quantity; or the
#: entropy of the secret on the assumption that all releases differ.
METHODS = ("exact", "monte_carlo", "bracket", "assumed_distinct")


@dataclass(frozen=True)
class LeakageValue:
    """:math:`I(X; Y)` in bits and the Bayes-optimal identification success of a release.

    Attributes:
        bits: the value, or the midpoint of ``bracket_bits``.
        ci_bits: (low, high), an interval covering :math:`I(X; Y)` at the stated
            confidence (zero width when ``method == "exact"``).
        bayes_success: the MAP attacker's success probability (midpoint of its bracket for
            ``"bracket"``); None where not computed.
        bayes_success_ci: its interval, or None.
        secrets: ``N``, the number of equally likely secrets.
        method: one of :data:`METHODS`.
        samples: Monte Carlo draws (0 without).
        bracket_bits: (lower, upper) bounds' means for ``"bracket"`` (else None).
    """

    bits: float
    ci_bits: tuple[float, float]
    bayes_success: float | None
    bayes_success_ci: tuple[float, float] | None
    secrets: int
    method: str
    samples: int
    bracket_bits: tuple[float, float] | None = None

    @classmethod
    def of(cls, result: ExactLeakage | BatchLeakage | PosteriorLeakage) -> LeakageValue:
        """The common form of a :mod:`bounds.leakage` result."""
        if isinstance(result, ExactLeakage):
            method = "exact" if result.exact else "monte_carlo"
            secrets, bracket = result.candidates, None
        elif isinstance(result, BatchLeakage):
            method = result.method if result.method != "enumerated" else "monte_carlo"
            secrets, bracket = result.secrets, result.bracket_bits
        else:
            method, secrets, bracket = result.method, result.candidates, result.bracket_bits
        return cls(
            bits=float(result.bits),
            ci_bits=tuple(float(v) for v in result.ci_bits),
            bayes_success=None if result.bayes_success is None else float(result.bayes_success),
            bayes_success_ci=None
            if result.bayes_success_ci is None
            else tuple(float(v) for v in result.bayes_success_ci),
            secrets=int(secrets),
            method=method,
            samples=int(result.samples),
            bracket_bits=None if bracket is None else tuple(float(v) for v in bracket),
        )

    def as_record(self) -> dict:
        """JSON-ready fields (tuples as lists)."""
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in asdict(self).items()
        }
