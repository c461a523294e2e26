"""lazulite: lazy arrays with composable transforms.

``import lazulite.core as mx`` gives the same API as ``mlx.core``.
"""

from . import core, utils

__all__ = ["core", "utils"]
