r"""The errors :math:`\tfrac1{\sqrt m}\|h(x) - g(x)\|_2` of the width-versus-closeness
experiment (:mod:`sims.experiments.width_closeness`), vectorised and by a per-trial loop.

Per width, trials are processed in blocks (all sparsities and parameterisations at once).
The magnitude thresholds are exact order statistics (:func:`_prune_buckets`);
:math:`\bar A x` for every sparsity comes from one scatter-add of :math:`A_{ij}x_j` into
per-row buckets between consecutive thresholds and a cumulative sum.
:func:`closeness_errors_reference` is the direct per-trial loop on the same random draws.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from pruneleak.bounds.validation import check_int
from pruneleak.estimators.device import resolve_device
from pruneleak.sims.core.memory import check_fits
from pruneleak.sims.experiments.width_closeness.config import DTYPES, WidthClosenessConfig
from pruneleak.sims.pruning.mask import magnitude_mask

# Entries of A drawn (and processed) per block of trials; fixes the random stream, so
# the numbers do not depend on the device's memory.
_BLOCK_ELEMENTS = 1 << 22
# Arrays of a block's size alive at once: z and its magnitudes, their buckets, and the
# pruned products.
_BLOCK_COPIES = 4
# Expected number of |A_ij| per histogram bin in _prune_buckets.
_ENTRIES_PER_BIN = 32


def _blocks(config: WidthClosenessConfig, m: int, device: torch.device):
    """Yield ``(z, x, xi)`` per block of trials: z (n, m, d) standard normal (A = sigma_A z),
    x (n, d) folded Gaussian with unit norm, xi (n, m) standard Laplace (Lap(1, sigma) =
    1 + sigma xi). Block b uses a generator seeded from (seed, m, d, b); draws are made in
    float32 and cast, so float32 and float64 runs see the same numbers."""
    dtype = DTYPES[config.dtype]
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
        ratio = sigma_a / scale
        # products, not ** 2: a Python float overflows to inf here instead of raising, and
        # closeness_errors reports the non-finite errors with the scales that caused them
        factor = ratio * ratio
        errors.append((factor * (dd + 2 * sigma * dn + sigma * sigma * nn)).clamp_(min=0).sqrt())
    return torch.stack(errors)


def closeness_errors(config: WidthClosenessConfig, m: int) -> torch.Tensor:
    """Errors :math:`\\tfrac1{\\sqrt m}\\|h(x)-g(x)\\|_2` at width ``m``, vectorised.

    Returns a tensor of shape (len(parameterisations), trials, len(sparsities)) on the
    config's device; every parameterisation and sparsity of a trial share its draws.
    Raises ValueError before drawing when a block of draws or the result cannot fit in
    the device's memory, and after when an error overflowed the config's dtype.
    """
    if not isinstance(config, WidthClosenessConfig):
        raise ValueError(
            "The 'config' parameter of closeness_errors must be a WidthClosenessConfig. "
            f"Got {type(config).__name__} instead."
        )
    func = "closeness_errors"
    m = check_int("m", m, func=func, low=1)
    device = resolve_device(config.device)
    _check_sizes(config, m, device, func)
    counts = config.prune_counts(m)
    noise = config.noise_table(m)
    blocks = []
    for z, x, xi in _blocks(config, m, device):
        u, v = _pruned_products(z, x, counts)
        blocks.append(_block_errors(u, v, xi, noise, config.bias))
    return _finite(torch.cat(blocks, dim=1), config, noise, m, func)


def _check_sizes(config: WidthClosenessConfig, m: int, device, func: str) -> None:
    """Refuse, before drawing anything, a block of draws or a result that cannot fit."""
    d, itemsize = config.input_dim, DTYPES[config.dtype].itemsize
    per_block = min(config.trials, max(1, _BLOCK_ELEMENTS // (m * d)))
    check_fits(
        f"A block of draws of {func} ({per_block} trials of an m x d = {m} x {d} matrix)",
        per_block * m * d,
        unit="values",
        bytes_each=itemsize,
        copies=_BLOCK_COPIES,
        device=device,
    )
    check_fits(
        f"The result of {func} ({len(config.parameterisations)} parameterisations x "
        f"{config.trials} trials x {len(config.sparsities)} sparsities)",
        len(config.parameterisations) * config.trials * len(config.sparsities),
        unit="values",
        bytes_each=itemsize,
        copies=2,  # the blocks and their concatenation
        device=device,
    )


def _finite(errors: torch.Tensor, config, noise, m: int, func: str) -> torch.Tensor:
    """``errors`` (parameterisations first), or a ValueError naming the parameterisations
    whose errors overflowed the dtype (one host synchronisation)."""
    finite = torch.isfinite(errors).flatten(1).all(dim=1).tolist()
    bad = [
        f"{name!r} (sigma={sigma:.3g}, sigma_a={sigma_a:.3g})"
        for name, (sigma, sigma_a), ok in zip(config.parameterisations, noise, finite, strict=True)
        if not ok
    ]
    if bad:
        raise ValueError(
            f"The errors of {func} at width m = {m} are not finite in {config.dtype} for "
            f"{', '.join(bad)} with bias={config.bias:g}: the noise or weight scale (or the "
            f"bias) of the 'config' parameter is too large for the dtype."
        )
    return errors


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
    func = "closeness_errors_reference"
    m = check_int("m", m, func=func, low=1)
    device = resolve_device(config.device)
    _check_sizes(config, m, device, func)
    fractions = [float(p) for p in config.prune_fractions()]
    noise = config.noise_table(m)
    out = torch.empty(len(noise), config.trials, len(fractions), dtype=DTYPES[config.dtype])
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
    return _finite(out, config, noise, m, func)
