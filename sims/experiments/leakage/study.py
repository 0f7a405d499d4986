"""One record per (p, s): the exact leakage of the configured release beside its bounds and
attacks (:mod:`sims.experiments.leakage`)."""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import torch

from pruneleak.bounds import leakage, priprune
from pruneleak.bounds.progress import progress as show_progress
from pruneleak.sims.experiments.leakage.attacks import describe, run_attacks
from pruneleak.sims.experiments.leakage.config import CONFIDENCE, LeakageConfig
from pruneleak.sims.experiments.leakage.estimates import estimates
from pruneleak.sims.experiments.leakage.world import RoundState, World, seed_of
from pruneleak.sims.pruning.schemes import derived_seed
from pruneleak.sims.releases import FederatedRelease, LeakageValue, ReleaseGeometry, secret_batches
from pruneleak.sims.store.reconstructions import save_reconstructions
from pruneleak.sims.store.results import ResultStore

logger = logging.getLogger(__name__)


def job_key(config_fingerprint: str, p: float, s: float) -> str:
    """The store key of (p, s): exact float reprs, so that close values never share one."""
    return f"{config_fingerprint}/p={p!r}/noise={s!r}"


def reconstruction_key(config_fingerprint: str, p: float, s: float, attack: str) -> str:
    """Where :func:`run_leakage` keeps ``attack``'s reconstructions at (p, s)
    (:mod:`sims.store.reconstructions`): under the job's store key."""
    return f"leakage/{job_key(config_fingerprint, p, s)}/{attack}"


def _exact_fields(value: LeakageValue) -> dict:
    return {
        "exact_bits": value.bits,
        "exact_ci_bits": list(value.ci_bits),
        "exact_is_exact": value.method == "exact",
        "exact_method": value.method,
        "exact_bracket_bits": None if value.bracket_bits is None else list(value.bracket_bits),
        "bayes_success": value.bayes_success,
        "bayes_success_ci": None
        if value.bayes_success_ci is None
        else list(value.bayes_success_ci),
    }


def _noisy(clean: torch.Tensor, shared: torch.Tensor | None, s: float, seed: int) -> torch.Tensor:
    """``clean`` (targets x k) plus ``N(0, s^2)`` on the sent coordinates (all, or ``shared``)."""
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(clean.shape, generator=generator, dtype=torch.float64)
    noise = noise.to(clean.device)
    return clean + s * (noise if shared is None else noise * shared)


#: Largest single-release matrix (values, M x k) held densely: 2**27 float64, 1 GiB. Beyond
#: it the one-step study works on an (M, rank) matrix with the same distances.
DENSE_VALUES = 1 << 27


def _single_releases(world: World, state: RoundState) -> tuple[np.ndarray, bool]:
    """``(releases, resolved)``: the ``(M, k)`` single releases, or when they would exceed
    :data:`DENSE_VALUES` an ``(M, r)`` matrix with their pairwise distances (from their
    Gram matrix, :func:`bounds.leakage.releases_from_gram`). Releases the Gram cannot tell
    apart (:func:`bounds.leakage.gram_groups` at the round-off bound of its ``k`` terms)
    share one row there; they may differ in exact arithmetic, so ``resolved`` is False when
    any were merged: merging can only lower the noiseless leakage, which is then a lower
    bound (:func:`_one_step`)."""
    mechanism, k = state.mechanism, state.mask.num_kept()
    if world.config.candidates * k <= DENSE_VALUES:
        return mechanism.single_releases(), True
    gram = mechanism.single_gram()
    groups = leakage.gram_groups(gram, rtol=leakage.gram_rounding_rtol(k))
    resolved = len(np.unique(groups)) == len(groups)
    return leakage.releases_from_gram(gram, groups=groups), resolved


