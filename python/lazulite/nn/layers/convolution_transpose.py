"""Transposed convolution layers over channels-last inputs, as in ``mlx.nn``:
``ConvTranspose1d``, ``ConvTranspose2d`` and ``ConvTranspose3d``, with the weights and
bias of the convolution layers (``convolution``)."""

from typing import Union

import lazulite.core as mx

from .convolution import _Conv, _tuple


class _ConvTranspose(_Conv):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, bias):
        super().__init__(in_channels, out_channels, kernel_size, 1, bias)
        self.padding = padding
        self.dilation = dilation
        self.stride = stride
        self.output_padding = output_padding

    def _extra_repr(self):
        n = self.weight.ndim - 2
        kernel = self.weight.shape[1] if n == 1 else self.weight.shape[1 : 1 + n]
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, "
            f"kernel_size={kernel}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"output_padding={self.output_padding}, "
            f"bias={'bias' in self}"
        )

    def _transpose(self, op, x):
        y = op(x, self.weight, self.stride, self.padding, self.dilation, self.output_padding)
        return self._with_bias(y)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution over ``(N, L, C_in)`` inputs.

    Args:
        in_channels (int): Input channels.
        out_channels (int): Output channels.
        kernel_size (int): Kernel length.
        stride (int): Stride. Default: ``1``.
        padding (int): Padding. Default: ``0``.
        dilation (int): Kernel dilation. Default: ``1``.
        output_padding (int): Size added to one side of the output. Default: ``0``.
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
        output_padding: int = 0,
        bias: bool = True,
    ):
        super().__init__(in_channels, out_channels, (kernel_size,), stride, padding, dilation, output_padding, bias)

    def __call__(self, x):
        return self._transpose(mx.conv_transpose1d, x)


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution over ``(N, H, W, C_in)`` inputs.

    Args:
        in_channels (int): Input channels.
        out_channels (int): Output channels.
        kernel_size (int or tuple): Kernel size.
        stride (int or tuple): Stride. Default: ``1``.
        padding (int or tuple): Padding. Default: ``0``.
        dilation (int or tuple): Kernel dilation. Default: ``1``.
        output_padding (int or tuple): Size added to one side of the output. Default: ``0``.
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
        output_padding: Union[int, tuple] = 0,
        bias: bool = True,
    ):
        kernel_size, stride, padding, output_padding = (
            _tuple(v, 2) for v in (kernel_size, stride, padding, output_padding)
        )
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, bias)

    def __call__(self, x):
        return self._transpose(mx.conv_transpose2d, x)


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution over ``(N, D, H, W, C_in)`` inputs.

    Args:
        in_channels (int): Input channels.
        out_channels (int): Output channels.
        kernel_size (int or tuple): Kernel size.
        stride (int or tuple): Stride. Default: ``1``.
        padding (int or tuple): Padding. Default: ``0``.
        dilation (int or tuple): Kernel dilation. Default: ``1``.
        output_padding (int or tuple): Size added to one side of the output. Default: ``0``.
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
        output_padding: Union[int, tuple] = 0,
        bias: bool = True,
    ):
        kernel_size, stride, padding, output_padding = (
            _tuple(v, 3) for v in (kernel_size, stride, padding, output_padding)
        )
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, bias)

    def __call__(self, x):
        return self._transpose(mx.conv_transpose3d, x)
