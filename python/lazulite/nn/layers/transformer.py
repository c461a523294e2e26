"""Multi-head attention, as ``mlx.nn.MultiHeadAttention``."""

import math
from typing import Optional

import lazulite.core as mx

from .base import Module
from .linear import Linear


def _scaled_dot_product_attention(queries, keys, values, scale, mask):
    """``softmax(scale * q k^T + mask) v`` over (batch, heads, length, dims) arrays;
    ``mask`` is additive, boolean (False masks out) or ``"causal"``."""
    scores = (queries * scale) @ keys.swapaxes(-1, -2)
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f"[scaled_dot_product_attention] invalid mask option '{mask}'. Must be 'causal', or an array.")
        q_len, k_len = scores.shape[-2], scores.shape[-1]
        mask = mx.arange(k_len - q_len, k_len)[:, None] >= mx.arange(k_len)[None]
    if mask is not None:
        if mask.dtype == mx.bool_:
            scores = mx.where(mask, scores, mx.finfo(scores.dtype).min)
        else:
            scores = scores + mask
    return mx.softmax(scores, axis=-1, precise=True) @ values


class MultiHeadAttention(Module):
    """Attention over ``num_heads`` heads: queries, keys and values are projected
    (``query_proj``, ``key_proj``, ``value_proj``), split into heads, combined by
    scaled dot-product attention with an optional ``mask``, and projected back
    (``out_proj``)."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        query_input_dims: Optional[int] = None,
        key_input_dims: Optional[int] = None,
        value_input_dims: Optional[int] = None,
        value_dims: Optional[int] = None,
        value_output_dims: Optional[int] = None,
        bias: bool = False,
    ):
        super().__init__()
        if dims % num_heads != 0:
            raise ValueError(
                f"The input feature dimensions should be divisible by the number of heads ({dims} % {num_heads}) != 0"
            )
        query_input_dims = query_input_dims or dims
        key_input_dims = key_input_dims or dims
        value_input_dims = value_input_dims or key_input_dims
        value_dims = value_dims or dims
        value_output_dims = value_output_dims or dims
        self.num_heads = num_heads
        self.query_proj = Linear(query_input_dims, dims, bias=bias)
        self.key_proj = Linear(key_input_dims, dims, bias=bias)
        self.value_proj = Linear(value_input_dims, value_dims, bias=bias)
        self.out_proj = Linear(value_dims, value_output_dims, bias=bias)

    def __call__(self, queries, keys, values, mask=None):
        queries = self.query_proj(queries)
        keys = self.key_proj(keys)
        values = self.value_proj(values)
        heads = self.num_heads
        queries = mx.unflatten(queries, -1, (heads, -1)).transpose(0, 2, 1, 3)
        keys = mx.unflatten(keys, -1, (heads, -1)).transpose(0, 2, 1, 3)
        values = mx.unflatten(values, -1, (heads, -1)).transpose(0, 2, 1, 3)
        scale = math.sqrt(1 / queries.shape[-1])
        output = _scaled_dot_product_attention(queries, keys, values, scale, mask)
        return self.out_proj(output.transpose(0, 2, 1, 3).flatten(-2, -1))

    @staticmethod
    def create_additive_causal_mask(N: int, dtype: mx.Dtype = mx.float32):
        """An ``(N, N)`` mask: 0 on and below the diagonal, the dtype's lowest value
        above it."""
        indices = mx.arange(N)
        mask = indices[:, None] < indices[None]
        return mask.astype(dtype) * mx.finfo(dtype).min
