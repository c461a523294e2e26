"""Optimizers and learning-rate schedules over ``lazulite.core``, mirroring
``mlx.optimizers``: ``import lazulite.optimizers as optim``."""

from .optimizers import SGD, AdaDelta, Adafactor, Adagrad, Adam, Adamax, AdamW, Lion, MultiOptimizer, Muon, Optimizer, RMSprop, clip_grad_norm
from .schedulers import cosine_decay, exponential_decay, join_schedules, linear_schedule, step_decay

__all__ = [
    "Optimizer", "SGD", "RMSprop", "Adagrad", "AdaDelta", "Adam", "AdamW", "Adamax", "Lion", "Adafactor", "Muon",
    "MultiOptimizer", "clip_grad_norm",
    "exponential_decay", "step_decay", "cosine_decay", "join_schedules", "linear_schedule",
]
