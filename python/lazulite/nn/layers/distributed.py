"""Tensor-parallel layers over ``lazulite.core.distributed``, as ``mlx.nn.layers.distributed``.

Two ways to split a linear layer ``y = x W^T + b`` across the ``N`` processes of a group:

- *all-to-sharded*: each process holds ``1/N`` of the output features (rows of ``W``)
  and computes that slice of ``y`` from the full ``x``;
- *sharded-to-all*: each process holds ``1/N`` of the input features (columns of ``W``),
  multiplies its slice of ``x`` and the partial products are summed over the group, so
  every process ends with the full ``y``.

Chaining an all-to-sharded layer into a sharded-to-all one (as in a transformer's MLP)
needs one ``all_sum`` per pair. ``shard_linear`` builds these from ordinary (or
quantized) linear layers; ``shard_inplace`` shards a module's parameters where they are;
``fully_shard`` keeps only a shard of every parameter on each process and gathers them
for the forward pass.
"""

import math
from functools import lru_cache
from typing import Callable, Optional, Union

import lazulite.core as mx
from lazulite.utils import tree_flatten, tree_map_with_path, tree_unflatten

from .base import Module
from .linear import Linear

_SHARDINGS = ("all-to-sharded", "sharded-to-all")


@lru_cache
def sum_gradients(group):
    """A function that returns its input unchanged and, in the backward pass, sums the
    cotangent over ``group``: put it where a replicated activation enters per-process
    computation, so each process gets the gradient of the whole group's work."""
    if group.size() == 1:
        return lambda x: x

    @mx.custom_function
    def identity(x):
        return x

    @identity.vjp
    def identity_vjp(x, cotangent, output):
        return mx.distributed.all_sum(cotangent, group=group)

    return identity


def _pieces(weight, segments, axis):
    """``weight`` split along ``axis`` into ``segments`` equal parts, or at the given
    indices, or at the given fractions of the axis."""
    if isinstance(segments, int) or isinstance(segments[0], int):
        return mx.split(weight, segments, axis=axis)
    n = weight.shape[axis]
    return mx.split(weight, [int(f * n) for f in segments], axis=axis)


def _shard(parameters, predicate, group=None):
    """A copy of the ``parameters`` tree in which every array the ``predicate`` names a
    sharding axis for is cut down to this process's part.

    ``predicate(path, array)`` returns ``None`` (keep the array whole), an axis, or
    ``(axis, segments)`` for arrays that are several matrices side by side (a fused QKV
    projection has 3): each segment is split across the group separately."""
    group = group or mx.distributed.init()
    size, rank = group.size(), group.rank()

    def shard_one(path, value):
        if not isinstance(value, mx.array):
            return value
        choice = predicate(path, value)
        if choice is None:
            return value
        if isinstance(choice, int):
            axis, segments = choice, 1
        elif isinstance(choice, tuple):
            axis, segments = choice
        else:
            raise ValueError("The sharding function should return int or tuple[int, list]")
        mine = [_pieces(part, size, axis)[rank] for part in _pieces(value, segments, axis)]
        return mx.contiguous(mx.concatenate(mine, axis=axis))

    return tree_map_with_path(shard_one, parameters)


def _all_to_sharded(segments):
    def predicate(path, weight):
        if path.endswith("bias"):
            return -1, segments
        return max(weight.ndim - 2, 0), segments

    return predicate


def _sharded_to_all(segments):
    def predicate(path, weight):
        if path.endswith("bias"):
            return None
        return -1, segments

    return predicate


def _predicate(sharding, segments):
    if sharding not in _SHARDINGS:
        raise ValueError(
            f"Sharding type sharding={sharding!r} not supported, "
            "choose one of 'all-to-sharded' or 'sharded-to-all'"
        )
    return _all_to_sharded(segments) if sharding == "all-to-sharded" else _sharded_to_all(segments)


def shard_inplace(
    module: Module,
    sharding: Union[str, Callable],
    *,
    segments: Union[int, list] = 1,
    group: Optional[mx.distributed.Group] = None,
):
    """Replace ``module``'s parameters by this process's shard of them.

    The module's code is unchanged, so it must itself communicate (e.g. call
    ``all_sum``) for the sharded computation to be right.

    Args:
        module (Module): The module whose parameters are sharded in place.
        sharding (str or callable): ``"all-to-sharded"``, ``"sharded-to-all"``, or a
            function ``(path, array) -> None | axis | (axis, segments)``.
        segments (int or list): Segments for the string shardings. Default: ``1``.
        group (Group, optional): The group to shard across. Default: the global group.
    """
    if isinstance(sharding, str):
        sharding = _predicate(sharding, segments)
    module.update(_shard(module.parameters(), sharding, group))