def _one_step(world: World, state: RoundState, p: float, s: float) -> tuple[dict, torch.Tensor]:
    """One FedSGD step: :func:`bounds.leakage.batch_leakage` on the single releases (or a
    matrix with their distances); the attacked targets' uploads computed on their own."""
    config = world.config
    cache = state.cache
    m, b = config.candidates, config.batch_size
    if "singles" not in cache:
        cache["singles"], cache["resolved"] = _single_releases(world, state)
        # the tightest sensitivity valid for a uniform B-subset: the diameter of the batch
        # means, exact or a valid upper bound (bounds.leakage.batch_sensitivity)
        cache["sensitivity"] = leakage.batch_sensitivity(cache["singles"], b)
    releases = cache["singles"]
    exact = leakage.batch_leakage(
        releases,
        s,
        b,
        samples=config.samples,
        confidence=CONFIDENCE,
        seed=seed_of(config.seed, p, s, "exact"),
    )
    gaussian = None
    if s > 0:  # the batch mean's covariance: finite-population correction (package docstring)
        correction = (m - b) / (b * (m - 1))
        gaussian = leakage.gaussian_channel_bound_bits(releases * math.sqrt(correction), s)
    value = LeakageValue.of(exact)
    if s == 0 and not cache["resolved"]:  # merged releases: between the groups and the ceiling
        ceiling = math.log2(exact.secrets)
        value = LeakageValue(
            bits=0.5 * (value.bits + ceiling),
            ci_bits=(value.ci_bits[0], ceiling),
            bayes_success=None,
            bayes_success_ci=None,
            secrets=value.secrets,
            method="bracket",
            samples=0,
            bracket_bits=(value.bits, ceiling),
        )
    fields = {
        **_exact_fields(value),
        "gaussian_bound_bits": gaussian,
        "sensitivity": cache["sensitivity"].value,
        "sensitivity_method": cache["sensitivity"].method,
        "dp_success_bound": leakage.gaussian_mechanism_success_bound(
            exact.secrets, cache["sensitivity"].value, s
        ),
        "estimates_bits": estimates(world, torch.from_numpy(releases), p, s),
    }
    return fields, _target_uploads(world, state)


def _target_uploads(world: World, state: RoundState) -> torch.Tensor:
    """The attacked targets' one-step uploads (kept coordinates, ``(targets, k)``): the
    mean of their members' single releases."""
    members = world.targets.reshape(-1)
    target_world = FederatedRelease(state.setting, world.images[members], world.labels[members])
    singles = torch.from_numpy(target_world.single_releases())
    return singles.reshape(*world.targets.shape, -1).mean(dim=1)


def _round_geometries(world: World, state: RoundState) -> dict:
    """Per round the geometry of the target's upload alone, and the geometry of the first
    ``T'`` uploads for every ``T'`` of ``round_counts`` (one simulation of all rounds)."""
    cache = state.cache
    if "rounds" not in cache:
        counts = set(world.config.round_counts())
        mechanism = state.mechanism
        n = mechanism.secrets().shape[0]
        total, alone, upto = ReleaseGeometry(n), [], {}
        for t, rows in enumerate(mechanism.uploads(), start=1):
            if t == 1:
                cache["first"] = torch.from_numpy(rows)
            single = ReleaseGeometry.of_rows(rows)  # each round's Gram once, for both
            alone.append(single)
            total.combine(single)
            if t in counts:
                upto[t] = total.copy()
        cache["rounds"] = (alone, upto)
    return cache["rounds"]


def _secret_rows(world: World) -> list[int]:
    """Row of each attack target in the mechanisms' table of secrets (every B-subset of
    the candidates in lexicographic order, :func:`sims.releases.secret_batches`)."""
    config = world.config
    secrets = secret_batches(config.candidates, config.batch_size)
    index = {tuple(row.tolist()): i for i, row in enumerate(secrets)}
    return [index[tuple(sorted(t.tolist()))] for t in world.targets]


def _rounds(world: World, state: RoundState, p: float, s: float) -> tuple[dict, torch.Tensor]:
    """``T`` rounds (or ``tau > 1`` steps): exact leakage of the concatenated uploads after
    each ``T'``, beside the per-round sum (conditionally independent rounds given ``X``:
    ``I(X; Y_1..Y_T) <= sum_t I(X; Y_t)``) and Corollary 1."""
    config = world.config
    alone, upto = _round_geometries(world, state)
    options = {"samples": config.samples, "confidence": CONFIDENCE}
    per_round = [
        g.leakage(s, seed=seed_of(config.seed, p, s, "round", t), **options)
        for t, g in enumerate(alone, start=1)
    ]
    by_rounds = []
    for t in config.round_counts():
        geometry = upto[t]
        value = geometry.leakage(s, seed=seed_of(config.seed, p, s, "exact", t), **options)
        factor = geometry.factor() if s > 0 else None
        sensitivity = None if factor is None else leakage.max_pairwise_distance(factor)
        by_rounds.append(
            {
                "rounds": t,
                **_exact_fields(value),
                "sensitivity_method": None if factor is None else "exact",
                "per_round_sum_bits": sum(v.bits for v in per_round[:t]),
                "per_round_sum_ci_bits": [
                    sum(v.ci_bits[0] for v in per_round[:t]),
                    sum(v.ci_bits[1] for v in per_round[:t]),
                ],
                "gaussian_bound_bits": None
                if factor is None
                else leakage.gaussian_channel_bound_bits(factor, s),
                "sensitivity": sensitivity,
                "dp_success_bound": None
                if sensitivity is None
                else leakage.gaussian_mechanism_success_bound(value.secrets, sensitivity, s),
                "corollary1_published_bits": _corollary1(world, state, p, t, corrected=False),
                "corollary1_corrected_bits": _corollary1(world, state, p, t, corrected=True),
            }
        )
    last = by_rounds[-1]
    fields = {key: value for key, value in last.items() if key != "rounds"}
    fields["by_rounds"] = by_rounds
    clean = state.cache["first"][_secret_rows(world)]
    return fields, clean


