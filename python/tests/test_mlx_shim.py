"""The lazulite-mlx package (python/mlx-shim), installed by the test command: every
``mlx.<name>`` module is ``lazulite.<name>`` (the same object), names lazulite lacks are
missing under ``mlx`` too, and it refuses to load beside the real MLX."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path



def run(code, **env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_mlx_modules_are_lazulites():
    result = run("""
        import mlx.core as mx
        import mlx.nn as nn
        import mlx.optimizers as optim
        from mlx.utils import tree_flatten
        from mlx.nn.layers.distributed import shard_linear
        import lazulite.core, lazulite.nn, lazulite.optimizers, lazulite.utils
        import lazulite.nn.layers.distributed as dist
        assert mx is lazulite.core and nn is lazulite.nn and optim is lazulite.optimizers
        assert tree_flatten is lazulite.utils.tree_flatten and shard_linear is dist.shard_linear
        assert isinstance(nn.Linear(2, 3)(mx.ones((1, 2))), mx.array)
        # lazulite's own modules keep their identity (relative imports keep working).
        assert lazulite.nn.__spec__.name == "lazulite.nn" and lazulite.nn.__name__ == "lazulite.nn"
        try:
            import mlx.no_such_module
        except ModuleNotFoundError as e:
            assert e.name == "mlx.no_such_module", e.name
        else:
            raise AssertionError("imported a module that does not exist")
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_refuses_to_load_beside_the_real_mlx(tmp_path):
    # What `pip install mlx` leaves in site-packages that tells it is installed.
    info = tmp_path / "mlx-0.32.4.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mlx\nVersion: 0.32.4\n")
    result = run("import mlx.core", PYTHONPATH=str(tmp_path))
    assert result.returncode != 0
    assert "ImportError: the real MLX (mlx 0.32.4) is installed beside lazulite-mlx" in result.stderr
    assert "pip uninstall lazulite-mlx" in result.stderr


def test_mlx_lm_imports_whole():
    # mlx-lm's package (generate loop, loaders, tokenizer wrapper), not only its models.
    result = run("""
        import mlx_lm
        from mlx_lm.generate import generate_step, stream_generate
        from mlx_lm.sample_utils import make_sampler
        import mlx.core as mx
        import lazulite.core
        assert mx is lazulite.core
        print(mlx_lm.__version__)
    """)
    assert result.returncode == 0 and result.stdout.strip() == "0.32.2", result.stderr


def test_every_module_of_mlx_has_its_names_at_the_same_path():
    # Programs import from MLX's own module paths (`from mlx.nn.layers.base import
    # Module`); mlx_module_layout.json lists what real MLX defines in each
    # (tools/mlx_reference/module_layout.py).
    layout = json.loads((Path(__file__).parent / "mlx_module_layout.json").read_text())["modules"]
    result = run(f"""
        import importlib
        layout = {layout!r}
        missing = []
        for module, names in layout.items():
            found = importlib.import_module(module)
            missing += [f"{{module}}.{{name}}" for name in names if not hasattr(found, name)]
        print(missing)
    """)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr
