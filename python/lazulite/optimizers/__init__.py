"""Optimizers and learning-rate schedules over ``lazulite.core``, mirroring
``mlx.optimizers``: ``import lazulite.optimizers as optim``."""

from .optimizers import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop
from .schedulers import cosine_decay, exponential_decay, join_schedules, linear_schedule, step_decay

__all__ = [
    "Optimizer", "SGD", "RMSprop", "Adagrad", "Adam", "AdamW",
    "exponential_decay", "step_decay", "cosine_decay", "join_schedules", "linear_schedule",
]