def _corollary1(world: World, state: RoundState, p: float, t: int, *, corrected: bool) -> float:
    """PriPrune's Corollary 1 after ``t`` rounds (bits): ``t`` times Theorem 1 at the
    released round's ``d*`` and ``Delta`` (constant parameters)."""
    fields, b = state.fields, world.config.batch_size
    inputs = {"p": p, "B": b, "d_star": fields["d_star"], "delta": fields["delta_nats"], "T": t}
    if corrected:
        d = sum(v.numel() for v in world.params.values())
        return float(priprune.multi_round_bound_corrected(d=d, **inputs))
    return float(priprune.multi_round_bound(**inputs))


def _random_release(world: World, state: RoundState, p: float, s: float) -> tuple[dict, tuple]:
    """One round of a release that is random given the secret or withholds coordinates
    (:mod:`sims.releases`: a defense, DP-SGD): exact (fixed defenses) or bracketed (hidden
    randomness) leakage; the targets' uploads under one draw of the randomness."""
    config = world.config
    mechanism = state.mechanism
    hidden = hasattr(mechanism, "outcomes")
    draws = config.randomness_draws if hidden else config.samples
    value = mechanism.leakage(
        s, samples=draws, confidence=CONFIDENCE, seed=seed_of(config.seed, p, s, "exact")
    )
    rows = _secret_rows(world)
    draw = seed_of(config.seed, p, s, "upload")
    if hidden:
        trained, shared = mechanism.outcomes(derived_seed(draw))
        clean, flags = trained[rows], shared[rows]
    else:
        uploads = [
            mechanism.upload(i, torch.Generator().manual_seed(derived_seed(draw, k)))
            for k, i in enumerate(rows)
        ]
        clean = torch.stack([values for values, _ in uploads])
        flags = torch.stack([shared for _, shared in uploads])
    fields = {
        **_exact_fields(value),
        "gaussian_bound_bits": None,
        "sensitivity": None,
        "sensitivity_method": None,
        "dp_success_bound": None,
    }
    return fields, (torch.where(flags, clean, 0.0), flags)


def _check_attackable(noisy: torch.Tensor, state, lr: float, s: float) -> None:
    """Refuse noise whose target gradients ``(w - noisy) / lr`` (on the kept coordinates)
    the attacks cannot hold: they match squared gradient distances in float32, which
    overflow past its largest value (the attack would then diverge and blame its own step
    size)."""
    largest = torch.finfo(torch.float32).max
    weights = torch.cat([t.flatten() for t in state.broadcast.values()])[state.mask.flatten()]
    gradients = (weights.to(noisy) - noisy) / lr
    squared_norm = float(gradients.square().sum(dim=-1).max())
    if not squared_norm < largest:
        raise ValueError(
            f"The 'noise_stds' parameter of LeakageConfig must keep the attacked gradient's "
            f"squared norm below float32's largest value, {largest:.3g} (the attacks' "
            f"precision); at s = {s!r} it is {squared_norm:.3g}. Got {s!r} instead: lower it."
        )


def _record(world: World, p: float, s: float, reconstructions_dir) -> dict:
    """The record of (p, s); with ``reconstructions_dir`` the attacks' reconstructions of
    the targets are kept there (:func:`reconstruction_key`)."""
    record, kept = record_with_reconstructions(world, p, s)
    if reconstructions_dir is not None:
        fp = world.config.fingerprint()
        for name, (originals, reconstructions) in kept.items():
            key = reconstruction_key(fp, p, s, name)
            save_reconstructions(reconstructions_dir, key, originals, reconstructions)
    return record


