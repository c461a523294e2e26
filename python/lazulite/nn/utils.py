"""``value_and_grad`` and ``checkpoint`` over a model's parameters, and the gradient
helpers of data-parallel training (``average_gradients``, ``clip_grad_norm_sharded``), as
in ``mlx.nn``."""

from functools import wraps
from typing import Any, Callable, Optional

import lazulite.core as mx
from lazulite.utils import tree_flatten, tree_map, tree_reduce, tree_unflatten

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
    return _over_parameters(model, fn, mx.value_and_grad)


def checkpoint(module: Module, fn: Optional[Callable] = None):
    """``fn`` (the module itself by default) with gradient checkpointing: its
    intermediate values are not kept for the backward pass but computed again there,
    with respect to the module's trainable parameters as well as ``fn``'s inputs.

    Values and gradients are those of ``fn``; only the memory a gradient holds changes.

    >>> import lazulite.core as mx, lazulite.nn as nn
    >>> layer = nn.Linear(2, 2)
    >>> saving = nn.utils.checkpoint(layer)
    >>> x = mx.ones((3, 2))
    >>> bool(mx.array_equal(saving(x), layer(x)))
    True
    """
    # The module itself, not its bound __call__: a __call__ replaced later still runs.
    return _over_parameters(module, module if fn is None else fn, mx.checkpoint)


def _over_parameters(module: Module, fn: Callable, transform: Callable):
    """``fn`` under ``transform`` taken as a function of ``module``'s trainable
    parameters (first) and of its own arguments, then called with the parameters the
    module holds: inside, the module is updated with the ones being transformed."""

    def with_parameters(parameters, *args, **kwargs):
        module.update(parameters)
        return fn(*args, **kwargs)

    transformed = transform(with_parameters)

    @wraps(fn)
    def wrapped(*args, **kwargs):
        return transformed(module.trainable_parameters(), *args, **kwargs)

    return wrapped


def _buckets(sizes, itemsize, bucket_bytes):
    """Consecutive index groups whose arrays add up to at least ``bucket_bytes`` each
    (the last may be smaller)."""
    buckets, current, filled = [], [], 0
    for i, n in enumerate(sizes):
        current.append(i)
        filled += n * itemsize
        if filled >= bucket_bytes:
            buckets.append(current)
            current, filled = [], 0
    if current:
        buckets.append(current)
    return buckets


def average_gradients(
    gradients: Any,
    group: Optional[mx.distributed.Group] = None,
    all_reduce_size: int = 32 * 1024**2,
    communication_stream: Optional[mx.Stream] = None,
):
    """The mean of ``gradients`` (a tree of arrays, shaped alike on every process) over
    the processes of ``group``.

    Small arrays are flattened and joined into buckets of about ``all_reduce_size``
    bytes, one ``all_sum`` per bucket, since each collective has a fixed cost.

    Args:
        gradients (Any): The tree of gradients.
        group (Group, optional): The processes to average over. Default: the global group.
        all_reduce_size (int): Bucket size in bytes; ``0`` or less sums each array on
            its own. Default: 32 MiB.
        communication_stream (Stream, optional): Accepted for MLX compatibility
            (lazulite has one stream). Default: ``None``.

    >>> import lazulite.core as mx, lazulite.nn as nn
    >>> nn.average_gradients({"w": mx.ones((2,))})["w"].tolist()  # one process: unchanged
    [1.0, 1.0]
    """
    group = group or mx.distributed.init()
    size = group.size()
    if size == 1:
        return gradients

    def mean(x):
        return mx.distributed.all_sum(x, group=group, stream=communication_stream) / size

    flat = tree_flatten(gradients)
    if all_reduce_size <= 0 or not flat:
        return tree_map(mean, gradients)
    dtypes = {a.dtype for _, a in flat}
    if len(dtypes) > 1:
        return tree_map(mean, gradients)
    sizes = [a.size for _, a in flat]
    averaged = []
    for bucket in _buckets(sizes, flat[0][1].itemsize, all_reduce_size):
        joined = mean(mx.concatenate([flat[i][1].reshape(-1) for i in bucket]))
        cuts = [sum(sizes[j] for j in bucket[: k + 1]) for k in range(len(bucket) - 1)]
        for i, part in zip(bucket, mx.split(joined, cuts)):
            averaged.append((flat[i][0], part.reshape(flat[i][1].shape)))
    return tree_unflatten(averaged)


def clip_grad_norm_sharded(gradients: Any, max_norm: float, group: Optional[mx.distributed.Group] = None):
    """``(clipped, total_norm)`` for gradients sharded across ``group`` (each process
    holds a part, as with ``fully_shard``): the global L2 norm sums every process's
    squares, and each shard is scaled so the global norm is at most ``max_norm``.

    >>> import lazulite.core as mx, lazulite.nn as nn
    >>> clipped, norm = nn.utils.clip_grad_norm_sharded({"w": mx.array([3.0, 4.0])}, 1.0)
    >>> round(norm.item(), 4)
    5.0
    """
    local = tree_reduce(lambda total, g: total + g.square().sum(), gradients, 0.0)
    total_norm = mx.sqrt(mx.distributed.all_sum(local, group=group))
    normalizer = mx.minimum(max_norm / (total_norm + 1e-6), 1.0)
    return tree_map(lambda g: g * normalizer, gradients), total_norm
