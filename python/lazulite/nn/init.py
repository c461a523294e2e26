"""Parameter initialisers, as ``mlx.nn.init``: each returns a function that takes an
array and returns a new array of its shape (``dtype`` as given)."""

import math
from typing import Callable, Literal

import lazulite.core as mx


def constant(value: float, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Fills with ``value``."""

    def initializer(a):
        return mx.full(a.shape, value, dtype=dtype)

    return initializer


def normal(mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Samples from a normal distribution of ``mean`` and ``std``."""

    def initializer(a):
        return mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)

    return initializer


def uniform(low: float = 0.0, high: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Samples uniformly from ``[low, high)``."""

    def initializer(a):
        return mx.random.uniform(low, high, a.shape, dtype=dtype)

    return initializer


def identity(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """The identity matrix (for square 2-D arrays)."""

    def initializer(arr):
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"The input array must be a square matrix but got shape {arr.shape}.")
        return mx.eye(n=arr.shape[0], dtype=dtype)

    return initializer


def _fan_in_fan_out(x):
    """Fan-in (last axis) and fan-out (first axis), each times the receptive field
    (product of the axes between) for arrays of more than 2 dimensions."""
    if x.ndim < 2:
        raise ValueError(
            f"Glorot / He initialization requires at least 2 dimensional input but input with {x.ndim} dimensions."
        )
    receptive_field = math.prod(x.shape[1:-1])
    return x.shape[-1] * receptive_field, x.shape[0] * receptive_field


def glorot_normal(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, float], mx.array]:
    r"""Normal with :math:`\sigma = \gamma \sqrt{2 / (\text{fan\_in} + \text{fan\_out})}`;
    the returned function takes ``(array, gain=1.0)``."""

    def initializer(a, gain: float = 1.0):
        fan_in, fan_out = _fan_in_fan_out(a)
        std = gain * math.sqrt(2.0 / (fan_in + fan_out))
        return mx.random.normal(shape=a.shape, dtype=dtype) * std

    return initializer


def glorot_uniform(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, float], mx.array]:
    r"""Uniform on :math:`[-\sigma, \sigma]`,
    :math:`\sigma = \gamma \sqrt{6 / (\text{fan\_in} + \text{fan\_out})}`; the returned
    function takes ``(array, gain=1.0)``."""

    def initializer(a, gain: float = 1.0):
        fan_in, fan_out = _fan_in_fan_out(a)
        limit = gain * math.sqrt(6.0 / (fan_in + fan_out))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def he_normal(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, Literal["fan_in", "fan_out"], float], mx.array]:
    r"""Normal with :math:`\sigma = \gamma / \sqrt{\text{fan}}`; the returned function
    takes ``(array, mode="fan_in", gain=1.0)``."""

    def initializer(a, mode: Literal["fan_in", "fan_out"] = "fan_in", gain: float = 1.0):
        fan_in, fan_out = _fan_in_fan_out(a)
        if mode == "fan_in":
            fan = fan_in
        elif mode == "fan_out":
            fan = fan_out
        else:
            raise ValueError(f"Invalid mode: {mode}. Valid modes are: fan_in, fan_out")
        std = gain / math.sqrt(fan)
        return mx.random.normal(shape=a.shape, dtype=dtype) * std

    return initializer


def he_uniform(dtype: mx.Dtype = mx.float32) -> Callable[[mx.array, Literal["fan_in", "fan_out"], float], mx.array]:
    r"""Uniform on :math:`[-\sigma, \sigma]`, :math:`\sigma = \gamma \sqrt{3 / \text{fan}}`;
    the returned function takes ``(array, mode="fan_in", gain=1.0)``."""

    def initializer(a, mode: Literal["fan_in", "fan_out"] = "fan_in", gain: float = 1.0):
        fan_in, fan_out = _fan_in_fan_out(a)
        if mode == "fan_in":
            fan = fan_in
        elif mode == "fan_out":
            fan = fan_out
        else:
            raise ValueError(f"Invalid mode: {mode}. Valid modes are: fan_in, fan_out")
        limit = gain * math.sqrt(3.0 / fan)
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def orthogonal(gain: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """A random orthogonal matrix times ``gain``, of the input's 2-D shape: rows (or
    columns, whichever are fewer) are orthonormal. Taken from the Q of a QR of a square
    standard normal matrix, signs fixed by R's diagonal so the distribution is uniform."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError(f"Orthogonal initialization requires a 2D array but got a {a.ndim}D array.")
        rows, cols = a.shape
        n = max(rows, cols)
        q, r = mx.linalg.qr(mx.random.normal(shape=(n, n)), stream=mx.cpu)
        q = q * mx.sign(mx.diag(r))
        return (q[:rows, :cols] * gain).astype(dtype)

    return initializer


def sparse(sparsity: float, mean: float = 0.0, std: float = 1.0, dtype: mx.Dtype = mx.float32) -> Callable[[mx.array], mx.array]:
    """Normal samples (``mean``, ``std``) with ``ceil(sparsity * columns)`` random
    entries of every row set to zero (Martens' sparse initialisation, 2010)."""

    def initializer(a: mx.array) -> mx.array:
        if a.ndim != 2:
            raise ValueError("Only tensors with 2 dimensions are supported")
        rows, cols = a.shape
        zeros_per_row = int(math.ceil(sparsity * cols))
        # A random permutation of the columns per row: the first `zeros_per_row` are zeroed.
        columns = mx.argsort(mx.random.uniform(shape=a.shape), axis=1)
        out = mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)
        out[mx.arange(rows).reshape(rows, 1), columns[:, :zeros_per_row]] = 0
        return out

    return initializer
