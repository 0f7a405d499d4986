"""The sweep record's attack loss (the journal's "attack loss", Appendix D.1, Fig. A4):
each attacked upload's value is the attack's objective at its reconstruction, recomputed
here by a slow loop over the batch's samples (plain autograd, one sample at a time),
independent of the batched objective the attack minimised."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pruneleak.sims.sweep import AttackJob, run_job
from pruneleak.sims.sweep import runner as runner_module

# Two clients, both attacked in each of 2 rounds, B = 2, 3 L-BFGS steps (the loss stays
# far from 0, where the float32 reconstruction the result holds would decide it): ~2 s.
SMALL = {
    "num_clients": 2,
    "fed.clients_per_round": 2,
    "targets": 2,
    "fed.rounds": 2,
    "fed.batch_size": 2,
    "fed.lr": 0.5,
    "inversion.iterations": 3,
    "inversion.loss": "l2",
    "inversion.label_mode": "known",
    # boxed L-BFGS optimises sigmoid(z): the returned images are the optimiser's point (the
    # result's clamp to [0, 1] changes nothing), so its loss can be recomputed from them
    "inversion.box": True,
    "stats_samples": 8,
    "leakage_candidates": 1,
    "device": "cpu",
}


def _slow_matching_loss(job: AttackJob, upload: dict, result, *, image_shape, num_classes):
    """SGI's squared-L2 matching loss of ``result.images`` for one upload, from scratch:
    the mask read off the upload's zeros (prunable tensors), the revealed gradient
    ``m (w - w_hat) / lr``, the dummy gradient at ``m w`` as the mean over the batch of
    per-sample cross-entropy gradients, each from its own backward pass, in float64."""
    w = {k: v.detach().to(torch.float64) for k, v in upload["w"].items()}
    sent = {k: v.detach().to(torch.float64) for k, v in upload["sent"].items()}
    keep = {
        k: (v != 0) if v.ndim >= 2 else torch.ones_like(v, dtype=torch.bool)
        for k, v in sent.items()
    }
    target = {k: keep[k] * (w[k] - sent[k]) / job.fed.lr for k in w}
    model = job.model.build(image_shape=image_shape, num_classes=num_classes).double()
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(keep[name] * w[name])
    dummy = {name: torch.zeros_like(t) for name, t in w.items()}
    images = result.images.to(torch.float64)
    for x, y in zip(images, result.labels, strict=True):
        model.zero_grad()
        loss = nn.functional.cross_entropy(model(x[None]), y[None])
        loss.backward()
        for name, param in model.named_parameters():
            dummy[name] += param.grad / len(images)
    num = sum(float((keep[k] * (dummy[k] - target[k])).pow(2).sum()) for k in w)
    den = sum(float(target[k].pow(2).sum()) for k in w)
    return num / den


def test_attack_loss_per_upload_is_the_objective_at_the_reconstruction(monkeypatch):
    job = AttackJob.from_fields(SMALL)
    seen = {}
    original = runner_module._attack_uploads

    def spy(job_, model, uploads, num_classes, device):
        results = original(job_, model, uploads, num_classes, device)
        seen["uploads"], seen["results"] = uploads, results
        return results

    monkeypatch.setattr(runner_module, "_attack_uploads", spy)
    record = run_job(job)
    uploads, results = seen["uploads"], seen["results"]
    assert record["n_uploads"] == len(uploads) == 4  # 2 targets x 2 rounds
    first = uploads[0]["batch"][0]
    expected = [
        _slow_matching_loss(job, u, r, image_shape=tuple(first.shape[1:]), num_classes=10)
        for u, r in zip(uploads, results, strict=True)
    ]
    # rtol 1e-4: the attack evaluates its loss in float32 (about 1e-7 relative per
    # operation, a few hundred terms), the reference in float64.
    assert record["attack_loss_per_upload"] == pytest.approx(expected, rel=1e-4)
    assert min(expected) > 0
    # per target: the mean over its uploads, targets in increasing order; then their mean
    by_client = {c: [] for c in sorted(set(record["clients"]))}
    for client, value in zip(record["clients"], expected, strict=True):
        by_client[client].append(value)
    per_target = [sum(v) / len(v) for v in by_client.values()]
    assert record["attack_loss_per_target"] == pytest.approx(per_target, rel=1e-4)
    assert record["attack_loss"] == pytest.approx(sum(per_target) / len(per_target), rel=1e-4)


def test_attack_loss_fields_without_uploads_are_empty_and_null():
    assert runner_module._attack_loss_fields([], []) == {
        "attack_loss_per_upload": [],
        "attack_loss_per_target": [],
        "attack_loss": None,
    }
