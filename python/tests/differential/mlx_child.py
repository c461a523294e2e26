"""Runs cases on real MLX, in a child process of the harness, with the Python of the MLX
virtual environment:

    python -m differential.mlx_child CASES.pkl RESULTS.pkl

Each outcome is appended to RESULTS.pkl (one pickle per case, flushed) as soon as it is
known, so when MLX takes the process down the harness knows which case did it.
With ``--api`` it writes the public names of MLX's namespaces instead.
"""

import os
import pickle
import sys

# One thread, as the lazulite side gets: the two share two cores with the test run.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def lib():
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optimizers
    import mlx.utils as utils

    from .spec import Lib

    return Lib(mx, nn, optimizers, utils)


def api():
    import inspect

    libs = lib()
    mx = libs.core
    spaces = {"core": mx, "linalg": mx.linalg, "fft": mx.fft, "random": mx.random,
              "fast": mx.fast, "nn": libs.nn, "optimizers": libs.optimizers, "utils": libs.utils}
    out = {}
    for ns, mod in spaces.items():
        names = []
        for n in dir(mod):
            obj = getattr(mod, n)
            if n.startswith("_") or inspect.ismodule(obj) or not callable(obj):
                continue
            if isinstance(obj, type) and ns == "core":
                continue  # classes of the core (array, Dtype, Device, ...) are not functions
            if ns in ("nn", "optimizers", "utils") and not getattr(obj, "__module__", "").startswith(f"mlx.{ns}"):
                continue  # a name imported from elsewhere (typing, math, mlx.utils in optimizers)
            names.append(n)
        out[ns] = sorted(names)
    out["version"] = mx.__version__
    return out


def main():
    if sys.argv[1] == "--api":
        with open(sys.argv[2], "wb") as f:
            pickle.dump(api(), f)
        return
    from .spec import evaluate

    with open(sys.argv[1], "rb") as f:
        cases = pickle.load(f)
    libs = lib()
    with open(sys.argv[2], "ab") as out:
        for case in cases:
            pickle.dump((case.id, evaluate(case, libs)), out)
            out.flush()


if __name__ == "__main__":
    main()
