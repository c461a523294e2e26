"""lazulite: lazy arrays with composable transforms.

``import lazulite.core as mx`` gives the same API as ``mlx.core``.
"""

from . import core, utils
from ._array_api_info import __array_namespace_info__

# The array API standard's inspection function lives in the namespace it describes.
core.__array_namespace_info__ = __array_namespace_info__
del __array_namespace_info__

__all__ = ["core", "utils"]
