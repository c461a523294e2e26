"""Module containers, as ``mlx.nn.Sequential``."""

from .base import Module


class Sequential(Module):
    """Calls its modules (or any callables) in order, each on the previous one's
    output; they are stored in the list ``layers``."""

    def __init__(self, *modules):
        super().__init__()
        self.layers = list(modules)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
