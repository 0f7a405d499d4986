"""Running PriPrune's attack study (arXiv:2310.19958, Fig. 2 / Fig. 10 and the appendix
"Comparison of Attacks", Fig. 7; journal version Fig. 3-5): one job, and a resumable sweep.

One job (:func:`run_job`) is one FL run and the attacks on it:

1. the data set is split over ``num_clients`` clients (IID, or by writer:
   ``partition``); a model
   (:class:`sims.sweep.job.ModelSpec`) is initialised from ``seed``; the base pruning
   scheme (:class:`sims.sweep.job.PruningSpec`) prunes it at rate ``p``;
2. ``fed.rounds`` (T) rounds of FedSGD (:func:`sims.fl.server.run_federated`, batch size
   B, ``fed.local_epochs`` local steps, client lr ``fed.lr``), the clients running the
   job's defense (:class:`sims.defenses.DefenseSpec`; PriPrune's Largest / Random / Mix,
   real or Pseudo, or its adaptive Algorithm 3) after the base scheme; the server keeps
   every upload of the target clients ``0 .. targets - 1``
   (:class:`sims.attacks.defense_aware.DefenseAwareObserver`, which also notes what a
   defense-aware server would match);
3. every kept upload is attacked by SGI or GI (:mod:`sims.attacks`) as PriPrune evaluates
   its defenses (``attacker="unaware"``), or by the defense-aware SGI
   (:mod:`sims.attacks.defense_aware`), all of them in one batched computation (in chunks
   of ``attack_chunk``), with the labels the client used (``label_mode="known"``), iDLG
   or LLG labels read off the update (``"idlg"``, ``"recover"``) or jointly optimised
   ones;
4. each reconstruction is scored against the client's batch (NMI beside its chance
   level, PSNR; :func:`estimators.image.score_reconstruction`);
5. the leakage of each target in bits, about the secret "the client's batch", a
   uniformly random B-subset of its local data D_i (N = C(|D_i|, B) values;
   :mod:`sims.sweep.leakage_bits`): the exact bits ``I(batch; upload)`` of its first
   attacked round (one local step, ``|D_i| <= leakage_candidates``; else None) and
   Fano's lower bound from the attacker's identifications (it names the B local samples
   nearest to its B reconstructions; a success is the named set equal to the batch; an
   upload whose batch images are not found exactly once in D_i counts as an error);
6. Theorem 1 / Corollary 1 are evaluated as published and corrected
   (:mod:`bounds.priprune`) on ``d*`` and ``Delta`` of the per-sample gradients of
   ``stats_samples`` samples of target 0 at the first attacked point, under its mask
   (all of its samples when it holds fewer: ``stats_samples_used``).

Leakage after T rounds. PriPrune considers single-round attacks (journal version,
Threat Model) and plots NMI against T without saying how rounds combine. Here the
record's ``nmi`` is, for each target, the best NMI of the server's single-round
reconstructions of that target in rounds 1..T (the adversary keeps its best result),
averaged over targets; ``nmi_last`` is the mean NMI of the attacks in round T alone.
With T = 1 both are the single-round leakage. The per-upload values are kept too.

:func:`run_sweep` runs every job of a :class:`sims.sweep.grid.SweepConfig` not yet in the
:class:`sims.store.results.ResultStore`, and appends one record per finished job keyed by
:func:`sims.sweep.job.job_key`, so a killed sweep resumes where it stopped and a job
shared by several sweeps runs once. Its ``executor`` runs them one after the other in
this process (``"local"``) or as Ray tasks on this machine or a cluster (``"ray"``,
:mod:`sims.sweep.ray_executor`); either way this process alone writes the store. Two
sweeps may write to one store at the same time: before each job the local executor looks
again whether another one recorded it meanwhile (then it skips the job), and the store
writes a key at most once (a job both ran at the same moment is recorded by the first to
finish).
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Sequence

import numpy as np
import torch

from pruneleak.bounds import priprune
from pruneleak.bounds.progress import progress as show_progress
from pruneleak.bounds.validation import check_choice, check_int
from pruneleak.estimators.device import resolve_device
from pruneleak.estimators.image import score_reconstruction
from pruneleak.estimators.nmi import nmi_permutation_null
from pruneleak.sims.attacks import identify
from pruneleak.sims.attacks.defense_aware import DefenseAwareObserver, defense_aware_attack
from pruneleak.sims.core.runtime import seeded
from pruneleak.sims.data.datasets import file_datasets, load_train_test
from pruneleak.sims.data.partition import split_clients
from pruneleak.sims.defenses.client import withheld_fraction
from pruneleak.sims.fl.server import run_federated
from pruneleak.sims.gradients.statistics import gradient_statistics
from pruneleak.sims.models import count_parameters
from pruneleak.sims.store.reconstructions import save_reconstructions
from pruneleak.sims.store.results import ResultStore
from pruneleak.sims.sweep import leakage_bits
from pruneleak.sims.sweep.grid import SweepConfig
from pruneleak.sims.sweep.job import ATTACKS, AttackJob, job_key

logger = logging.getLogger(__name__)

#: Ways :func:`run_sweep` runs jobs (its ``executor``).
EXECUTORS = ("local", "ray")

BOUND_FIELDS = (
    "bound_published_bits",
    "bound_corrected_bits",
    "bound_published_single_bits",
    "bound_corrected_single_bits",
)


def _attack_uploads(job: AttackJob, model, uploads: list[dict], num_classes: int, device):
    """The chosen attacker's reconstructions of ``uploads`` (records of
    :class:`sims.attacks.defense_aware.DefenseAwareObserver`), ``attack_chunk`` at a time:
    the unaware one (SGI as Algorithm 2 publishes it, or GI) from the broadcast and the
    upload, the aware one (:func:`sims.attacks.defense_aware.defense_aware_attack`) from
    the records, round after round."""
    config = job.attack_config(device=str(device))
    common = {
        "lr": job.fed.lr,
        "batch_shape": tuple(uploads[0]["batch"][0].shape),
        "num_classes": num_classes,
        "config": config,
        "local_steps": job.fed.local_epochs,
    }
    labels = [u["batch"][1] for u in uploads] if config.label_mode == "known" else None
    seeds = [job.seed + k for k in range(len(uploads))]
    if job.attacker == "aware":  # it knows the defense's step (DefenseSpec.step_scale)
        aware = {**common, "lr": job.fed.lr * job.defense.step_scale}
        return defense_aware_attack(
            model, uploads, labels=labels, seeds=seeds, chunk=job.attack_chunk, **aware
        )
    results = []
    for start in range(0, len(uploads), job.attack_chunk):
        stop = start + job.attack_chunk
        results += ATTACKS[job.attack](
            model,
            [u["w"] for u in uploads[start:stop]],
            [u["sent"] for u in uploads[start:stop]],
            labels=None if labels is None else labels[start:stop],
            seeds=seeds[start:stop],
            gradient_at=job.fed.gradient_at if job.attack == "sgi" else "dense",
            **common,
        )
    return results


def _defense_fields(job: AttackJob, defense, uploads: list[dict]) -> dict:
    """The defense's rates (run_job's docstring): per round and overall from its
    records, and the effective rate of the attacked uploads."""
    rounds = range(1, job.fed.rounds + 1)
    if defense is None:
        label, per_round, overall = "none", [0.0 for _ in rounds], 0.0
    else:
        rates = [(r["round"], r["rate"]) for r in defense.records]
        label, overall = defense.label, _mean_or_none([rate for _, rate in rates])
        per_round = [_mean_or_none([rate for r, rate in rates if r == t]) for t in rounds]
    effective = [_effective_rate(u) for u in uploads]
    return {
        "defense_label": label,
        "defense_rate_per_round": per_round,
        "defense_rate": overall,
        "effective_defense_rate_per_upload": effective,
        "effective_defense_rate": _mean_or_none(effective),
    }


def _effective_rate(upload: dict) -> float:
    """The fraction of the upload's base-kept prunable weights outside the aware
    attacker's mask (one device synchronisation)."""
    matched = upload["attack_mask"]
    device = next(iter(matched.keep.values())).device
    return withheld_fraction(upload["mask"].to(device), matched)


