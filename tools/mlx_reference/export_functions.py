"""Writes the function-export fixtures in python/tests/mlx_export/, in three steps:

    /work/mlxvenv/bin/python tools/mlx_reference/export_functions.py mlx
        exports each case of python/tests/export_cases.py with real MLX to <name>.mlxfn
        and saves the inputs it is run on and MLX's outputs in <name>.npz (except the
        cases MLX cannot export, export_cases.LAZULITE_ONLY);
    .venv/bin/python tools/mlx_reference/export_functions.py lazulite
        exports the same cases with lazulite to lazulite/<name>.mlxfn;
    /work/mlxvenv/bin/python tools/mlx_reference/export_functions.py check
        imports lazulite's files with real MLX, runs them on the same inputs and saves
        MLX's outputs in lazulite/<name>.npz.

Names after the step limit it to those cases (all cases without).
"""

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python/tests"))
import export_cases  # noqa: E402

OUT = ROOT / "python/tests/mlx_export"


def selected(mx, skip=()):
    names = sys.argv[2:]
    return {k: v for k, v in export_cases.cases(mx).items() if (not names or k in names) and k not in skip}


def export(mx, folder, skip=()):
    folder.mkdir(parents=True, exist_ok=True)
    for name, (fun, examples, _) in selected(mx, skip).items():
        shapeless = name in export_cases.SHAPELESS
        with mx.exporter(str(folder / f"{name}.mlxfn"), fun, shapeless=shapeless) as exporter:
            for args, kwargs in examples:
                exporter(*args, **kwargs)
        print(f"wrote {folder / name}.mlxfn")


def run_and_save(mx, file_folder, npz_folder, skip=()):
    for name, (_, _, runs) in selected(mx, skip).items():
        imported = mx.import_function(str(file_folder / f"{name}.mlxfn"))
        saved = {}
        for c, (args, kwargs) in enumerate(runs):
            outputs = imported(*args, **kwargs)
            for i, x in enumerate(args):
                saved[f"call{c}_arg{i}"] = np.array(x)
            for k, x in kwargs.items():
                saved[f"call{c}_kw_{k}"] = np.array(x)
            for j, y in enumerate(outputs):
                saved[f"call{c}_out{j}"] = np.array(y)
        np.savez(npz_folder / f"{name}.npz", **saved)
        print(f"wrote {npz_folder / name}.npz")


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else "mlx"
    if step == "mlx":
        import mlx.core as mx

        export(mx, OUT, skip=export_cases.LAZULITE_ONLY)
        run_and_save(mx, OUT, OUT, skip=export_cases.LAZULITE_ONLY)
    elif step == "lazulite":
        import lazulite.core as lz

        export(lz, OUT / "lazulite")
    elif step == "check":
        import mlx.core as mx

        run_and_save(mx, OUT / "lazulite", OUT / "lazulite")
    else:
        sys.exit(f"unknown step {step!r}: mlx, lazulite or check")
