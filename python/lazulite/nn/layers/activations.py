"""Activation functions and their Module forms, as in ``mlx.nn``."""

import math

import lazulite.core as mx

from .base import Module

__all__ = [
    "sigmoid",
    "relu",
    "relu2",
    "relu6",
    "leaky_relu",
    "log_softmax",
    "elu",
    "softmax",
    "softplus",
    "softsign",
    "softshrink",
    "celu",
    "silu",
    "log_sigmoid",
    "gelu",
    "gelu_approx",
    "gelu_fast_approx",
    "glu",
    "step",
    "selu",
    "prelu",
    "mish",
    "hardswish",
    "hard_tanh",
    "hard_shrink",
    "softmin",
    "tanh",
    "GLU",
    "LeakyReLU",
    "ELU",
    "CELU",
    "Softmax",
    "Softmin",
    "LogSoftmax",
    "Softshrink",
    "HardShrink",
    "HardTanh",
    "PReLU",
    "Step",
    "GELU",
    "Sigmoid",
    "Mish",
    "ReLU",
    "ReLU2",
    "ReLU6",
    "Softplus",
    "Softsign",
    "SiLU",
    "LogSigmoid",
    "Tanh",
    "Hardswish",
    "SELU",
]


def sigmoid(x):
    r"""Element-wise logistic sigmoid :math:`1 / (1 + e^{-x})`."""
    return mx.sigmoid(x)


def relu(x):
    """``max(x, 0)``."""
    return mx.maximum(x, 0)


def relu2(x):
    """``max(x, 0) ** 2``."""
    return mx.square(mx.maximum(x, 0))


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return mx.minimum(mx.maximum(x, 0), 6.0)


def leaky_relu(x, negative_slope=0.01):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    return mx.maximum(negative_slope * x, x)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis)``."""
    return x - mx.logsumexp(x, axis=axis, keepdims=True)


def elu(x, alpha=1.0):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    return mx.where(x > 0, x, alpha * (mx.exp(x) - 1))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis)``."""
    return mx.softmax(x, axis=axis)


def softplus(x):
    """``log(1 + exp(x))``."""
    return mx.softplus(x)


def softsign(x):
    """``x / (1 + |x|)``."""
    return mx.divide(x, 1 + mx.abs(x))