def record_with_reconstructions(world: World, p: float, s: float) -> tuple[dict, dict]:
    """The record of (p, s) (package docstring) and per attack the ``(originals, matched
    reconstructions)`` of its targets (:func:`sims.experiments.leakage.attacks.describe`)."""
    config = world.config
    state = world.at_rate(p)
    shared = None
    if config.defense.name != "none" or config.dp_noise_multiplier is not None:
        fields, (clean, shared) = _random_release(world, state, p, s)
    elif config.one_step:
        fields, clean = _one_step(world, state, p, s)
    else:
        fields, clean = _rounds(world, state, p, s)
    noisy = _noisy(clean, shared, s, seed_of(config.seed, p, s, "noise"))
    _check_attackable(noisy, state, config.client_lr, s)
    sent = [world.sent(state.mask, row) for row in noisy]
    results = run_attacks(world, state, sent, seed_of(config.seed, p, s, "attack"))
    summary, kept = describe(world, results)
    m, b, trials = config.candidates, config.batch_size, config.attack_targets
    secrets = math.comb(m, b)
    ceiling = leakage.ceiling_bits(m, b, replacement=False)
    fano = {
        name: leakage.fano_lower_confidence_bits(secrets, trials - hits, trials, CONFIDENCE)
        for name, hits in summary["attack_hits"].items()
    }
    single = fields["by_rounds"][0] if "by_rounds" in fields else fields
    status = {
        kind: leakage.theorem1_status(
            state.fields[f"theorem1_{kind}_bits"],
            ceiling_bits=ceiling,
            exact_low_bits=single["exact_ci_bits"][0],
            lower_bound_bits=max(fano.values()),
        )
        for kind in ("published", "corrected")
    }
    for entry in fields.get("by_rounds", []):
        entry["corollary1_status"] = {
            kind: leakage.theorem1_status(
                entry[f"corollary1_{kind}_bits"],
                ceiling_bits=ceiling,
                exact_low_bits=entry["exact_ci_bits"][0],
                lower_bound_bits=max(fano.values()),
            )
            for kind in ("published", "corrected")
        }
    record = {
        "dataset": config.dataset,
        "model": config.model,
        "p": p,
        "noise_std": s,
        "candidates": m,
        "batch_size": b,
        "rounds": config.rounds,
        "local_steps": config.local_steps,
        "defense": config.defense.name,
        "pseudo": config.defense.pseudo if config.defense.name != "none" else None,
        "warmup_rounds": config.warmup_rounds,
        "accuracy": state.accuracy,
        "secrets_log2": math.log2(secrets),
        "ceiling_bits": float(ceiling),
        **fields,
        **state.fields,
        "theorem1_status": status,
        "fano_lower_bits": fano,
        "attack_targets": trials,
        "attack_success": {name: hits / trials for name, hits in summary["attack_hits"].items()},
        "nmi": summary["nmi"],
        "nmi_chance": summary["nmi_chance"],
        "psnr": summary["psnr"],
        "ssim": summary["ssim"],
    }
    return record, kept


def run_leakage(
    config: LeakageConfig,
    store: ResultStore | None = None,
    *,
    progress: bool | None = None,
    reconstructions_dir=None,
) -> list[dict]:
    """One record per (p, s) of ``config``, in grid order (package docstring).

    With ``store``, finished (p, s) are read back instead of recomputed and new records
    are appended as they finish (resume). ``progress``: False
    nothing, True or None a bar on a terminal, else a line per finished job on stderr
    (:func:`bounds.progress.progress`).
    With ``reconstructions_dir`` the attacks' reconstructions of the targets are kept
    there, per (p, s) and attack, under :func:`reconstruction_key`.
    """
    fp = config.fingerprint()
    grid = [(p, s) for p in config.rates for s in config.noise_stds]
    done = {}
    if store is not None:
        done = {r["key"]: r for r in store.records() if r.get("config") == fp}
    todo = [(p, s) for p, s in grid if job_key(fp, p, s) not in done]
    if todo:
        world = World(config)
        started = time.monotonic()
        with show_progress(todo, desc="leakage", unit="job", enabled=progress) as bar:
            for finished, (p, s) in enumerate(bar, start=1):
                key = job_key(fp, p, s)
                done[key] = {"key": key, "config": fp, **_record(world, p, s, reconstructions_dir)}
                if store is not None:
                    store.append(done[key])
                elapsed = time.monotonic() - started
                logger.info(
                    "leakage p=%g s=%g: %.3f bits (%s); %d of %d, ETA %.0f s",
                    p,
                    s,
                    done[key]["exact_bits"],
                    done[key]["exact_method"],
                    finished,
                    len(todo),
                    elapsed / finished * (len(todo) - finished),
                )
    return [done[job_key(fp, p, s)] for p, s in grid]
