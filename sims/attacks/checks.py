"""Validation of the attack's inputs at its public boundary.

One place for the checks that reading an update, preparing an inversion and running
K attacks at once share, so that every entry point rejects a bad value with the same
message shape as :mod:`bounds.validation`: the parameter, what is allowed, and what it
got.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import nn

from pruneleak.bounds.validation import check_int
from pruneleak.sims.attacks.config import AttackConfig
from pruneleak.sims.core.functional import check_lr, non_finite_names


def check_param_dict(
    name: str, params, *, func: str, model: nn.Module | None = None
) -> dict[str, torch.Tensor]:
    """``params`` as a dict of detached tensors, after checking it is a non-empty mapping
    of names to finite floating-point tensors (with ``model``: exactly the model's
    parameters, each with its shape, :func:`check_model_params`).

    The finiteness check reads every entry once and synchronises with the device once
    per dict and device (:func:`sims.core.functional.non_finite_names`). Callers check
    each dict once per attack and pass the result on: the internal steps of an attack
    take checked dicts and do not scan them again.
    """
    if not isinstance(params, Mapping) or not params:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty dict of tensors. "
            f"Got {type(params).__name__} instead."
        )
    for key, tensor in params.items():
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
            raise ValueError(
                f"The '{name}' parameter of {func} must map names to floating-point tensors. "
                f"Got {getattr(tensor, 'dtype', type(tensor).__name__)} for {key!r} instead."
            )
    if model is not None:
        check_model_params(model, name, params, func=func)
    params = {key: tensor.detach() for key, tensor in params.items()}
    bad = non_finite_names(params)
    if bad:
        raise ValueError(
            f"The '{name}' parameter of {func} must be finite. "
            f"Got NaN or infinite entries in {bad[0]!r} instead."
        )
    return params


def check_param_dicts(
    name: str, dicts: list, *, func: str, model: nn.Module | None = None
) -> list[dict[str, torch.Tensor]]:
    """:func:`check_param_dict` of every item of ``dicts`` (one per attack), scanning an
    object that several attacks share (the broadcast weights) once."""
    checked: dict[int, dict[str, torch.Tensor]] = {}
    for params in dicts:
        if id(params) not in checked:
            checked[id(params)] = check_param_dict(name, params, func=func, model=model)
    return [checked[id(params)] for params in dicts]


def check_same_layout(name_a: str, a: Mapping, name_b: str, b: Mapping, *, func: str) -> None:
    """Raise unless ``a`` and ``b`` have the same names, in the same order, and shapes."""
    if list(a) != list(b) or any(a[k].shape != b[k].shape for k in a):
        raise ValueError(
            f"The '{name_a}' and '{name_b}' parameters of {func} must have the same names, "
            f"order and shapes. Got {[(k, tuple(v.shape)) for k, v in a.items()]} and "
            f"{[(k, tuple(v.shape)) for k, v in b.items()]} instead."
        )


def check_model_params(model: nn.Module, name: str, params: Mapping, *, func: str) -> None:
    """Raise ValueError unless ``params`` holds exactly the model's parameters, each with
    its shape: the attack calls the model with these weights, and a tensor of another
    shape can broadcast through its layers and give a reconstruction of nothing."""
    expected = {n: tuple(p.shape) for n, p in model.named_parameters()}
    got = {n: tuple(t.shape) for n, t in params.items()}
    for n, shape in expected.items():
        if got.get(n) != shape:
            found = f"shape {got[n]}" if n in got else f"no such tensor (it has {list(got)})"
            raise ValueError(
                f"The '{name}' parameter of {func} must hold the model's parameter {n!r} of "
                f"shape {shape}. Got {found} instead."
            )
    extra = [n for n in got if n not in expected]
    if extra:
        raise ValueError(
            f"The '{name}' parameter of {func} must hold only the model's parameters "
            f"{list(expected)}. Got {extra[0]!r} too."
        )


def check_config(config, *, func: str) -> AttackConfig:
    if not isinstance(config, AttackConfig):
        raise ValueError(
            f"The 'config' parameter of {func} must be an AttackConfig. "
            f"Got {type(config).__name__} instead."
        )
    return config


def check_local_steps(local_steps, client_lr, *, func: str) -> tuple[int, float]:
    """``(local_steps, client_lr)``; the client's learning rate is needed from 2 steps on."""
    local_steps = check_int("local_steps", local_steps, func=func, low=1)
    if local_steps == 1 and client_lr is None:
        return 1, 0.0
    return local_steps, check_lr("client_lr", client_lr, func=func)


def check_batch_shape(model: nn.Module, batch_shape, *, func: str) -> tuple[int, ...]:
    """``(B, C, H, W)`` of positive ints, matching ``model.input_shape`` when it has one."""
    ok = isinstance(batch_shape, tuple | list) and len(batch_shape) == 4
    ok = ok and all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in batch_shape)
    expected = getattr(model, "input_shape", None)
    if ok and expected is not None and tuple(batch_shape[1:]) != tuple(expected):
        ok = False
    if not ok:
        want = "(B, C, H, W)" if expected is None else f"(B, {', '.join(map(str, expected))})"
        raise ValueError(
            f"The 'batch_shape' parameter of {func} must be a tuple {want} of positive "
            f"integers. Got {batch_shape!r} instead."
        )
    return tuple(batch_shape)


def check_input_channels(config, batch_shape: tuple[int, ...], *, func: str) -> None:
    """``config.input_mean`` (and ``input_std``, of its length) empty, or of length 1 or
    ``C = batch_shape[1]``: one mean and std per channel of the images."""
    count = len(config.input_mean)
    if count not in (0, 1, batch_shape[1]):
        raise ValueError(
            f"The 'config.input_mean' parameter of {func} must have 1 or {batch_shape[1]} "
            f"entries (the images' channels). Got {count} instead."
        )


def check_num_classes(model: nn.Module, num_classes, *, func: str) -> int:
    """``num_classes`` >= 2, equal to ``model.num_classes`` when the model records it (a
    one-hot of another width reaches the loss as a shape error deep in torch)."""
    expected = getattr(model, "num_classes", None)
    if expected is None:
        return check_int("num_classes", num_classes, func=func, low=2)
    return check_int("num_classes", num_classes, func=func, low=expected, high=expected)


def check_sequence(name: str, value, *, func: str, what: str) -> int:
    """Length of ``value``, which must be a non-empty sequence of ``what`` (one per
    attack), not a single mapping."""
    if isinstance(value, Mapping) or not isinstance(value, Sequence):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a sequence of {what}, one per "
            f"attack. Got {type(value).__name__} instead."
        )
    return check_int(f"len({name})", len(value), func=func, low=1)


def per_attack(name: str, value, count: int, *, func: str, single: type | tuple) -> list:
    """``value`` repeated ``count`` times when it is one ``single`` item (or None), else
    as a list of ``count`` items, one per attack."""
    if value is None or isinstance(value, single):
        return [value] * count
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != count:
        raise ValueError(
            f"The '{name}' parameter of {func} must be one value or a sequence of {count} "
            f"(one per attack). Got {type(value).__name__} instead."
        )
    return list(value)
