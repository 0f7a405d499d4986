"""Leakage in bits in the sweeps (issue 12): exact bits and Fano bits of the secret "the
target's batch, a uniform B-subset of its local data", each checked against something
computed independently (hand formulas, scipy.stats.beta, client_update, a brute-force
search), and the consistency study on records that hold them."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from scipy.stats import beta

from pruneleak.bounds.leakage import fano_lower_confidence_bits
from pruneleak.sims.attacks import identify
from pruneleak.sims.data.datasets import load_train_test
from pruneleak.sims.data.partition import partition_iid
from pruneleak.sims.experiments.consistency import METRICS, consistency_rows, format_table
from pruneleak.sims.fl.client import client_update
from pruneleak.sims.plots.sweep import plot_consistency
from pruneleak.sims.sweep import AttackJob, SweepConfig, job_key, leakage_bits, run_job
from pruneleak.sims.sweep import runner as runner_module
from pruneleak.sims.sweep.panels import panel_rows

# 10 clients of 143 or 144 digits (under leakage_candidates = 256), all sampled every
# round, 2 targets, a short attack: a job runs in well under a second.
SMALL = {
    "num_clients": 10,
    "fed.clients_per_round": 10,
    "targets": 2,
    "inversion.iterations": 10,
    "stats_samples": 8,
    "device": "cpu",
}
CONFIDENCE = 0.95


def _local_data(job: AttackJob, client: int):
    train, _ = load_train_test(job.dataset, job.data_dir, seed=job.seed)
    rows = torch.as_tensor(partition_iid(len(train), job.num_clients, seed=job.seed)[client])
    return train.images[rows], train.labels[rows]


def _run_and_capture(monkeypatch, fields):
    """The job's record and, per target, the upload and local data ``exact_bits`` got."""
    seen = []
    original = leakage_bits.exact_bits

    def spy(model, upload, images, labels, **kwargs):
        seen.append({"model": model, "upload": upload, "images": images, "labels": labels})
        return original(model, upload, images, labels, **kwargs)

    monkeypatch.setattr(runner_module.leakage_bits, "exact_bits", spy)
    job = AttackJob.from_fields(fields)
    return job, run_job(job), seen


def _group_entropy_bits(keys) -> float:
    counts = np.unique(np.asarray(keys), axis=0, return_counts=True)[1]
    m = counts.sum()
    return float(np.sum(counts / m * np.log2(m / counts)))


def _fano_by_hand(secrets: int, errors: int, trials: int) -> float:
    """log2 N - h(Pe) - Pe log2(N - 1) at the worst Pe of the Clopper-Pearson interval
    (its upper limit, unless blind guessing (N-1)/N lies inside it: then 0)."""
    alpha = 1 - CONFIDENCE
    low = 0.0 if errors == 0 else beta.ppf(alpha / 2, errors, trials - errors + 1)
    high = 1.0 if errors == trials else beta.ppf(1 - alpha / 2, errors + 1, trials - errors)
    guess = (secrets - 1) / secrets
    pe = min(max(guess, low), high)
    h = 0.0 if pe in (0.0, 1.0) else -pe * math.log2(pe) - (1 - pe) * math.log2(1 - pe)
    return max(0.0, math.log2(secrets) - h - pe * math.log2(secrets - 1))


# --------------------------------------------------------------------------- exact bits


