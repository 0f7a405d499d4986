"""The experiment world the demo and the leakage study share: what both draw from one seed
before any client trains.

From a packaged data set (:func:`sims.data.load_dataset`) and model
(:data:`sims.experiments.attack_model.MODELS`), or from a caller's model and pool
(:class:`GivenSetup`, :mod:`sims.audit`), an :class:`ExperimentWorld` holds

* the attacked model and its weights ``w_0`` (``torch.manual_seed(seed)``);
* the candidates: the first ``M`` images of a permutation of the pool drawn by a
  ``torch.Generator`` seeded with ``seed``, on the device; the generator is kept for the
  draws that follow (the leakage study's target subsets and other clients);
* the base mask of each pruning rate ``p``: random and seeded with ``seed`` (public: it is
  drawn before any data are seen), layer-wise magnitude, or the given one.

Both draw them this one way, so the demo's attack jobs and its leakage part
(:meth:`sims.experiments.demo.DemoConfig.leakage_config`) attack the same model under the
same masks, and the demo's targets are the first candidates of its leakage part.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pruneleak.estimators.device import resolve_device
from pruneleak.sims.data import load_dataset
from pruneleak.sims.experiments.attack_model import attack_model, model_images
from pruneleak.sims.pruning.mask import Mask, magnitude_mask, random_mask


@dataclass(frozen=True)
class GivenSetup:
    """A model and candidate pool an :class:`ExperimentWorld` draws from: a caller's
    (:mod:`sims.audit`), or the packaged data set's and model, which the world builds.

    Attributes:
        model: the attacked model, on any device; only its architecture and its parameters
            (``w_0``, the broadcast weights) are used, through ``functional_call``.
        images: float32 ``(N, C, H, W)`` pool of candidate images, values in [0, 1].
        labels: int64 ``(N,)``, in ``[0, num_classes)``.
        num_classes: the model's number of classes (the attacks' label space).
        mask: the base mask of the released round (public, drawn before the secret), or
            None: the world's mask of each rate, as for the packaged models.
    """

    model: torch.nn.Module
    images: torch.Tensor
    labels: torch.Tensor
    num_classes: int
    mask: Mask | None = None


class ExperimentWorld:
    """The attacked model, the candidates and the base masks of one seed (module docstring).

    Attributes:
        device: the resolved device everything below lives on.
        model, params: the attacked model and its detached weights ``w_0``.
        num_classes: the model's number of classes.
        images, labels: the ``candidates`` drawn images and their labels.
        generator: the seeded generator that drew them, for the draws that follow.
    """

    def __init__(
        self,
        *,
        dataset: str | None,
        data_dir: str | None,
        candidates: int,
        candidates_name: str,
        seed: int,
        device: str,
        model: str | None = "digits",
        pruning: str = "random",
        given: GivenSetup | None = None,
    ):
        """The packaged ``dataset`` (files in ``data_dir`` for the file-based ones) and
        ``model`` of :data:`sims.experiments.attack_model.MODELS`, or with ``given`` the
        caller's model, pool and optional base mask (``dataset`` and ``model`` unused).
        ``pruning`` is ``"random"`` or ``"magnitude"``; ``candidates_name`` names the count
        in the error raised when the pool holds fewer images ("'candidates' parameter of
        LeakageConfig"): a data folder may hold fewer than the official files."""
        self.device = resolve_device(device)
        self._seed, self._pruning = seed, pruning
        where = "the given data"
        if given is None:
            data = model_images(model, load_dataset(dataset, data_dir))
            network, _ = attack_model(
                data.image_shape, data.num_classes, seed=seed, device=self.device, model=model
            )
            given = GivenSetup(network, data.images, data.labels, data.num_classes)
            where = f"the {dataset!r} files in {data_dir}"
        self.model = given.model.to(self.device)
        self.params = {name: t.detach() for name, t in self.model.named_parameters()}
        self.num_classes = given.num_classes
        self._given_mask = None if given.mask is None else given.mask.to(self.device)
        pool = len(given.images)
        if candidates > pool:
            raise ValueError(
                f"The {candidates_name} must be in [2, {pool}]: {where} hold {pool} images. "
                f"Got {candidates} instead."
            )
        self.generator = torch.Generator().manual_seed(seed)
        order = torch.randperm(pool, generator=self.generator)[:candidates]
        self.images = given.images[order].to(self.device)
        self.labels = given.labels[order].to(self.device)

    def mask(self, p: float) -> Mask:
        """The base mask of rate ``p``, on the device: the given one, else a random mask
        seeded with the seed (the same for every target: the client's mask) or the
        layer-wise magnitude mask of ``w_0``."""
        if self._given_mask is not None:
            return self._given_mask
        if self._pruning == "magnitude":
            return magnitude_mask(self.params, p)
        return random_mask(self.params, p, seed=self._seed)
