"""Convolution layers over channels-last inputs, as in ``mlx.nn``: ``Conv1d`` (``NLC``),
``Conv2d`` (``NHWC``) and ``Conv3d`` (``NDHWC``); the transposed versions are in
``convolution_transpose``. The weight is ``(out_channels, *kernel_size, in_channels //
groups)`` drawn from :math:`\\mathcal{U}(-k, k)` with ``k = sqrt(1 / (in_channels // groups
* prod(kernel_size)))`` (the transposed layers use all ``in_channels``); the bias starts at
zero."""

import math
from typing import Union

import lazulite.core as mx

from .base import Module


def _tuple(value, n):
    return (value,) * n if isinstance(value, int) else value


class _Conv(Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups, bias):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError(
                f"The number of input channels ({in_channels}) must be "
                f"divisible by the number of groups ({groups})"
            )
        scale = math.sqrt(1 / (in_channels // groups * math.prod(kernel_size)))
        self.weight = mx.random.uniform(
            low=-scale, high=scale, shape=(out_channels, *kernel_size, in_channels // groups)
        )
        if bias:
            self.bias = mx.zeros((out_channels,))

    def _with_bias(self, y):
        return y + self.bias if "bias" in self else y


class Conv1d(_Conv):
    """1-D convolution over ``(N, L, C_in)`` inputs.

    Args:
        in_channels (int): Input channels.
        out_channels (int): Output channels.
        kernel_size (int): Kernel length.
        stride (int): Stride. Default: ``1``.
        padding (int): Zeros added on both sides. Default: ``0``.
        dilation (int): Kernel dilation. Default: ``1``.
        groups (int): Channel groups. Default: ``1``.
        bias (bool): Learn an additive bias. Default: ``True``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        super().__init__(in_channels, out_channels, (kernel_size,), groups, bias)
        self.padding = padding
        self.dilation = dilation
        self.stride = stride
        self.groups = groups

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"groups={self.groups}, bias={'bias' in self}"
        )

    def __call__(self, x):
        return self._with_bias(mx.conv1d(x, self.weight, self.stride, self.padding, self.dilation, self.groups))


class Conv2d(_Conv):
    """2-D convolution over ``(N, H, W, C_in)`` inputs.

    Args:
        in_channels (int): Input channels.
        out_channels (int): Output channels.
        kernel_size (int or tuple): Kernel size.
        stride (int or tuple): Stride. Default: ``1``.
        padding (int or tuple): Zeros added on both sides. Default: ``0``.
        dilation (int or tuple): Kernel dilation. Default: ``1``.
        groups (int): Channel groups. Default: ``1``.
        bias (bool): Learn an additive bias. Default: ``True``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        kernel_size, stride, padding = (_tuple(v, 2) for v in (kernel_size, stride, padding))
        super().__init__(in_channels, out_channels, kernel_size, groups, bias)
        self.padding = padding
        self.stride = stride
        self.dilation = dilation
        self.groups = groups

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1:3]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"groups={self.groups}, bias={'bias' in self}"
        )

    def __call__(self, x):
        return self._with_bias(mx.conv2d(x, self.weight, self.stride, self.padding, self.dilation, self.groups))


class Conv3d(_Conv):
    """3-D convolution over ``(N, D, H, W, C_in)`` inputs (no groups, as in MLX).

    Args:
        in_channels (int): Input channels.
        out_channels (int): Output channels.
        kernel_size (int or tuple): Kernel size.
        stride (int or tuple): Stride. Default: ``1``.
        padding (int or tuple): Zeros added on both sides. Default: ``0``.
        dilation (int or tuple): Kernel dilation. Default: ``1``.
        bias (bool): Learn an additive bias. Default: ``True``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        bias: bool = True,
    ):
        kernel_size, stride, padding = (_tuple(v, 3) for v in (kernel_size, stride, padding))
        super().__init__(in_channels, out_channels, kernel_size, 1, bias)
        self.padding = padding
        self.stride = stride
        self.dilation = dilation

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1:4]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        return self._with_bias(mx.conv3d(x, self.weight, self.stride, self.padding, self.dilation))
