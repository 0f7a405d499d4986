"""PriPrune's adaptive defense: a Gumbel-Softmax defense mask trained with the weights.

PriPrune (journal version, Sec. 5.2 and Algorithm 3; AAAI arXiv:2310.19958 eq. 6-8)
gives client ``i`` a probability ``alpha_i(l, j)`` of **not** sharing each prunable
weight ``j`` of layer ``l`` and trains it with the weights on

.. math::

    L_{local} = \\lambda_{acc} L_{acc} + \\lambda_{pri} L_{pri}
                + \\lambda_{sha} \\sum_{l, j} \\alpha(l, j)                      (16)

    L_{pri} = \\sum_{l, j} - \\frac{N_l}{\\sum_l N_l}
              \\frac{|g_{l,j}|}{\\sum_{j \\in d_l} |g_{l,j}|} \\log \\alpha(l, j)   (17)

with the defense mask ``m_hat`` (1 = shared) sampled by Gumbel-Softmax from
``pi = [alpha, 1 - alpha]`` (eq. 18, ``k = 0`` is "not shared")::

    v(k) = exp((log pi(k) + G(k)) / tau) / sum_k' exp((log pi(k') + G(k')) / tau),
    G = -log(-log U),  U ~ Unif(0, 1) i.i.d.

Our readings, each a choice where the paper leaves one open:

* **Hard sample, straight-through** (the "hard sample trick" after eq. 18): the mask
  used in the forward pass is the hard one, ``m_hat = 1[v(1) > v(0)]``, so it is 0 with
  probability ``alpha`` for every ``tau``; the backward pass differentiates the soft
  ``v(1)``: ``m = y_hard - stopgrad(y_soft) + y_soft``, computed as
  ``y_hard + (y_soft - stopgrad(y_soft))`` so that the forward value is exactly 0 or 1.
* **alpha is kept per client across rounds** (Algorithm 3 line 3,
  ``alpha^t = alpha^{t-1}``), initialised to ``alpha_init`` at the client's first round,
  one value per coordinate of every prunable tensor (:func:`prunable_names`); biases are
  always shared.
* **Line 6, every local step** ``k`` (one per batch, as eq. (1)'s steps in
  :func:`sims.fl.client.local_sgd`) samples a fresh ``m_hat_k`` and combines
  ``w_in = m_hat_k ⊙ w_k + (1 - m_hat_k) ⊙ w_tilde`` (on prunable tensors), where
  ``w_1 = start`` (the broadcast weights with, under Pseudo-Pruning, the client's
  withheld weights already loaded back by :meth:`Defense.start`) and later steps
  **continue from the updated weights** ``w_{k+1}``. ``w_tilde`` is the client's full
  trained model of its previous round, ``w_bar^{t-1}`` (the journal's
  ``w_init = w^t ⊙ m_hat + w_bar^{t-1} ⊙ m_tilde``); at a client's first round nothing
  is saved and ``w_tilde = start`` (line 6 leaves the start unchanged). With real
  pruning (``pseudo=False``) nothing is kept and ``w_tilde = 0``: a weight sampled as
  withheld is dropped from that step's forward pass.
* **Lines 7 and 9, the weight step**: ``w_{k+1} = m ⊙ (w_in - lr * grad_{w_in} L_local)``
  with the base mask ``m``, i.e. eq. (1) on the combined weights; ``L_pri`` and the
  penalty do not depend on the weights, so the step is ``lr * lambda_acc * grad L_acc``
  (Algorithm 3 uses the gradient of ``L_local`` as written: pass ``lr / lambda_acc`` to
  match undefended training's step size). ``gradient_at`` is that of ``local_sgd``.
* **eq. (17)'s gradient** ``g`` is the gradient of ``L_acc`` with respect to the
  combined weights ``w_in`` (with ``gradient_at="masked"`` it is zero at base-pruned
  coordinates), detached, so ``L_pri`` is a function of ``alpha`` only;
  ``N_l`` is the number of coordinates of the tensor. A layer whose gradient is zero
  everywhere gets weight 0 (:func:`privacy_weights`).
* **Line 10, the alpha step**: ``alpha <- clamp(alpha - alpha_lr * grad_alpha L_local,
  ALPHA_EPS, 1 - ALPHA_EPS)`` -- plain gradient descent on ``alpha`` as Algorithm 3
  writes it, followed by the Euclidean projection onto ``[eps, 1 - eps]`` that keeps
  ``log alpha`` and ``log(1 - alpha)`` finite. A logit parameterisation would change
  the dynamics (the gradient scaled by ``alpha (1 - alpha)``), which the paper does not
  describe. ``alpha_lr`` defaults to ``lr`` (Algorithm 3 uses one ``eta``).
* **Line 12, the shared mask**: ``m_hat = argmax(alpha, 1 - alpha)``: withheld where
  ``alpha > 1/2``, among the base-kept prunable weights; :meth:`Defense.upload` records
  the defense rate and keeps the withheld weights (Pseudo-Pruning).
* **Gumbel noise** is drawn on the weights' device by a ``torch.Generator`` of that
  device seeded by ``derived_seed(seed, t, client_id)``: the local loop makes no host
  synchronisation and no host-to-device copy. Runs are reproducible per device; a CPU
  run and a CUDA run draw different noise.
* ``on_loss`` receives each step's ``L_acc`` (the training loss of the combined
  weights, as in ``local_sgd``), ``on_gradient`` its dense gradient ``grad_v L_acc``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import torch
from torch import nn
from torch.func import grad_and_value

from pruneleak.bounds.validation import check_choice, check_real
from pruneleak.sims.core.functional import batch_loss, detached, non_finite_names
from pruneleak.sims.defenses.client import Defense
from pruneleak.sims.pruning.mask import Mask, prunable_names
from pruneleak.sims.pruning.schemes import derived_seed

Params = Mapping[str, torch.Tensor]

#: alpha is kept in ``[ALPHA_EPS, 1 - ALPHA_EPS]`` (representable in float32 on both sides).
ALPHA_EPS = 1e-6


def gumbel_noise(
    shape: tuple[int, ...], *, generator: torch.Generator, device: torch.device | str = "cpu"
) -> torch.Tensor:
    """``(2, *shape)`` i.i.d. standard Gumbel draws ``G = -log(-log U)`` (eq. 18), drawn
    by ``generator`` on ``device``; ``U`` is clamped away from 0 so that ``G`` is finite."""
    u = torch.rand((2, *shape), generator=generator, device=device)
    u = u.clamp_min(torch.finfo(u.dtype).tiny)
    return -torch.log(-torch.log(u))


def gumbel_share_mask(alpha: torch.Tensor, noise: torch.Tensor, temperature: float) -> torch.Tensor:
    """Straight-through hard defense mask of eq. (18), 1 = shared, 0 = withheld.

    With ``pi = [alpha, 1 - alpha]`` and ``noise = (G(0), G(1))`` (shape ``(2,
    *alpha.shape)``), ``y_soft = v(1)`` is eq. (18)'s softmax and ``y_hard = 1[v(1) >
    v(0)]``, 0 with probability ``alpha``. Returns ``y_hard + (y_soft -
    stopgrad(y_soft))``: the value of ``y_hard``, the gradient of ``y_soft``.

    ``alpha`` must lie in (0, 1) (``log alpha`` and ``log(1 - alpha)`` are finite there
    only), ``noise`` be finite and ``temperature`` > 0 (eq. 18 divides by it); anything
    else would give NaN, so it raises ValueError.
    """
    temperature = _check_gumbel_inputs(alpha, noise, temperature, func="gumbel_share_mask")
    hard, soft = _gumbel_samples(alpha, noise, temperature)
    return hard + (soft - soft.detach())


def _check_gumbel_inputs(alpha, noise, temperature, *, func: str) -> float:
    """``temperature`` as a float in (0, inf) after checking that ``alpha`` is a floating
    tensor in (0, 1) and ``noise`` a finite tensor of shape ``(2, *alpha.shape)``; reads
    the tensors (a device synchronisation), so the inner loop, which runs under ``vmap``,
    does not call it."""
    temperature = check_real("temperature", temperature, func=func, low=0, low_inclusive=False)
    if not isinstance(alpha, torch.Tensor) or not alpha.is_floating_point():
        raise ValueError(
            f"The 'alpha' parameter of {func} must be a floating-point tensor in (0, 1). "
            f"Got {getattr(alpha, 'dtype', type(alpha).__name__)} instead."
        )
    want = (2, *alpha.shape)
    if not isinstance(noise, torch.Tensor) or tuple(noise.shape) != want:
        raise ValueError(
            f"The 'noise' parameter of {func} must be a tensor of shape (2, *alpha.shape) = "
            f"{want}. Got {tuple(getattr(noise, 'shape', ())) or type(noise).__name__} instead."
        )
    outside = ~((alpha > 0) & (alpha < 1))  # NaN is outside too
    if bool(outside.any()):
        raise ValueError(
            f"The 'alpha' parameter of {func} must be in (0, 1). "
            f"Got {alpha[outside].flatten()[0].item()!r} among its entries instead."
        )
    if non_finite_names({"noise": noise}):
        raise ValueError(
            f"The 'noise' parameter of {func} must be finite (Gumbel draws). "
            "Got NaN or infinite entries instead."
        )
    return temperature


def _gumbel_samples(alpha: torch.Tensor, noise: torch.Tensor, temperature: float):
    """``(y_hard, y_soft)`` of eq. (18) (:func:`gumbel_share_mask`)."""
    logits = torch.stack((torch.log(alpha), torch.log1p(-alpha))) + noise
    soft = torch.softmax(logits / temperature, dim=0)[1]
    return (logits[1] > logits[0]).to(alpha.dtype), soft


def privacy_weights(grads: Params) -> dict[str, torch.Tensor]:
    """eq. (17)'s weights ``N_l / sum_l N_l * |g_{l,j}| / sum_j |g_{l,j}|`` per prunable
    tensor ``l`` of ``grads`` (``N_l`` its number of coordinates); a tensor whose
    gradient is zero everywhere gets weight 0. They sum to 1 when no tensor's gradient
    vanishes. ``grads`` must map names to finite floating-point tensors (a NaN or an
    infinity would make its whole layer's weights NaN): ValueError otherwise."""
    func = "privacy_weights"
    if not isinstance(grads, Mapping) or not all(
        isinstance(g, torch.Tensor) and g.is_floating_point() for g in grads.values()
    ):
        raise ValueError(
            f"The 'grads' parameter of {func} must be a dict of floating-point tensors. "
            f"Got {type(grads).__name__} instead."
        )
    bad = non_finite_names(grads)
    if bad:
        raise ValueError(
            f"The 'grads' parameter of {func} must be finite. "
            f"Got NaN or infinite entries in {bad[0]!r} instead."
        )
    return _privacy_weights(grads)


def _privacy_weights(grads: Params) -> dict[str, torch.Tensor]:
    """:func:`privacy_weights` without its checks (the inner loop, under ``vmap``)."""
    names = prunable_names(grads)
    total = sum(grads[n].numel() for n in names)
    out = {}
    for n in names:
        magnitude = grads[n].detach().abs()
        layer_sum = magnitude.sum()
        share = magnitude / torch.where(layer_sum > 0, layer_sum, 1.0)
        out[n] = grads[n].numel() / total * share
    return out


def mixed_point(
    w: Params,
    alpha: Params,
    tilde: Params,
    noise: Params,
    mask: Mask,
    *,
    temperature: float,
    gradient_at: str,
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    r"""Lines 5-7 of Algorithm 3: the point ``v`` where the step's gradient is taken, and
    ``d w_in / d alpha``. Line 6 combines ``w_in = m ⊙ w + (1 - m) ⊙ w_tilde`` with the hard
    straight-through sample ``m`` (:func:`gumbel_share_mask`) on each prunable name of
    ``alpha`` (other names pass through); line 7 takes ``v = m_base ⊙ w_in`` with
    ``gradient_at="masked"``, else ``v = w_in``. Through the soft sample,

    .. math::

        \frac{\partial w_{in}}{\partial\alpha} = (w - \tilde w)\,
        \frac{y_s (1 - y_s)}{\tau}\Big(-\frac1\alpha - \frac1{1 - \alpha}\Big),

    since ``y_soft = sigmoid((log(1 - alpha) + G(1) - log(alpha) - G(0)) / tau)``.

    ``temperature`` > 0, ``gradient_at`` ``"masked"`` or ``"dense"``, and for each name of
    ``alpha`` the tensors of ``w`` and ``tilde`` of its shape and ``noise`` of shape ``(2,
    *shape)`` are checked (ValueError); the values are not read, so the step runs under
    ``vmap`` (alpha's range is kept by :func:`priprune_update`'s clamp).
    """
    func = "mixed_point"
    temperature = check_real("temperature", temperature, func=func, low=0, low_inclusive=False)
    check_choice("gradient_at", gradient_at, func=func, choices=("masked", "dense"))
    for n in alpha:
        shape = tuple(alpha[n].shape)
        for name, tensors, want in (
            ("w", w, shape),
            ("tilde", tilde, shape),
            ("noise", noise, (2, *shape)),
        ):
            got = tuple(tensors[n].shape) if n in tensors else None
            if got != want:
                raise ValueError(
                    f"The '{name}' parameter of {func} must hold {n!r} (a tensor of 'alpha') "
                    f"of shape {want}. Got {'none' if got is None else got} instead."
                )
    w_in, slope = dict(w), {}
    for n in alpha:
        hard, soft = _gumbel_samples(alpha[n], noise[n], temperature)
        w_in[n] = hard * w[n] + (1 - hard) * tilde[n]
        d_logit = -(1 / alpha[n] + 1 / (1 - alpha[n]))
        slope[n] = (w[n] - tilde[n]) * soft * (1 - soft) / temperature * d_logit
    return (mask.apply(w_in) if gradient_at == "masked" else w_in), slope


def priprune_update(
    v: Params,
    g: Params,
    alpha: Params,
    slope: Params,
    mask: Mask,
    *,
    lr: float,
    alpha_lr: float,
    lambda_acc: float,
    lambda_pri: float,
    lambda_sha: float,
    gradient_at: str,
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Lines 9-10 of Algorithm 3 from the gradient ``g = grad_v L_acc`` at ``v``: the
    weight step ``m ⊙ (v - lr lambda_acc g_w)`` and the clamped alpha step, whose
    ``L_acc`` part is ``g_w ⊙ d w_in / d alpha`` (``slope`` of :func:`mixed_point`; ``g_w``
    the gradient with respect to ``w_in``, ``m ⊙ g`` with ``gradient_at="masked"``) and
    whose eq. (17) part uses the weights of :func:`privacy_weights` on ``g_w``."""
    names = list(alpha)
    g_w = mask.apply(g) if gradient_at == "masked" else g
    c = _privacy_weights({n: g_w[n] for n in names})
    alpha_next = {
        n: (
            alpha[n]
            - alpha_lr
            * (lambda_acc * g_w[n] * slope[n] - lambda_pri * c[n] / alpha[n] + lambda_sha)
        ).clamp(ALPHA_EPS, 1 - ALPHA_EPS)
        for n in names
    }
    w_next = mask.apply({n: v[n] - lr * lambda_acc * g_w[n] for n in v})
    return w_next, alpha_next


def priprune_step(
    model: nn.Module,
    w: Params,
    alpha: Params,
    tilde: Params,
    noise: Params,
    images: torch.Tensor,
    labels: torch.Tensor,
    mask: Mask,
    *,
    temperature: float,
    **options,
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], dict[str, torch.Tensor], torch.Tensor]:
    """One local step of Algorithm 3 (lines 5-10, module docstring) as a pure function.

    ``alpha``, ``tilde`` and ``noise`` (the ``(2, *shape)`` Gumbel draws of eq. 18) hold
    one tensor per prunable name of ``w``: :func:`mixed_point` (lines 5-7, with eq. (18)'s
    ``temperature``), the gradient of ``L_acc`` at ``v``, and :func:`priprune_update`
    (lines 9-10). ``options``: those of :func:`priprune_update`
    (:meth:`PriPruneDefense.step_options`). Written with ``torch.func`` only, so it runs
    under ``vmap`` (one candidate batch per row, :mod:`sims.releases.priprune`) and in
    :meth:`PriPruneDefense.local_update`.

    Returns:
        ``(w_next, alpha_next, g, loss)``: the stepped weights, alpha after the clamped
        step, the dense gradient ``grad_v L_acc`` and the loss ``L_acc`` at ``v``.
    """
    v, slope = mixed_point(
        w, alpha, tilde, noise, mask, temperature=temperature, gradient_at=options["gradient_at"]
    )
    g, loss = grad_and_value(batch_loss, argnums=1)(model, v, images, labels)
    w_next, alpha_next = priprune_update(v, g, alpha, slope, mask, **options)
    return w_next, alpha_next, g, loss


class PriPruneDefense(Defense):
    """PriPrune's adaptive defense (journal Algorithm 3): see the module docstring.

    Args:
        lambda_acc, lambda_pri, lambda_sha: the weights of eq. (16), >= 0 (defaults:
            journal Appendix D.3, FEMNIST PruneFL + PriPrune: 5, 15, 2e-5).
        temperature: ``tau`` of eq. (18), > 0.
        alpha_init: every client's initial probability of not sharing a weight, in
            ``[ALPHA_EPS, 1 - ALPHA_EPS]`` (0.3, the fixed defenses' rate).
        alpha_lr: step size of alpha (Algorithm 3 line 10), > 0; ``None``: the client's
            ``lr``.
        pseudo, seed: as in :class:`Defense`; the Gumbel noise of client ``i`` in round
            ``t`` is seeded by ``(seed, t, i)``.

    Attributes:
        alpha: ``{client_id: {name: tensor}}``, each client's current alpha on the
            weights' device.
    """

    name = "PriPrune"

    def __init__(
        self,
        *,
        lambda_acc: float = 5.0,
        lambda_pri: float = 15.0,
        lambda_sha: float = 2e-5,
        temperature: float = 1.0,
        alpha_init: float = 0.3,
        alpha_lr: float | None = None,
        pseudo: bool = True,
        seed: int = 0,
    ):
        func = "PriPruneDefense"
        lambda_acc = check_real("lambda_acc", lambda_acc, func=func, low=0)
        lambda_pri = check_real("lambda_pri", lambda_pri, func=func, low=0)
        lambda_sha = check_real("lambda_sha", lambda_sha, func=func, low=0)
        temperature = check_real("temperature", temperature, func=func, low=0, low_inclusive=False)
        alpha_init = check_real(
            "alpha_init", alpha_init, func=func, low=ALPHA_EPS, high=1 - ALPHA_EPS
        )
        if alpha_lr is not None:
            alpha_lr = check_real("alpha_lr", alpha_lr, func=func, low=0, low_inclusive=False)
        super().__init__(pseudo=pseudo, seed=seed)
        self.lambda_acc, self.lambda_pri, self.lambda_sha = lambda_acc, lambda_pri, lambda_sha
        self.temperature, self.alpha_init, self.alpha_lr = temperature, alpha_init, alpha_lr
        self.alpha: dict[int, dict[str, torch.Tensor]] = {}

    def draw_noise(
        self, shape: tuple[int, ...], generator: torch.Generator, device: torch.device
    ) -> torch.Tensor:
        """The Gumbel noise of one tensor in one step (:func:`gumbel_noise`)."""
        return gumbel_noise(shape, generator=generator, device=device)

    def start_alpha(self, client_id: int, start: Params) -> dict[str, torch.Tensor]:
        """The alpha client ``client_id`` starts its round from, one tensor per prunable
        name of ``start``: its alpha after its last round, ``alpha_init`` at its first
        (Algorithm 3 line 3). Reading it changes nothing."""
        saved = self.alpha.get(client_id)
        if saved is not None:
            return {n: saved[n] for n in prunable_names(start)}
        return {n: torch.full_like(start[n], self.alpha_init) for n in prunable_names(start)}

    def combination_weights(self, client_id: int, start: Params) -> dict[str, torch.Tensor]:
        """``w_tilde`` of line 6 for client ``client_id`` (module docstring): its trained
        model of its previous round with Pseudo-Pruning (``start`` at its first round),
        zeros with real pruning; one tensor per prunable name of ``start``."""
        names = prunable_names(start)
        if not self.pseudo:
            return {n: torch.zeros_like(start[n]) for n in names}
        saved = self._withheld.get(client_id)
        if saved is None:
            return {n: start[n] for n in names}
        return {n: saved[n].values.to(start[n].device) for n in names}

    def step_options(self, lr: float, gradient_at: str) -> dict:
        """The keyword options of :func:`priprune_update` for this defense and client ``lr``
        (:func:`priprune_step` takes them and eq. (18)'s ``temperature``)."""
        return {
            "lr": lr,
            "alpha_lr": lr if self.alpha_lr is None else self.alpha_lr,
            "lambda_acc": self.lambda_acc,
            "lambda_pri": self.lambda_pri,
            "lambda_sha": self.lambda_sha,
            "gradient_at": gradient_at,
        }

    def local_update(
        self,
        t: int,
        client_id: int,
        model: nn.Module,
        start: Params,
        mask: Mask,
        batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
        *,
        lr: float,
        gradient_at: str,
        on_gradient: Callable[[dict[str, torch.Tensor]], None] | None = None,
        on_loss: Callable[[torch.Tensor], None] | None = None,
    ) -> dict[str, torch.Tensor]:
        """Algorithm 3 lines 3-11: joint steps on the weights and alpha (module docstring),
        one :func:`priprune_step` per batch, folded over the batches from ``start`` and
        :meth:`start_alpha`; the client's alpha is stored once its round is done."""
        w = detached(start)
        names = prunable_names(w)
        alpha = self.start_alpha(client_id, w)
        tilde = self.combination_weights(client_id, w)
        device = w[names[0]].device if names else torch.device("cpu")
        generator = torch.Generator(device=device).manual_seed(
            derived_seed(self.seed, t, client_id)
        )
        options = self.step_options(lr, gradient_at)
        for images, labels in batches:
            noise = {n: self.draw_noise(tuple(w[n].shape), generator, device) for n in names}
            w, alpha, g, loss = priprune_step(
                model,
                w,
                alpha,
                tilde,
                noise,
                images,
                labels,
                mask,
                temperature=self.temperature,
                **options,
            )
            if on_gradient is not None:
                on_gradient(g)
            if on_loss is not None:
                on_loss(loss.detach())
        self.alpha[client_id] = alpha
        return w

    def shared_mask(self, t, client_id, start, trained, base) -> Mask:
        """Algorithm 3 line 12: withheld where ``alpha > 1/2`` (``alpha_init`` for a client
        that has not trained), among the base-kept weights; biases always shared."""
        alpha = self.alpha.get(client_id, {})
        keep = {}
        for n, k in base.keep.items():
            if k.ndim >= 2:
                a = alpha.get(n)
                share = (a <= 0.5).to(k.device) if a is not None else self.alpha_init <= 0.5
                keep[n] = k & share
            else:
                keep[n] = k
        return Mask(keep)
