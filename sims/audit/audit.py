"""Audit a user's own pruned FL setup: the leakage study's record for a given model, data
and release (:mod:`sims.experiments.leakage`), in one frozen result.

Nothing is computed here that the study does not compute: :class:`World` is built from
the user's model and candidates (:class:`~sims.experiments.leakage.GivenSetup`) and one
record of :func:`~sims.experiments.leakage.study.record_with_reconstructions` is taken.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pruneleak.bounds.validation import check_choice, check_int, check_real
from pruneleak.sims.audit.config import FUNC, as_data, check_mask, num_classes_of, prepare_model
from pruneleak.sims.defenses import DefenseSpec
from pruneleak.sims.experiments.leakage import GivenSetup, LeakageConfig, World
from pruneleak.sims.experiments.leakage.attacks import attack_config
from pruneleak.sims.experiments.leakage.study import record_with_reconstructions
from pruneleak.sims.pruning.schemes import available_schemes, build_scheme

#: The quantities of the summary: (record field or attack entry, label, unit).
UNITS = {"bits": "bits", "success": "probability", "nmi": "[0, 1]", "psnr": "dB", "ssim": "[0, 1]"}


@dataclass(frozen=True, eq=False)
class AuditResult:
    """What one audit found, every number from the leakage study's record (``record``).

    Attributes:
        record: the study's record (:mod:`sims.experiments.leakage`, JSON-serialisable):
            ``exact_bits`` with ``exact_ci_bits`` and ``exact_method``, ``bayes_success``,
            ``ceiling_bits`` (``log2 C(M, B)``), ``gaussian_bound_bits`` (s > 0),
            ``dp_success_bound``, ``theorem1_{published,corrected}_bits`` with
            ``theorem1_status``, per attack ``attack_success``, ``fano_lower_bits``,
            ``nmi`` (with ``nmi_chance``), ``psnr``, ``ssim``.
        attacks: the attacks reported (a subset of the record's).
        labels: how the attacks obtained the labels: ``"recovered (iDLG)"`` for ``B = 1``,
            ``"optimised jointly"`` otherwise (never given to the attacker).
        eval_mode: the modules whose forward pass the audit fixed in evaluation mode
            (:func:`sims.audit.config.prepare_model`); empty when none.
        model_name: the model's class name.
        parameters: ``d``, the model's parameter count.
        originals: ``(targets * B, C, H, W)`` the attacked targets' images.
        reconstructions: per attack the matched reconstructions of ``originals``.
    """

    record: dict
    attacks: tuple[str, ...]
    labels: str
    eval_mode: tuple[str, ...]
    model_name: str
    parameters: int
    originals: np.ndarray = field(repr=False)
    reconstructions: dict = field(repr=False)

    @property
    def exact_bits(self) -> float:
        """``I(X; Y)`` in bits (:func:`bounds.leakage.batch_leakage` or the release's own)."""
        return float(self.record["exact_bits"])

    @property
    def ceiling_bits(self) -> float:
        """``log2 C(M, B)``: the entropy of the secret batch, no release leaks more."""
        return float(self.record["ceiling_bits"])

    @property
    def theorem1_status(self) -> dict[str, str]:
        """PriPrune's Theorem 1, published and corrected: valid, vacuous or violated."""
        return dict(self.record["theorem1_status"])

    def verdict(self) -> str:
        """One sentence: the exact leakage against the ceiling, and Theorem 1's status."""
        r = self.record
        status = r["theorem1_status"]
        return (
            f"The exact leakage is {r['exact_bits']:.4g} bits ({r['exact_method']}) of a "
            f"ceiling of {r['ceiling_bits']:.4g} bits; PriPrune's Theorem 1 is "
            f"{status['published']} as published and {status['corrected']} corrected."
        )

    def rows(self) -> list[tuple[str, float | None, str]]:
        """The summary ``(quantity, value, unit)`` rows, in the report's order."""
        r = self.record
        ci = r["exact_ci_bits"]
        rows = [
            ("exact leakage I(X; Y)", r["exact_bits"], "bits"),
            ("exact leakage, interval low", ci[0], "bits"),
            ("exact leakage, interval high", ci[1], "bits"),
            ("Bayes-optimal identification success", r["bayes_success"], "probability"),
            ("ceiling log2 C(M, B)", r["ceiling_bits"], "bits"),
            ("Gaussian-channel bound", r["gaussian_bound_bits"], "bits"),
            ("DP bound on any attack's success", r["dp_success_bound"], "probability"),
            ("Theorem 1 (published)", r["theorem1_published_bits"], "bits"),
            ("Theorem 1 (corrected)", r["theorem1_corrected_bits"], "bits"),
        ]
        for name in self.attacks:
            label = name.upper().replace("_AWARE", " (defense-aware)")
            rows += [
                (f"{label} identification success", r["attack_success"][name], "probability"),
                (f"{label} Fano lower bound", r["fano_lower_bits"][name], "bits"),
                (f"{label} NMI", r["nmi"][name], "[0, 1]"),
                (f"{label} PSNR", r["psnr"][name], "dB"),
                (f"{label} SSIM", r["ssim"][name], "[0, 1]"),
            ]
        rows.append(("NMI chance level", r["nmi_chance"], "[0, 1]"))
        return rows

    def to_dict(self) -> dict:
        """Every number, JSON-serialisable: NaN and infinities become None."""
        return _finite(
            {
                "verdict": self.verdict(),
                "model": self.model_name,
                "parameters": self.parameters,
                "attacks": list(self.attacks),
                "labels": self.labels,
                "eval_mode": list(self.eval_mode),
                "summary": [{"quantity": q, "value": v, "unit": u} for q, v, u in self.rows()],
                "record": self.record,
            }
        )

    def write(self, folder) -> dict[str, object]:
        """Write ``audit.md``, ``audit.html``, ``audit.json`` and the figures into ``folder``
        (created if missing); returns their paths by kind (:mod:`sims.audit.report`)."""
        from pruneleak.sims.audit.report import write_report

        return write_report(self, folder)


def _finite(value):
    """``value`` with every non-finite float replaced by None, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    return value


def audit(
    model,
    images,
    labels=None,
    *,
    mask=None,
    pruning: str = "random",
    p: float = 0.5,
    lr: float = 0.25,
    local_steps: int = 1,
    batch_size: int = 1,
    noise_std: float = 0.0,
    candidates: int | None = None,
    defense: DefenseSpec | None = None,
    attacks: tuple[str, ...] | None = None,
    samples: int = 4096,
    attack_targets: int = 8,
    attack_iterations: int = 50,
    seed: int = 0,
    device: str = "auto",
) -> AuditResult:
    """Audit the leakage of a target client's batch through the user's pruned FL release.

    The secret is a uniform ``B``-subset of ``M`` candidates; the release is the target's
    upload, the kept coordinates of ``local_steps`` steps of PriPrune eq. (1) at rate
    ``lr`` from the model's weights under the base ``mask`` (public), optionally under a
    client-side ``defense``, seen with Gaussian noise ``N(0, noise_std^2)``. The numbers
    are those of the leakage study (:mod:`sims.experiments.leakage`, its package
    docstring gives every formula): exact ``I(X; Y)`` in bits, the ceiling ``log2 C(M,
    B)``, the Gaussian-channel bound (``noise_std > 0``), PriPrune's Theorem 1, the
    attacks' identification success, Fano bounds, NMI, PSNR and SSIM.

    Parameters
    ----------
    model : torch.nn.Module or callable
        The model (or a zero-argument factory). Its weights are the broadcast ``w_0``; a
        copy runs in evaluation mode: BatchNorm with its running statistics, dropout off
        (:func:`sims.audit.config.prepare_model`; ``AuditResult.eval_mode`` names them).
    images, labels :
        Candidate images ``(N, C, H, W)`` or ``(N, H, W)`` in [0, 1] (uint8 / 255), as a
        torch tensor or numpy array with ``N`` labels, or a ``Dataset`` of (image, label).
    mask : Mask or dict, optional
        The base mask, with the model's parameter names and shapes; ``p`` is then its
        pruned fraction. None: ``pruning`` at rate ``p``.
    pruning : str, default "random"
        A scheme of :func:`sims.pruning.schemes.available_schemes`; data-driven ones score
        on the whole candidate pool (independent of which batch is the secret).
    p : float, default 0.5
        Pruning rate in [0, 1] (without ``mask``).
    lr, local_steps, batch_size, noise_std :
        The client's rate ``r > 0``, ``tau >= 1`` full-batch steps, ``B``, and ``s >= 0``.
    candidates : int, optional
        ``M``, drawn by a seeded permutation of the images; None: all of them.
    defense : DefenseSpec, optional
        A PriPrune defense on the released round (no warm-up rounds).
    attacks : tuple of str, optional
        Attacks to report: ``("sgi", "gi")`` (default without a defense) or with a defense
        ``("sgi", "sgi_aware")``; labels are recovered, never given.
    samples, attack_targets, attack_iterations :
        Monte Carlo draws of the exact leakage, attacked target batches, L-BFGS iterations.
    seed : int
        Seeds the mask, the candidate order, the targets, the noise and the attacks.
    device : str
        ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    Returns
    -------
    AuditResult
    """
    prepared, eval_mode = prepare_model(model)
    x, y = as_data(images, labels)
    classes = num_classes_of(prepared, x, y)
    params = {name: t.detach() for name, t in prepared.named_parameters()}
    if mask is not None:
        base = check_mask(mask, prepared)
        p = base.sparsity()
    else:
        check_choice("pruning", pruning, func=FUNC, choices=available_schemes())
        p = check_real("p", p, func=FUNC, low=0, high=1)
        scheme = build_scheme(pruning, p, seed=seed, rounds=1)
        base = scheme.initial_mask(prepared, params, x.to(next(iter(params.values()))), y)
    m = len(x) if candidates is None else check_int("candidates", candidates, func=FUNC, low=2)
    config = LeakageConfig(
        dataset=None,
        model=None,
        rates=(p,),
        noise_stds=(noise_std,),
        batch_size=batch_size,
        candidates=m,
        local_steps=local_steps,
        other_clients=0,
        defense=DefenseSpec() if defense is None else defense,
        samples=samples,
        attack_targets=attack_targets,
        attack_iterations=attack_iterations,
        theorem1_sample_sizes=(min(256, m),),
        client_lr=lr,
        seed=seed,
        device=device,
    )
    chosen = config.attacks if attacks is None else tuple(attacks)
    if not chosen or not set(chosen) <= set(config.attacks):
        raise ValueError(
            f"The 'attacks' parameter of {FUNC} must be a non-empty subset of "
            f"{config.attacks}. Got {attacks!r} instead."
        )
    world = World(config, GivenSetup(prepared, x, y, classes, base.to("cpu")))
    record, kept = record_with_reconstructions(world, p, float(noise_std))
    record["client_lr"] = config.client_lr
    label_mode = attack_config(world).label_mode
    originals = next(iter(kept.values()))[0].numpy()
    return AuditResult(
        record=record,
        attacks=chosen,
        labels="recovered (iDLG)" if label_mode == "idlg" else "optimised jointly",
        eval_mode=eval_mode,
        model_name=type(prepared).__name__,
        parameters=sum(t.numel() for t in params.values()),
        originals=originals,
        reconstructions={name: kept[name][1].numpy() for name in chosen},
    )