def test_exact_bits_are_log2_of_the_local_size_when_single_uploads_differ(monkeypatch):
    """B = 1: N = |D_i|. The single-sample uploads, computed one by one with
    client_update (not release_vectors), are all different, so I = log2 |D_i|."""
    job, record, seen = _run_and_capture(monkeypatch, {**SMALL, "fed.rounds": 3})
    sizes = [len(_local_data(job, c)[0]) for c in (0, 1)]
    assert sizes[0] <= job.leakage_candidates
    assert record["leakage_secrets_log2"] == pytest.approx([math.log2(n) for n in sizes])
    for captured, size, bits in zip(seen, sizes, record["exact_bits_per_target"], strict=True):
        upload = captured["upload"]
        keep = upload["mask"].flatten()
        singles = [
            torch.cat([t.reshape(-1) for t in sent.values()])[keep].numpy()
            for sent in (
                client_update(
                    captured["model"], upload["w"], upload["mask"], x[None], y[None], lr=job.fed.lr
                )
                for x, y in zip(captured["images"], captured["labels"], strict=True)
            )
        ]
        assert len(singles) == size
        assert _group_entropy_bits(singles) == pytest.approx(math.log2(size), abs=1e-12)
        assert bits == pytest.approx(math.log2(size), abs=1e-9)
    assert record["exact_bits"] == pytest.approx(np.mean(record["exact_bits_per_target"]))


def _label_multiset_entropy_bits(labels: np.ndarray, batch_size: int) -> float:
    """Entropy of the multiset of labels of a uniform 1- or 2-subset, from the counts."""
    counts = np.bincount(labels)
    total = math.comb(len(labels), batch_size)
    if batch_size == 1:
        probs = [c / total for c in counts if c]
    else:
        probs = [math.comb(int(c), 2) / total for c in counts if c >= 2]
        probs += [int(a) * int(b) / total for a, b in itertools.combinations(counts, 2) if a * b]
    assert sum(probs) == pytest.approx(1.0)
    return float(-sum(q * math.log2(q) for q in probs))


@pytest.mark.parametrize("batch_size", [1, 2])
def test_exact_bits_at_p_1_are_the_entropy_of_the_batch_labels(batch_size):
    """All weights pruned (biases kept): every hidden unit is a constant, only the last
    bias moves, by lr (onehot(y) - softmax(b)) averaged over the batch: the upload names
    the batch's multiset of labels and nothing more, so I = H(labels of the batch), from
    the label counts of D_i by hand."""
    job = AttackJob.from_fields({**SMALL, "pruning.p": 1.0, "fed.batch_size": batch_size})
    record = run_job(job)
    for client, bits in zip((0, 1), record["exact_bits_per_target"], strict=True):
        _, labels = _local_data(job, client)
        hand = _label_multiset_entropy_bits(labels.numpy(), batch_size)
        assert bits == pytest.approx(hand, abs=1e-9)
        secrets = math.log2(math.comb(len(labels), batch_size))
        assert bits < secrets - 3  # far below the secret's entropy
    assert record["exact_bits_method_per_target"] == ["exact", "exact"]


def test_exact_bits_are_zero_for_equal_releases_and_none_where_the_model_fails(monkeypatch):
    job, _, seen = _run_and_capture(monkeypatch, {**SMALL, "pruning.p": 1.0, "targets": 1})
    captured = seen[0]
    upload, images, labels = captured["upload"], captured["images"], captured["labels"]
    options = {"lr": job.fed.lr, "gradient_at": "masked", "local_steps": 1, "max_candidates": 256}
    # Constructed equal releases: at p = 1 the samples of the batch's label release alike.
    same = labels == upload["batch"][1][0].cpu()
    assert int(same.sum()) > 5
    bits = leakage_bits.exact_bits(captured["model"], upload, images[same], labels[same], **options)
    assert bits.bits == 0.0 and bits.exact
    model = captured["model"]
    # Not computed: several local steps, too many candidates, a batch not in D_i, or an
    # upload that is not the one-step release of its batch.
    assert (
        leakage_bits.exact_bits(model, upload, images, labels, **{**options, "local_steps": 2})
        is None
    )
    small_cap = {**options, "max_candidates": len(images) - 1}
    assert leakage_bits.exact_bits(model, upload, images, labels, **small_cap) is None
    others = ~same
    assert leakage_bits.exact_bits(model, upload, images[others], labels[others], **options) is None
    tampered = {**upload, "sent": {n: t + 1e-2 for n, t in upload["sent"].items()}}
    assert leakage_bits.exact_bits(model, tampered, images, labels, **options) is None
    assert leakage_bits.exact_bits(model, upload, images, labels, **options) is not None


