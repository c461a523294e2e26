"""``mlx`` as an alias of lazulite: ``import mlx.core as mx`` gives ``lazulite.core``, and
every ``mlx.<name>`` module is ``lazulite.<name>`` (the same module object, so types and
state are shared). Installed by the ``lazulite-mlx`` package; it refuses to load beside the
real MLX."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import sys


def _real_mlx():
    """A description of the real MLX if it is installed, else None."""
    try:
        return f"mlx {importlib.metadata.version('mlx')}"
    except importlib.metadata.PackageNotFoundError:
        pass
    # A source build of MLX may lack metadata; its compiled core sits in this folder.
    here = os.path.dirname(__file__)
    for name in os.listdir(here):
        if name.startswith("core.") and name.endswith((".so", ".pyd")):
            return os.path.join(here, name)
    return None


_found = _real_mlx()
if _found is not None:
    raise ImportError(
        f"the real MLX ({_found}) is installed beside lazulite-mlx, which makes `import mlx` "
        "resolve to lazulite; uninstall one of them: `pip uninstall lazulite-mlx` to use MLX, "
        "or `pip uninstall mlx mlx-cpu` to use lazulite"
    )


class _AliasLoader(importlib.abc.Loader):
    """Hands out the already-imported lazulite module under its ``mlx`` name."""

    def __init__(self, module):
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        # The import system has stamped the alias spec on the module; lazulite's own
        # (relative) imports need the original.
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``mlx.<name>`` as ``lazulite.<name>``."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(__name__ + "."):
            return None
        target_name = "lazulite" + fullname[len(__name__) :]
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            # Only "lazulite has no such module" means "mlx has none"; anything else is real.
            if e.name is not None and target_name.startswith(e.name):
                return None
            raise
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=hasattr(module, "__path__")
        )


if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())