def shard_linear(
    module: Module,
    sharding: str,
    *,
    segments: Union[int, list] = 1,
    group: Optional[mx.distributed.Group] = None,
):
    """A new sharded linear layer holding this process's part of ``module``'s
    parameters and communicating in its forward or backward pass; ``module`` itself is
    left as it was.

    Args:
        module (Module): A ``Linear`` or ``QuantizedLinear`` layer.
        sharding (str): ``"all-to-sharded"`` or ``"sharded-to-all"``.
        segments (int or list): The segments of fused weights. Default: ``1``.
        group (Group, optional): The group to shard across. Default: the global group.
    """
    _predicate(sharding, segments)
    if isinstance(module, Linear):
        cls = AllToShardedLinear if sharding == "all-to-sharded" else ShardedToAllLinear
        return cls.from_linear(module, segments=segments, group=group)
    cls = QuantizedAllToShardedLinear if sharding == "all-to-sharded" else QuantizedShardedToAllLinear
    return cls.from_quantized_linear(module, segments=segments, group=group)


def _uniform(scale, shape):
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


def _check_divides(dims, size, what):
    if dims % size != 0:
        if what == "output":
            raise ValueError(f"Cannot shard the output of size {dims} across {size} devices.")
        raise ValueError(f"The input of size {dims} cannot be sharded across {size} devices.")