def test_job_records_bits_per_target_for_b_2_and_none_past_the_candidate_cap():
    """B = 2: N = C(|D_i|, 2) batches, all means distinct (enumerated), I = log2 N."""
    job = AttackJob.from_fields({**SMALL, "fed.batch_size": 2, "fed.rounds": 2})
    record = run_job(job)
    sizes = [len(_local_data(job, c)[0]) for c in (0, 1)]
    by_hand = [math.log2(math.comb(n, 2)) for n in sizes]
    assert record["leakage_secrets_log2"] == pytest.approx(by_hand)
    assert record["exact_bits_per_target"] == pytest.approx(by_hand, abs=1e-9)
    assert record["exact_bits_method_per_target"] == ["exact", "exact"]
    assert len(record["identified_per_upload"]) == record["n_uploads"] == 4
    assert len(record["fano_bits_per_target"]) == len(record["nmi_per_target"]) == 2
    # B = 3: N * kept past the enumeration budget, log2 N assumed (singles all differ);
    # B = 4 at p = 1: singles of one label coincide, so some batch means do, and the
    # C(|D_i|, 4) means are past the budget even for the few kept biases: not computed.
    three = run_job(AttackJob.from_fields({**SMALL, "fed.batch_size": 3, "targets": 1}))
    assert three["exact_bits_per_target"] == pytest.approx([math.log2(math.comb(sizes[0], 3))])
    assert three["exact_bits_method_per_target"] == ["assumed_distinct"]
    flat = run_job(
        AttackJob.from_fields({**SMALL, "fed.batch_size": 4, "targets": 1, "pruning.p": 1.0})
    )
    assert flat["exact_bits_per_target"] == [None] and flat["exact_bits"] is None
    capped = run_job(AttackJob.from_fields({**SMALL, "leakage_candidates": 100}))
    assert capped["exact_bits_per_target"] == [None, None] and capped["exact_bits"] is None
    assert capped["fano_bits"] is not None


# --------------------------------------------------------------------------- Fano bits


def test_fano_bits_follow_the_hand_formula_at_the_clopper_pearson_limit():
    job = AttackJob.from_fields({**SMALL, "fed.rounds": 3})
    record = run_job(job)
    for client, bits in zip((0, 1), record["fano_bits_per_target"], strict=True):
        mine = [
            ok
            for c, ok in zip(record["clients"], record["identified_per_upload"], strict=True)
            if c == client
        ]
        size = len(_local_data(job, client)[0])
        assert len(mine) == 3
        assert bits == pytest.approx(_fano_by_hand(size, mine.count(False), 3), abs=1e-9)
    assert record["fano_bits"] == pytest.approx(np.mean(record["fano_bits_per_target"]))
    assert 0 < record["fano_bits"] <= record["exact_bits"]  # SGI finds digits at p = 0.3


@pytest.mark.parametrize(("errors", "trials"), [(0, 4), (1, 5), (3, 10), (10, 10)])
def test_fano_accepts_a_huge_number_of_batches(errors, trials):
    """N = C(144, 4) (about 1.7e7) and C(1000, 60) (about 1e84): exact Python ints."""
    for secrets in (math.comb(144, 4), math.comb(1000, 60)):
        assert fano_lower_confidence_bits(secrets, errors, trials, CONFIDENCE) == pytest.approx(
            _fano_by_hand(secrets, errors, trials), rel=1e-9, abs=1e-9
        )
        assert leakage_bits.fano_bits(1000, 60, errors, trials) == pytest.approx(
            _fano_by_hand(math.comb(1000, 60), errors, trials), rel=1e-9, abs=1e-9
        )


