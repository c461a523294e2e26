"""Writes python/tests/mlx_module_layout.json: for each Python module of real MLX
(`mlx.nn.layers.convolution`, `mlx.optimizers.schedulers`, ...), the public classes and
functions defined in it, which programs import from that path. Run with a Python that has
mlx:

    python tools/mlx_reference/module_layout.py
"""

import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import mlx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_module_layout.json"

# Modules of MLX's package that are not part of its Python API.
PRIVATE = {"mlx.__array_api_info", "mlx.__main__", "mlx._reprlib_fix", "mlx.extension", "mlx.core"}


def defined_in(module):
    """Public classes and functions whose home is `module`."""
    return sorted(
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and obj.__module__ == module.__name__
    )


def main():
    layout = {}
    for info in pkgutil.walk_packages(mlx.__path__, "mlx."):
        if info.name in PRIVATE or info.name.split(".")[-1].startswith("_"):
            continue
        layout[info.name] = defined_in(importlib.import_module(info.name))
    layout = {"mlx_version": mlx.core.__version__, "modules": layout}
    OUT.write_text(json.dumps(layout, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
