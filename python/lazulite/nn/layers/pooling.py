"""Max and average pooling over the spatial axes of channels-last inputs
``(N, *spatial, C)``, as in ``mlx.nn``. Padding uses ``-inf`` for max pooling and 0
for average pooling (padded zeros count in the average, as in MLX)."""

from typing import Optional, Tuple, Union

import lazulite.core as mx

from .base import Module


def _per_axis(value, n, message):
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(message)
        return list(value)
    if not isinstance(value, int):
        raise ValueError(message)
    return [value] * n


def _windows(x, kernel_size, stride):
    """``x`` ``(N, *spatial, C)`` as ``(N, *out, C, *kernel_size)``: every window,
    built from strided slices so gradients flow through ordinary indexing."""
    if x.ndim < 3:
        raise ValueError(
            "To extract sliding windows at least 1 spatial dimension (3 total) is needed "
            f"but the input only has {x.ndim} dimensions."
        )
    for axis, (size, window, step) in enumerate(zip(x.shape[1:-1], kernel_size, stride), start=1):
        count = (size - window) // step + 1
        if count < 1:
            raise ValueError(f"[pooling] kernel size {window} is larger than the (padded) input size {size}.")
        prefix = (slice(None),) * axis
        x = mx.stack([x[prefix + (slice(i, i + step * (count - 1) + 1, step),)] for i in range(window)], axis=-1)
    return x


class _Pool(Module):
    def __init__(self, reduce, padding_value, dims, kernel_size, stride, padding):
        super().__init__()
        name = type(self).__name__
        count = "1 integer" if dims == 1 else f"{dims} integers"
        message = "[{}] '{}' must be an integer or a tuple containing " + count
        kernel_size = _per_axis(kernel_size, dims, message.format(name, "kernel_size"))
        stride = kernel_size if stride is None else _per_axis(stride, dims, message.format(name, "stride"))
        padding = _per_axis(padding, dims, message.format(name, "padding"))
        for label, values in (("kernel_size", kernel_size), ("stride", stride)):
            if any(v <= 0 for v in values):
                raise ValueError(f"[{name}] '{label}' must be positive but got {tuple(values)}.")
        if any(p < 0 for p in padding):
            raise ValueError(f"[{name}] 'padding' must be non-negative but got {tuple(padding)}.")
        self._reduce = reduce
        self._padding_value = padding_value
        self._kernel_size = kernel_size
        self._stride = stride
        self._padding = padding

    def _extra_repr(self):
        return f"kernel_size={tuple(self._kernel_size)}, stride={tuple(self._stride)}, padding={tuple(self._padding)}"

    def __call__(self, x):
        if any(self._padding):
            widths = [(0, 0)] + [(p, p) for p in self._padding] + [(0, 0)]
            x = mx.pad(x, widths, constant_values=self._padding_value)
        windows = _windows(x, self._kernel_size, self._stride)
        return self._reduce(windows, axis=tuple(range(-len(self._kernel_size), 0)))


def _pool_class(name, reduce, padding_value, dims):
    sizes = "int" if dims == 1 else f"tuple of {dims} ints"

    def __init__(
        self,
        kernel_size: Union[int, Tuple[int, ...]],
        stride: Optional[Union[int, Tuple[int, ...]]] = None,
        padding: Union[int, Tuple[int, ...]] = 0,
    ):
        _Pool.__init__(self, reduce, padding_value, dims, kernel_size, stride, padding)

    kind = "maximum" if reduce is mx.max else "mean"
    doc = (
        f"The {kind} over ``kernel_size`` windows ({sizes}) moved by ``stride`` (default: "
        f"``kernel_size``) over the {dims} spatial axes, after ``padding`` on both sides."
    )
    return type(name, (_Pool,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


MaxPool1d = _pool_class("MaxPool1d", mx.max, -float("inf"), 1)
AvgPool1d = _pool_class("AvgPool1d", mx.mean, 0, 1)
MaxPool2d = _pool_class("MaxPool2d", mx.max, -float("inf"), 2)
AvgPool2d = _pool_class("AvgPool2d", mx.mean, 0, 2)
MaxPool3d = _pool_class("MaxPool3d", mx.max, -float("inf"), 3)
AvgPool3d = _pool_class("AvgPool3d", mx.mean, 0, 3)
