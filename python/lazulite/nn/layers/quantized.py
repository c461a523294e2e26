"""Quantized layers and the model-walking ``quantize``, as in ``mlx.nn``, in MLX's four
modes: ``"affine"`` (scales and biases) and ``"mxfp4"``, ``"mxfp8"``, ``"nvfp4"`` (uint8
scales, no biases: the layers' ``biases`` is ``None``).
"""

import math
from typing import Callable, Optional, Union

import lazulite.core as mx
from lazulite.utils import tree_map_with_path

from .base import Module

_MODE_DEFAULTS = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}


def _defaults_for_mode(mode, group_size, bits):
    """``(group_size, bits)`` with the mode's defaults for those not given."""
    if mode not in _MODE_DEFAULTS:
        raise ValueError(
            f"Invalid quantization mode '{mode}'. Valid modes are: {', '.join(_MODE_DEFAULTS)}."
        )
    default_group_size, default_bits = _MODE_DEFAULTS[mode]
    return group_size or default_group_size, bits or default_bits


def quantize(
    model: Module,
    group_size: int = None,
    bits: int = None,
    *,
    mode: str = "affine",
    quantize_input: bool = False,
    class_predicate: Optional[Callable[[str, Module], Union[bool, dict]]] = None,
):
    """Quantize the leaf modules of ``model`` in place.

    By default every leaf module with a ``to_quantized()`` method (``Linear`` and
    ``Embedding``) is replaced by its quantized version.

    Args:
        model (Module): The model whose leaf modules may be quantized.
        group_size (int, optional): The quantization group size. Default: ``None``
            (the mode's default, 64 for ``"affine"``).
        bits (int, optional): Bits per weight. Default: ``None`` (4 for ``"affine"``).
        mode (str): The quantization mode. Default: ``"affine"``.
        quantize_input (bool): Also quantize activations (not supported by lazulite).
            Default: ``False``.
        class_predicate (callable, optional): Receives a module's path and the module and
            returns ``True``, ``False`` or a dict of keyword arguments for
            ``to_quantized``. Default: quantize what has ``to_quantized``.
    """
    class_predicate = class_predicate or (lambda _, m: hasattr(m, "to_quantized"))

    def maybe_quantize(path, m):
        choice = class_predicate(path, m)
        if not choice:
            return m
        if not hasattr(m, "to_quantized"):
            raise ValueError(f"Unable to quantize model of type {type(m)}")
        if isinstance(choice, bool):
            kwargs = {"group_size": group_size, "bits": bits, "mode": mode}
            if quantize_input:
                kwargs["quantize_input"] = quantize_input
            return m.to_quantized(**kwargs)
        if isinstance(choice, dict):
            if "quantize_input" in choice and not choice["quantize_input"]:
                choice.pop("quantize_input")
            return m.to_quantized(**choice)
        raise ValueError(
            "``class_predicate`` must return a bool or a dict of parameters to pass to "
            "``to_quantized``"
        )

    leaves = tree_map_with_path(maybe_quantize, model.leaf_modules(), is_leaf=Module.is_module)
    model.update_modules(leaves)


