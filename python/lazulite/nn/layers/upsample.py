"""Spatial upsampling of channels-last inputs ``(N, *spatial, C)``, as
``mlx.nn.Upsample``: nearest, linear and cubic interpolation, applied one spatial axis
at a time (all three kernels are separable)."""

import math
from typing import Literal, Tuple, Union

import lazulite.core as mx

from .base import Module


def _source_positions(size, scale, align_corners):
    """Where each of the ``int(scale * size)`` outputs samples the input axis."""
    out = int(scale * size)
    if align_corners:
        return mx.arange(out, dtype=mx.float32) * ((size - 1) / max(out - 1, 1))
    step = 1 / scale
    start = ((out - 1) * step - size + 1) / 2
    return mx.arange(out, dtype=mx.float32) * step - start


def _nearest_taps(size, scale, align_corners):
    out = int(scale * size)
    positions = mx.arange(out, dtype=mx.float32)
    if out > size:
        positions = mx.round((positions + 0.5) * (size / out) - 0.5)
    else:
        positions = positions * (size / out)
    return [(positions.astype(mx.uint32), None)]


def _linear_taps(size, scale, align_corners):
    positions = mx.clip(_source_positions(size, scale, align_corners), 0, size - 1)
    left, right = mx.floor(positions), mx.ceil(positions)
    weight = positions - left
    return [(left.astype(mx.uint32), 1 - weight), (right.astype(mx.uint32), weight)]


def _cubic_taps(size, scale, align_corners):
    """Four taps with the Keys kernel at a = -0.75 (OpenCV), borders clamped."""
    positions = _source_positions(size, scale, align_corners)
    a = -0.75
    taps = []
    for offset in (0, 1, -1, 2):
        grid = mx.floor(positions) + offset
        x = mx.abs(positions - grid)
        if offset in (0, 1):
            weight = ((a + 2.0) * x - (a + 3.0)) * x * x + 1
        else:
            weight = (((x - 5) * x + 8) * x - 4) * a
        taps.append((mx.clip(grid, 0, size - 1).astype(mx.uint32), weight))
    return taps


def _triangle(x):
    return mx.maximum(1.0 - x, 0.0)


def _cubic_pil(x):
    a = -0.5
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    outer = (((x - 5) * x + 8) * x - 4) * a
    return mx.where(x <= 1.0, inner, mx.where(x <= 2.0, outer, 0.0))


def _antialiased_taps(kernel, radius):
    """Taps of ``kernel`` widened by ``1/scale`` when downsampling, out-of-range taps
    dropped and the weights renormalised to sum to 1."""

    def taps(size, scale, align_corners):
        positions = _source_positions(size, scale, align_corners)
        widening = 1.0 / scale if scale < 1 else 1.0
        count = math.ceil(radius * widening) + 1
        grids, weights = [], []
        for offset in range(-count + 1, count):
            grid = mx.floor(positions) + offset
            weight = kernel(mx.abs(positions - grid) / widening)
            weights.append(mx.where((grid >= 0) & (grid < size), weight, 0.0))
            grids.append(grid)
        total = sum(weights)
        total = mx.where(total > 0, total, 1.0)
        return [(mx.clip(g, 0, size - 1).astype(mx.uint32), w / total) for g, w in zip(grids, weights)]

    return taps


def _resample(x, scale_factor, taps_fn, align_corners=False):
    """Each spatial axis in turn: the weighted sum of the input gathered at the taps."""
    for axis, (size, scale) in enumerate(zip(x.shape[1:-1], scale_factor), start=1):
        trailing = [1] * (x.ndim - axis - 1)
        total = None
        for indices, weight in taps_fn(size, scale, align_corners):
            sample = mx.take(x, indices, axis=axis)
            if weight is not None:
                sample = sample * weight.reshape(-1, *trailing)
            total = sample if total is None else total + sample
        x = total
    return x