def _named_by_brute_force(found: torch.Tensor, local: torch.Tensor) -> list[int]:
    """The 2-subset of least total L2 distance over both pairings, by a slow loop."""
    best, named = math.inf, None
    for a, b in itertools.combinations(range(len(local)), 2):
        for x, y in ((a, b), (b, a)):
            cost = float((found[0] - local[x]).norm() + (found[1] - local[y]).norm())
            if cost < best:
                best, named = cost, sorted((a, b))
    return named


@pytest.mark.parametrize("seed", range(6))
def test_identification_is_the_best_assignment_of_distinct_samples(seed):
    generator = torch.Generator().manual_seed(seed)
    local = torch.rand((7, 1, 3, 3), generator=generator, dtype=torch.float64)
    # Both reconstructions near one sample half of the time: nearest neighbours collide.
    centre = local[[seed % 7, seed % 7 if seed % 2 else (seed + 3) % 7]]
    found = centre + 0.3 * torch.rand(centre.shape, generator=generator, dtype=torch.float64)
    named = identify(found, local)
    assert len(set(named)) == 2
    assert named == _named_by_brute_force(found.reshape(2, -1), local.reshape(7, -1))


def test_batch_positions_match_images_exactly_once():
    local = torch.arange(24.0).reshape(6, 1, 2, 2)
    assert leakage_bits.batch_positions(local[[4, 1]], local) == [4, 1]
    assert leakage_bits.batch_positions(local[[4]] + 1e-6, local) is None
    duplicated = torch.cat([local, local[[2]]])
    assert leakage_bits.batch_positions(local[[2]], duplicated) is None


# --------------------------------------------------------------------------- consistency

SYNTHETIC = SweepConfig(
    name="synthetic",
    grids=({"panel": "p", "pruning.scheme": ["random"], "pruning.p": [0.1, 0.3, 0.5, 0.7, 0.9]},),
)


def test_consistency_reads_the_bits_like_nmi_and_tolerates_old_records():
    """Exact bits fall with p and Fano bits rise with it (noise small); the corrected bound
    falls: exact bits agree and Fano bits disagree with it. Records of an old store
    (no bits) and None per target leave those observations out."""
    rng = np.random.default_rng(0)
    records = []
    for i, job in enumerate(SYNTHETIC.jobs()):
        p = job.pruning.p
        record = {
            "key": job_key(job),
            "job": job.as_fields(),
            "d": 1000,
            "nmi_per_target": list(1 - p + 0.01 * rng.normal(size=4)),
            "bound_published_bits": 10 * p,
            "bound_corrected_bits": -10 * p,
        }
        if i > 0:  # the first record is from an old store
            record["exact_bits_per_target"] = [7 * (1 - p) + 0.01 * rng.normal() for _ in range(4)]
            record["fano_bits_per_target"] = [p + 0.01 * rng.normal() for _ in range(3)] + [None]
        records.append(record)
    rows = {
        r.metric: r for r in consistency_rows(SYNTHETIC, records, panels=("p",), n_resamples=300)
    }
    assert set(rows) == set(METRICS)
    assert rows["exact_bits"].n == 4 * 4 and rows["fano_bits"].n == 4 * 3
    assert rows["exact_bits"].rho < -0.9
    assert (rows["exact_bits"].verdict_published, rows["exact_bits"].verdict_corrected) == (
        "disagree",
        "agree",
    )
    assert rows["fano_bits"].rho > 0.9 and rows["fano_bits"].verdict_corrected == "disagree"
    assert rows["psnr"].verdict_corrected == "undefined" and rows["psnr"].n == 0
    assert "exact_bits" in format_table(list(rows.values()))
    assert plot_consistency(list(rows.values()), metric="fano_bits").axes
    means = panel_rows(SYNTHETIC, records, "p", metric="fano_bits")
    assert means[0]["fano_bits"] is None and means[1]["n"] == 3
