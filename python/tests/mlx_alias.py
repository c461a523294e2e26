"""Makes ``import mlx...`` resolve to lazulite inside the test process, and loads
mlx-lm's model code without its package ``__init__`` (which needs the Hugging Face
tokenizer stack that model code does not use). For tests that run MLX programs
unchanged; real MLX must not be imported in the same process."""

import importlib.util
import sys
import types

import lazulite
import lazulite.core
import lazulite.nn
import lazulite.nn.layers
import lazulite.nn.layers.distributed
import lazulite.optimizers
import lazulite.utils

MODULES = {
    "mlx": lazulite,
    "mlx.core": lazulite.core,
    "mlx.nn": lazulite.nn,
    "mlx.nn.layers": lazulite.nn.layers,
    "mlx.nn.layers.distributed": lazulite.nn.layers.distributed,
    "mlx.optimizers": lazulite.optimizers,
    "mlx.utils": lazulite.utils,
}


def install():
    """Alias the ``mlx`` modules; returns whether mlx-lm's model code can be imported."""
    sys.modules.update(MODULES)
    if "mlx_lm" in sys.modules:
        return True
    spec = importlib.util.find_spec("mlx_lm")
    if spec is None:
        return False
    package = types.ModuleType("mlx_lm")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["mlx_lm"] = package
    return True
