"""Fed-LTP's hyper-parameters in one frozen dataclass (paper values as defaults).

Shi et al., "Efficient Federated Learning with Enhanced Privacy via Lottery Ticket
Pruning in Edge Computing" (``papers/fed-ltp-lottery-ticket-zcdp.txt``), Sec. 6.1 and
Appendix .2: U = 50 clients, client sampling ratio q = 0.1, tau = 300 local DP-SGD
iterations, C = 10, sigma = 1.4, batch B = 10 (MNIST; 15 for Fashion-MNIST),
delta = 1e-3, momentum 0.5, learning rate 0.01 decayed by 0.99 per round, P2 = 0.1,
T = 50 (MNIST), public-data learning rate 1.2e-3, Dirichlet alpha = 1 for non-IID.
The paper gives no value for the pruning degree Pr, the number of tickets M, the ticket
training iterations k, lambda_val or the budget epsilon; the defaults chosen here are
marked "not in the paper".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.sims.core.fields import documented, seed_field
from pruneleak.sims.core.functional import (
    FLOAT32_MAX,
    MAX_ADAM_LR,
    MAX_LR,
    MIN_LR,
    check_lr,
)
from pruneleak.sims.core.runtime import check_seed

#: The most rounds and local steps of a run: far beyond the paper's T = 50 and tau = 300,
#: and small enough that the accounting and the batch draws of a run stay fast.
MAX_ROUNDS = 10_000
MAX_LOCAL_STEPS = 100_000
#: The most of each other count of a run (clients, the ticket search's iterations, tickets
#: and steps, batch sizes), far beyond the paper's (100 clients, 10 tickets): each is a
#: loop or an allocation, and a larger value is a typo that would run for days.
MAX_COUNT = 100_000

PRUNING = ("one_shot", "iterative")
CLIPPING = ("per_example", "batch")
PARTITIONS = ("iid", "dirichlet")


@dataclass(frozen=True)
class FedLTPConfig:
    """Every parameter of Algorithms 1 and 2 (see the module docstring for provenance).

    Attributes:
        num_clients: U in [1, MAX_COUNT] (paper 50); so are the other counts below.
        client_rate: q in (0, 1], clients selected per round K = max(1, round(q U))
            (paper 0.1).
        local_steps: tau in [1, MAX_LOCAL_STEPS] DP-SGD iterations per selected client and
            round (paper 300).
        max_grad_norm: clipping threshold C > 0 (paper 10).
        noise_multiplier: sigma >= 0 (paper 1.4); the noise std sigma * C is at most
            float32's largest, FLOAT32_MAX.
        batch_size: expected local batch size B >= 1 (paper 10); each client samples
            every record with probability B / n_i (Poisson, see :mod:`sims.fedltp.dp_local`).
        clipping: ``"per_example"`` (DP-SGD through Opacus, l2 sensitivity C) or
            ``"batch"`` (line 15 of Algorithm 2 as printed: the mini-batch gradient is
            clipped, sensitivity 2C, accounted at noise multiplier sigma / 2).
        lr: local learning rate eta in [MIN_LR, MAX_LR] (paper 0.01); lr_decay in (0, 1]
            per round (0.99). Training that still diverges (non-finite weights) stops
            with a ValueError naming lr, max_grad_norm and noise_multiplier.
        momentum: local SGD momentum in [0, 1) (paper 0.5).
        lambda_val: Laplace scale of each validation score (eq. 17, sensitivity 1), > 0
            (not in the paper: 10).
        epsilon: total budget > 0 in nats at ``delta`` (not in the paper: 8).
        delta: in (0, 1) (paper 1e-3).
        rounds: T in [1, MAX_ROUNDS], the most rounds run (paper 50).
        prune_degree: Pr in [0, 1), the fraction of each layer's remaining weights pruned
            per pruning iteration of Algorithm 1 (not in the paper: 0.5).
        ticket_iterations: pruning iterations per ticket, >= 1 (Algorithm 1 as printed: 1).
        num_tickets: M >= 1 (not in the paper: 3).
        ticket_steps: k >= 1 training iterations per pruning iteration (not in the paper: 200).
        ticket_lr: Adam's learning rate of ticket training, in [MIN_LR, MAX_ADAM_LR] (paper
            1.2e-3, Adam).
        ticket_batch_size: >= 1 (not in the paper: 64).
        temperature: > 0, the softmax of eq. 10 divides V by it (eq. 10 as printed: 1).
        pruning: ``"one_shot"`` (eq. 11) or ``"iterative"`` (eq. 12-16).
        further_prune: P2 in [0, 1) of the fed-iterative scheme (paper 0.1).
        partition: ``"iid"`` or ``"dirichlet"``; dirichlet_alpha > 0 (paper 1).
        public_fraction: share of the data set used as public data, in (0, 1) (0.5).
        val_fraction: share of each client's data held out for validation, in (0, 1) (0.2).
        seed: >= 0.
    """

    num_clients: int = documented(50, "U, the number of clients", low=1, high=MAX_COUNT)
    client_rate: float = documented(
        0.1, "q, fraction of the clients selected per round", low=0, high=1, low_open=True
    )
    local_steps: int = documented(
        300,
        "tau, DP-SGD steps per selected client and round (each one counted)",
        low=1,
        high=MAX_LOCAL_STEPS,
    )
    max_grad_norm: float = documented(10.0, "C, clipping threshold", low=0, low_open=True)
    noise_multiplier: float = documented(1.4, "sigma, noise multiplier (noise std sigma C)", low=0)
    batch_size: int = documented(
        10, "B, expected Poisson batch size", low=1, high=MAX_COUNT, unit="records"
    )
    clipping: str = documented(
        "per_example",
        "per-example (DP-SGD) or batch (Algorithm 2 line 15 as printed)",
        choices=CLIPPING,
    )
    lr: float = documented(0.01, "eta, local learning rate", low=MIN_LR, high=MAX_LR)
    lr_decay: float = documented(
        0.99, "learning-rate decay per round", low=0, high=1, low_open=True
    )
    momentum: float = documented(0.5, "local SGD momentum", low=0, high=1, high_open=True)
    lambda_val: float = documented(
        10.0, "lambda_val, Laplace scale of each validation score", low=0, low_open=True
    )
    epsilon: float = documented(8.0, "privacy budget epsilon", low=0, low_open=True, unit="nats")
    delta: float = documented(
        1e-3, "delta of the budget", low=0, high=1, low_open=True, high_open=True
    )
    rounds: int = documented(50, "T, the most rounds", low=1, high=MAX_ROUNDS)
    prune_degree: float = documented(
        0.5,
        "Pr, fraction of each layer's remaining weights the ticket search prunes per "
        "pruning iteration",
        low=0,
        high=1,
        high_open=True,
    )
    ticket_iterations: int = 1
    num_tickets: int = documented(3, "M, the number of tickets drawn from", low=1, high=MAX_COUNT)
    ticket_steps: int = documented(
        200, "k, public-data training steps per pruning iteration", low=1, high=MAX_COUNT
    )
    ticket_lr: float = 1.2e-3
    ticket_batch_size: int = 64
    temperature: float = 1.0
    pruning: str = "one_shot"
    further_prune: float = documented(
        0.1,
        "P2 of fed-iterative pruning: further fraction pruned per client",
        low=0,
        high=1,
        high_open=True,
    )
    partition: str = documented(
        "iid", "split of the private data over the clients", choices=PARTITIONS
    )
    dirichlet_alpha: float = documented(
        1.0, "Dirichlet concentration of the dirichlet partition", low=0, low_open=True
    )
    public_fraction: float = 0.5
    val_fraction: float = 0.2
    seed: int = seed_field()

    def __post_init__(self) -> None:
        func = "FedLTPConfig"
        check_int("rounds", self.rounds, func=func, low=1, high=MAX_ROUNDS)
        check_int("local_steps", self.local_steps, func=func, low=1, high=MAX_LOCAL_STEPS)
        for name in (
            "num_clients",
            "batch_size",
            "ticket_iterations",
            "num_tickets",
            "ticket_steps",
            "ticket_batch_size",
        ):
            check_int(name, getattr(self, name), func=func, low=1, high=MAX_COUNT)
        check_real("client_rate", self.client_rate, func=func, low=0, high=1, low_inclusive=False)
        check_real("max_grad_norm", self.max_grad_norm, func=func, low=0, low_inclusive=False)
        check_real("noise_multiplier", self.noise_multiplier, func=func, low=0)
        if self.noise_multiplier * self.max_grad_norm > FLOAT32_MAX:
            raise ValueError(
                f"The noise std 'noise_multiplier' * 'max_grad_norm' of {func} must be at most "
                f"{FLOAT32_MAX:g} (float32, the weights' type). Got {self.noise_multiplier!r} "
                f"* {self.max_grad_norm!r} instead."
            )
        check_choice("clipping", self.clipping, func=func, choices=CLIPPING)
        check_lr("lr", self.lr, func=func)
        check_real("ticket_lr", self.ticket_lr, func=func, low=MIN_LR, high=MAX_ADAM_LR)
        for name in ("temperature", "lambda_val", "epsilon"):
            check_real(name, getattr(self, name), func=func, low=0, low_inclusive=False)
        check_real("lr_decay", self.lr_decay, func=func, low=0, high=1, low_inclusive=False)
        check_real("momentum", self.momentum, func=func, low=0, high=1, high_inclusive=False)
        check_real(
            "delta", self.delta, func=func, low=0, high=1, low_inclusive=False, high_inclusive=False
        )
        for name in ("prune_degree", "further_prune"):
            check_real(name, getattr(self, name), func=func, low=0, high=1, high_inclusive=False)
        check_choice("pruning", self.pruning, func=func, choices=PRUNING)
        check_choice("partition", self.partition, func=func, choices=PARTITIONS)
        check_real("dirichlet_alpha", self.dirichlet_alpha, func=func, low=0, low_inclusive=False)
        for name in ("public_fraction", "val_fraction"):
            check_real(
                name,
                getattr(self, name),
                func=func,
                low=0,
                high=1,
                low_inclusive=False,
                high_inclusive=False,
            )
        check_seed(self.seed, func=func)

    @property
    def clients_per_round(self) -> int:
        """K = max(1, round(q U)), the clients selected per round (paper: 5)."""
        return max(1, round(self.client_rate * self.num_clients))

    @property
    def accounted_noise_multiplier(self) -> float:
        """Noise std over the l2 sensitivity: sigma with per-example clipping, sigma / 2
        with batch clipping (two clipped mini-batch gradients differ by up to 2C)."""
        return (
            self.noise_multiplier if self.clipping == "per_example" else self.noise_multiplier / 2
        )

    def as_dict(self) -> dict:
        """The fields as a JSON-able dict (the key of a run is its fingerprint)."""
        return asdict(self)
