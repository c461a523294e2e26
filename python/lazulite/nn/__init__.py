"""Neural network layers, losses and initialisers over ``lazulite.core``, mirroring
``mlx.nn``: ``import lazulite.nn as nn``."""

from . import init, losses
from .layers import *  # noqa: F401,F403
from . import utils
from .utils import average_gradients, value_and_grad
