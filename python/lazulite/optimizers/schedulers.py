"""Learning-rate schedules, as ``mlx.optimizers``: each returns a function of the
step (an array) giving the rate; pass it as an optimizer's ``learning_rate``."""

import math
from typing import Callable, List

import lazulite.core as mx


def exponential_decay(init: float, decay_rate: float) -> Callable:
    """``init * decay_rate ** step``."""

    def schedule(step):
        return init * decay_rate**step

    return schedule


def step_decay(init: float, decay_rate: float, step_size: int) -> Callable:
    """``init * decay_rate ** (step // step_size)``."""
    if step_size < 1:
        raise ValueError(f"step_size must be greater than 0, but got {step_size}.")

    def schedule(step):
        return init * (decay_rate ** (step // step_size))

    return schedule


def cosine_decay(init: float, decay_steps: int, end: float = 0.0) -> Callable:
    """Half a cosine from ``init`` at step 0 to ``end`` at ``decay_steps``, then ``end``."""
    if decay_steps < 1:
        raise ValueError(f"decay_steps must be greater than 0, but got {decay_steps}.")

    def schedule(step):
        s = mx.minimum(step, decay_steps)
        decay = 0.5 * (1.0 + mx.cos((math.pi / decay_steps) * s))
        return end + decay * (init - end)

    return schedule


def join_schedules(schedules: List[Callable], boundaries: List[int]) -> Callable:
    """``schedules[i]`` from ``boundaries[i - 1]`` on, each called with the steps since
    its boundary."""
    if len(schedules) == 0:
        raise ValueError("Must provide at least 1 schedule to join.")
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(
            f"Received {len(boundaries)} boundaries but expected {len(schedules) - 1}."
        )

    def schedule(step):
        output = schedules[0](step)
        for boundary, later in zip(boundaries, schedules[1:]):
            output = mx.where(step < boundary, output, later(step - boundary))
        return output

    return schedule


def linear_schedule(init: float, end: float, steps: int) -> Callable:
    """From ``init`` to ``end`` linearly over ``steps`` steps, then ``end``."""
    if steps < 1:
        raise ValueError(f"steps must be greater than 0, but got {steps}.")

    def schedule(step):
        step = mx.minimum(step, steps)
        return step * ((end - init) / steps) + init

    return schedule
