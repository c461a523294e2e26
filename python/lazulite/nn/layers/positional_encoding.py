"""Positional encodings, as in ``mlx.nn``: RoPE, SinusoidalPositionalEncoding, ALiBi."""

import math
from typing import Optional

import lazulite.core as mx

from .base import Module


class RoPE(Module):
    """Rotary positional encoding of the first ``dims`` features of inputs shaped
    ``(..., length, features)``; call with ``offset`` to start at a later position (an
    int, or an array of one offset per batch entry)."""

    def __init__(self, dims: int, traditional: bool = False, base: float = 10000, scale: float = 1.0):
        super().__init__()
        self.dims = dims
        self.traditional = traditional
        self.base = base
        self.scale = scale

    def _extra_repr(self):
        return f"{self.dims}, traditional={self.traditional}"

    def __call__(self, x, offset: int = 0):
        return mx.fast.rope(
            x, self.dims, traditional=self.traditional, base=self.base, scale=self.scale, offset=offset
        )


class SinusoidalPositionalEncoding(Module):
    """Maps each value of the input (e.g. a position) to ``dims`` features:
    ``sin`` and ``cos`` (``cos_first`` swaps them) of the value times ``dims/2``
    frequencies spaced geometrically from ``max_freq`` down to ``min_freq``, times
    ``scale`` (default ``sqrt(2/dims)``)."""

    def __init__(
        self,
        dims: int,
        min_freq: float = 0.0001,
        max_freq: float = 1,
        scale: Optional[float] = None,
        cos_first: bool = False,
        full_turns: bool = False,
    ):
        super().__init__()
        if dims <= 0 or dims % 2 != 0:
            raise ValueError(f"[SinusoidalPositionalEncoding] dims must be positive and even but got {dims}.")
        if dims == 2:
            one_to_zero = mx.array([1.0])
        else:
            one_to_zero = 1 - mx.arange(0, dims // 2) / (dims // 2 - 1)
        log_min, log_max = math.log(min_freq), math.log(max_freq)
        # the leading underscore keeps the frequencies out of parameters()
        self._sigmas = mx.exp(one_to_zero * (log_max - log_min) + log_min)
        if full_turns:
            self._sigmas = self._sigmas * (2 * math.pi)
        self.scale = scale if scale is not None else (2 / dims) ** 0.5
        self.cos_first = cos_first

    def __call__(self, x):
        y = x[..., None] * self._sigmas
        parts = [mx.cos(y), mx.sin(y)] if self.cos_first else [mx.sin(y), mx.cos(y)]
        y = mx.concatenate(parts, axis=-1)
        return y * self.scale if self.scale != 1 else y


class ALiBi(Module):
    """Attention with linear biases: adds ``-slope_h * |i - j|`` to attention scores
    shaped ``(batch, heads, queries, keys)``."""

    @staticmethod
    def create_alibi_matrix(
        q_sequence_length: int,
        k_sequence_length: int,
        num_heads: int,
        offset: int = 0,
        dtype: mx.Dtype = mx.float32,
    ):
        """The ``(1, num_heads, q - offset, k)`` bias."""
        queries = mx.arange(offset, q_sequence_length)
        keys = mx.arange(0, k_sequence_length)
        distance = -mx.abs(queries[:, None] - keys[None, :])[None, None]
        return (distance * ALiBi.create_alibi_slope(num_heads=num_heads, dtype=dtype)).astype(dtype)

    @staticmethod
    def create_alibi_slope(num_heads: int, dtype: mx.Dtype = mx.float32):
        """The per-head slopes, shaped ``(num_heads, 1, 1)``: a geometric sequence
        from ``2 ** (-8 / n)`` for a power of two ``n``, interleaved otherwise."""

        def slopes(n):
            if math.log2(n).is_integer():
                start = 2 ** (-(2 ** -(math.log2(n) - 3)))
                return [start * start**i for i in range(n)]
            power = 2 ** math.floor(math.log2(n))
            return slopes(power) + slopes(2 * power)[0::2][: n - power]

        return mx.array(slopes(num_heads), dtype=dtype)[:, None, None]

    def __call__(self, attention_scores, offset: int = 0, mask: Optional[mx.array] = None):
        bias = ALiBi.create_alibi_matrix(
            q_sequence_length=attention_scores.shape[-2] + offset,
            k_sequence_length=attention_scores.shape[-1],
            num_heads=attention_scores.shape[1],
            offset=offset,
            dtype=attention_scores.dtype,
        )
        if mask is not None:
            bias = bias + mask
        return attention_scores + bias
