"""Loss functions, as ``mlx.nn.losses``. ``reduction`` is ``'none'`` (per-element
losses), ``'mean'`` or ``'sum'``."""

import math
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


def gaussian_nll_loss(inputs, targets, vars, full: bool = False, eps: float = 1e-6, reduction: Reduction = "mean"):
    """Negative log likelihood of ``targets`` under normals of mean ``inputs`` and
    variance ``vars`` (clamped to at least ``eps``); ``full`` adds the constant term."""
    _check_same_shape(inputs, targets, "Inputs")
    if inputs.shape != vars.shape:
        raise ValueError(f"Inputs shape {inputs.shape} does not match vars shape {vars.shape}.")
    vars = mx.maximum(vars, eps)
    loss = 0.5 * (mx.log(vars) + mx.square(targets - inputs) / vars)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def triplet_loss(
    anchors,
    positives,
    negatives,
    axis: int = -1,
    p: int = 2,
    margin: float = 1.0,
    eps: float = 1e-6,
    reduction: Reduction = "none",
):
    """``max(d(anchor, positive) - d(anchor, negative) + margin, 0)`` with ``d`` the
    p-norm distance along ``axis`` (``eps`` added before the root)."""

    def distance(a, b):
        return mx.power(mx.power(mx.abs(a - b), p).sum(axis) + eps, 1.0 / p)

    loss = mx.maximum(distance(anchors, positives) - distance(anchors, negatives) + margin, 0)
    return _reduce(loss, reduction)


def hinge_loss(inputs, targets, reduction: Reduction = "none"):
    """``max(1 - inputs * targets, 0)`` for targets in {-1, 1}."""
    return _reduce(mx.maximum(1 - inputs * targets, 0), reduction)


def huber_loss(inputs, targets, delta: float = 1.0, reduction: Reduction = "none"):
    """``0.5 e**2`` for ``|e| <= delta``, ``delta (|e| - 0.5 delta)`` beyond, with
    ``e = inputs - targets``."""
    abs_errors = mx.abs(inputs - targets)
    quadratic = mx.minimum(abs_errors, delta)
    return _reduce(0.5 * quadratic**2 + delta * (abs_errors - quadratic), reduction)


def log_cosh_loss(inputs, targets, reduction: Reduction = "none"):
    """``log(cosh(inputs - targets))``, computed without overflow."""
    errors = inputs - targets
    return _reduce(mx.logaddexp(errors, -errors) - math.log(2), reduction)


def cosine_similarity_loss(x1, x2, axis: int = 1, eps: float = 1e-8, reduction: Reduction = "none"):
    """Cosine similarity of ``x1`` and ``x2`` along ``axis`` (the product of norms
    clamped to at least ``eps``)."""
    norms = mx.sqrt(mx.sum(mx.square(x1), axis=axis)) * mx.sqrt(mx.sum(mx.square(x2), axis=axis))
    return _reduce(mx.sum(x1 * x2, axis=axis) / mx.maximum(norms, eps), reduction)


def margin_ranking_loss(inputs1, inputs2, targets, margin: float = 0.0, reduction: Reduction = "none"):
    """``max(0, -targets * (inputs1 - inputs2) + margin)`` for targets in {-1, 1}."""
    if not (inputs1.shape == inputs2.shape == targets.shape):
        raise ValueError(
            "The shapes of the arguments do not match. The provided shapes are "
            f"inputs1.shape={inputs1.shape}, inputs2.shape={inputs2.shape}, and targets.shape={targets.shape}."
        )
    return _reduce(mx.maximum(0, -targets * (inputs1 - inputs2) + margin), reduction)