def softshrink(x, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    return mx.where(mx.abs(x) > lambd, x - mx.sign(x) * lambd, 0)


def celu(x, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return mx.maximum(x, 0.0) + alpha * (mx.exp(mx.minimum(x, 0.0) / alpha) - 1)


def silu(x):
    """``x * sigmoid(x)`` (the swish function)."""
    return x * mx.sigmoid(x)


def log_sigmoid(x):
    """``log(sigmoid(x))``, computed stably as ``-softplus(-x)``."""
    return -softplus(-x)


def gelu(x):
    r"""Exact GELU, :math:`x \Phi(x)` with :math:`\Phi` the normal CDF."""
    return x * (1 + mx.erf(x / math.sqrt(2))) / 2


def gelu_approx(x):
    """GELU's tanh approximation."""
    return 0.5 * x * (1 + mx.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_fast_approx(x):
    """GELU's sigmoid approximation ``x * sigmoid(1.702 x)``."""
    return x * mx.sigmoid(1.702 * x)


def glu(x, axis: int = -1):
    """Gated linear unit: split ``x`` in two halves ``a, b`` along ``axis``; ``a * sigmoid(b)``."""
    a, b = mx.split(x, indices_or_sections=2, axis=axis)
    return a * mx.sigmoid(b)


def step(x, threshold: float = 0.0):
    """1 where ``x >= threshold``, else 0."""
    return mx.where(x >= threshold, 1, 0)


def selu(x):
    """Scaled ELU with the self-normalising constants."""
    return elu(x, 1.67326) * 1.0507


def prelu(x, alpha):
    """``max(0, x) + alpha * min(0, x)``."""
    return mx.maximum(0, x) + alpha * mx.minimum(0, x)


def mish(x):
    """``x * tanh(softplus(x))``."""
    return x * mx.tanh(softplus(x))


def hardswish(x):
    """``x * min(max(x + 3, 0), 6) / 6``."""
    max_x_3 = mx.maximum(x + 3, 0)
    return x * mx.minimum(max_x_3, 6) / 6


def hard_tanh(x, min_val=-1.0, max_val=1.0):
    """``x`` clipped to ``[min_val, max_val]``."""
    return mx.minimum(mx.maximum(x, min_val), max_val)


def hard_shrink(x, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return mx.where(mx.abs(x) > lambd, x, 0)


def softmin(x, axis=-1):
    """``softmax(-x, axis)``."""
    return mx.softmax(-x, axis=axis)


def tanh(x):
    """Element-wise hyperbolic tangent."""
    return mx.tanh(x)


def _activation_module(fn, doc):
    """A Module class with no parameters whose call is ``fn(x)``."""

    class Activation(Module):
        def __call__(self, x):
            return fn(x)

    Activation.__doc__ = doc
    return Activation


Sigmoid = _activation_module(sigmoid, "Applies :func:`sigmoid`.")
Mish = _activation_module(mish, "Applies :func:`mish`.")
ReLU = _activation_module(relu, "Applies :func:`relu`.")
ReLU2 = _activation_module(relu2, "Applies :func:`relu2`.")
ReLU6 = _activation_module(relu6, "Applies :func:`relu6`.")
Softplus = _activation_module(softplus, "Applies :func:`softplus`.")
Softsign = _activation_module(softsign, "Applies :func:`softsign`.")
SiLU = _activation_module(silu, "Applies :func:`silu`.")
LogSigmoid = _activation_module(log_sigmoid, "Applies :func:`log_sigmoid`.")
Tanh = _activation_module(tanh, "Applies :func:`tanh`.")
Hardswish = _activation_module(hardswish, "Applies :func:`hardswish`.")
SELU = _activation_module(selu, "Applies :func:`selu`.")
for _name in ["Sigmoid", "Mish", "ReLU", "ReLU2", "ReLU6", "Softplus", "Softsign", "SiLU",
              "LogSigmoid", "Tanh", "Hardswish", "SELU"]:
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name


class GLU(Module):
    """Applies :func:`glu` along ``axis``."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def __call__(self, x):
        return glu(x, self.axis)


class LeakyReLU(Module):
    """Applies :func:`leaky_relu`."""

    def __init__(self, negative_slope=1e-2):
        super().__init__()
        self._negative_slope = negative_slope

    def __call__(self, x):
        return leaky_relu(x, self._negative_slope)


class ELU(Module):
    """Applies :func:`elu`."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return elu(x, self._alpha)


class CELU(Module):
    """Applies :func:`celu`."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return celu(x, self._alpha)


class Softmax(Module):
    """Applies :func:`softmax` over the last axis."""

    def __call__(self, x):
        return softmax(x)


class Softmin(Module):
    """Applies :func:`softmin` over the last axis."""

    def __call__(self, x):
        return softmin(x)


class LogSoftmax(Module):
    """Applies :func:`log_softmax` over the last axis."""

    def __call__(self, x):
        return log_softmax(x)


class Softshrink(Module):
    """Applies :func:`softshrink`."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return softshrink(x, self.lambd)


class HardShrink(Module):
    """Applies :func:`hard_shrink`."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return hard_shrink(x, self.lambd)


class HardTanh(Module):
    """Applies :func:`hard_tanh`."""

    def __call__(self, x):
        return hard_tanh(x)


class PReLU(Module):
    """Applies :func:`prelu` with a learned ``weight`` of ``num_parameters`` slopes."""

    def __init__(self, num_parameters=1, init=0.25):
        super().__init__()
        self.weight = mx.full([num_parameters], init)

    def __call__(self, x):
        return prelu(x, self.weight)


class Step(Module):
    """Applies :func:`step` with ``threshold``."""

    def __init__(self, threshold: float = 0.0):
        super().__init__()
        self.threshold = threshold

    def __call__(self, x):
        return step(x, self.threshold)


class GELU(Module):
    """Applies GELU: ``approx`` is ``'none'`` (exact, :func:`gelu`), ``'precise'`` or
    ``'tanh'`` (:func:`gelu_approx`), or ``'fast'`` (:func:`gelu_fast_approx`)."""

    def __init__(self, approx="none"):
        super().__init__()
        self._approx = approx
        functions = {"none": gelu, "precise": gelu_approx, "tanh": gelu_approx, "fast": gelu_fast_approx}
        if approx not in functions:
            raise ValueError(f"The approximation should be in ['none', 'precise', 'tanh', 'fast'] but '{approx}' was given")
        self._act = functions[approx]

    def __call__(self, x):
        return self._act(x)