def _bound_fields(job: AttackJob, model, upload: dict, stats_data, d: int) -> dict:
    """Theorem 1 / Corollary 1 at the first attacked point (module docstring, step 6)."""
    mask = upload["mask"]
    point = mask.apply(upload["w"]) if job.fed.gradient_at == "masked" else upload["w"]
    stats = gradient_statistics(model, point, *stats_data, mask=mask)
    out = {
        "d_star": stats.d_star,
        "delta_nats": stats.delta,
        "d_kept": stats.d,
        "stats_samples_used": len(stats_data[1]),
    }
    if stats.d_star < 1:  # no gradient variation in the sample: the bound is undefined
        return {**out, **dict.fromkeys(BOUND_FIELDS)}
    inputs = {
        "p": job.pruning.p,
        "B": job.fed.batch_size,
        "d_star": stats.d_star,
        "delta": stats.delta,
    }
    rounds = job.fed.rounds
    return {
        **out,
        "bound_published_bits": priprune.multi_round_bound(**inputs, T=rounds),
        "bound_corrected_bits": priprune.multi_round_bound_corrected(**inputs, d=d, T=rounds),
        "bound_published_single_bits": priprune.single_round_bound(**inputs),
        "bound_corrected_single_bits": priprune.single_round_bound_corrected(**inputs, d=d),
    }


