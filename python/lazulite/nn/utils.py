"""``value_and_grad`` over a model's parameters, as ``mlx.nn.value_and_grad``."""

from functools import wraps
from typing import Callable

import lazulite.core as mx

from .layers.base import Module


def value_and_grad(model: Module, fn: Callable):
    """``fn``'s value and its gradient with respect to ``model.trainable_parameters()``.

    The returned function takes ``fn``'s arguments and returns ``(value, gradients)``,
    the gradients a tree shaped like the trainable parameters. Inside, the model is
    updated with the parameters being differentiated, so ``fn`` simply calls ``model``.

    >>> import lazulite.core as mx, lazulite.nn as nn
    >>> model = nn.Linear(2, 1)
    >>> loss_and_grad = nn.value_and_grad(model, lambda x: model(x).sum())
    >>> loss, grads = loss_and_grad(mx.ones((3, 2)))
    >>> sorted(grads)
    ['bias', 'weight']
    """

    def with_parameters(parameters, *args, **kwargs):
        model.update(parameters)
        return fn(*args, **kwargs)

    value_and_grad_fn = mx.value_and_grad(with_parameters)

    @wraps(fn)
    def wrapped(*args, **kwargs):
        return value_and_grad_fn(model.trainable_parameters(), *args, **kwargs)

    return wrapped
