"""Recurrent layers, as in ``mlx.nn``: RNN, GRU, LSTM over inputs shaped
``(..., length, features)``, returning every step's state ``(..., length, hidden)``.
A missing initial state is zeros."""

import math
from typing import Callable, Optional

import lazulite.core as mx

from .activations import tanh
from .base import Module


def _uniform(scale, *shape):
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


def _initial_state(x, hidden_size, given):
    return given if given is not None else mx.zeros((*x.shape[:-2], hidden_size), dtype=x.dtype)


class RNN(Module):
    r"""Elman RNN: :math:`h_t = \sigma(W_{xh} x_t + W_{hh} h_{t-1} + b)` with
    ``nonlinearity`` :math:`\sigma` (default tanh); weights from
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{hidden\_size}}`."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: Optional[Callable] = None):
        super().__init__()
        self.nonlinearity = nonlinearity or tanh
        if not callable(self.nonlinearity):
            raise ValueError(f"Nonlinearity must be callable. Current value: {nonlinearity}.")
        scale = 1.0 / math.sqrt(hidden_size)
        self.hidden_size = hidden_size
        self.Wxh = _uniform(scale, hidden_size, input_size)
        self.Whh = _uniform(scale, hidden_size, hidden_size)
        self.bias = _uniform(scale, hidden_size) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wxh.shape[1]}, hidden_size={self.hidden_size}, "
            f"nonlinearity={self.nonlinearity}, bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None):
        x = x @ self.Wxh.T if self.bias is None else mx.addmm(self.bias, x, self.Wxh.T)
        hidden = _initial_state(x, self.hidden_size, hidden)
        states = []
        for t in range(x.shape[-2]):
            hidden = self.nonlinearity(mx.addmm(x[..., t, :], hidden, self.Whh.T))
            states.append(hidden)
        return mx.stack(states, axis=-2)


class GRU(Module):
    r"""Gated recurrent unit: reset and update gates
    :math:`r, z = \sigma(W_x x_t + W_h h + b)`,
    :math:`n = \tanh(W_{xn} x_t + b_n + r (W_{hn} h + b_{hn}))`,
    :math:`h_t = (1 - z) n + z h`. ``Wx``/``Wh`` stack the r, z, n blocks."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(scale, 3 * hidden_size, input_size)
        self.Wh = _uniform(scale, 3 * hidden_size, hidden_size)
        self.b = _uniform(scale, 3 * hidden_size) if bias else None
        self.bhn = _uniform(scale, hidden_size) if bias else None

    def _extra_repr(self):
        return f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, bias={self.b is not None}"

    def __call__(self, x, hidden=None):
        x = x @ self.Wx.T if self.b is None else mx.addmm(self.b, x, self.Wx.T)
        size = self.hidden_size
        hidden = _initial_state(x, size, hidden)
        states = []
        for t in range(x.shape[-2]):
            projected = hidden @ self.Wh.T
            projected_n = projected[..., -size:]
            if self.bhn is not None:
                projected_n = projected_n + self.bhn
            r, z = mx.split(mx.sigmoid(x[..., t, :-size] + projected[..., :-size]), 2, axis=-1)
            n = mx.tanh(x[..., t, -size:] + r * projected_n)
            hidden = (1 - z) * n + z * hidden
            states.append(hidden)
        return mx.stack(states, axis=-2)


class LSTM(Module):
    r"""Long short-term memory: gates :math:`i, f, o = \sigma(\cdot)` and candidate
    :math:`g = \tanh(\cdot)` from :math:`W_x x_t + W_h h + b`;
    :math:`c_t = f c + i g`, :math:`h_t = o \tanh(c_t)`. Returns ``(hidden states,
    cell states)``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(scale, 4 * hidden_size, input_size)
        self.Wh = _uniform(scale, 4 * hidden_size, hidden_size)
        self.bias = _uniform(scale, 4 * hidden_size) if bias else None

    def _extra_repr(self):
        return f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, bias={self.bias is not None}"

    def __call__(self, x, hidden=None, cell=None):
        x = x @ self.Wx.T if self.bias is None else mx.addmm(self.bias, x, self.Wx.T)
        hidden = _initial_state(x, self.hidden_size, hidden)
        cell = _initial_state(x, self.hidden_size, cell)
        hiddens, cells = [], []
        for t in range(x.shape[-2]):
            i, f, g, o = mx.split(mx.addmm(x[..., t, :], hidden, self.Wh.T), 4, axis=-1)
            cell = mx.sigmoid(f) * cell + mx.sigmoid(i) * mx.tanh(g)
            hidden = mx.sigmoid(o) * mx.tanh(cell)
            hiddens.append(hidden)
            cells.append(cell)
        return mx.stack(hiddens, axis=-2), mx.stack(cells, axis=-2)
