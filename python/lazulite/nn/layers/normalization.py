"""Normalisation layers, as in ``mlx.nn``."""

import math

import lazulite.core as mx

from .base import Module


def _check_eps(layer, eps):
    if eps <= 0.0:
        raise ValueError(f"[{layer}] 'eps' must be positive but got {eps}.")


class LayerNorm(Module):
    r"""Normalises the last axis to zero mean and unit variance,
    :math:`y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} \gamma + \beta`, with learned
    ``weight`` (:math:`\gamma`, ones) and ``bias`` (:math:`\beta`, zeros) when
    ``affine`` (``bias=False`` drops :math:`\beta`)."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = True, bias: bool = True):
        super().__init__()
        _check_eps("LayerNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        weight = self["weight"] if "weight" in self else None
        bias = self["bias"] if "bias" in self else None
        return mx.fast.layer_norm(x, weight, bias, self.eps)


class RMSNorm(Module):
    r"""Scales the last axis by its root mean square,
    :math:`y = \frac{x}{\sqrt{E[x^2] + \epsilon}} \gamma`, with learned ``weight``
    (:math:`\gamma`, ones)."""

    def __init__(self, dims: int, eps: float = 1e-5):
        super().__init__()
        _check_eps("RMSNorm", eps)
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x):
        return mx.fast.rms_norm(x, self["weight"], self.eps)


def _normalise(x, axes, eps):
    """``(x - mean) / sqrt(var + eps)`` over ``axes``."""
    mean = mx.mean(x, axis=axes, keepdims=True)
    return (x - mean) * mx.rsqrt(mx.var(x, axis=axes, keepdims=True) + eps)


class InstanceNorm(Module):
    """Normalises each sample's channels (last axis) over the spatial axes of an
    ``(N, ..., C)`` input; learned ``weight``/``bias`` when ``affine``."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = False):
        super().__init__()
        _check_eps("InstanceNorm", eps)
        if eps <= 0.0:
            raise ValueError(f"[InstanceNorm] 'eps' must be positive but got {eps}.")
        if affine:
            self.weight = mx.ones((dims,))
            self.bias = mx.zeros((dims,))
        self.dims = dims
        self.eps = eps

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        if x.ndim < 3:
            raise ValueError(
                f"InstanceNorm expects inputs with at least 3 dimensions (N, ..., C) but the input has {x.ndim} dimensions."
            )
        x = _normalise(x, tuple(range(1, x.ndim - 1)), self.eps)
        return (self.weight * x + self.bias) if "weight" in self else x


class GroupNorm(Module):
    """Normalises groups of channels (last axis) over all the other non-batch axes.
    As in MLX, channel ``c`` is in group ``c % num_groups`` unless
    ``pytorch_compatible`` (contiguous groups, as PyTorch)."""

    def __init__(
        self,
        num_groups: int,
        dims: int,
        eps: float = 1e-5,
        affine: bool = True,
        pytorch_compatible: bool = False,
    ):
        super().__init__()
        _check_eps("GroupNorm", eps)
        if eps <= 0.0:
            raise ValueError(f"[GroupNorm] 'eps' must be positive but got {eps}.")
        if num_groups <= 0:
            raise ValueError(f"The number of groups ({num_groups}) must be a positive integer.")
        if dims <= 0:
            raise ValueError(f"The number of features ({dims}) must be a positive integer.")
        if dims % num_groups != 0:
            raise ValueError(
                f"The number of features ({dims}) must be evenly divisible by the number of groups ({num_groups})."
            )
        if affine:
            self.bias = mx.zeros((dims,))
            self.weight = mx.ones((dims,))
        self.num_groups = num_groups
        self.dims = dims
        self.eps = eps
        self.pytorch_compatible = pytorch_compatible

    def _extra_repr(self):
        return (
            f"{self.num_groups}, {self.dims}, eps={self.eps}, "
            f"affine={'weight' in self}, pytorch_compatible={self.pytorch_compatible}"
        )

    def __call__(self, x):
        shape = x.shape
        batch, groups, dims = shape[0], self.num_groups, shape[-1]
        if self.pytorch_compatible:
            grouped = x.reshape(batch, -1, groups, dims // groups)
            x = _normalise(grouped, (1, 3), self.eps).reshape(shape)
        else:
            x = _normalise(x.reshape(batch, -1, groups), 1, self.eps).reshape(shape)
        return (self.weight * x + self.bias) if "weight" in self else x


class BatchNorm(Module):
    """Normalises each channel (last axis) over the batch and spatial axes of 2-4-d
    inputs. In training mode it uses the batch's statistics and (with
    ``track_running_stats``) updates ``running_mean``/``running_var`` (frozen
    entries) by ``momentum``; in evaluation mode it uses those running statistics."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ):
        super().__init__()
        _check_eps("BatchNorm", eps)
        if eps <= 0.0:
            raise ValueError(f"[BatchNorm] 'eps' must be positive but got {eps}.")
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = mx.ones((num_features,))
            self.bias = mx.zeros((num_features,))
        if self.track_running_stats:
            self.running_mean = mx.zeros((num_features,))
            self.running_var = mx.ones((num_features,))
            self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def unfreeze(self, *args, **kwargs):
        """As :meth:`Module.unfreeze`; the running statistics stay frozen."""
        super().unfreeze(*args, **kwargs)
        if self.track_running_stats:
            self.freeze(keys=["running_mean", "running_var"], recurse=False)
        return self

    def _extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={'weight' in self}, track_running_stats={self.track_running_stats}"
        )

    def __call__(self, x):
        if x.ndim < 2 or x.ndim > 4:
            raise ValueError(f"Expected input tensor to have 2, 3 or 4 dimensions, but got {x.ndim}")
        axes = tuple(range(x.ndim - 1))
        if self.training and math.prod(x.shape[:-1]) == 1:
            raise ValueError("BatchNorm training requires more than one value per channel.")
        mean, var = mx.mean(x, axis=axes), mx.var(x, axis=axes)
        if self.training and self.track_running_stats:
            mu = self.momentum
            unbiased_var = mx.var(x, axis=axes, ddof=1)
            self.running_mean = (1 - mu) * self.running_mean + mu * mean
            self.running_var = (1 - mu) * self.running_var + mu * unbiased_var
        elif self.track_running_stats:
            mean, var = self.running_mean, self.running_var
        x = (x - mean) * mx.rsqrt(var + self.eps)
        return (self.weight * x + self.bias) if "weight" in self else x
