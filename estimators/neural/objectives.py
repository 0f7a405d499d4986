r"""Variational lower bounds on ``I(X; Y)`` as functions of critic scores, in nats.

Every bound is written for a critic ``T`` evaluated on samples of the joint law
``P = P_{XY}`` (``t_joint``: one score per aligned pair ``(x_i, y_i)``) and of the product of
the marginals ``Q = P_X (x) P_Y`` (``t_marginal``: scores of re-paired ``(x_i, y_j)``,
``i != j``). From a score matrix ``S[i, j] = T(x_i, y_j)`` of ``n`` aligned samples,
``t_joint`` is the diagonal and ``t_marginal`` the ``n (n - 1)`` off-diagonal entries
(:func:`off_diagonal`). Expectations are sample means; logarithms of means of exponentials
are evaluated as ``logsumexp - log(count)``, so large scores do not overflow.

.. math::

    I_{DV}(T) &= \mathbb E_P[T] - \log \mathbb E_Q[e^T] \\
    I_{NWJ}(T) &= \mathbb E_P[T] - e^{-1}\, \mathbb E_Q[e^T] \\
    I_{SMILE}(T) &= \mathbb E_P[T] - \log \mathbb E_Q[\mathrm{clip}(e^T, e^{-\tau}, e^{\tau})] \\
    I_{NCE}(T) &= \mathbb E\Big[\frac1n \sum_{i} \log \frac{e^{S_{ii}}}
                  {\frac1n \sum_j e^{S_{ij}}}\Big] \;\le\; \log n \\
    I_{JS}(T) &= \mathbb E_P[-\mathrm{softplus}(-T)] - \mathbb E_Q[\mathrm{softplus}(T)]

Sources (the paper texts are not in this repository; the formulas are the published
ones, and each is tested against a closed form in ``tests/estimators``):

- DV: Donsker-Varadhan representation as used by MINE (Belghazi et al., "Mutual
  Information Neural Estimation", ICML 2018, arXiv 1801.04062, eq. 5); tight at
  ``T* = log dP/dQ + c`` for any constant ``c``. MINE's gradient correction (its Section
  3.2) is :func:`mine_surrogate`.
- NWJ: Nguyen, Wainwright and Jordan (IEEE Trans. Inf. Theory 2010), in the form
  ``I_NWJ`` of Poole, Ozair, van den Oord, Alemi and Tucker, "On variational bounds of
  mutual information" (ICML 2019, arXiv 1905.06922), with the ``e^{-1}`` shift; tight at
  ``T* = 1 + log dP/dQ``.
- InfoNCE: van den Oord, Li and Vinyals, "Representation learning with contrastive
  predictive coding" (2018, arXiv 1807.03748), as the bound ``I_NCE`` of Poole et al.
  (2019) with ``K = n`` samples; at most ``log n`` for every critic.
- SMILE: Song and Ermon, "Understanding the limitations of variational mutual
  information estimators" (ICLR 2020, arXiv 1910.06222), Section 5: the DV bound with the
  density ratio ``e^T`` clipped to ``[e^{-tau}, e^tau]`` in the partition function; it
  equals :func:`dv_bound` as ``tau -> inf`` and trades bias for variance otherwise (not a
  lower bound for finite ``tau``).
- JS: the f-GAN Jensen-Shannon objective (Nowozin, Cseke and Tomioka, NeurIPS 2016;
  Hjelm et al., "Deep InfoMax", ICLR 2019), maximised by ``T* = log dP/dQ``. It is not a
  bound on ``I``; SMILE's authors train the critic with it and report the clipped DV
  value of that critic, as :class:`estimators.neural.SMILE` does.

All functions take float tensors (any device) and return 0-d tensors, so they can sit in
a training loop without a host synchronisation; shapes are checked, values are not
(a non-finite score gives a non-finite bound, which the estimators check at evaluation
points).
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

__all__ = [
    "BOUNDS",
    "dv_bound",
    "infonce_bound",
    "js_objective",
    "log_mean_exp",
    "mine_surrogate",
    "nwj_bound",
    "off_diagonal",
    "smile_bound",
]

#: Names of the bounds an estimator can report.
BOUNDS = ("dv", "nwj", "infonce", "smile")


def _check_scores(name: str, t: torch.Tensor, func: str, ndim: int | None = None) -> None:
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        raise ValueError(
            f"The '{name}' parameter of {func} must be a floating-point torch.Tensor. "
            f"Got {type(t).__name__} instead."
        )
    if t.numel() == 0 or (ndim is not None and t.ndim != ndim):
        shape = f"a non-empty {ndim}-D tensor" if ndim is not None else "a non-empty tensor"
        raise ValueError(
            f"The '{name}' parameter of {func} must be {shape}. Got shape {tuple(t.shape)} instead."
        )


def _check_square(scores: torch.Tensor, func: str) -> None:
    _check_scores("scores", scores, func, ndim=2)
    if scores.shape[0] != scores.shape[1] or scores.shape[0] < 2:
        raise ValueError(
            f"The 'scores' parameter of {func} must be a square matrix S[i, j] = T(x_i, y_j) "
            f"of at least 2 x 2. Got shape {tuple(scores.shape)} instead."
        )


def log_mean_exp(t: torch.Tensor) -> torch.Tensor:
    """``log(mean(exp(t)))`` over all entries, as ``logsumexp(t) - log(t.numel())``.

    Examples
    --------
    >>> float(log_mean_exp(torch.tensor([1000.0, 1000.0])))
    1000.0
    """
    _check_scores("t", t, "log_mean_exp")
    return torch.logsumexp(t.reshape(-1), dim=0) - math.log(t.numel())


def off_diagonal(scores: torch.Tensor) -> torch.Tensor:
    """The ``n (n - 1)`` off-diagonal entries of a square score matrix, flattened.

    ``S[i, j] = T(x_i, y_j)`` with ``i != j`` pairs two independent samples: these are the
    product-of-marginal samples of a minibatch.

    Examples
    --------
    >>> off_diagonal(torch.arange(9.0).reshape(3, 3))
    tensor([1., 2., 3., 5., 6., 7.])
    """
    _check_square(scores, "off_diagonal")
    n = scores.shape[0]
    # drop the first entry and view the rest as (n - 1, n + 1): the diagonal is the last
    # column (Hadamard's trick), so no boolean mask has to be built
    return scores.reshape(-1)[1:].reshape(n - 1, n + 1)[:, :-1].reshape(-1)


def dv_bound(t_joint: torch.Tensor, t_marginal: torch.Tensor) -> torch.Tensor:
    r"""Donsker-Varadhan bound :math:`\mathbb E_P[T] - \log \mathbb E_Q[e^T]` in nats.

    Belghazi et al. (2018), eq. 5. Equals ``I(X; Y)`` at ``T = log dP/dQ + c``.

    Examples
    --------
    >>> float(dv_bound(torch.tensor([2.0]), torch.tensor([0.0, 0.0])))
    2.0
    """
    _check_scores("t_joint", t_joint, "dv_bound")
    _check_scores("t_marginal", t_marginal, "dv_bound")
    return t_joint.mean() - log_mean_exp(t_marginal)


def nwj_bound(t_joint: torch.Tensor, t_marginal: torch.Tensor) -> torch.Tensor:
    r"""NWJ bound :math:`\mathbb E_P[T] - e^{-1}\,\mathbb E_Q[e^T]` in nats.

    Nguyen, Wainwright and Jordan (2010) in Poole et al.'s (2019) form ``I_NWJ``; tight at
    ``T = 1 + log dP/dQ``. The mean of ``e^{T - 1}`` is taken as ``exp(log_mean_exp(T) -
    1)``.

    Examples
    --------
    >>> float(nwj_bound(torch.tensor([1.0]), torch.tensor([1.0])))  # 1 - e^0
    0.0
    """
    _check_scores("t_joint", t_joint, "nwj_bound")
    _check_scores("t_marginal", t_marginal, "nwj_bound")
    return t_joint.mean() - torch.exp(log_mean_exp(t_marginal) - 1.0)


def smile_bound(t_joint: torch.Tensor, t_marginal: torch.Tensor, *, clip: float) -> torch.Tensor:
    r"""SMILE value :math:`\mathbb E_P[T] - \log\mathbb E_Q[\mathrm{clip}(e^T, e^{-\tau},
    e^{\tau})]` in nats, ``tau = clip > 0``.

    Song and Ermon (2020), Section 5: clipping ``e^T`` to ``[e^{-tau}, e^tau]`` is clipping
    ``T`` to ``[-tau, tau]`` inside the log-mean-exp; the joint term is not clipped.

    Examples
    --------
    >>> float(smile_bound(torch.tensor([0.0]), torch.tensor([10.0]), clip=1.0))
    -1.0
    """
    _check_scores("t_joint", t_joint, "smile_bound")
    _check_scores("t_marginal", t_marginal, "smile_bound")
    if not clip > 0:
        raise ValueError(f"The 'clip' parameter of smile_bound must be > 0. Got {clip!r} instead.")
    return t_joint.mean() - log_mean_exp(t_marginal.clamp(-clip, clip))


def js_objective(t_joint: torch.Tensor, t_marginal: torch.Tensor) -> torch.Tensor:
    r"""f-GAN Jensen-Shannon objective :math:`\mathbb E_P[-\mathrm{softplus}(-T)] -
    \mathbb E_Q[\mathrm{softplus}(T)]` (not a bound on ``I``).

    A logistic regression of joint against product-of-marginal samples; its maximiser is
    ``T* = log dP/dQ`` (for equally weighted classes), the critic SMILE evaluates.

    Examples
    --------
    >>> round(float(js_objective(torch.tensor([0.0]), torch.tensor([0.0]))), 6)  # -2 log 2
    -1.386294
    """
    _check_scores("t_joint", t_joint, "js_objective")
    _check_scores("t_marginal", t_marginal, "js_objective")
    return -F.softplus(-t_joint).mean() - F.softplus(t_marginal).mean()


def infonce_bound(scores: torch.Tensor) -> torch.Tensor:
    r"""InfoNCE bound of an ``n x n`` score matrix, in nats, at most ``log n``:

    .. math:: I_{NCE} = \frac1n \sum_i \Big(S_{ii} - \log \frac1n \sum_j e^{S_{ij}}\Big).

    van den Oord et al. (2018); Poole et al. (2019), ``I_NCE`` with ``K = n``. Each row
    classifies the true partner ``y_i`` of ``x_i`` among the ``n`` candidates ``y_j``.

    Examples
    --------
    >>> s = torch.tensor([[50.0, 0.0], [0.0, 50.0]])  # a perfect critic reaches log 2
    >>> round(float(infonce_bound(s)), 6)
    0.693147
    """
    _check_square(scores, "infonce_bound")
    n = scores.shape[0]
    return (scores.diagonal() - torch.logsumexp(scores, dim=1)).mean() + math.log(n)


def mine_surrogate(
    t_joint: torch.Tensor,
    t_marginal: torch.Tensor,
    log_average: torch.Tensor | None,
    *,
    rate: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""MINE's bias-corrected training objective and the updated moving average.

    Belghazi et al. (2018), Section 3.2: the minibatch gradient of
    ``log E_Q[e^T]`` is ``E_Q[e^T grad T] / E_Q[e^T]``, biased because the denominator is a
    minibatch mean; MINE replaces the denominator by an exponential moving average ``a``
    of the minibatch means. With ``a`` held constant, the surrogate

    .. math:: \mathbb E_P[T] - \mathbb E_Q[e^T] / a

    has exactly that corrected gradient. ``a`` is kept in log space:
    ``log a <- logaddexp(log a + log(1 - rate), log mean_Q e^T + log rate)`` (the first
    call, ``log_average=None``, starts at the minibatch value). ``rate = 1`` keeps only the
    current minibatch, and the surrogate's gradient is then the DV bound's.

    Returns ``(surrogate, log_average)``; the new ``log_average`` is detached. The
    surrogate's value is not a bound (report :func:`dv_bound`).

    Examples
    --------
    >>> t_j, t_m = torch.tensor([1.0]), torch.tensor([0.0, 0.0])
    >>> surrogate, log_a = mine_surrogate(t_j, t_m, None, rate=0.01)
    >>> float(surrogate), float(log_a)  # 1 - e^0 / e^0
    (0.0, 0.0)
    """
    _check_scores("t_joint", t_joint, "mine_surrogate")
    _check_scores("t_marginal", t_marginal, "mine_surrogate")
    if not 0 < rate <= 1:
        raise ValueError(
            f"The 'rate' parameter of mine_surrogate must be in (0, 1]. Got {rate!r} instead."
        )
    log_mean = log_mean_exp(t_marginal)
    new = log_mean.detach()
    if log_average is None or rate == 1:
        log_average = new
    else:
        log_average = torch.logaddexp(
            log_average + math.log1p(-rate), new + math.log(rate)
        ).detach()
    return t_joint.mean() - torch.exp(log_mean - log_average), log_average
