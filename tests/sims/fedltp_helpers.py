"""What the Fed-LTP tests share: a tiny run configuration and its model."""

from __future__ import annotations

from pruneleak.sims.fedltp import FedLTPConfig
from pruneleak.sims.models import build_model


def tiny_config(**overrides) -> FedLTPConfig:
    """Six digits clients, K = 2 per round, 3 local steps of batch 5, 3 rounds, two tickets
    of 15 public steps, no budget limit; ``overrides`` replace any field."""
    fields = dict(
        num_clients=6,
        client_rate=0.34,  # K = 2
        local_steps=3,
        batch_size=5,
        rounds=3,
        num_tickets=2,
        ticket_steps=15,
        ticket_batch_size=32,
        lr=0.2,
        lambda_val=5.0,
        epsilon=1e9,
        seed=5,
    )
    fields.update(overrides)
    return FedLTPConfig(**fields)


def logreg_factory():
    """Logistic regression on 8x8 digits: one 10 x 64 weight and 10 biases."""
    return build_model("logreg", image_shape=(1, 8, 8), num_classes=10)
