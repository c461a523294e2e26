"""Multi-head attention and Transformer layers, as in ``mlx.nn``. With ``checkpoint``
the encoder and decoder layers keep no intermediate values for a gradient and compute
them again in the backward pass (``nn.utils.checkpoint``): same values, less memory."""

import math
from typing import Any, Callable, Optional

import lazulite.core as mx

from .activations import relu
from .base import Module
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm
from ..utils import checkpoint


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


class TransformerEncoderLayer(Module):
    """Self-attention then an MLP (``linear1``, ``activation``, ``linear2``), each in
    a residual branch with LayerNorm before it (``norm_first``) or after the sum."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout2(self.activation(self.linear1(x))))

    def __call__(self, x, mask):
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.attention(y, y, y, mask))
            return x + self._mlp(self.ln2(x))
        x = self.ln1(x + self.dropout1(self.attention(x, x, x, mask)))
        return self.ln2(x + self._mlp(x))


class TransformerEncoder(Module):
    """``num_layers`` :class:`TransformerEncoderLayer` then a final LayerNorm ``ln``."""

    def __init__(
        self,
        num_layers: int,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation=relu,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        self.layers = [
            TransformerEncoderLayer(dims, num_heads, mlp_dims, dropout, activation, norm_first)
            for _ in range(num_layers)
        ]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x, mask):
        for layer in self.layers:
            layer = checkpoint(layer) if self.checkpoint else layer
            x = layer(x, mask)
        return self.ln(x)


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over ``memory``, then an MLP, each in a
    residual branch with LayerNorm before it (``norm_first``) or after the sum."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.self_attention = MultiHeadAttention(dims, num_heads)
        self.cross_attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.ln3 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout3(self.activation(self.linear1(x))))

    def __call__(self, x, memory, x_mask, memory_mask):
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.self_attention(y, y, y, x_mask))
            y = self.ln2(x)
            x = x + self.dropout2(self.cross_attention(y, memory, memory, memory_mask))
            return x + self._mlp(self.ln3(x))
        x = self.ln1(x + self.dropout1(self.self_attention(x, x, x, x_mask)))
        x = self.ln2(x + self.dropout2(self.cross_attention(x, memory, memory, memory_mask)))
        return self.ln3(x + self._mlp(x))


class TransformerDecoder(Module):
    """``num_layers`` :class:`TransformerDecoderLayer` then a final LayerNorm ``ln``."""

    def __init__(
        self,
        num_layers: int,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation=relu,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        self.layers = [
            TransformerDecoderLayer(dims, num_heads, mlp_dims, dropout, activation, norm_first)
            for _ in range(num_layers)
        ]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x, memory, x_mask, memory_mask):
        for layer in self.layers:
            layer = checkpoint(layer) if self.checkpoint else layer
            x = layer(x, memory, x_mask, memory_mask)
        return self.ln(x)


class Transformer(Module):
    """An encoder-decoder Transformer (``encoder``, ``decoder``; either replaceable
    by ``custom_encoder``/``custom_decoder``)."""

    def __init__(
        self,
        dims: int = 512,
        num_heads: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        custom_encoder: Optional[Any] = None,
        custom_decoder: Optional[Any] = None,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        common = (dims, num_heads, mlp_dims, dropout, activation, norm_first, checkpoint)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(num_encoder_layers, *common)
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(num_decoder_layers, *common)

    def __call__(self, src, tgt, src_mask, tgt_mask, memory_mask):
        memory = self.encoder(src, src_mask)
        return self.decoder(tgt, memory, tgt_mask, memory_mask)
