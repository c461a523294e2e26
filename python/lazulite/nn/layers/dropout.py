"""Dropout, as ``mlx.nn.Dropout``."""

import lazulite.core as mx

from .base import Module


class Dropout(Module):
    r"""In training mode, zeroes each element with probability ``p`` and scales the
    rest by :math:`1/(1-p)`; the identity in evaluation mode."""

    # Input ranks accepted (None: any) and how many axes before the channels share a mask.
    _ranks = None
    _shared_axes = 0

    def __init__(self, p: float = 0.5):
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self):
        return f"p={1 - self._p_1}"

    def __call__(self, x):
        if self._ranks is not None and x.ndim not in self._ranks:
            low, high = self._ranks
            raise ValueError(f"Received input with {x.ndim} dimensions. Expected {low} or {high} dimensions.")
        if self._p_1 == 1 or not self.training:
            return x
        mask_shape = list(x.shape)
        for axis in range(2, 2 + self._shared_axes):
            mask_shape[-axis] = 1
        mask = mx.random.bernoulli(self._p_1, mask_shape)
        return (mask * x) * (1 / self._p_1)


class Dropout2d(Dropout):
    """Channel dropout for ``(N, H, W, C)`` or ``(H, W, C)`` inputs: each channel of
    each sample is zeroed as a whole with probability ``p``."""

    _ranks = (3, 4)
    _shared_axes = 2


class Dropout3d(Dropout):
    """Channel dropout for ``(N, D, H, W, C)`` or ``(D, H, W, C)`` inputs: each
    channel of each sample is zeroed as a whole with probability ``p``."""

    _ranks = (4, 5)
    _shared_axes = 3
