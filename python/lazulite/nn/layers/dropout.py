"""Dropout, as ``mlx.nn.Dropout``."""

import lazulite.core as mx

from .base import Module


class Dropout(Module):
    r"""In training mode, zeroes each element with probability ``p`` and scales the
    rest by :math:`1/(1-p)`; the identity in evaluation mode."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self):
        return f"p={1 - self._p_1}"

    def __call__(self, x):
        if self._p_1 == 1 or not self.training:
            return x
        mask = mx.random.bernoulli(self._p_1, x.shape)
        return (mask * x) * (1 / self._p_1)