class AllToShardedLinear(Module):
    """A linear layer whose output features are split across the group: each process
    computes its slice of the output from the full input, and the gradient of the input
    is summed over the group.

    Args:
        input_dims (int): Input features.
        output_dims (int): Output features of the whole layer (divisible by the group size).
        bias (bool, optional): Whether to add a bias. Default: ``True``.
        group (Group, optional): The group to shard across. Default: the global group.
    """

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True, group=None):
        super().__init__()
        self.group = group or mx.distributed.init()
        size = self.group.size()
        _check_divides(output_dims, size, "output")
        scale = math.sqrt(1.0 / input_dims)
        self.weight = _uniform(scale, (output_dims // size, input_dims))
        if bias:
            self.bias = _uniform(scale, (output_dims // size,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return f"input_dims={in_dims}, output_dims={out_dims * self.group.size()}, bias={'bias' in self}"

    def __call__(self, x):
        x = sum_gradients(self.group)(x)
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    @classmethod
    def from_linear(cls, linear_layer, *, segments=1, group=None):
        """This process's shard of ``linear_layer``."""
        group = group or mx.distributed.init()
        output_dims, input_dims = linear_layer.weight.shape
        layer = cls(input_dims, output_dims, "bias" in linear_layer, group)
        layer.update(_shard(linear_layer.parameters(), _all_to_sharded(segments), group))
        return layer


class ShardedToAllLinear(Module):
    """A linear layer whose input features are split across the group: each process
    multiplies its slice of the input, the partial results are summed over the group and
    every process gets the full output.

    Args:
        input_dims (int): Input features of the whole layer (divisible by the group size).
        output_dims (int): Output features.
        bias (bool, optional): Whether to add a bias. Default: ``True``.
        group (Group, optional): The group to shard across. Default: the global group.
    """

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True, group=None):
        super().__init__()
        self.group = group or mx.distributed.init()
        size = self.group.size()
        _check_divides(input_dims, size, "input")
        scale = math.sqrt(1.0 / input_dims)
        self.weight = _uniform(scale, (output_dims, input_dims // size))
        if bias:
            self.bias = _uniform(scale, (output_dims,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return f"input_dims={in_dims * self.group.size()}, output_dims={out_dims}, bias={'bias' in self}"

    def __call__(self, x):
        x = mx.distributed.all_sum(x @ self["weight"].T, group=self.group)
        if "bias" in self:
            x = x + self["bias"]
        return x

    @classmethod
    def from_linear(cls, linear_layer, *, segments=1, group=None):
        """This process's shard of ``linear_layer``."""
        group = group or mx.distributed.init()
        output_dims, input_dims = linear_layer.weight.shape
        layer = cls(input_dims, output_dims, "bias" in linear_layer, group)
        layer.update(_shard(linear_layer.parameters(), _sharded_to_all(segments), group))
        return layer


class _QuantizedSharded(Module):
    """What the two quantized sharded layers share: a frozen quantized weight."""

    def __init__(self, shape, input_dims, bias_dims, group_size, bits, mode, group):
        super().__init__()
        self.group_size, self.bits, self.mode = group_size, bits, mode
        self.group = group
        weight = _uniform(math.sqrt(1.0 / input_dims), shape)
        self.weight, self.scales, *biases = mx.quantize(weight, group_size, bits, mode=mode)
        self.biases = biases[0] if biases else None
        if bias_dims is not None:
            self.bias = mx.zeros((bias_dims,))
        self.freeze()

    def unfreeze(self, *args, **kwargs):
        """Unfreeze sub-modules; the quantized parameters stay frozen."""
        super().unfreeze(*args, **kwargs)
        self.freeze(recurse=False)

    def _product(self, x):
        return mx.quantized_matmul(
            x,
            self["weight"],
            scales=self["scales"],
            biases=self.get("biases"),
            transpose=True,
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    def _describe(self, in_dims, out_dims):
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    @classmethod
    def from_quantized_linear(cls, quantized_linear_layer, *, segments=1, group=None):
        """This process's shard of ``quantized_linear_layer``."""
        group = group or mx.distributed.init()
        layer = quantized_linear_layer
        output_dims, packed = layer.weight.shape
        input_dims = packed * 32 // layer.bits
        sharded = cls(
            input_dims,
            output_dims,
            "bias" in layer,
            group_size=layer.group_size,
            bits=layer.bits,
            mode=getattr(layer, "mode", "affine"),
            group=group,
        )
        predicate = _all_to_sharded(segments) if cls._splits_output else _sharded_to_all(segments)
        sharded.update(_shard(layer.parameters(), predicate, group))
        return sharded


class QuantizedAllToShardedLinear(_QuantizedSharded):
    """The quantized form of :class:`AllToShardedLinear`; its parameters are frozen.

    Args:
        input_dims (int): Input features.
        output_dims (int): Output features of the whole layer.
        bias (bool, optional): Whether to add a bias. Default: ``True``.
        group_size (int, optional): Quantization group size. Default: ``64``.
        bits (int, optional): Bits per weight. Default: ``4``.
        mode (str, optional): Quantization mode. Default: ``"affine"``.
        group (Group, optional): The group to shard across. Default: the global group.
    """

    _splits_output = True

    def __init__(self, input_dims, output_dims, bias=True, group_size=64, bits=4, mode="affine", group=None):
        group = group or mx.distributed.init()
        _check_divides(output_dims, group.size(), "output")
        rows = output_dims // group.size()
        super().__init__((rows, input_dims), input_dims, rows if bias else None, group_size, bits, mode, group)

    def _extra_repr(self) -> str:
        out_dims, packed = self.weight.shape
        return self._describe(packed * 32 // self.bits, out_dims * self.group.size())

    def __call__(self, x):
        x = self._product(sum_gradients(self.group)(x))
        if "bias" in self:
            x = x + self["bias"]
        return x


class QuantizedShardedToAllLinear(_QuantizedSharded):
    """The quantized form of :class:`ShardedToAllLinear`; its parameters are frozen.

    Args:
        input_dims (int): Input features of the whole layer.
        output_dims (int): Output features.
        bias (bool, optional): Whether to add a bias. Default: ``True``.
        group_size (int, optional): Quantization group size. Default: ``64``.
        bits (int, optional): Bits per weight. Default: ``4``.
        mode (str, optional): Quantization mode. Default: ``"affine"``.
        group (Group, optional): The group to shard across. Default: the global group.
    """

    _splits_output = False

    def __init__(self, input_dims, output_dims, bias=True, group_size=64, bits=4, mode="affine", group=None):
        group = group or mx.distributed.init()
        _check_divides(input_dims, group.size(), "input")
        shape = (output_dims, input_dims // group.size())
        super().__init__(shape, input_dims, output_dims if bias else None, group_size, bits, mode, group)

    def _extra_repr(self) -> str:
        out_dims, packed = self.weight.shape
        return self._describe(packed * 32 // self.bits * self.group.size(), out_dims)

    def __call__(self, x):
        x = mx.distributed.all_sum(self._product(x), group=self.group)
        if "bias" in self:
            x = x + self["bias"]
        return x


def _gather_parameters(group, full_shapes, compute_dtype):
    """A function from this process's parameter shards (each a slice along axis 0) to
    the full parameters, gathered in one ``all_gather``; its vjp reduce-scatters the
    cotangents, averaged over the group, back to the shards."""
    size = group.size()
    widths = [math.prod(s) // size for s in full_shapes]
    cuts = [sum(widths[: i + 1]) for i in range(len(widths) - 1)]

    def cast(x, dtype):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @mx.custom_function
    def gather(shards):
        flat = mx.concatenate([cast(s.reshape(1, -1), compute_dtype) for s in shards], axis=1)
        full = mx.distributed.all_gather(flat, group=group)
        return [p.reshape(s) for p, s in zip(mx.split(full, cuts, axis=1), full_shapes)]

    @gather.vjp
    def gather_vjp(shards, cotangents, outputs):
        flat = mx.concatenate([c.reshape(size, -1) for c in cotangents], axis=1)
        mine = mx.distributed.sum_scatter(flat, group=group) / size
        return [cast(p.reshape(s.shape), s.dtype) for p, s in zip(mx.split(mine, cuts, axis=1), shards)]

    return gather


class FullyShardedModule(Module):
    """``module`` with each of its parameters split along axis 0 across the group: each
    process stores (and its optimizer updates) only its shard. The forward pass gathers
    the full parameters; the backward pass reduce-scatters their gradients.

    Args:
        module (Module): The module to wrap; every parameter's first dimension must
            divide by the group size.
        group (Group, optional): The group to shard across. Default: the global group.
        compute_dtype (Dtype, optional): Dtype the gathered parameters are cast to for
            the forward pass. Default: ``None`` (their own).
    """

    def __init__(self, module: Module, group=None, compute_dtype=None):
        super().__init__()
        group = group or mx.distributed.init()
        size = group.size()
        flat = tree_flatten(module.filter_and_map(_shardable))
        for path, value in flat:
            if value.ndim == 0:
                raise ValueError(f"Cannot shard parameter '{path}' because it is a scalar.")
            if value.shape[0] % size != 0:
                raise ValueError(
                    f"Cannot shard parameter '{path}' of shape {value.shape} across {size} devices."
                )
        self.module = module
        self.group = group
        # Plain attributes, not tree entries: they are not parameters.
        object.__setattr__(self, "_paths", [p for p, _ in flat])
        self._gather = _gather_parameters(group, [v.shape for _, v in flat], compute_dtype)
        rank = group.rank()
        module.update(
            tree_unflatten([(p, mx.contiguous(mx.split(v, size, axis=0)[rank])) for p, v in flat]),
            strict=False,
        )

    def _extra_repr(self) -> str:
        return f"num_sharded_params={len(self._paths)}"

    def _gathered_call(self, fn, *args, **kwargs):
        shards = dict(tree_flatten(self.module.filter_and_map(_shardable)))
        mine = [shards[p] for p in self._paths]
        self.module.update(tree_unflatten(list(zip(self._paths, self._gather(mine)))), strict=False)
        try:
            return fn(*args, **kwargs)
        finally:
            self.module.update(tree_unflatten(list(zip(self._paths, mine))), strict=False)

    def __call__(self, *args, **kwargs):
        return self._gathered_call(self.module, *args, **kwargs)

    def as_linear(self, *args, **kwargs):
        """The wrapped module's ``as_linear`` (tied embeddings) with the full parameters."""
        return self._gathered_call(self.module.as_linear, *args, **kwargs)


def _shardable(module, key, value):
    return not isinstance(value, FullyShardedModule) and Module.valid_parameter_filter(module, key, value)


def fully_shard(module: Module, *, group=None, compute_dtype=None) -> Module:
    """``module`` wrapped in a :class:`FullyShardedModule`; ``module`` itself in a group
    of one, when it is wrapped already, or when it has no parameters."""
    group = group or mx.distributed.init()
    if group.size() == 1 or isinstance(module, FullyShardedModule):
        return module
    wrapped = FullyShardedModule(module, group=group, compute_dtype=compute_dtype)
    return wrapped if wrapped._paths else module
