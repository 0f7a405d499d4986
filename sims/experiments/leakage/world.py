"""What one leakage study shares across its grid: the experiment world (data, model,
candidates, masks: :mod:`sims.experiments.world`), targets, other clients, and per pruning
rate the released round (mask, broadcast weights, defense state) and its mechanism."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from pruneleak.bounds import priprune
from pruneleak.sims.attacks.defense_aware import DefenseAwareObserver
from pruneleak.sims.core.runtime import fingerprint
from pruneleak.sims.data import load_train_test, partition_iid
from pruneleak.sims.experiments.attack_model import model_images
from pruneleak.sims.experiments.leakage.config import LeakageConfig
from pruneleak.sims.experiments.world import ExperimentWorld, GivenSetup
from pruneleak.sims.fl.server import FedConfig, evaluate, run_federated
from pruneleak.sims.gradients.statistics import gradient_statistics
from pruneleak.sims.pruning.mask import Mask
from pruneleak.sims.pruning.schemes import RandomPruning
from pruneleak.sims.releases import (
    ClientSetting,
    DPUploadRelease,
    FederatedRelease,
    FixedDefenseRelease,
    PriPruneRelease,
)


def subsets(generator, m: int, b: int, n: int) -> torch.Tensor:
    """``n`` independent uniform ``b``-subsets of ``range(m)``, ``(n, b)`` indices: the first
    ``b`` of a uniformly random permutation (an argsort of i.i.d. uniforms) per row."""
    return torch.rand((n, m), generator=generator).argsort(dim=1)[:, :b]


def seed_of(*parts) -> int:
    """A 63-bit seed of its own for each (seed, p, s, use, ...), stable across grids: every
    grid point draws independent Monte Carlo streams."""
    return int(fingerprint({"parts": list(parts)}), 16) % 2**63


def _check_given(config: LeakageConfig, given: GivenSetup) -> None:
    """Refuse what needs a training split (warm-up rounds, other clients over rounds) or
    several rates with one given mask."""
    if config.warmup_rounds or (config.rounds > 1 and config.other_clients):
        raise ValueError(
            "The 'warmup_rounds' parameter of LeakageConfig must be 0, and 'other_clients' "
            "0 when rounds > 1, for a given model and data (there is no training split). "
            f"Got warmup_rounds={config.warmup_rounds}, other_clients={config.other_clients}, "
            f"rounds={config.rounds} instead."
        )
    if given.mask is not None and len(config.rates) != 1:
        raise ValueError(
            "The 'rates' parameter of LeakageConfig must hold one rate (the given mask's). "
            f"Got {list(config.rates)} instead."
        )


@dataclass
class RoundState:
    """The released round at one pruning rate: what the server knows before it."""

    mask: Mask
    broadcast: dict[str, torch.Tensor]
    setting: ClientSetting
    accuracy: float
    defense: object = None
    observer: DefenseAwareObserver | None = None
    fields: dict = field(default_factory=dict)
    mechanism: object = None
    cache: dict = field(default_factory=dict)


class World(ExperimentWorld):
    """The experiment world of one leakage study (:mod:`sims.experiments.world`: model,
    candidates, base masks) with its target subsets, other clients and per-p released
    rounds (:mod:`sims.experiments.leakage`)."""

    def __init__(self, config: LeakageConfig, given: GivenSetup | None = None):
        """The packaged model and data set of ``config`` (``config.dataset`` and
        ``config.model``), or with ``given`` (and ``config.dataset is None``) the caller's
        model, candidate pool and optional base mask (:mod:`sims.audit`): no training or
        test split, so no warm-up rounds, other clients or accuracy."""
        if (given is None) != (config.dataset is not None):
            raise ValueError(
                "The 'dataset' parameter of LeakageConfig must be None exactly when the "
                f"model and data are given to World. Got {config.dataset!r} with "
                f"{'a' if given is not None else 'no'} given setup instead."
            )
        if given is not None:
            _check_given(config, given)
        super().__init__(
            dataset=config.dataset,
            data_dir=config.data_dir,
            candidates=config.candidates,
            candidates_name="'candidates' parameter of LeakageConfig",
            seed=config.seed,
            device=config.device,
            model=config.model,
            given=given,
        )
        self.config = config
        self.targets = subsets(
            self.generator, config.candidates, config.batch_size, config.attack_targets
        )
        self.train = self.test = None
        if given is None:
            splits = load_train_test(config.dataset, config.data_dir, seed=config.seed)
            self.train, self.test = (model_images(config.model, split) for split in splits)
        self.others = [] if self.train is None else self._others(self.train)
        self._per_p: dict[float, RoundState] = {}

    def _others(self, train) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The other clients' fixed batches of ``B`` training images."""
        config = self.config
        b, k = config.batch_size, config.other_clients
        if b * k > len(train):
            raise ValueError(
                f"The 'other_clients' parameter of LeakageConfig needs B * K = {b * k} training "
                f"images of {config.dataset!r}, which has {len(train)}. Got {k} instead."
            )
        picked = torch.randperm(len(train), generator=self.generator)[: b * k].reshape(k, b)
        return [(train.images[i].to(self.device), train.labels[i].to(self.device)) for i in picked]

    def at_rate(self, p: float) -> RoundState:
        """The released round at rate ``p``, computed once: the random mask of ``p``, the
        warm-up rounds (with the defense), Theorem 1 at the round's point, the mechanism."""
        if p not in self._per_p:
            self._per_p[p] = self._round(p)
        return self._per_p[p]

    def _round(self, p: float) -> RoundState:
        config = self.config
        mask = self.mask(p)
        defense = config.defense.build(seed=config.seed)
        observer = (
            DefenseAwareObserver(pseudo=config.defense.pseudo) if defense is not None else None
        )
        broadcast = dict(self.params)
        if config.warmup_rounds:
            history = run_federated(
                self.model,
                RandomPruning(p, seed=config.seed),
                self.train,
                partition_iid(len(self.train), config.other_clients + 1, seed=config.seed),
                self.test,
                FedConfig(
                    rounds=config.warmup_rounds,
                    clients_per_round=config.other_clients + 1,
                    local_epochs=config.local_steps,
                    batch_size=config.warmup_batch_size,
                    lr=config.client_lr,
                    eval_every=config.warmup_rounds,
                    seed=config.seed,
                ),
                device=self.device,
                defense=defense,
                on_target_update=observer,
                targets={0},
                progress=False,
            )
            broadcast, mask = dict(history.params), history.mask
            accuracy = history.accuracy[-1]
        elif self.test is not None:
            test = self.test.images.to(self.device), self.test.labels.to(self.device)
            accuracy = evaluate(self.model, broadcast, *test)[0]
        else:  # a given model and data: no test split
            accuracy = None
        start = broadcast if defense is None else defense.start(0, broadcast)
        setting = ClientSetting(
            self.model, start, mask, lr=config.client_lr, local_steps=config.local_steps
        )
        state = RoundState(mask, broadcast, setting, accuracy, defense, observer)
        state.fields = self._theorem1_fields(state, p)
        state.mechanism = self._mechanism(state)
        return state

    def _mechanism(self, state: RoundState):
        config, setting = self.config, state.setting
        data = (self.images, self.labels)
        if config.dp_noise_multiplier is not None:
            return DPUploadRelease(
                setting,
                *data,
                max_grad_norm=config.dp_clip,
                noise_multiplier=config.dp_noise_multiplier,
                batch_size=config.batch_size,
            )
        if config.defense.name == "none":
            return FederatedRelease(
                setting,
                *data,
                batch_size=config.batch_size,
                rounds=config.rounds,
                others=self.others,
            )
        if config.defense.name == "priprune":
            # the defense steps the weights by lr * lambda_acc (sims.defenses.adaptive)
            return PriPruneRelease(setting, *data, state.defense, batch_size=config.batch_size)
        return FixedDefenseRelease(setting, *data, state.defense, batch_size=config.batch_size)

    def _theorem1_fields(self, state: RoundState, p: float) -> dict:
        """Theorem 1 at ``stats_samples`` and at every size of ``theorem1_sample_sizes``
        (``d*`` and ``Delta`` at the round's point ``m ⊙ w``)."""
        config = self.config
        sizes = config.sample_sizes()
        by_size = {n: self._theorem1(state, p, n) for n in {*sizes, config.stats_samples}}
        fields = dict(by_size[config.stats_samples])
        fields["theorem1_by_samples"] = [by_size[n] for n in sizes]
        return fields

    def _theorem1(self, state: RoundState, p: float, n: int) -> dict:
        """Theorem 1 (bits) on ``d*`` and ``Delta`` of the first ``n`` candidates."""
        mask = state.mask
        start = {name: t.to(self.images.dtype) for name, t in state.setting.params.items()}
        stats = gradient_statistics(
            self.model,
            mask.apply(start),
            self.images[:n],
            self.labels[:n],
            mask=mask,
        )
        inputs = {"p": p, "B": self.config.batch_size, "d_star": stats.d_star, "delta": stats.delta}
        d = sum(t.numel() for t in self.params.values())
        return {
            "kept": stats.d,
            "stats_samples": stats.n_samples,
            "d_star": stats.d_star,
            "delta_nats": stats.delta,
            "theorem1_published_bits": float(priprune.single_round_bound(**inputs, unit="bits")),
            "theorem1_corrected_bits": float(
                priprune.single_round_bound_corrected(d=d, **inputs, unit="bits")
            ),
        }

    def sent(self, mask: Mask, release: torch.Tensor) -> dict[str, torch.Tensor]:
        """The upload the server sees: ``release`` on the kept coordinates, 0 elsewhere."""
        keep = mask.flatten()
        reference = next(iter(self.params.values()))
        flat = torch.zeros(keep.numel(), dtype=reference.dtype, device=self.device)
        flat[keep] = release.to(self.device, reference.dtype)
        sizes = [t.numel() for t in self.params.values()]
        return {
            name: chunk.reshape(t.shape)
            for (name, t), chunk in zip(self.params.items(), flat.split(sizes), strict=True)
        }

    def aware_record(self, state: RoundState, sent: dict, batch) -> dict:
        """The defense-aware server's record of one defended upload of the released round
        (:class:`sims.attacks.defense_aware.DefenseAwareObserver`, its state after the
        warm-up: what the target withheld at its last upload is stale)."""
        observer = state.observer.fork()
        observer(self.config.warmup_rounds + 1, 0, state.broadcast, sent, state.mask, batch)
        return observer.records[0]
