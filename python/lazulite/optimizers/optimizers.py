"""Optimizers, as ``mlx.optimizers``.

An optimizer keeps a ``state`` tree shaped like the parameters (one dict of buffers per
parameter, plus ``"step"`` and the hyper-parameters such as ``"learning_rate"`` as
arrays, so a schedule can change them without retracing) and turns gradients into new
parameters with ``apply_single``."""

from typing import Callable, List, Optional, Tuple, Union

import lazulite.core as mx
from lazulite.nn import Module
from lazulite.utils import tree_flatten, tree_map, tree_reduce, tree_unflatten

Schedulable = Union[float, Callable[[mx.array], mx.array]]


def _extend_state(parameters, state):
    """Adds an empty dict to ``state`` for each parameter it lacks; returns ``state``."""
    if isinstance(parameters, (list, tuple)):
        state = list(state)
        for i in range(len(state)):
            state[i] = _extend_state(parameters[i], state[i])
        state.extend(tree_map(lambda _: {}, parameters[len(state):]))
        return type(parameters)(state)
    if isinstance(parameters, dict):
        for k, v in parameters.items():
            state[k] = _extend_state(v, state[k]) if k in state else tree_map(lambda _: {}, v)
    return state


class Optimizer:
    """Base class: subclasses implement ``init_single(parameter, state)`` and
    ``apply_single(gradient, parameter, state)``."""

    def __init__(self, schedulers=None):
        self._initialized = False
        self._state = {"step": mx.array(0, mx.uint64)}
        self._schedulers = dict(schedulers or {})

    def update(self, model: Module, gradients: dict):
        """Apply ``gradients`` (shaped like ``model.trainable_parameters()``) to
        ``model``'s parameters."""
        model.update(self.apply_gradients(gradients, model))

    def init(self, parameters: dict):
        """Create the state of every parameter in ``parameters`` that has none yet
        (done on the first update; call it to inspect or load the state before)."""
        _extend_state(parameters, self._state)
        tree_map(lambda p, s: s or self.init_single(p, s), parameters, self._state)
        self._initialized = True

    def init_single(self, parameter: mx.array, state: dict):
        """Fill ``state`` with the buffers for ``parameter``."""
        raise NotImplementedError()

    def apply_gradients(self, gradients: dict, parameters: dict):
        """The parameters after one step: a tree shaped like ``gradients`` (only the
        parameters at ``gradients``' places are read)."""
        if not self._initialized:
            self.init(gradients)
        for name, schedule in self._schedulers.items():
            self.state[name] = schedule(self.step)
        self.state["step"] = self.step + 1
        return tree_map(self.apply_single, gradients, parameters, self.state)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict):
        """One parameter's new value; may update its ``state``."""
        raise NotImplementedError()

    @property
    def state(self):
        """The state tree (assigning it replaces the state; missing entries are
        created on the next update)."""
        return self._state

    @state.setter
    def state(self, state: dict):
        self._initialized = False
        self._state = state

    @property
    def step(self):
        """The number of updates done, as a uint64 array."""
        return self.state["step"]

    @property
    def learning_rate(self):
        """The current learning rate, as an array."""
        return self.state["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, learning_rate: Union[float, mx.array]):
        self.state["learning_rate"] = mx.array(learning_rate)

    def _maybe_schedule(self, name: str, value: Schedulable):
        """Store hyper-parameter ``name``: a constant, or a schedule of the step."""
        if callable(value):
            self._schedulers[name] = value
            self.state[name] = value(self.step)
        else:
            self.state[name] = mx.array(value)


class MultiOptimizer(Optimizer):
    """Several optimizers over one model: each gradient (by its dotted path) goes to
    the first optimizer whose filter ``fn(path, gradient)`` accepts it; the last
    optimizer takes the rest, so ``filters`` has one entry less than ``optimizers``."""

    def __init__(self, optimizers, filters: list = []):
        super().__init__()
        self._state = {}
        if len(filters) != len(optimizers) - 1:
            raise ValueError(f"Given {len(filters)} filters but {len(optimizers) - 1} needed.")
        self.optimizers = optimizers
        self.filters = filters + [lambda *args, **kwargs: True]

    def _split(self, gradients: dict):
        """``gradients`` split into one tree per optimizer."""
        if len(self.optimizers) == 1:
            return [gradients]
        parts = [[] for _ in self.optimizers]
        for path, gradient in tree_flatten(gradients):
            index = next(i for i, accepts in enumerate(self.filters) if accepts(path, gradient))
            parts[index].append((path, gradient))
        return [tree_unflatten(part) if part else {} for part in parts]

    def init(self, parameters: dict):
        for optimizer, part in zip(self.optimizers, self._split(parameters)):
            optimizer.init(part)

    def apply_gradients(self, gradients: dict, parameters: dict):
        updated = []
        for optimizer, part in zip(self.optimizers, self._split(gradients)):
            updated.extend(tree_flatten(optimizer.apply_gradients(part, parameters)))
        return tree_unflatten(updated)

    @property
    def state(self):
        return {"states": [optimizer.state for optimizer in self.optimizers]}

    @state.setter
    def state(self, state: dict):
        if "states" not in state or len(state["states"]) != len(self.optimizers):
            raise ValueError("Invalid state provided")
        for optimizer, own in zip(self.optimizers, state["states"]):
            optimizer.state = own

    @property
    def learning_rate(self):
        return self.optimizers[0].learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        for optimizer in self.optimizers:
            optimizer.learning_rate = learning_rate


class SGD(Optimizer):
    r"""Stochastic gradient descent with optional momentum and weight decay:
    :math:`v \leftarrow \mu v + (1 - \tau) (g + \lambda w)`,
    :math:`w \leftarrow w - \eta v` (Nesterov: :math:`w \leftarrow w - \eta (g + \mu v)`)."""

    def __init__(
        self,
        learning_rate: Schedulable,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        dampening: float = 0.0,
        nesterov: bool = False,
    ):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening.")
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.dampening = dampening
        self.nesterov = nesterov

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        if self.momentum <= 0:
            return parameter - lr * gradient
        v = self.momentum * state["v"] + (1 - self.dampening) * gradient
        state["v"] = v
        step = gradient + self.momentum * v if self.nesterov else v
        return parameter - lr * step


class RMSprop(Optimizer):
    r""":math:`v \leftarrow \alpha v + (1 - \alpha) g^2`,
    :math:`w \leftarrow w - \eta g / (\sqrt{v} + \epsilon)`."""

    def __init__(self, learning_rate: Schedulable, alpha: float = 0.99, eps: float = 1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.alpha = alpha
        self.eps = eps
        if self.alpha < 0.0:
            raise ValueError(f"RMSprop alpha should be >=0, {self.alpha} was provided instead")
        if self.eps <= 0.0:
            raise ValueError(f"RMSprop epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        v = self.alpha * state["v"] + (1 - self.alpha) * mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adagrad(Optimizer):
    r""":math:`v \leftarrow v + g^2`, :math:`w \leftarrow w - \eta g / (\sqrt{v} + \epsilon)`."""

    def __init__(self, learning_rate: Schedulable, eps: float = 1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        if self.eps <= 0.0:
            raise ValueError(f"Adagrad epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        v = state["v"] + mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adam(Optimizer):
    r""":math:`m \leftarrow \beta_1 m + (1 - \beta_1) g`,
    :math:`v \leftarrow \beta_2 v + (1 - \beta_2) g^2`,
    :math:`w \leftarrow w - \eta m / (\sqrt{v} + \epsilon)`; with ``bias_correction``,
    :math:`m` and :math:`v` are divided by :math:`1 - \beta^t` first (as published)."""

    def __init__(
        self,
        learning_rate: Schedulable,
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        bias_correction: bool = False,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Adam beta{i + 1} should be in [0, 1), {beta} was provided instead")
        if not 0.0 <= eps:
            raise ValueError(f"Adam epsilon should be >=0, {eps} was provided instead")
        self.betas = betas
        self.eps = eps
        self.bias_correction = bias_correction

    def init_single(self, parameter, state):
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = b2 * state["v"] + (1 - b2) * mx.square(gradient)
        state["m"] = m
        state["v"] = v
        if self.bias_correction:
            step = self.step
            c1 = (lr / (1 - b1**step)).astype(gradient.dtype)
            c2 = mx.rsqrt(1 - b2**step).astype(gradient.dtype)
            return parameter - c1 * m / (mx.sqrt(v) * c2 + self.eps)
        return parameter - lr * m / (mx.sqrt(v) + self.eps)


class AdamW(Adam):
    r"""Adam with decoupled weight decay: the parameter is first scaled by
    :math:`1 - \eta \lambda`, then given the Adam update."""

    def __init__(
        self,
        learning_rate: Schedulable,
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        bias_correction: bool = False,
    ):
        super().__init__(learning_rate=learning_rate, betas=betas, eps=eps, bias_correction=bias_correction)
        self.weight_decay = weight_decay

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        return super().apply_single(gradient, parameter * (1 - lr * self.weight_decay), state)


class AdaDelta(Optimizer):
    r""":math:`v \leftarrow \rho v + (1 - \rho) g^2`,
    :math:`d = \sqrt{u + \epsilon} / \sqrt{v + \epsilon} \, g`,
    :math:`u \leftarrow \rho u + (1 - \rho) d^2`, :math:`w \leftarrow w - \eta d`."""

    def __init__(self, learning_rate: Schedulable, rho: float = 0.9, eps: float = 1e-6):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.rho = rho
        self.eps = eps
        if self.rho < 0.0:
            raise ValueError(f"AdaDelta rho should be >=0, {self.rho} was provided instead")
        if self.eps <= 0.0:
            raise ValueError(f"AdaDelta epsilon should be >0, {self.eps} was provided instead")

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)
        state["u"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        v = self.rho * state["v"] + (1 - self.rho) * mx.square(gradient)
        delta = mx.sqrt(state["u"] + self.eps) / mx.sqrt(v + self.eps) * gradient
        state["u"] = self.rho * state["u"] + (1 - self.rho) * mx.square(delta)
        state["v"] = v
        return parameter - lr * delta


class Adamax(Adam):
    r"""Adam with the infinity norm: :math:`m \leftarrow \beta_1 m + (1 - \beta_1) g`,
    :math:`v \leftarrow \max(\beta_2 v, |g|)`, :math:`w \leftarrow w - \eta m / (v + \epsilon)`."""

    def __init__(self, learning_rate: Schedulable, betas: List[float] = [0.9, 0.999], eps: float = 1e-8):
        super().__init__(learning_rate, betas, eps)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = mx.maximum(b2 * state["v"], mx.abs(gradient))
        state["m"] = m
        state["v"] = v
        return parameter - lr * m / (v + self.eps)


class Lion(Optimizer):
    r"""Sign of the interpolated momentum: :math:`c = \beta_1 m + (1 - \beta_1) g`,
    :math:`m \leftarrow \beta_2 m + (1 - \beta_2) g`,
    :math:`w \leftarrow (1 - \eta \lambda) w - \eta \, \mathrm{sign}(c)`."""

    def __init__(self, learning_rate: Schedulable, betas: List[float] = [0.9, 0.99], weight_decay: float = 0.0):
        super().__init__()
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Lion beta{i + 1} should be in [0, 1), {beta} was provided instead")
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.weight_decay = weight_decay

    def init_single(self, parameter, state):
        state["m"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = state["m"]
        direction = b1 * m + (1 - b1) * gradient
        state["m"] = b2 * m + (1 - b2) * gradient
        if self.weight_decay > 0:
            parameter = (1 - lr * self.weight_decay) * parameter
        return parameter - lr * mx.sign(direction)


def _rms(x):
    return mx.sqrt(mx.mean(mx.square(x)))


class Adafactor(Optimizer):
    r"""Adafactor (Shazeer & Stern, 2018): Adam-like steps whose second moment of a
    matrix gradient is kept factored, as a row mean and a column mean of
    :math:`g^2 + \epsilon_1` (their outer product over the row means' mean estimates it);
    vectors keep the full second moment. :math:`\beta_2 = 1 - t^{\text{decay\_rate}}`.
    The normalised gradient is divided by :math:`\max(1, \text{RMS}/\text{clip\_threshold})`,
    then scaled by the step size: :math:`\min(10^{-2}, 1/\sqrt t)` (or
    :math:`\min(10^{-6} t, 1/\sqrt t)` with ``warmup_init``) when ``relative_step``,
    else ``learning_rate``; times :math:`\max(\epsilon_2, \text{RMS}(w))` when
    ``scale_parameter``. With ``beta_1``, the update is averaged over steps too; weight
    decay scales :math:`w` by :math:`1 - \lambda \cdot \text{step size}`."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[[mx.array], mx.array], None] = None,
        eps: Tuple[float, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = -0.8,
        beta_1: Optional[float] = None,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
    ):
        super().__init__()
        if learning_rate is not None:
            self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta_1 = beta_1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init

    def init_single(self, parameter, state):
        if parameter.ndim >= 2:
            shape = parameter.shape
            state["exp_avg_sq_row"] = mx.zeros(shape[:-1], dtype=parameter.dtype)
            state["exp_avg_sq_col"] = mx.zeros(shape[:-2] + shape[-1:], dtype=parameter.dtype)
        else:
            state["exp_avg_sq"] = mx.zeros_like(parameter)
        if self.beta_1 is not None:
            state["exp_avg"] = mx.zeros_like(parameter)

    def _step_size(self, parameter_rms):
        step = self.step
        if self.relative_step:
            cap = 1e-6 * step if self.warmup_init else 1e-2
            size = mx.minimum(cap, mx.rsqrt(step))
        else:
            size = self.learning_rate
        size = size.astype(parameter_rms.dtype)
        if self.scale_parameter:
            return mx.maximum(self.eps[1], parameter_rms) * size
        return size

    def apply_single(self, gradient, parameter, state):
        parameter_rms = _rms(parameter)
        step_size = self._step_size(parameter_rms)
        beta_2 = 1.0 - (self.step**self.decay_rate).astype(parameter_rms.dtype)
        squared = mx.square(gradient) + self.eps[0]
        if gradient.ndim >= 2:
            row = beta_2 * state["exp_avg_sq_row"] + (1 - beta_2) * mx.mean(squared, axis=-1)
            col = beta_2 * state["exp_avg_sq_col"] + (1 - beta_2) * mx.mean(squared, axis=-2)
            state["exp_avg_sq_row"] = row
            state["exp_avg_sq_col"] = col
            row_factor = mx.rsqrt(row / mx.mean(row, axis=-1, keepdims=True))
            update = mx.expand_dims(row_factor, -1) * mx.expand_dims(mx.rsqrt(col), -2) * gradient
        else:
            second = beta_2 * state["exp_avg_sq"] + (1 - beta_2) * squared
            state["exp_avg_sq"] = second
            update = mx.rsqrt(second) * gradient
        update = update / mx.maximum(1.0, _rms(update) / self.clip_threshold)
        update = step_size * update
        if self.beta_1 is not None:
            update = self.beta_1 * state["exp_avg"] + (1 - self.beta_1) * update
            state["exp_avg"] = update
        if self.weight_decay != 0:
            parameter = parameter + parameter * (-self.weight_decay * step_size)
        return parameter - update


class Muon(Optimizer):
    r"""Muon (MomentUm Orthogonalized by Newton-Schulz, Jordan et al. 2024): SGD with
    momentum (Nesterov by default) and L2 weight decay added to the gradient, whose
    update for a parameter of 2 or more dimensions (flattened to
    ``(shape[0], -1)``) is replaced by an approximately orthogonal matrix with the
    same singular vectors, from ``ns_steps`` quintic Newton-Schulz iterations, and
    scaled by :math:`\sqrt{\max(1, \text{rows}/\text{columns})}`."""

    # The quintic's coefficients from Jordan et al.: they push every singular value of
    # the normalised update towards 1 in few steps.
    NEWTON_SCHULZ = (3.4445, -4.7750, 2.0315)

    def __init__(
        self,
        learning_rate: Schedulable,
        momentum: float = 0.95,
        weight_decay: float = 0.01,
        nesterov: bool = True,
        ns_steps: int = 5,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.ns_steps = ns_steps

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def _orthogonalize(self, x):
        """Newton-Schulz iterations on ``x / ||x||_F`` (on the wide orientation)."""
        a, b, c = self.NEWTON_SCHULZ
        tall = x.shape[0] > x.shape[1]
        if tall:
            x = x.T
        x = x / (mx.linalg.norm(x, keepdims=True) + 1e-7)
        for _ in range(self.ns_steps):
            gram = x @ x.T
            poly = mx.addmm(b * gram, gram, gram, beta=1.0, alpha=c)
            x = mx.addmm(a * x, poly, x, beta=1.0, alpha=1.0)
        return x.T if tall else x

    def apply_single(self, gradient, parameter, state):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        v = self.momentum * state["v"] + (1 - self.momentum) * gradient
        state["v"] = v
        update = gradient * (1 - self.momentum) + v * self.momentum if self.nesterov else v
        lr = self.learning_rate.astype(gradient.dtype)
        if update.ndim >= 2:
            shape = update.shape
            update = self._orthogonalize(mx.reshape(update, (shape[0], -1))).reshape(shape)
            lr = lr * max(1, update.shape[-2] / update.shape[-1]) ** 0.5
        return parameter - lr * update


def clip_grad_norm(grads, max_norm: float):
    """``(clipped, total_norm)``: ``grads`` scaled so that their global L2 norm is at
    most ``max_norm``, and that norm before clipping."""
    if max_norm < 0:
        raise ValueError(f"max_norm should be >=0, {max_norm} was provided instead")

    def squared_norm(g):
        # float16 squares are summed in float32 so they do not overflow
        return (g.astype(mx.float32) if g.dtype == mx.float16 else g).square().sum()

    total_norm = mx.sqrt(tree_reduce(lambda total, g: total + squared_norm(g), grads, 0.0))
    normalizer = mx.minimum(max_norm / (total_norm + 1e-6), 1.0)

    def scale(g):
        # the cast comes after the scaling so a small normalizer does not underflow in float16
        return (g * normalizer).astype(g.dtype) if mx.issubdtype(g.dtype, mx.floating) else g * normalizer

    return tree_map(scale, grads), total_norm