def _mean_or_none(values) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _leakage_fields(job: AttackJob, model, uploads: list[dict], results, train, clients) -> dict:
    """Identifications per upload, exact and Fano bits per target (module docstring,
    step 5), the targets sorted as in ``nmi_per_target``."""
    identified, rounds_of = [], {}
    for k, (upload, result) in enumerate(zip(uploads, results, strict=True)):
        local = train.images[clients[upload["client"]]]
        truth = leakage_bits.batch_positions(upload["batch"][0], local)
        named = identify(result.images, local)
        identified.append(truth is not None and named == sorted(truth))
        rounds_of.setdefault(upload["client"], []).append(k)
    secrets, exact, methods, fano = [], [], [], []
    for client in sorted(rounds_of):
        mine = rounds_of[client]
        rows = torch.as_tensor(clients[client])
        batch_size = len(uploads[mine[0]]["batch"][0])
        secrets.append(leakage_bits.secrets_log2(len(rows), batch_size))
        errors = sum(not identified[k] for k in mine)
        fano.append(leakage_bits.fano_bits(len(rows), batch_size, errors, len(mine)))
        found = leakage_bits.exact_bits(
            model,
            uploads[mine[0]],
            train.images[rows],
            train.labels[rows],
            lr=job.fed.lr,
            gradient_at=job.fed.gradient_at,
            local_steps=job.fed.local_epochs,
            max_candidates=job.leakage_candidates,
        )
        exact.append(None if found is None else found.bits)
        methods.append(None if found is None else found.method)
    complete = bool(exact) and all(v is not None for v in exact)
    return {
        "identified_per_upload": identified,
        "leakage_secrets_log2": secrets,
        "exact_bits_per_target": exact,
        "exact_bits_method_per_target": methods,
        "fano_bits_per_target": fano,
        "exact_bits": _mean_or_none(exact) if complete else None,
        "fano_bits": _mean_or_none(fano),
    }


def _client_split(job: AttackJob, train) -> list:
    """The clients' sample indices (``job.partition``); a natural split must have
    ``job.num_clients`` writers, the population the job's targets and sampling assume."""
    clients = split_clients(
        train, job.partition, num_clients=job.num_clients, seed=job.seed, func="AttackJob"
    )
    if len(clients) != job.num_clients:
        raise ValueError(
            f"The 'num_clients' parameter of AttackJob must equal the number of writers of "
            f"{job.dataset!r} ({len(clients)}) with partition='natural'. "
            f"Got {job.num_clients} instead."
        )
    return clients