class QuantizedEmbedding(Module):
    """An :obj:`Embedding` whose table is quantized (``weight``, ``scales``, ``biases``).
    Its parameters are frozen.

    Args:
        num_embeddings (int): The vocabulary size.
        dims (int): The size of each embedding.
        group_size (int, optional): See :func:`lazulite.core.quantize`. Default: ``None``.
        bits (int, optional): See :func:`lazulite.core.quantize`. Default: ``None``.
        mode (str): The quantization mode. Default: ``"affine"``.
    """

    def __init__(
        self,
        num_embeddings: int,
        dims: int,
        group_size: int = None,
        bits: int = None,
        mode: str = "affine",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        weight = mx.random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))
        self.weight, self.scales, *biases = mx.quantize(weight, self.group_size, self.bits, mode=mode)
        self.biases = biases[0] if biases else None
        self.num_embeddings = num_embeddings
        self.dims = dims
        self.freeze()

    def __call__(self, x):
        biases = self.get("biases")
        return mx.dequantize(
            self["weight"][x],
            scales=self["scales"][x],
            biases=biases[x] if biases is not None else None,
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    def as_linear(self, x):
        """``x @ W.T`` with the quantized table (tied input and output embeddings)."""
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

    def _extra_repr(self):
        return (
            f"{self.num_embeddings}, {self.dims}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    @classmethod
    def from_embedding(
        cls, embedding_layer: Module, group_size: int = None, bits: int = None, mode: str = "affine"
    ):
        """A :obj:`QuantizedEmbedding` from an :obj:`Embedding` layer."""
        num_embeddings, dims = embedding_layer.weight.shape
        ql = cls(num_embeddings, dims, group_size, bits, mode=mode)
        ql.weight, ql.scales, *biases = mx.quantize(embedding_layer.weight, ql.group_size, ql.bits, mode=mode)
        ql.biases = biases[0] if biases else None
        return ql


class QuantizedLinear(Module):
    """A :obj:`Linear` whose weight is quantized: ``y = x W^T + b`` computed with
    :func:`lazulite.core.quantized_matmul`. Its parameters are frozen.

    Args:
        input_dims (int): The size of the input features.
        output_dims (int): The size of the output features.
        bias (bool, optional): Whether to add a bias. Default: ``True``.
        group_size (int, optional): See :func:`lazulite.core.quantize`. Default: ``None``.
        bits (int, optional): See :func:`lazulite.core.quantize`. Default: ``None``.
        mode (str): The quantization mode. Default: ``"affine"``.
    """

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group_size: int = None,
        bits: int = None,
        mode: str = "affine",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        self.weight, self.scales, *biases = mx.quantize(weight, self.group_size, self.bits, mode=mode)
        self.biases = biases[0] if biases else None
        if bias:
            self.bias = mx.zeros((output_dims,))
        self.freeze()

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape
        in_dims = (in_dims * 32) // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    def __call__(self, x):
        x = mx.quantized_matmul(
            x,
            self["weight"],
            scales=self["scales"],
            biases=self.get("biases"),
            transpose=True,
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )
        if "bias" in self:
            x = x + self["bias"]
        return x

    @classmethod
    def from_linear(
        cls, linear_layer: Module, group_size: int = None, bits: int = None, mode: str = "affine"
    ):
        """A :obj:`QuantizedLinear` from a :obj:`Linear` layer."""
        output_dims, input_dims = linear_layer.weight.shape
        ql = cls(input_dims, output_dims, False, group_size, bits, mode=mode)
        ql.weight, ql.scales, *biases = mx.quantize(linear_layer.weight, ql.group_size, ql.bits, mode=mode)
        ql.biases = biases[0] if biases else None
        if "bias" in linear_layer:
            ql.bias = linear_layer.bias
        return ql


class QQLinear(Module):
    """A linear layer without bias whose input and weight are both rounded through a
    floating-point quantization mode before they are multiplied (:func:`lazulite.core.qqmm`).

    In training mode (the default) the weight is kept as floats, rounded on the fly, and
    receives gradients. In evaluation mode (``eval()``) it is stored quantized, with its
    ``scales``; ``train()`` turns it back into floats.

    Args:
        input_dims (int): The size of the input features.
        output_dims (int): The size of the output features.
        group_size (int, optional): See :func:`lazulite.core.quantize`. Default: ``None``
            (the mode's).
        bits (int, optional): See :func:`lazulite.core.quantize`. Default: ``None``.
        mode (str): ``"nvfp4"`` or ``"mxfp8"``. Default: ``"nvfp4"``.
    """

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        group_size: int = None,
        bits: int = None,
        mode: str = "nvfp4",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        self.weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        self._quantized = False

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape
        if self.weight.dtype == mx.uint32:
            in_dims = (in_dims * 32) // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    def quantize(self):
        """Store the weight quantized (what evaluation mode does)."""
        if not self._quantized:
            self.weight, self.scales = mx.quantize(self.weight, self.group_size, self.bits, mode=self.mode)
            self._quantized = True

    def dequantize(self):
        """Store the weight as floats again (what training mode does)."""
        if self._quantized:
            self.weight = mx.dequantize(
                self.weight,
                scales=self.scales,
                group_size=self.group_size,
                bits=self.bits,
                mode=self.mode,
            )
            del self.scales
            self._quantized = False

    def _set_training_mode(self, mode: bool):
        super()._set_training_mode(mode)
        if mode:
            self.dequantize()
        else:
            self.quantize()

    def __call__(self, x):
        return mx.qqmm(
            x,
            self["weight"],
            scales=self.get("scales"),
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    @classmethod
    def from_linear(cls, linear_layer: Module, group_size: int = None, bits: int = None, mode: str = "nvfp4"):
        """A :obj:`QQLinear` from a :obj:`Linear` layer without bias, in the same training
        mode."""
        output_dims, input_dims = linear_layer.weight.shape
        if linear_layer.get("bias") is not None:
            raise NotImplementedError("QQLinear does not support bias yet.")
        ql = cls(input_dims, output_dims, group_size, bits, mode=mode)
        ql.weight = linear_layer.weight
        ql.train(linear_layer.training)
        return ql
