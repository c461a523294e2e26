"""Normalisation layers, as in ``mlx.nn``."""

import lazulite.core as mx

from .base import Module


class LayerNorm(Module):
    r"""Normalises the last axis to zero mean and unit variance,
    :math:`y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} \gamma + \beta`, with learned
    ``weight`` (:math:`\gamma`, ones) and ``bias`` (:math:`\beta`, zeros) when
    ``affine`` (``bias=False`` drops :math:`\beta`)."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = True, bias: bool = True):
        super().__init__()
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        mean = mx.mean(x, axis=-1, keepdims=True)
        centred = x - mean
        variance = mx.mean(mx.square(centred), axis=-1, keepdims=True)
        y = centred * mx.rsqrt(variance + self.eps)
        if "weight" in self:
            y = y * self["weight"]
        if "bias" in self:
            y = y + self["bias"]
        return y


class RMSNorm(Module):
    r"""Scales the last axis by its root mean square,
    :math:`y = \frac{x}{\sqrt{E[x^2] + \epsilon}} \gamma`, with learned ``weight``
    (:math:`\gamma`, ones)."""

    def __init__(self, dims: int, eps: float = 1e-5):
        super().__init__()
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x):
        mean_square = mx.mean(mx.square(x), axis=-1, keepdims=True)
        return x * mx.rsqrt(mean_square + self.eps) * self["weight"]