def run_job(job: AttackJob, *, reconstructions_dir=None) -> dict:
    """Run one job (module docstring, steps 1-6) on its device and return its record
    (without key).

    With ``reconstructions_dir`` the attacked images and their reconstructions (matched
    as scored) of every attacked upload, one upload after the other, are kept there under
    the job's key (:func:`_keep_reconstructions`), not in the record.

    Record fields: ``job`` (:meth:`AttackJob.as_fields`), ``d`` (model parameters),
    ``n_uploads``, per upload ``rounds``, ``clients``, ``nmi_per_upload``,
    ``psnr_per_upload``, ``nmi_chance_per_upload``, ``nmi_permutation_floor_per_upload``
    (:func:`_scores`), ``labels_correct_per_upload``; per
    target ``nmi_per_target`` and ``psnr_per_target`` (best over rounds); means ``nmi``,
    ``psnr``, ``nmi_chance``, ``nmi_permutation_floor``, ``nmi_last``, ``psnr_last``; the
    attack's final objective (the journal's "attack loss", :func:`_attack_loss_fields`)
    ``attack_loss_per_upload``, per target ``attack_loss_per_target`` (mean over its
    attacked uploads) and their mean ``attack_loss``; in bits (step 5)
    ``identified_per_upload``, per target ``leakage_secrets_log2`` (``log2 N``),
    ``exact_bits_per_target`` (None where not computed), ``exact_bits_method_per_target``
    (``"exact"``, or ``"assumed_distinct"``: ``log2 N`` for too many batches to group)
    and ``fano_bits_per_target``,
    their means ``exact_bits`` (None unless every target has one) and ``fano_bits``;
    ``d_star``, ``delta_nats``,
    ``d_kept``, the bounds of ``BOUND_FIELDS`` (bits; None when ``d* = 0``);
    ``readjust_every`` (FedDST / PruneFL's re-adjustment interval in this run, None for a
    one-shot scheme), ``readjust_rounds`` (the rounds it may change the mask in:
    :meth:`sims.pruning.schemes.PruningScheme.readjust_rounds`) and ``mask_change_rounds``
    (those in which the server's mask did change);
    ``accuracy`` (test accuracy after T rounds), ``accuracy_rounds`` and
    ``accuracy_per_round`` (the evaluated rounds, 0 = before training, and the test
    accuracy at each: ``eval_every``); ``seconds``. Only the uploads of the rounds
    :meth:`AttackJob.attacked` selects are attacked (``attack_every``). Metrics are None when no
    target was sampled.

    The defense (all clients, every round; 0.0 without one): ``defense_label``
    (``"none"``, ``"Largest (Pseudo)"`` ...), ``defense_rate_per_round`` (rounds 1..T: the
    mean over that round's clients of the withheld fraction of their base-kept prunable
    weights, :attr:`sims.defenses.Defense.records`; None for a round with no record) and
    its mean over all client rounds ``defense_rate``; per attacked upload
    ``effective_defense_rate_per_upload``, the fraction of the base-kept prunable weights
    the defense-aware attacker cannot match (withheld now or, under Pseudo-Pruning, at the
    client's last upload: :func:`sims.attacks.defense_aware.attack_mask`), and its mean
    ``effective_defense_rate`` (None without uploads). The attack metrics mean what they
    mean without a defense, for the job's ``attacker``; the exact bits are None under a
    defense (the release model of :mod:`sims.sweep.leakage_bits` does not hold: the
    withheld coordinates depend on the batch), the Fano bits are the chosen attacker's.
    """
    start = time.perf_counter()
    device = resolve_device(job.device)
    train, test = load_train_test(job.dataset, job.data_dir, seed=job.seed)
    if job.image_size is not None:
        train, test = train.resized(job.image_size), test.resized(job.image_size)
    clients = _client_split(job, train)
    with seeded(job.seed):
        model = job.model.build(image_shape=train.image_shape, num_classes=train.num_classes)
    scheme = job.pruning.build(seed=job.seed, rounds=job.fed.rounds)
    defense = job.defense.build(seed=job.seed)
    observer = DefenseAwareObserver(
        pseudo=defense is not None and defense.pseudo, gradient_at=job.fed.gradient_at
    )
    history = run_federated(
        model,
        scheme,
        train,
        clients,
        test,
        job.fed_config(),
        device=device,
        on_target_update=observer,
        targets=set(range(job.targets)),
        progress=False,
        defense=defense,
    )
    uploads = [u for u in observer.records if job.attacked(u["round"])]
    model = model.to(device)
    d = count_parameters(model)
    record = {
        "job": job.as_fields(),
        "d": d,
        "n_uploads": len(uploads),
        "accuracy": history.accuracy[-1],
        "accuracy_rounds": list(history.rounds),
        "accuracy_per_round": list(history.accuracy),
        "rounds": [u["round"] for u in uploads],
        "readjust_every": job.pruning.interval(job.fed.rounds),
        "readjust_rounds": scheme.readjust_rounds(job.fed.rounds),
        "mask_change_rounds": list(history.mask_changes),
        "clients": [u["client"] for u in uploads],
        **_defense_fields(job, defense, uploads),
    }
    results = _attack_uploads(job, model, uploads, train.num_classes, device) if uploads else []
    per_upload, kept = _scores(job, uploads, results)
    for metric, values in per_upload.items():
        record[f"{metric}_per_upload"] = values
    for metric in ("nmi", "psnr"):
        best = {}
        for client, value in zip(record["clients"], per_upload[metric], strict=True):
            best[client] = max(best.get(client, -math.inf), value)
        record[f"{metric}_per_target"] = [best[c] for c in sorted(best)]
        record[metric] = _mean_or_none(record[f"{metric}_per_target"])
        last = [
            v
            for r, v in zip(record["rounds"], per_upload[metric], strict=True)
            if r == job.fed.rounds
        ]
        record[f"{metric}_last"] = _mean_or_none(last)
    for metric in ("nmi_chance", "nmi_permutation_floor"):
        record[metric] = _mean_or_none(per_upload[metric])
    record.update(_attack_loss_fields(record["clients"], results))
    if reconstructions_dir is not None and kept:
        _keep_reconstructions(reconstructions_dir, job, kept)
    record.update(_leakage_fields(job, model, uploads, results, train, clients))
    if uploads:
        target = uploads[0]["client"]
        rows = torch.as_tensor(clients[target][: job.stats_samples])
        stats_data = (train.images[rows].to(device), train.labels[rows].to(device))
        record.update(_bound_fields(job, model, uploads[0], stats_data, d))
    else:
        record.update(
            {
                "d_star": None,
                "delta_nats": None,
                "d_kept": None,
                "stats_samples_used": 0,
                **dict.fromkeys(BOUND_FIELDS),
            }
        )
    record["seconds"] = time.perf_counter() - start
    return record


