"""Affine layers, as in ``mlx.nn``."""

import math
from typing import Any, Optional

import lazulite.core as mx

from .base import Module
from .quantized import QQLinear, QuantizedLinear


class Identity(Module):
    """Returns its input unchanged (accepts and ignores any constructor arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def __call__(self, x):
        return x


class Linear(Module):
    r"""``y = x W^T + b`` with ``weight`` of shape ``(output_dims, input_dims)`` and
    ``bias`` of shape ``(output_dims,)``, both initialised from
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{input\_dims}}`."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input_dims)
        self.weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        if bias:
            self.bias = mx.random.uniform(low=-scale, high=scale, shape=(output_dims,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}"

    def __call__(self, x):
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    def to_quantized(
        self,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ):
        """A quantized version of this layer: a :obj:`QuantizedLinear` (the weight
        quantized), or with ``quantize_input`` a :obj:`QQLinear` (the input too; modes
        ``"nvfp4"`` and ``"mxfp8"``)."""
        if quantize_input:
            if mode not in ("nvfp4", "mxfp8"):
                raise ValueError(
                    f"Quantized activations are only supported for 'nvfp4' and 'mxfp8' modes, got {mode}."
                )
            return QQLinear.from_linear(self, group_size, bits, mode)
        return QuantizedLinear.from_linear(self, group_size, bits, mode)


class Bilinear(Module):
    r"""``y_i = x_1^T W_i x_2 + b_i`` with ``weight`` of shape
    ``(output_dims, input1_dims, input2_dims)``, initialised from
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{input1\_dims}}`."""

    def __init__(self, input1_dims: int, input2_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input1_dims)
        self.weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input2_dims, input1_dims))
        if bias:
            self.bias = mx.random.uniform(low=-scale, high=scale, shape=(output_dims,))

    def _extra_repr(self) -> str:
        out, in2, in1 = self.weight.shape
        return f"input1_dims={in1}, input2_dims={in2}, output_dims={out}, bias={'bias' in self}"

    def __call__(self, x1, x2):
        out, in2, in1 = self.weight.shape
        batch_shape = x1.shape[:-1]
        x1 = x1.reshape(-1, in1)
        x2 = x2.reshape(-1, 1, in2)
        w = self.weight.reshape(out * in2, in1)
        y = mx.sum((x1 @ w.T).reshape(-1, out, in2) * x2, axis=-1)
        if "bias" in self:
            y = y + self.bias
        return y.reshape(*batch_shape, out)
