"""Loss functions, as ``mlx.nn.losses``. ``reduction`` is ``'none'`` (per-element
losses), ``'mean'`` or ``'sum'``."""

from typing import Literal, Optional, get_args

import lazulite.core as mx

Reduction = Literal["none", "mean", "sum"]


def _reduce(loss, reduction: Reduction = "none"):
    if reduction not in get_args(Reduction):
        raise ValueError(f"Invalid reduction. Must be one of {get_args(Reduction)}.")
    if reduction == "mean":
        return mx.mean(loss)
    if reduction == "sum":
        return mx.sum(loss)
    return loss


def _pick(values, indices, axis):
    """``values`` at the class ``indices`` along ``axis`` (which disappears): the
    selection is a one-hot mask, so gradients flow to ``values``."""
    axis = axis % values.ndim
    classes = mx.arange(values.shape[axis]).reshape([-1] + [1] * (values.ndim - axis - 1))
    chosen = mx.expand_dims(indices, axis) == classes
    return mx.sum(mx.where(chosen, values, 0), axis=axis)


def _weighted(loss, weights):
    if weights is None:
        return loss
    if weights.shape != loss.shape:
        raise ValueError(f"Weights with shape {weights.shape} is not the same as output loss with shape {loss.shape}.")
    return loss * weights


def _check_same_shape(predictions, targets, first="Predictions"):
    if predictions.shape != targets.shape:
        raise ValueError(f"{first} shape {predictions.shape} does not match targets shape {targets.shape}.")


def cross_entropy(
    logits,
    targets,
    weights: Optional[mx.array] = None,
    axis: int = -1,
    label_smoothing: float = 0.0,
    reduction: Reduction = "none",
):
    """Cross entropy between ``logits`` (unnormalised log-probabilities along
    ``axis``) and ``targets``: class indices (``logits`` without ``axis``) or
    probabilities (``logits``' shape). ``label_smoothing`` in [0, 1) mixes the
    target with the uniform distribution."""
    if label_smoothing < 0 or label_smoothing >= 1:
        raise ValueError(f"Label smoothing must be in [0, 1), got {label_smoothing}.")
    targets_as_probs = targets.ndim == logits.ndim
    if targets_as_probs:
        expected_shape = logits.shape
    else:
        expected_shape = list(logits.shape)
        expected_shape.pop(axis)
        expected_shape = tuple(expected_shape)
    if targets.shape != expected_shape:
        raise ValueError(f"Targets shape {targets.shape} does not match logits shape {logits.shape}.")
    logits = logits - mx.stop_gradient(mx.max(logits, axis=axis, keepdims=True))
    if targets_as_probs:
        score = mx.sum(logits * targets, axis=axis)
    else:
        score = _pick(logits, targets, axis)
    normaliser = mx.logsumexp(logits, axis=axis)
    if label_smoothing > 0:
        smoothed = -mx.mean(logits, axis=axis) * label_smoothing
        loss = normaliser - (1 - label_smoothing) * score + smoothed
    else:
        loss = normaliser - score
    return _reduce(_weighted(loss, weights), reduction)


def binary_cross_entropy(
    inputs,
    targets,
    weights: Optional[mx.array] = None,
    with_logits: bool = True,
    reduction: Reduction = "mean",
):
    """Binary cross entropy of ``inputs`` (logits, or probabilities when
    ``with_logits=False``; their logs are clipped at -100) against ``targets`` in [0, 1]."""
    _check_same_shape(inputs, targets, "Inputs")
    if with_logits:
        loss = mx.logaddexp(0.0, inputs) - inputs * targets
    else:
        log_p = mx.clip(mx.log(inputs), -100, None)
        log_not_p = mx.clip(mx.log(1 - inputs), -100, None)
        loss = -(targets * log_p + (1 - targets) * log_not_p)
    return _reduce(_weighted(loss, weights), reduction)


def l1_loss(predictions, targets, reduction: Reduction = "mean"):
    """``|predictions - targets|``."""
    _check_same_shape(predictions, targets)
    return _reduce(mx.abs(predictions - targets), reduction)


def mse_loss(predictions, targets, reduction: Reduction = "mean"):
    """``(predictions - targets) ** 2``."""
    _check_same_shape(predictions, targets)
    return _reduce(mx.square(predictions - targets), reduction)


def nll_loss(inputs, targets, axis: int = -1, reduction: Reduction = "none"):
    """Negative log likelihood: ``-inputs`` (log-probabilities along ``axis``) at the
    class indices ``targets``."""
    return _reduce(-_pick(inputs, targets, axis), reduction)


def smooth_l1_loss(predictions, targets, beta: float = 1.0, reduction: Reduction = "mean"):
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``, with
    ``d = predictions - targets``."""
    _check_same_shape(predictions, targets)
    diff = mx.abs(predictions - targets)
    loss = mx.where(diff < beta, 0.5 * mx.square(diff) / beta, diff - 0.5 * beta)
    return _reduce(loss, reduction)


def kl_div_loss(inputs, targets, axis: int = -1, reduction: Reduction = "none"):
    """Kullback-Leibler divergence from log-probabilities ``inputs`` to
    log-probabilities ``targets`` along ``axis``."""
    loss = mx.sum(mx.exp(targets) * (targets - inputs), axis)
    return _reduce(loss, reduction)
