"""Embedding lookup table, as ``mlx.nn.Embedding``."""

import math
from typing import Optional

import lazulite.core as mx

from .base import Module
from .quantized import QuantizedEmbedding


class Embedding(Module):
    r"""A table of ``num_embeddings`` vectors of size ``dims`` (``weight``, from
    :math:`\mathcal{N}(0, 1/\text{dims})`), indexed by integer arrays."""

    def __init__(self, num_embeddings: int, dims: int):
        super().__init__()
        scale = math.sqrt(1 / dims)
        self.weight = mx.random.normal(shape=(num_embeddings, dims), scale=scale)

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"

    def __call__(self, x):
        return self.weight[x]

    def as_linear(self, x):
        """``x @ weight.T``: the table used as an output projection (tied weights)."""
        return x @ self.weight.T

    def to_quantized(
        self,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ):
        """A :obj:`QuantizedEmbedding` approximating this layer."""
        if quantize_input:
            raise ValueError("Quantized input is not supported.")
        return QuantizedEmbedding.from_embedding(self, group_size, bits, mode)
