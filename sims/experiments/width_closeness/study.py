r"""The width-versus-closeness run and its summaries: mean error, quantiles, empirical
:math:`\delta_{ap}`, the first width reaching closeness, and the comparison with Figure 8
and Section 4.4's claims (:mod:`sims.experiments.width_closeness`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.sims.experiments.width_closeness.config import (
    PAPER_CLAIMED_WIDTH,
    PAPER_FIG8_ERROR,
    PAPER_SPARSITIES,
    PAPER_WIDTHS,
    WidthClosenessConfig,
)
from pruneleak.sims.experiments.width_closeness.errors import closeness_errors

logger = logging.getLogger(__name__)


def first_width_below(values, widths, threshold: float) -> np.ndarray:
    """Figure 8's criterion: per row, the first width whose value is <= ``threshold``.

    ``values`` is (K, M) over ``widths`` (M,); returns (K,) floats, ``inf`` where no width
    of the grid reaches the threshold ("the first time that error goes below" the level
    "when we increase m", Figure 8's caption).
    """
    values = np.asarray(values, dtype=float)
    widths = np.asarray(widths, dtype=float)
    if values.ndim != 2 or values.shape[1] != widths.shape[0]:
        raise ValueError(
            "The 'values' parameter of first_width_below must have shape (K, len(widths)). "
            f"Got {values.shape} for {widths.shape[0]} widths instead."
        )
    threshold = check_real("threshold", threshold, func="first_width_below")
    below = values <= threshold
    first = np.argmax(below, axis=1)
    return np.where(below.any(axis=1), widths[first], np.inf)


def _mean_rank_correlation(table: np.ndarray, axis: int) -> float:
    """Mean Spearman correlation between the grid index and the values along ``axis``."""
    lines = np.moveaxis(table, axis, -1)
    index = np.arange(lines.shape[-1])
    return float(np.mean([stats.spearmanr(index, line).statistic for line in lines]))


def trend_summary(table) -> dict[str, float]:
    """Direction of a (K, M) error table: mean Spearman correlation with m (per row) and
    with k (per column); negative means the error decreases."""
    table = np.asarray(table, dtype=float)
    return {"in_m": _mean_rank_correlation(table, 1), "in_k": _mean_rank_correlation(table, 0)}


@dataclass(frozen=True, eq=False)
class WidthClosenessResult:
    """Errors of one run: ``errors[p, t, j, i]`` for parameterisation p, trial t,
    sparsity j and width i, with ``sigma[p, i]`` and ``sigma_a[p, i]`` used."""

    config: WidthClosenessConfig
    errors: np.ndarray
    sigma: np.ndarray
    sigma_a: np.ndarray
    seconds: float = field(default=float("nan"))

    def index(self, parameterisation: str) -> int:
        check_choice(
            "parameterisation",
            parameterisation,
            func="WidthClosenessResult",
            choices=self.config.parameterisations,
        )
        return self.config.parameterisations.index(parameterisation)

    def mean(self, parameterisation: str) -> np.ndarray:
        """Mean error over trials, (K, M): the quantity of Figure 8."""
        return self.errors[self.index(parameterisation)].mean(axis=0)

    def std(self, parameterisation: str) -> np.ndarray:
        """Standard deviation of the error over trials, (K, M)."""
        return self.errors[self.index(parameterisation)].std(axis=0, ddof=1)

    def quantile(self, parameterisation: str, q: float) -> np.ndarray:
        """The q-quantile of the error over trials, (K, M)."""
        q = check_real("q", q, func="WidthClosenessResult.quantile", low=0, high=1)
        return np.quantile(self.errors[self.index(parameterisation)], q, axis=0)

    def delta_ap(self, parameterisation: str, eps_ap: float) -> np.ndarray:
        """Empirical delta_ap: fraction of trials with error > eps_ap (Definition 3.1), (K, M)."""
        eps_ap = check_real("eps_ap", eps_ap, func="WidthClosenessResult.delta_ap", low=0)
        return (self.errors[self.index(parameterisation)] > eps_ap).mean(axis=0)

    def empirical_width(self, parameterisation: str, eps_ap: float, *, criterion="mean"):
        """First grid width reaching closeness, per sparsity (K,), ``inf`` if none.

        ``criterion="mean"``: mean error <= eps_ap (Figure 8). ``"delta"``: empirical
        delta_ap <= ``config.delta_ap`` (Definition 3.1's (eps_ap, delta_ap)-closeness).
        """
        check_choice(
            "criterion",
            criterion,
            func="WidthClosenessResult.empirical_width",
            choices=("mean", "delta"),
        )
        if criterion == "mean":
            return first_width_below(self.mean(parameterisation), self.config.widths, eps_ap)
        return first_width_below(
            self.delta_ap(parameterisation, eps_ap), self.config.widths, self.config.delta_ap
        )

    def table(self) -> np.ndarray:
        """Tidy structured array: one row per (parameterisation, sparsity, width, eps_ap)."""
        rows = []
        cfg = self.config
        for p, name in enumerate(cfg.parameterisations):
            mean, std = self.mean(name), self.std(name)
            q05, q50, q95 = (self.quantile(name, q) for q in (0.05, 0.5, 0.95))
            for eps in cfg.eps_ap:
                delta = self.delta_ap(name, eps)
                for j, k in enumerate(cfg.sparsities):
                    for i, m in enumerate(cfg.widths):
                        rows.append(
                            (
                                name,
                                k,
                                m,
                                self.sigma[p, i],
                                self.sigma_a[p, i],
                                mean[j, i],
                                std[j, i],
                                q05[j, i],
                                q50[j, i],
                                q95[j, i],
                                eps,
                                delta[j, i],
                            )
                        )
        dtype = [
            ("parameterisation", "U32"),
            ("sparsity", "f8"),
            ("width", "i8"),
            ("sigma", "f8"),
            ("sigma_a", "f8"),
            ("mean", "f8"),
            ("std", "f8"),
            ("q05", "f8"),
            ("median", "f8"),
            ("q95", "f8"),
            ("eps_ap", "f8"),
            ("delta_ap", "f8"),
        ]
        return np.array(rows, dtype=dtype)

    def paper_comparison(self, parameterisation: str) -> dict:
        """Compare with Figure 8 and Section 4.4's claims (needs the paper's k and m grid).

        Returns a dict with ``"ratio"`` (ours / paper, (9, 8)), ``"trend"`` and
        ``"paper_trend"`` (:func:`trend_summary`), ``"reproduces_trend_in_m"`` /
        ``"_in_k"`` (same sign and |correlation| >= 0.5), and per claimed eps_ap
        ``"claims"[eps]``: the claimed widths, the paper's and our first widths (by mean
        and by delta), ``"holds"`` (mean error <= eps at the claimed width for every k) and
        ``"holds_at_1500"`` (the loose reading "m of order 10^3": at m = 1500 for every k).
        """
        cfg = self.config
        paper_grid = set(PAPER_SPARSITIES) <= set(cfg.sparsities)
        if not (paper_grid and set(PAPER_WIDTHS) <= set(cfg.widths)):
            raise ValueError(
                "paper_comparison needs the paper's grid (PAPER_SPARSITIES x PAPER_WIDTHS) "
                f"in the run. Got sparsities {cfg.sparsities} and widths {cfg.widths} instead."
            )
        rows = [cfg.sparsities.index(k) for k in PAPER_SPARSITIES]
        cols = [cfg.widths.index(m) for m in PAPER_WIDTHS]
        mean = self.mean(parameterisation)[np.ix_(rows, cols)]
        ours, paper = trend_summary(mean), trend_summary(PAPER_FIG8_ERROR)
        claims = {}
        for eps, claimed in PAPER_CLAIMED_WIDTH.items():
            at_claim = mean[np.arange(len(rows)), [PAPER_WIDTHS.index(w) for w in claimed]]
            delta = self.delta_ap(parameterisation, eps)[np.ix_(rows, cols)]
            claims[eps] = {
                "claimed_width": np.asarray(claimed, dtype=float),
                "paper_first_width": first_width_below(PAPER_FIG8_ERROR, PAPER_WIDTHS, eps),
                "first_width_mean": first_width_below(mean, PAPER_WIDTHS, eps),
                "first_width_delta": first_width_below(delta, PAPER_WIDTHS, cfg.delta_ap),
                "mean_at_claimed_width": at_claim,
                "holds": bool(np.all(at_claim <= eps)),
                "holds_at_1500": bool(np.all(mean[:, -1] <= eps)),
            }
        return {
            "ratio": mean / PAPER_FIG8_ERROR,
            "trend": ours,
            "paper_trend": paper,
            "reproduces_trend_in_m": _same_trend(ours["in_m"], paper["in_m"]),
            "reproduces_trend_in_k": _same_trend(ours["in_k"], paper["in_k"]),
            "claims": claims,
        }


def _same_trend(ours: float, paper: float) -> bool:
    return bool(np.sign(ours) == np.sign(paper) and abs(ours) >= 0.5)


def run_width_closeness(
    config: WidthClosenessConfig, *, progress: bool | None = None
) -> WidthClosenessResult:
    """Run the experiment over the config's widths (one vectorised pass per width).

    ``progress`` over widths: False none, True or None a bar on a terminal, else lines
    on stderr (:func:`bounds.progress.progress`).
    """
    if not isinstance(config, WidthClosenessConfig):
        raise ValueError(
            "The 'config' parameter of run_width_closeness must be a WidthClosenessConfig. "
            f"Got {type(config).__name__} instead."
        )
    start = time.perf_counter()
    columns = []
    with show_progress(config.widths, desc="width", unit="width", enabled=progress) as bar:
        for m in bar:
            columns.append(closeness_errors(config, m).cpu().numpy().astype(float))
    noise = np.array([config.noise_table(m) for m in config.widths])  # (M, P, 2)
    seconds = time.perf_counter() - start
    logger.info("width-closeness grid: %.2f s", seconds)
    return WidthClosenessResult(
        config=config,
        errors=np.stack(columns, axis=-1),
        sigma=noise[..., 0].T.copy(),
        sigma_a=noise[..., 1].T.copy(),
        seconds=seconds,
    )