def _attack_loss_fields(clients: list[int], results) -> dict:
    """The attack's final objective per attacked upload (``AttackResult.loss``: the
    matching loss of ``inversion.loss`` at the returned reconstruction before its clamp
    to [0, 1], TV excluded; the
    journal's "attack loss", Appendix D.1, Fig. A4 and A5), its mean per target (targets
    in increasing order, as ``nmi_per_target``) and the mean of those."""
    per_upload = [float(result.loss) for result in results]
    by_target: dict[int, list[float]] = {}
    for client, loss in zip(clients, per_upload, strict=True):
        by_target.setdefault(client, []).append(loss)
    per_target = [float(np.mean(by_target[c])) for c in sorted(by_target)]
    return {
        "attack_loss_per_upload": per_upload,
        "attack_loss_per_target": per_target,
        "attack_loss": _mean_or_none(per_target),
    }


def _scores(job: AttackJob, uploads: list[dict], results) -> tuple[dict, list[tuple]]:
    """Per attacked upload, the mean over its batch of each score of the matched
    reconstructions (:func:`estimators.image.score_reconstruction`), the mean NMI of each
    reconstruction with its pixels shuffled (:func:`estimators.nmi.nmi_permutation_null`:
    the NMI's floor for these two histograms, where ``nmi_chance``, the NMI against
    uniform noise, is no floor), whether the labels were recovered; and the (batch,
    matched reconstructions) pairs."""
    per_upload = {
        "nmi": [],
        "psnr": [],
        "nmi_chance": [],
        "nmi_permutation_floor": [],
        "labels_correct": [],
    }
    kept = []
    for upload, result in zip(uploads, results, strict=True):
        images, labels = (t.cpu() for t in upload["batch"])
        scores = score_reconstruction(images, result.images, levels=job.nmi_levels, seed=job.seed)
        matched = result.images[scores["assignment"]]
        kept.append((images, matched))
        for metric in ("nmi", "psnr", "nmi_chance"):
            per_upload[metric].append(float(np.mean(scores[metric])))
        floors = [
            nmi_permutation_null(x, y, levels=job.nmi_levels, seed=job.seed).null_mean
            for x, y in zip(images, matched, strict=True)
        ]
        per_upload["nmi_permutation_floor"].append(float(np.mean(floors)))
        found = result.labels.sort().values
        per_upload["labels_correct"].append(bool(torch.equal(found, labels.sort().values)))
    return per_upload, kept


def _keep_reconstructions(directory, job: AttackJob, kept: list[tuple]) -> None:
    """The (batch, matched reconstructions) pairs of the attacked uploads, concatenated in
    upload order, as :func:`sims.store.reconstructions.save_reconstructions` under
    :func:`sims.sweep.job.job_key`."""
    originals = torch.cat([images for images, _ in kept])
    reconstructions = torch.cat([images for _, images in kept])
    save_reconstructions(directory, job_key(job), originals, reconstructions)


