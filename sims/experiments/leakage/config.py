"""The leakage study's configuration: candidates, model, release mechanism, grid of p and s."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from pruneleak.bounds.validation import (
    check_bool,
    check_choice,
    check_distinct,
    check_int,
    check_real,
)
from pruneleak.estimators.device import check_device
from pruneleak.sims.core.fields import device_field, documented, seed_field
from pruneleak.sims.core.functional import MAX_LR, MIN_LR, check_lr
from pruneleak.sims.core.runtime import check_seed, fingerprint
from pruneleak.sims.defenses import DefenseSpec
from pruneleak.sims.experiments.attack_model import MODELS
from pruneleak.sims.releases import MAX_NOISE_STD, MAX_SECRETS

#: Images of each data set a study may draw its candidates from (:mod:`sims.data`), known
#: before any file is read so that a configuration is checked first: the embedded digits
#: (1,797), scikit-image's faces (200) and photograph patches (755), and the official
#: training splits of the file-based MNIST, Fashion-MNIST (60,000) and CIFAR-10 (50,000).
#: FEMNIST is left out: its size depends on the LEAF sample in its folder.
DATASET_SIZES = {
    "digits": 1797,
    "faces": 200,
    "patches": 755,
    "mnist": 60000,
    "fashion_mnist": 60000,
    "cifar10": 50000,
}
DATASETS = tuple(DATASET_SIZES)
#: Confidence of every interval of a record (exact leakage, Clopper-Pearson).
CONFIDENCE = 0.95


#: Largest value of each count of a study, checked before any work starts: each bounds a
#: loop or an allocation (``attack_targets`` x ``candidates`` draws, ``estimate_draws``
#: images, ``samples`` likelihood rows), so a larger one is a typo that would run for
#: days or fail to allocate after the data and model were loaded.
MAX_COUNTS = {
    "rounds": 1_000,
    "local_steps": 1_000,
    "other_clients": 10_000,
    "warmup_rounds": 10_000,
    "samples": 10_000_000,
    "randomness_draws": 1_000_000,
    "attack_targets": 10_000,
    "attack_iterations": 100_000,
    "estimate_draws": 1_000_000,
    "estimate_steps": 1_000_000,
}


def check_count(name: str, value, *, func: str, low: int, limit: str | None = None) -> int:
    """``value`` as an int in ``[low, MAX_COUNTS[limit or name]]``, else ValueError naming
    ``name`` (:func:`bounds.validation.check_int`)."""
    return check_int(name, value, func=func, low=low, high=MAX_COUNTS[limit or name])


@dataclass(frozen=True)
class LeakageConfig:
    """One leakage study: the candidate set, the model, the release, the grid of ``p`` and ``s``.

    Every count below is also at most its entry of :data:`MAX_COUNTS`.

    Attributes:
        dataset: candidate images, a name of :data:`DATASET_SIZES` (default the 1,797
            8x8 digits of the demo); None: the caller gives the model and the candidates to
            :class:`~sims.experiments.leakage.World` (:mod:`sims.audit`), ``model`` is then
            None and ``candidates`` must be given (at most the given images).
        data_dir: folder of the data set's files for the file-based ones (MNIST,
            Fashion-MNIST, CIFAR-10); ignored by the others. Not part of the fingerprint.
        model: the attacked model, one of :data:`MODELS`.
        rates: distinct base pruning rates p, each in [0, 1] (one random mask per p).
        noise_stds: distinct standard deviations s in ``[0, MAX_NOISE_STD]`` of the
            Gaussian noise on every value the server sees, in the units of the weights.
        batch_size: client batch size B, in [1, candidates]: the secret is a uniform
            B-subset of the candidates.
        candidates: M, the first M images of a seeded permutation of the data set, in [2,
            its size]; None (default): all of them for one FedSGD step without a defense,
            else at most 256 (those releases are computed in one world per secret).
        rounds: T >= 1, rounds of FL in which the target takes part with its batch; the
            release is its T uploads (:class:`sims.releases.FederatedRelease`), and every
            record also holds the leakage after each T' = 1, 2, 4, ... <= T
            (``by_rounds``) beside PriPrune's Corollary 1.
        local_steps: tau >= 1, full-batch local steps per round (FedSGD: 1).
        other_clients: clients beside the target in every round, each with a fixed batch
            of B images of the training split, >= 0 (used when ``rounds > 1`` and in the
            warm-up rounds).
        defense: the target's client-side defense (:class:`sims.defenses.DefenseSpec`);
            the released round is then one round after ``warmup_rounds``.
        warmup_rounds: rounds of FL (target and other clients on training batches, not the
            secret) before the released round, >= 0: they give Pseudo-Pruning and
            PriPrune's alpha their state and set the accuracy of the released model.
        warmup_batch_size: the clients' batch size in the warm-up rounds, >= 1; None
            (default): ``batch_size``.
        dp_noise_multiplier: with a value ``sigma >= 0`` the target trains with Fed-LTP's
            DP-SGD (:class:`sims.releases.DPUploadRelease`: ``local_steps`` steps, clip
            ``dp_clip``, noise ``sigma * dp_clip``); None (default): plain SGD.
        dp_clip: the per-example clipping norm ``C > 0`` of DP-SGD.
        samples: Monte Carlo draws of the exact leakage, >= 2.
        randomness_draws: draws of a release with hidden randomness (PriPrune: each
            recomputes every secret's round), >= 2.
        attack_targets: target batches, each a uniform B-subset of the candidates (drawn
            independently), attacked per (p, s), >= 1.
        attack_iterations: iterations of the batched L-BFGS of each attack, >= 1.
        nmi_levels: grey levels of the NMI of the reconstructions (PriPrune's footnote;
            the defense study's 16), >= 2.
        stats_samples: per-sample gradients (the first candidates) behind ``d*`` and
            ``Delta`` of Theorem 1, in [2, candidates]; None (default): min(256, M).
        theorem1_sample_sizes: further distinct sample sizes n, each in [2, candidates],
            at which Theorem 1 is re-evaluated; None (default): the powers of two from 8
            below ``candidates``, and ``candidates``.
        estimate_draws: pairs (image, noisy release) drawn per (p, s > 0) for the KSG,
            MINE and H-MINE estimates (one FedSGD step only); 0 (default) skips them,
            else >= 16.
        estimate_steps: cap on the Adam steps of each MINE and H-MINE fit, >= 1.
        client_lr: the client's learning rate r of eq. (1), > 0 (PriPrune uses 0.25).
        seed: seeds the model, the masks, the data order, targets, noise, attacks.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"`` (resolved at run time).
    """

    dataset: str | None = documented("digits", "candidate images", choices=DATASETS)
    data_dir: str | None = None
    model: str | None = documented(
        "digits",
        "the attacked model: the demo's small sigmoid network, the defense study's tanh "
        "Conv-1, or PriPrune's Conv-2 (6.6 M weights; the images are resized to 28x28)",
        choices=MODELS,
    )
    rates: tuple[float, ...] = documented(
        (0.5,), "pruning rates: fractions of the weights pruned", low=0, high=1
    )
    noise_stds: tuple[float, ...] = documented(
        (0.0, 0.01, 0.1),
        "standard deviations of the Gaussian noise on every value the server sees (0: plain FL)",
        low=0,
        high=MAX_NOISE_STD,
        unit="weight units",
    )
    batch_size: int = documented(
        1,
        "client batch size B: the secret is a uniform B-subset of the M candidates",
        low=1,
        high="M",
        unit="images",
    )
    candidates: int | None = documented(
        None,
        "M, the candidate images",
        low=2,
        high="the data set's size",
        unset="the whole data set; at most 256 for a release other than one FedSGD step",
    )
    rounds: int = documented(
        1,
        "rounds in which the target takes part with its batch; the release is its T "
        "uploads, and the leakage after 1, 2, 4, ... rounds is recorded beside PriPrune's "
        "Corollary 1",
        low=1,
        high=MAX_COUNTS["rounds"],
    )
    local_steps: int = documented(
        1,
        "full-batch local steps per round (FedAvg on the batch)",
        low=1,
        high=MAX_COUNTS["local_steps"],
    )
    other_clients: int = documented(
        4,
        "clients beside the target in every round (and warm-up round), each with a fixed "
        "batch of B training images",
        low=0,
        high=MAX_COUNTS["other_clients"],
    )
    defense: DefenseSpec = field(default_factory=DefenseSpec)
    warmup_rounds: int = documented(
        0,
        "rounds of FL on training batches before the released round (they give "
        "Pseudo-Pruning and PriPrune their state, and set the model's accuracy)",
        low=0,
        high=MAX_COUNTS["warmup_rounds"],
    )
    warmup_batch_size: int | None = documented(
        None,
        "the clients' batch size in the warm-up rounds",
        low=1,
        unit="images",
        unset="the batch size B",
    )
    dp_noise_multiplier: float | None = documented(
        None,
        "the noise multiplier of the Fed-LTP DP-SGD the target trains with (its local "
        "steps, clipped at the DP clipping norm)",
        low=0,
        unset="none, plain SGD",
    )
    dp_clip: float = documented(1.0, "DP-SGD's per-example clipping norm C", low=0, low_open=True)
    samples: int = documented(
        4096, "Monte Carlo draws of the exact leakage", low=2, high=MAX_COUNTS["samples"]
    )
    randomness_draws: int = documented(
        256,
        "Monte Carlo draws of a release with hidden randomness (PriPrune, DP-SGD)",
        low=2,
        high=MAX_COUNTS["randomness_draws"],
    )
    attack_targets: int = documented(
        16,
        "targets attacked per (p, noise) by SGI and GI (with a defense: SGI and the "
        "defense-aware SGI)",
        low=1,
        high=MAX_COUNTS["attack_targets"],
    )
    attack_iterations: int = documented(
        50, "L-BFGS iterations per attack", low=1, high=MAX_COUNTS["attack_iterations"]
    )
    nmi_levels: int = 16
    stats_samples: int | None = documented(
        None,
        "per-sample gradients behind Theorem 1's d* and Delta",
        low=2,
        high="M",
        unset="min(256, M)",
    )
    theorem1_sample_sizes: tuple[int, ...] | None = documented(
        None,
        "sample sizes at which Theorem 1 is re-evaluated",
        low=2,
        high="M",
        unset="powers of two from 8 below M, and M",
    )
    estimate_draws: int = documented(
        0,
        "(image, noisy release) pairs for KSG, MINE and H-MINE per (p, noise > 0), 0 or "
        "at least 16; 0 skips them (use them with few candidates)",
        low=0,
        high=MAX_COUNTS["estimate_draws"],
    )
    estimate_steps: int = documented(
        500, "Adam steps of MINE and H-MINE", low=1, high=MAX_COUNTS["estimate_steps"]
    )
    client_lr: float = documented(
        0.25, "the clients' learning rate r of PriPrune eq. (1)", low=MIN_LR, high=MAX_LR
    )
    seed: int = seed_field()
    device: str = device_field()

    def __post_init__(self) -> None:
        func = "LeakageConfig"
        given = self.dataset is None
        if given:  # the caller's model and data (World's ``given``, sims.audit)
            if self.model is not None or self.candidates is None:
                raise ValueError(
                    f"The 'dataset' parameter of {func} is None (the model and data are given "
                    "to World): 'model' must be None and 'candidates' given. Got "
                    f"model={self.model!r}, candidates={self.candidates!r} instead."
                )
        else:
            check_choice("dataset", self.dataset, func=func, choices=DATASETS)
            check_choice("model", self.model, func=func, choices=MODELS)
        for name in ("rates", "noise_stds"):
            object.__setattr__(self, name, check_distinct(name, getattr(self, name), func=func))
            if not getattr(self, name):
                raise ValueError(f"The '{name}' parameter of {func} must not be empty.")
        for p in self.rates:
            check_real("rates", p, func=func, low=0, high=1)
        for s in self.noise_stds:
            check_real("noise_stds", s, func=func, low=0, high=MAX_NOISE_STD)
        check_count("rounds", self.rounds, func=func, low=1)
        check_count("local_steps", self.local_steps, func=func, low=1)
        check_count("other_clients", self.other_clients, func=func, low=0)
        check_count("warmup_rounds", self.warmup_rounds, func=func, low=0)
        if self.warmup_batch_size is None:
            object.__setattr__(self, "warmup_batch_size", self.batch_size)
        check_int("warmup_batch_size", self.warmup_batch_size, func=func, low=1)
        if not isinstance(self.defense, DefenseSpec):
            raise ValueError(
                f"The 'defense' parameter of {func} must be a sims.defenses.DefenseSpec. "
                f"Got {type(self.defense).__name__} instead."
            )
        if self.dp_noise_multiplier is not None:
            check_real("dp_noise_multiplier", self.dp_noise_multiplier, func=func, low=0)
            if self.defense.name != "none" or self.rounds != 1:
                raise ValueError(
                    f"The 'dp_noise_multiplier' parameter of {func} is for one round without "
                    f"a defense. Got {self.dp_noise_multiplier!r} with defense "
                    f"{self.defense.name!r} and {self.rounds} rounds instead."
                )
        check_real("dp_clip", self.dp_clip, func=func, low=0, low_inclusive=False)
        if self.defense.name != "none" and self.rounds != 1:
            raise ValueError(
                f"The 'rounds' parameter of {func} must be 1 with a defense (the released "
                f"round is one round after warmup_rounds). Got {self.rounds} instead."
            )
        size = None if given else DATASET_SIZES[self.dataset]
        if self.candidates is None:
            default = size if self.one_step else min(size, 256)
            object.__setattr__(self, "candidates", default)
        check_int("candidates", self.candidates, func=func, low=2, high=size)
        check_int("batch_size", self.batch_size, func=func, low=1, high=self.candidates)
        if not self.one_step and math.comb(self.candidates, self.batch_size) > MAX_SECRETS:
            raise ValueError(
                f"The 'batch_size' parameter of {func} gives C({self.candidates}, "
                f"{self.batch_size}) secrets, each a world to simulate for this release (more "
                f"than one step or round, or a defense); at most {MAX_SECRETS} are allowed. "
                f"Got {self.batch_size} instead: lower it or 'candidates'."
            )
        check_count("samples", self.samples, func=func, low=2)
        check_count("randomness_draws", self.randomness_draws, func=func, low=2)
        check_count("attack_targets", self.attack_targets, func=func, low=1)
        check_count("attack_iterations", self.attack_iterations, func=func, low=1)
        check_int("nmi_levels", self.nmi_levels, func=func, low=2)
        if self.stats_samples is None:
            object.__setattr__(self, "stats_samples", min(256, self.candidates))
        check_int("stats_samples", self.stats_samples, func=func, low=2, high=self.candidates)
        if self.theorem1_sample_sizes is not None:
            sizes = check_distinct("theorem1_sample_sizes", self.theorem1_sample_sizes, func=func)
            object.__setattr__(self, "theorem1_sample_sizes", sizes)
            for n in sizes:
                check_int("theorem1_sample_sizes", n, func=func, low=2, high=self.candidates)
        if self.estimate_draws != 0:
            check_count("estimate_draws", self.estimate_draws, func=func, low=16)
            if not self.one_step:
                raise ValueError(
                    f"The 'estimate_draws' parameter of {func} must be 0 for a release other "
                    "than one FedSGD step without a defense (the estimators see one step). "
                    f"Got {self.estimate_draws} instead."
                )
        check_count("estimate_steps", self.estimate_steps, func=func, low=1)
        check_lr("client_lr", self.client_lr, func=func)
        check_seed(self.seed, func=func)
        check_device(self.device, func=func)
        check_bool("defense.pseudo", self.defense.pseudo, func=func)

    @property
    def one_step(self) -> bool:
        """One FedSGD step without a defense or DP: the release of a batch is the mean of its
        members' releases, computed for any ``B`` without enumerating the batches."""
        return (
            self.rounds == 1
            and self.local_steps == 1
            and self.defense.name == "none"
            and self.dp_noise_multiplier is None
        )

    @property
    def attacks(self) -> tuple[str, ...]:
        """The attacks of a record (:mod:`sims.experiments.leakage.attacks`): SGI and GI, or
        with a defense SGI as PriPrune runs it and the defense-aware SGI."""
        return ("sgi", "gi") if self.defense.name == "none" else ("sgi", "sgi_aware")

    def sample_sizes(self) -> tuple[int, ...]:
        """The sample sizes of ``theorem1_by_samples``, ascending, each once: the given
        ones, or the powers of two from 8 below ``candidates`` and ``candidates``."""
        if self.theorem1_sample_sizes is not None:
            return tuple(sorted(self.theorem1_sample_sizes))
        m = self.candidates
        return (*(2**e for e in range(3, m.bit_length()) if 2**e < m), m)

    def round_counts(self) -> tuple[int, ...]:
        """The T' of ``by_rounds``: the powers of two below ``rounds``, and ``rounds``."""
        return (*(2**e for e in range(self.rounds.bit_length()) if 2**e < self.rounds), self.rounds)

    def fingerprint(self) -> str:
        """Hash of the fields that change a record (not the grid, not the device, not
        where the data are read from)."""
        return fingerprint(asdict(self), exclude=("rates", "noise_stds", "data_dir"))
