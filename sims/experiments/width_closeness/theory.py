r"""The width Part 2 of the proof of Theorem E.2 (Huang et al., arXiv:2003.01876) requires
for :math:`(\epsilon_{ap}, \delta_{ap})`-closeness, per parameterisation and sparsity of a
:class:`~sims.experiments.width_closeness.WidthClosenessConfig`: the published condition
and a corrected Chebyshev width (``bounds.equivalence``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from pruneleak.bounds.equivalence import (
    part2_width_rhs,
    pruned_row_moments,
    required_width_corrected,
)
from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.sims.experiments.width_closeness.config import (
    PARAMETERISATIONS,
    WidthClosenessConfig,
)

# Largest width searched by theory_width (m d / delta must stay within int64 in
# bounds.equivalence), and grid points per decade.
_THEORY_WIDTH_CAP = 10**12
_THEORY_GRID_PER_DECADE = 8


def threshold_for_fraction(fraction: float, sigma_a: float) -> float:
    """Truncation threshold :math:`a` pruning ``fraction`` of :math:`\\mathcal N(0,\\sigma_A^2)`
    entries in expectation: :math:`a = \\sigma_A\\,\\Phi^{-1}((1 + \\mathrm{fraction})/2)`."""
    fraction = check_real(
        "fraction",
        fraction,
        func="threshold_for_fraction",
        low=0,
        high=1,
        low_inclusive=False,
        high_inclusive=False,
    )
    sigma_a = check_real(
        "sigma_a", sigma_a, func="threshold_for_fraction", low=0, low_inclusive=False
    )
    return float(sigma_a * math.sqrt(2.0) * special.erfinv(fraction))


def _smallest_width(holds) -> float:
    """Smallest m from which ``holds(m)`` is true at every grid point up to the cap.

    Scans a geometric grid (``_THEORY_GRID_PER_DECADE`` points per decade up to
    ``_THEORY_WIDTH_CAP``), then bisects on the integers between the last failing grid
    point and the next one (assuming one crossing there). ``inf`` when the condition
    fails at the cap (the conservative side).
    """
    decades = round(math.log10(_THEORY_WIDTH_CAP))
    grid = np.unique(
        np.round(np.logspace(0, decades, decades * _THEORY_GRID_PER_DECADE + 1)).astype(np.int64)
    )
    ok = np.array([holds(int(m)) for m in grid])
    if not ok[-1]:
        return math.inf
    failing = np.flatnonzero(~ok)
    if failing.size == 0:
        return 1.0
    lo, hi = int(grid[failing[-1]]), int(grid[failing[-1] + 1])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return float(hi)


def theory_width(
    config: WidthClosenessConfig,
    parameterisation: str,
    sparsity: float,
    eps_ap: float,
    *,
    corrected: bool = False,
) -> float:
    """The width Part 2 of the proof of Theorem E.2 requires, with the parameterisation's
    :math:`\\sigma(m)`, :math:`\\sigma_A(m)` and :math:`a = \\sigma_A\\Phi^{-1}((1+p)/2)`
    (p the pruned fraction), at the config's ``delta_ap``.

    ``corrected=False``: the published condition
    :math:`m \\ge \\text{part2\\_width\\_rhs}(m)` (``bounds.equivalence``). ``corrected=True``:
    the Chebyshev width of ``bounds.equivalence.required_width_corrected`` on the exact
    moments of :math:`(\\bar Ax)_i` for the representative input
    :math:`x = \\mathbf 1/\\sqrt d` (``inf`` when the mean
    :math:`2\\sigma^2\\mathbb E(\\bar Ax)_i^2` alone exceeds :math:`\\epsilon_{ap}^2`).
    Both concern only :math:`e - \\bar Ax`, i.e. the error when the ReLU is active on every
    coordinate; Part 2 ignores the ReLU term
    :math:`\\mathrm{ReLU}(Ax) + \\bar Ax - \\mathrm{ReLU}(\\tilde Ax)` of :math:`h - g`.
    Returns a float (an integer value, or ``inf`` when no width up to 1e12 works).
    """
    func = "theory_width"
    check_choice("parameterisation", parameterisation, func=func, choices=PARAMETERISATIONS)
    sparsity = check_real(
        "sparsity", sparsity, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    eps_ap = check_real("eps_ap", eps_ap, func=func, low=0, low_inclusive=False)
    fraction = sparsity if config.sparsity_reading == "pruned" else 1.0 - sparsity
    x_rep = np.full(config.input_dim, 1.0 / math.sqrt(config.input_dim))

    def holds(m: int) -> bool:
        sigma, sigma_a = config.noise_parameters(parameterisation, m)
        a = threshold_for_fraction(fraction, sigma_a)
        if corrected:
            m2, m4 = pruned_row_moments(x_rep, a=a, sigma_a=sigma_a, pruning="magnitude")
            need = required_width_corrected(
                eps_ap, config.delta_ap, sigma=sigma, row_m2=m2, row_m4=m4
            )
        else:
            need = part2_width_rhs(
                m, eps_ap=eps_ap, delta_ap=config.delta_ap, a=a, sigma=sigma, sigma_a=sigma_a
            )
        return m >= need

    return _smallest_width(holds)


def theory_widths(config: WidthClosenessConfig, *, corrected: bool = False) -> np.ndarray:
    """:func:`theory_width` for every (parameterisation, eps_ap, sparsity) of the config.

    Returns an array of shape (len(parameterisations), len(eps_ap), len(sparsities)),
    to set beside :meth:`WidthClosenessResult.empirical_width`.
    """
    return np.array(
        [
            [
                [theory_width(config, p, k, eps, corrected=corrected) for k in config.sparsities]
                for eps in config.eps_ap
            ]
            for p in config.parameterisations
        ]
    )