def run_sweep(
    config: SweepConfig,
    store: ResultStore,
    *,
    progress: bool | None = None,
    max_jobs: int | None = None,
    executor: str = "local",
    address: str | None = None,
    reconstructions_dir=None,
) -> list[dict]:
    """Run the jobs of ``config`` not yet in ``store`` (one appended record each).

    ``max_jobs`` stops after that many new jobs (None: all); ``progress`` False shows
    nothing, True or None a bar on a terminal and otherwise a line per finished job
    (rate-limited, with a heartbeat during a long one) on stderr
    (:func:`bounds.progress.progress`). ``executor`` is one of :data:`EXECUTORS`; with ``"ray"``,
    ``address`` names the Ray cluster to run on (``"auto"``, ``"ray://host:10001"``;
    None: this process's Ray runtime if it has one, else a new local one), see
    :func:`sims.sweep.ray_executor.run_on_ray`. ``reconstructions_dir`` is handed to
    :func:`run_job` (on a Ray cluster each worker writes there: a folder all machines
    share). Returns the records of ``config``'s jobs that the store holds, in job order.
    """
    func = "run_sweep"
    check_sweep(config, store, func)
    if max_jobs is not None:
        check_int("max_jobs", max_jobs, func=func, low=0)
    check_choice("executor", executor, func=func, choices=EXECUTORS)
    if address is not None and executor != "ray":
        raise ValueError(
            f"The 'address' parameter of {func} names a Ray cluster and needs "
            f"executor='ray'. Got address={address!r} with executor={executor!r}."
        )
    done = store.done()
    todo = [job for job in config.jobs() if job_key(job) not in done][:max_jobs]
    check_data_dirs(config.name, todo)
    run = functools.partial(run_job, reconstructions_dir=reconstructions_dir)
    if executor == "ray":
        from pruneleak.sims.sweep.ray_executor import run_on_ray  # imports ray, an optional extra

        run_on_ray(config, todo, store, address=address, progress=progress, run=run)
        return sweep_records(config, store)
    panels = config.job_panels()
    with show_progress(todo, desc=config.name, unit="job", enabled=progress) as bar:
        for job in bar:
            key = job_key(job)
            if key in store:
                logger.info("%s: %s was recorded by another writer; skipped", config.name, key)
                continue
            bar.set_postfix_str(f"{job.pruning.scheme} p={job.pruning.p:g}", refresh=False)
            append_record(store, config.name, job, run(job), panels=panels[job])
    return sweep_records(config, store)


def check_data_dirs(sweep: str, jobs: Sequence[AttackJob]) -> None:
    """ValueError, in one line, when one of ``jobs`` reads its data set from files
    (:func:`sims.data.datasets.file_datasets`) and has no ``data_dir``: raised before any
    job runs rather than by the first job's loader."""
    missing = sorted({job.dataset for job in jobs if job.data_dir is None} & set(file_datasets()))
    if missing:
        raise ValueError(
            f"The sweep {sweep!r} reads {', '.join(map(repr, missing))} from files: pass "
            f"their folder as data_dir (pruneleak sweep --data-dir DIR, or "
            f"$PRUNELEAK_DATA_DIR). Got data_dir=None instead."
        )


def append_record(
    store: ResultStore, sweep: str, job: AttackJob, record: dict, *, panels: Sequence[str]
) -> bool:
    """Append the finished ``job``'s ``record`` (from :func:`run_job`) to ``store`` with
    its ``key`` (:func:`sims.sweep.job.job_key`), the ``sweep``'s name and the names of
    the sweep's ``panels`` it belongs to (:meth:`sims.sweep.grid.SweepConfig.job_panels`);
    returns False, writing nothing, when the store holds the key already (another writer
    recorded the job meanwhile: the store checks under its lock, so the first record
    stays and a key is written once, with the sweep and panels of its writer)."""
    written = store.append({"key": job_key(job), "sweep": sweep, "panels": list(panels), **record})
    logger.info(
        "%s: %s p=%g done in %.1f s%s",
        sweep,
        job.pruning.scheme,
        job.pruning.p,
        record["seconds"],
        "" if written else " (already recorded by another writer; not written)",
    )
    return written


def check_sweep(config, store, func: str) -> None:
    """ValueError unless ``config`` is a SweepConfig and ``store`` a ResultStore (the
    arguments of ``func``, a function that runs or reads a sweep)."""
    if not isinstance(config, SweepConfig):
        raise ValueError(
            f"The 'config' parameter of {func} must be a SweepConfig. "
            f"Got {type(config).__name__} instead."
        )
    if not isinstance(store, ResultStore):
        raise ValueError(
            f"The 'store' parameter of {func} must be a ResultStore. "
            f"Got {type(store).__name__} instead."
        )


def sweep_records(config: SweepConfig, store: ResultStore) -> list[dict]:
    """The records of ``config``'s jobs found in ``store``, in job order."""
    check_sweep(config, store, "sweep_records")
    by_key = {r["key"]: r for r in store.records()}
    return [by_key[k] for k in (job_key(j) for j in config.jobs()) if k in by_key]
