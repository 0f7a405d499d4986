r"""Width versus closeness: the synthetic experiment of Huang et al., Section 4.4, Figure 8.

Source: Huang, Su, Ravi, Song, Arora, Li, *Privacy-preserving Learning via Deep Net
Pruning*, arXiv:2003.01876 (``papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt``).

Setting (Section 4.4, Theorem 3.2, proof of Theorem E.2): one layer
:math:`f(x) = \mathrm{ReLU}(Ax + b)` with :math:`A \in \mathbb R^{m\times d}`, i.i.d.
:math:`\mathcal N(0, \sigma_A^2)` entries, :math:`b = 0`, and an input :math:`x` drawn from
the folded Gaussian :math:`|\mathcal N(0, I_d)|` and normalised to :math:`\|x\|_2 = 1`.
Magnitude pruning at sparsity :math:`k` gives :math:`\tilde A`, :math:`\bar A = \tilde A - A`;

.. math::
    g(x) = \mathrm{ReLU}(\tilde A x + b), \qquad
    h(x) = f(x) + e, \quad e = \mathrm{Lap}(1, \sigma)^m \circ (\bar A x),

and the error of one trial is :math:`\tfrac1{\sqrt m}\|h(x) - g(x)\|_2`
(Definition 3.1's closeness statistic; Figure 8 tabulates it). The empirical
:math:`\delta_{ap}` at :math:`\epsilon_{ap}` is the fraction of trials whose error exceeds
:math:`\epsilon_{ap}`.

Readings of the paper (stated because the paper leaves them implicit):

* **Sparsity** is the *fraction of weights set to zero* (Figure 1's caption, Section 2.2,
  Section 4.3: "0.5 means 50% of the weights in a network are zeros"). Magnitude pruning
  at sparsity :math:`k` zeroes the ``round(k m d)`` entries of :math:`A` of smallest
  :math:`|A_{ij}|` (layer-wise, Algorithm 2's THPRUNE with the threshold set to reach the
  target sparsity). ``sparsity_reading="kept"`` reads :math:`k` as the kept fraction
  instead, to test whether that reading explains Figure 8's trend in :math:`k`.
* **Lap(1, sigma)** has location 1 and scale :math:`\sigma` (proof of E.2, Part 1:
  density :math:`\tfrac1{2\sigma}\exp(-|t/(\bar Ax)_i - 1|/\sigma)`), drawn independently
  per output coordinate and multiplied coordinate-wise with :math:`\bar A x` (Part 2:
  :math:`e_i - (\bar A x)_i \sim \mathrm{Lap}(0, \sigma|(\bar Ax)_i|)`).
* :math:`\bar A = \tilde A - A` as in the proof sketch (Section 3) and Section 4.4, so that
  :math:`\mathbb E[h(x)] = \mathrm{ReLU}(Ax) + (\tilde A - A)x`, which equals
  :math:`\tilde A x` when the ReLU is active. (Lemmas B.1/B.5 write
  :math:`\bar A_{ij} = A_{ij}1\{|A_{ij}|\le a\} = A - \tilde A`, the opposite sign; that
  sign would make :math:`h` approximate :math:`2Ax - \tilde Ax`, not :math:`g`.)
* Every trial draws a fresh :math:`A`, :math:`x` and Laplace noise; within a trial the
  same draws serve every sparsity and every parameterisation (common random numbers).

The paper states neither :math:`\sigma`, :math:`\sigma_A`, :math:`d` nor the number of
trials; they are fields of :class:`WidthClosenessConfig`, and the *parameterisations*
(:data:`PARAMETERISATIONS`) map a width :math:`m` to :math:`(\sigma, \sigma_A)`:

``"fixed"``
    :math:`\sigma`, :math:`\sigma_A` from the config, the same for every :math:`m`.
``"remark_e3_folded"`` / ``"remark_e3_gaussian"``
    Remark E.3 (1)/(2): :math:`\sigma = m` / :math:`m^2`, :math:`\sigma_A = 1/\sigma`
    (Theta constants 1; ``bounds.equivalence.remark_e3_parameters``).
``"calibrated"``
    :math:`\sigma_A` from the config, :math:`\sigma` such that Theorem E.2's
    :math:`\epsilon_{dp} = 2\,\mathrm{GS}_1(f)\log(m/\delta_{dp})/(\sigma\sigma_A)` equals
    ``eps_dp`` (Section 4.4: 0.5) at ``delta_dp`` (0.1), with :math:`\mathrm{GS}_1` from
    Lemma D.2 (``bounds.equivalence.sigma_for_epsilon_dp``).
``"theorem_3_2"``
    :math:`\sigma_A = \epsilon_{dp}\delta_{dp}/m^2` (Theorem 3.2's
    :math:`\sigma_A = O(\epsilon_{dp}\delta_{dp}/m^2)`, constant 1) and :math:`\sigma`
    calibrated as in ``"calibrated"``.

With :math:`b = 0` the error is exactly proportional to :math:`\sigma_A` at fixed
:math:`\sigma` (ReLU is positively homogeneous), so only :math:`\sigma` and the product
scale matter.

Computation: per width, trials are processed in blocks (all sparsities and
parameterisations at once). The magnitude thresholds are exact order statistics
(:func:`_order_statistics`); :math:`\bar A x` for every sparsity comes from one
scatter-add of :math:`A_{ij}x_j` into per-row buckets between consecutive thresholds and a
cumulative sum. :func:`closeness_errors_reference` is the direct per-trial loop on the same
random draws.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from scipy import special, stats
from tqdm.auto import tqdm

from bounds.equivalence import (
    part2_width_rhs,
    pruned_row_moments,
    remark_e3_parameters,
    required_width_corrected,
    sigma_for_epsilon_dp,
)
from bounds.validation import check_choice, check_int, check_real
from estimators.device import check_device, resolve_device
from sims.pruning.mask import magnitude_mask

logger = logging.getLogger(__name__)

PAPER_SPARSITIES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
PAPER_WIDTHS = (10, 20, 50, 100, 200, 500, 1000, 1500)
PAPER_EPS_AP = (0.05, 0.01)
# Section 4.4: "we set the privacy budgets to be eps_dp = 0.5, delta_dp = 0.1".
PAPER_EPS_DP = 0.5
PAPER_DELTA_DP = 0.1

# Figure 8 of arXiv:2003.01876 (the table in the text extract, lines 277-285 of
# papers/huang-pruning-as-dp-noise-arxiv2003.01876.txt): mean error
# (1/sqrt m)||h(x) - g(x)||_2, rows k = 0.1..0.9, columns m = PAPER_WIDTHS.
PAPER_FIG8_ERROR = np.array(
    [
        [0.0692, 0.0289, 0.0270, 0.0225, 0.0166, 0.0126, 0.0108, 0.0092],
        [0.0688, 0.0277, 0.0268, 0.0219, 0.0170, 0.0128, 0.0109, 0.0095],
        [0.0740, 0.0266, 0.0275, 0.0218, 0.0172, 0.0128, 0.0107, 0.0088],
        [0.0641, 0.0245, 0.0256, 0.0213, 0.0156, 0.0116, 0.0105, 0.0095],
        [0.0628, 0.0204, 0.0284, 0.0191, 0.0149, 0.0114, 0.0105, 0.0085],
        [0.0623, 0.0224, 0.0309, 0.0214, 0.0146, 0.0120, 0.0103, 0.0079],
        [0.0564, 0.0204, 0.0307, 0.0207, 0.0151, 0.0111, 0.0094, 0.0074],
        [0.0450, 0.0303, 0.0301, 0.0198, 0.0133, 0.0096, 0.0074, 0.0065],
        [0.0305, 0.0249, 0.0210, 0.0140, 0.0119, 0.0079, 0.0056, 0.0053],
    ]
)
# Section 4.4's claims, per k = 0.1..0.9: "for all sparsity levels, m = 20 is sufficient
# to satisfy eps_ap = 0.05"; for eps_ap = 0.01 "increase m accordingly to 500 for sparsity
# levels higher than 0.8, and to 1500 for lower ones".
PAPER_CLAIMED_WIDTH = {
    0.05: (20,) * 9,
    0.01: (1500,) * 8 + (500,),
}

PARAMETERISATIONS = (
    "fixed",
    "remark_e3_folded",
    "remark_e3_gaussian",
    "calibrated",
    "theorem_3_2",
)
SPARSITY_READINGS = ("pruned", "kept")
_DTYPES = {"float32": torch.float32, "float64": torch.float64}
# Entries of A drawn (and processed) per block of trials; fixes the random stream, so
# the numbers do not depend on the device's memory.
_BLOCK_ELEMENTS = 1 << 22
# Expected number of |A_ij| per histogram bin in _prune_buckets.
_ENTRIES_PER_BIN = 32
# Largest width searched by theory_width (m d / delta must stay within int64 in
# bounds.equivalence), and grid points per decade.
_THEORY_WIDTH_CAP = 10**12
_THEORY_GRID_PER_DECADE = 8


def _check_sorted_tuple(name, values, *, func, check):
    values = tuple(check(name, v) for v in values)
    if not values or any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty, strictly increasing "
            f"sequence. Got {values!r} instead."
        )
    return values


@dataclass(frozen=True)
class WidthClosenessConfig:
    """Configuration of the width-versus-closeness experiment (see the module docstring).

    Attributes
    ----------
    sparsities : increasing sparsities k in (0, 1) (fraction pruned; see ``sparsity_reading``).
    widths : increasing widths m (layer outputs), integers >= 1.
    input_dim : d, the input dimension (not stated in the paper; default 100).
    trials : independent draws of (A, x, noise) per width.
    parameterisations : names from :data:`PARAMETERISATIONS`, all run on the same draws.
    sigma, sigma_a : Laplace scale and weight standard deviation of ``"fixed"``;
        ``sigma_a`` is also the weight scale of ``"calibrated"``.
    eps_dp, delta_dp : the privacy budget the ``"calibrated"`` and ``"theorem_3_2"`` noise
        is set to (Theorem E.2, nats), Section 4.4's 0.5 and 0.1 by default.
    bias : the constant entry of b (0 in the paper; large |b| switches the ReLU off or on
        for every coordinate, which has a closed-form error).
    eps_ap : closeness levels at which the empirical delta_ap is reported.
    delta_ap : the target failure probability of the empirical and theoretical widths.
    sparsity_reading : ``"pruned"`` (paper: k is the fraction of zeros) or ``"kept"``.
    seed : seed of the random stream (same seed, same numbers on CPU).
    device : ``"auto"``, ``"cpu"``, ``"cuda"``, ...
    dtype : ``"float32"`` or ``"float64"``.
    """

    sparsities: tuple[float, ...] = PAPER_SPARSITIES
    widths: tuple[int, ...] = PAPER_WIDTHS
    input_dim: int = 100
    trials: int = 1000
    parameterisations: tuple[str, ...] = PARAMETERISATIONS
    sigma: float = 1.0
    sigma_a: float = 1.0
    eps_dp: float = PAPER_EPS_DP
    delta_dp: float = PAPER_DELTA_DP
    bias: float = 0.0
    eps_ap: tuple[float, ...] = PAPER_EPS_AP
    delta_ap: float = 0.1
    sparsity_reading: str = "pruned"
    seed: int = 0
    device: str = "auto"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        func = "WidthClosenessConfig"

        def sparsity(name, v):
            return check_real(
                name, v, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
            )

        def width(name, v):
            return check_int(name, v, func=func, low=1)

        def positive(name, v):
            return check_real(name, v, func=func, low=0, low_inclusive=False)

        def probability(name, v):
            return check_real(
                name, v, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
            )

        sparsities = _check_sorted_tuple("sparsities", self.sparsities, func=func, check=sparsity)
        object.__setattr__(self, "sparsities", sparsities)
        object.__setattr__(
            self, "widths", _check_sorted_tuple("widths", self.widths, func=func, check=width)
        )
        object.__setattr__(
            self, "input_dim", check_int("input_dim", self.input_dim, func=func, low=1)
        )
        object.__setattr__(self, "trials", check_int("trials", self.trials, func=func, low=1))
        names = tuple(self.parameterisations)
        for name in names:
            check_choice("parameterisations", name, func=func, choices=PARAMETERISATIONS)
        if not names or len(set(names)) != len(names):
            raise ValueError(
                f"The 'parameterisations' parameter of {func} must name at least one "
                f"parameterisation, each once. Got {names!r} instead."
            )
        object.__setattr__(self, "parameterisations", names)
        for name in ("sigma", "sigma_a", "eps_dp"):
            object.__setattr__(self, name, positive(name, getattr(self, name)))
        for name in ("delta_dp", "delta_ap"):
            object.__setattr__(self, name, probability(name, getattr(self, name)))
        object.__setattr__(self, "bias", check_real("bias", self.bias, func=func))
        object.__setattr__(self, "eps_ap", tuple(positive("eps_ap", v) for v in self.eps_ap))
        if not self.eps_ap:
            raise ValueError(f"The 'eps_ap' parameter of {func} must not be empty. Got ().")
        check_choice(
            "sparsity_reading", self.sparsity_reading, func=func, choices=SPARSITY_READINGS
        )
        object.__setattr__(self, "seed", check_int("seed", self.seed, func=func, low=0))
        check_choice("dtype", self.dtype, func=func, choices=tuple(_DTYPES))
        check_device(self.device, func=func)

    def prune_fractions(self) -> np.ndarray:
        """Fraction of the entries of A set to zero, per sparsity (``sparsity_reading``)."""
        k = np.asarray(self.sparsities, dtype=float)
        return k if self.sparsity_reading == "pruned" else 1.0 - k

    def prune_counts(self, m: int) -> list[int]:
        """Entries of the m x d matrix pruned at each sparsity: ``round(fraction * m * d)``."""
        n = m * self.input_dim
        return [round(float(p) * n) for p in self.prune_fractions()]

    def noise_parameters(self, parameterisation: str, m: int) -> tuple[float, float]:
        """``(sigma, sigma_a)`` of a parameterisation at width ``m`` (module docstring)."""
        func = "WidthClosenessConfig.noise_parameters"
        check_choice("parameterisation", parameterisation, func=func, choices=PARAMETERISATIONS)
        m = check_int("m", m, func=func, low=1)
        if parameterisation == "fixed":
            return self.sigma, self.sigma_a
        if parameterisation.startswith("remark_e3"):
            theorem = "E.2" if parameterisation == "remark_e3_folded" else "E.1"
            chosen = remark_e3_parameters(m, theorem=theorem)
            return float(chosen["sigma"]), float(chosen["sigma_a"])
        sigma_a = (
            self.sigma_a
            if parameterisation == "calibrated"
            else (self.eps_dp * self.delta_dp / m**2)
        )
        sigma = sigma_for_epsilon_dp(
            self.eps_dp,
            sigma_a=sigma_a,
            m=m,
            d=self.input_dim,
            delta_dp=self.delta_dp,
            theorem="E.2",
        )
        return float(sigma), float(sigma_a)


# ---------------------------------------------------------------------------------------
# Random stream (shared by the vectorised code and the reference loop)
# ---------------------------------------------------------------------------------------


def _blocks(config: WidthClosenessConfig, m: int, device: torch.device):
    """Yield ``(z, x, xi)`` per block of trials: z (n, m, d) standard normal (A = sigma_A z),
    x (n, d) folded Gaussian with unit norm, xi (n, m) standard Laplace (Lap(1, sigma) =
    1 + sigma xi). Block b uses a generator seeded from (seed, m, d, b); draws are made in
    float32 and cast, so float32 and float64 runs see the same numbers."""
    dtype = _DTYPES[config.dtype]
    d = config.input_dim
    per_block = max(1, _BLOCK_ELEMENTS // (m * d))
    for block, start in enumerate(range(0, config.trials, per_block)):
        n = min(per_block, config.trials - start)
        state = np.random.SeedSequence([config.seed, m, d, block]).generate_state(1)[0]
        gen = torch.Generator(device=device).manual_seed(int(state))
        z = torch.randn(n, m, d, generator=gen, device=device)
        x = torch.randn(n, d, generator=gen, device=device).abs_().to(dtype)
        x = x / torch.linalg.vector_norm(x, dim=1, keepdim=True)
        exp = torch.empty(2, n, m, device=device).exponential_(generator=gen)
        yield z.to(dtype), x, (exp[0] - exp[1]).to(dtype)  # Exp(1) - Exp(1) is Lap(0, 1)


# ---------------------------------------------------------------------------------------
# Vectorised computation
# ---------------------------------------------------------------------------------------


def _prune_buckets(magnitude: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """For each entry of each row of ``magnitude`` (n, N), the number of ``counts`` below
    its rank: ``bucket = #{k : counts[k] < rank}`` (rank 1 = smallest in its row).

    ``counts`` is a non-decreasing (K,) integer tensor in [0, N]. Magnitude pruning that
    zeroes the ``counts[k]`` smallest entries prunes an entry at k exactly when
    ``bucket <= k``. Equals ``searchsorted(counts, rank)`` with ranks from a full stable
    sort (ties broken by position, as ``sims.pruning.mask.magnitude_mask`` does), without the
    sort: entries are binned by ``erf(v / sqrt 2)`` (bins of equal probability for
    :math:`|\\mathcal N(0,1)|` data, which is what makes it fast; the result is exact for
    any data), a per-row histogram locates the bin of each k-th order statistic, and only
    the entries of those bins are ranked (``topk``, then a stable sort).
    """
    n, total = magnitude.shape
    device = magnitude.device
    zero = int((counts == 0).sum())  # counts of 0 prune nothing: below every rank
    rank = counts[zero:].to(device).expand(n, -1).contiguous()
    nbins = max(1, total // _ENTRIES_PER_BIN)
    bins = (torch.erf(magnitude * math.sqrt(0.5)) * nbins).long().clamp_(0, nbins - 1)
    hist = torch.zeros(n, nbins, dtype=torch.long, device=device)
    hist.scatter_add_(1, bins, torch.ones_like(bins))
    cum = hist.cumsum(1)
    target = torch.searchsorted(cum, rank)  # bin holding each order statistic, (n, K')
    below = torch.where(target > 0, cum.gather(1, (target - 1).clamp(min=0)), 0)
    per_bin = torch.zeros_like(hist).scatter_add_(1, target, torch.ones_like(target))
    is_target = per_bin > 0
    # Entries outside the target bins: every order statistic in a lower bin is below them.
    bucket = (per_bin.cumsum(1) - per_bin).gather(1, bins)
    candidate_hist = torch.where(is_target, hist, 0)
    candidate_cum = candidate_hist.cumsum(1)
    # Position of each order statistic among the sorted candidates (0-based), (n, K').
    position = candidate_cum.gather(1, target) - candidate_hist.gather(1, target)
    position = position + (rank - below) - 1
    width = int(candidate_cum[:, -1].max())
    masked = torch.where(is_target.gather(1, bins), magnitude, torch.inf)
    values, index = masked.topk(width, dim=1, largest=False, sorted=False)
    index, by_position = index.sort(dim=1)
    values, by_value = values.gather(1, by_position).sort(dim=1, stable=True)
    index = index.gather(1, by_value)  # candidates by value, ties by position
    order = torch.arange(width, device=device).expand(n, -1).contiguous()
    ranked = torch.searchsorted(position, order)  # order statistics before each candidate
    bucket.scatter_(1, index, torch.where(values < torch.inf, ranked, bucket.gather(1, index)))
    return bucket + zero


def _pruned_products(z: torch.Tensor, x: torch.Tensor, counts: list[int]):
    """``(u, v)`` for unit weight scale: u = z x (n, m), v[..., k] = (z~_k - z) x (n, m, K),
    where z~_k zeroes the ``counts[k]`` entries of each matrix of smallest magnitude."""
    n, m, d = z.shape
    order = np.argsort(counts, kind="stable")
    sorted_counts = torch.as_tensor(np.asarray(counts)[order], dtype=torch.long)
    bucket = _prune_buckets(z.abs().reshape(n, m * d), sorted_counts).reshape(n, m, d)
    sums = torch.zeros(n, m, len(counts) + 1, dtype=z.dtype, device=z.device)
    sums.scatter_add_(2, bucket, z * x[:, None, :])
    cumulative = sums.cumsum(2)  # [..., k]: the part of z x pruned at sorted k
    inverse = torch.as_tensor(np.argsort(order), device=z.device)
    return cumulative[..., -1], -cumulative[..., :-1][..., inverse]


def _error_moments(u, v, xi, *, sigma_a: float, bias: float):
    """Row means (each (n, K)) of :math:`D^2`, :math:`DN`, :math:`N^2`, where
    :math:`h - g = D + \\sigma N` with the ReLU term
    :math:`D = \\mathrm{ReLU}(Ax+b) + \\bar Ax - \\mathrm{ReLU}(\\tilde Ax+b)` and the
    noise :math:`N = \\xi\\circ\\bar Ax`; so that the squared error at any
    :math:`\\sigma` is :math:`D^2 + 2\\sigma DN + \\sigma^2N^2` (row means)."""
    au = sigma_a * u[..., None]
    av = sigma_a * v
    relu_term = torch.relu(au + bias) + av - torch.relu(au + av + bias)
    noise = av * xi[..., None]
    return (
        relu_term.square().mean(1),
        (relu_term * noise).mean(1),
        noise.square().mean(1),
    )


def _block_errors(u, v, xi, noise, bias: float) -> torch.Tensor:
    """Errors (P, n, K) of every (sigma, sigma_a) in ``noise``. With b = 0 the moments
    scale as sigma_a^2 (ReLU is positively homogeneous), so one evaluation serves all."""
    cache = {}
    errors = []
    for sigma, sigma_a in noise:
        scale = 1.0 if bias == 0 else sigma_a
        if scale not in cache:
            cache[scale] = _error_moments(u, v, xi, sigma_a=scale, bias=bias)
        dd, dn, nn = cache[scale]
        factor = (sigma_a / scale) ** 2
        errors.append((factor * (dd + 2 * sigma * dn + sigma**2 * nn)).clamp_(min=0).sqrt())
    return torch.stack(errors)


def _noise_table(config: WidthClosenessConfig, m: int) -> list[tuple[float, float]]:
    return [config.noise_parameters(p, m) for p in config.parameterisations]


def closeness_errors(config: WidthClosenessConfig, m: int) -> torch.Tensor:
    """Errors :math:`\\tfrac1{\\sqrt m}\\|h(x)-g(x)\\|_2` at width ``m``, vectorised.

    Returns a tensor of shape (len(parameterisations), trials, len(sparsities)) on the
    config's device; every parameterisation and sparsity of a trial share its draws.
    """
    if not isinstance(config, WidthClosenessConfig):
        raise ValueError(
            "The 'config' parameter of closeness_errors must be a WidthClosenessConfig. "
            f"Got {type(config).__name__} instead."
        )
    m = check_int("m", m, func="closeness_errors", low=1)
    device = resolve_device(config.device)
    counts = config.prune_counts(m)
    noise = _noise_table(config, m)
    blocks = []
    for z, x, xi in _blocks(config, m, device):
        u, v = _pruned_products(z, x, counts)
        blocks.append(_block_errors(u, v, xi, noise, config.bias))
    return torch.cat(blocks, dim=1)


def closeness_errors_reference(config: WidthClosenessConfig, m: int) -> torch.Tensor:
    """The same errors as :func:`closeness_errors`, by a direct loop over trials.

    For each trial and sparsity: prune :math:`z` (:math:`A = \\sigma_A z`) with
    ``sims.pruning.mask.magnitude_mask`` and compute :math:`zx`, :math:`\\tilde zx`; for each
    parameterisation form :math:`Ax`, :math:`\\tilde Ax`,
    :math:`e = (1 + \\sigma\\xi)\\circ(\\tilde A - A)x` and evaluate the error from the
    definitions.
    Consumes the same random draws; slow (the baseline of the benchmark and the reference
    of the tests). Equal up to floating-point summation order (both break ties in
    :math:`|A_{ij}|` by position).
    """
    m = check_int("m", m, func="closeness_errors_reference", low=1)
    device = resolve_device(config.device)
    fractions = [float(p) for p in config.prune_fractions()]
    noise = _noise_table(config, m)
    out = torch.empty(len(noise), config.trials, len(fractions), dtype=_DTYPES[config.dtype])
    trial = 0
    for z, x, xi in _blocks(config, m, device):
        for t in range(z.shape[0]):
            zx = z[t] @ x[t]
            for j, fraction in enumerate(fractions):
                keep = magnitude_mask({"z": z[t]}, fraction).keep["z"]
                pruned_zx = torch.where(keep, z[t], 0) @ x[t]
                for p, (sigma, sigma_a) in enumerate(noise):
                    ax, pruned_ax = sigma_a * zx, sigma_a * pruned_zx  # A = sigma_A z
                    e = (1 + sigma * xi[t]) * (pruned_ax - ax)
                    h = torch.relu(ax + config.bias) + e
                    g = torch.relu(pruned_ax + config.bias)
                    out[p, trial, j] = torch.linalg.vector_norm(h - g) / math.sqrt(m)
            trial += 1
    return out


# ---------------------------------------------------------------------------------------
# The experiment and its summaries
# ---------------------------------------------------------------------------------------


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

    ``progress``: tqdm bar over widths (None: only on a terminal).
    """
    if not isinstance(config, WidthClosenessConfig):
        raise ValueError(
            "The 'config' parameter of run_width_closeness must be a WidthClosenessConfig. "
            f"Got {type(config).__name__} instead."
        )
    start = time.perf_counter()
    columns = []
    bar = tqdm(config.widths, desc="width", disable=None if progress is None else not progress)
    for m in bar:
        columns.append(closeness_errors(config, m).cpu().numpy().astype(float))
    noise = np.array([_noise_table(config, m) for m in config.widths])  # (M, P, 2)
    seconds = time.perf_counter() - start
    logger.info("width-closeness grid: %.2f s", seconds)
    return WidthClosenessResult(
        config=config,
        errors=np.stack(columns, axis=-1),
        sigma=noise[..., 0].T.copy(),
        sigma_a=noise[..., 1].T.copy(),
        seconds=seconds,
    )


# ---------------------------------------------------------------------------------------
# Theory: the width Part 2 of the proof of Theorem E.2 requires
# ---------------------------------------------------------------------------------------


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