def _check_scales(x, scale_factor):
    if x.ndim - 2 != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")


def upsample_nearest(x, scale_factor: Tuple):
    """Nearest-neighbour upsampling; integer scales repeat each element."""
    _check_scales(x, scale_factor)
    if tuple(map(int, scale_factor)) != tuple(scale_factor):
        return _resample(x, scale_factor, _nearest_taps)
    dims = x.ndim - 2
    spread = [x.shape[0]]
    for size in x.shape[1:-1]:
        spread += [size, 1]
    spread.append(x.shape[-1])
    x = x.reshape(spread)
    for d, scale in enumerate(scale_factor):
        spread[2 + 2 * d] = int(scale)
    x = mx.broadcast_to(x, spread)
    out = [x.shape[0]] + [x.shape[1 + 2 * d] * x.shape[2 + 2 * d] for d in range(dims)] + [x.shape[-1]]
    return x.reshape(out)


def _check_antialias(align_corners, antialias):
    if antialias and align_corners:
        raise ValueError(
            "[Upsample] antialias=True with align_corners=True is not supported. "
            "Use align_corners=False for antialiased interpolation."
        )


def upsample_linear(x, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False):
    """(Bi/tri)linear interpolation."""
    _check_antialias(align_corners, antialias)
    _check_scales(x, scale_factor)
    taps = _antialiased_taps(_triangle, 1.0) if antialias else _linear_taps
    return _resample(x, scale_factor, taps, align_corners)


def upsample_cubic(x, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False):
    """(Bi/tri)cubic interpolation (a = -0.75; antialiased: a = -0.5 as PIL)."""
    _check_antialias(align_corners, antialias)
    _check_scales(x, scale_factor)
    taps = _antialiased_taps(_cubic_pil, 2.0) if antialias else _cubic_taps
    return _resample(x, scale_factor, taps, align_corners)


class Upsample(Module):
    """Scales the spatial axes by ``scale_factor`` (one number, or one per axis) with
    ``mode`` ``"nearest"``, ``"linear"`` or ``"cubic"``."""

    def __init__(
        self,
        scale_factor: Union[float, Tuple],
        mode: Literal["nearest", "linear", "cubic"] = "nearest",
        align_corners: bool = False,
        antialias: bool = False,
    ):
        super().__init__()
        if mode not in ["nearest", "linear", "cubic"]:
            raise ValueError(f"[Upsample] Got unsupported upsampling algorithm: {mode}")
        if antialias and mode == "nearest":
            raise ValueError("[Upsample] Antialiasing is not supported for nearest neighbor upsampling")
        if isinstance(scale_factor, (list, tuple)):
            scale_factor = tuple(map(float, scale_factor))
        else:
            scale_factor = float(scale_factor)
        _check_antialias(align_corners, antialias)
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.antialias = antialias

    def _extra_repr(self) -> str:
        text = f"scale_factor={self.scale_factor}, mode={self.mode!r}, align_corners={self.align_corners}"
        return text + (", antialias=True" if self.antialias else "")

    def __call__(self, x):
        dims = x.ndim - 2
        if dims <= 0:
            raise ValueError(
                "[Upsample] The input should have at least 1 spatial dimension which means it "
                f"should be at least 3D but {x.ndim}D was provided"
            )
        scale_factor = self.scale_factor
        if isinstance(scale_factor, tuple):
            if len(scale_factor) != dims:
                raise ValueError(
                    f"[Upsample] One scale per spatial dimension is required but scale_factor={scale_factor} "
                    f"and the number of spatial dimensions were {dims}"
                )
        else:
            scale_factor = (scale_factor,) * dims
        if self.mode == "nearest":
            return upsample_nearest(x, scale_factor)
        if self.mode == "linear":
            return upsample_linear(x, scale_factor, self.align_corners, self.antialias)
        return upsample_cubic(x, scale_factor, self.align_corners, self.antialias)
