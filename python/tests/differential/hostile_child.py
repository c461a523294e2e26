"""Runs hostile calls (hostile.py) on lazulite in a child process of the test:

    python -m differential.hostile_child CASES.pkl RESULTS.pkl

Its address space is capped, so an allocation the size of a user's number either fails
as a MemoryError (when lazulite makes it fallibly) or aborts this process (when it does
not); the parent reports the latter as a crash. Each outcome is appended to RESULTS.pkl
as soon as it is known: ("ok",), ("raise", class name), ("panic", message),
("not an Exception", class name) or ("input changed", class name).
"""

import os
import pickle
import resource
import sys

import numpy as np

from .hostile import Odd
from .runner import lazulite_lib
from .spec import build, resolve

os.environ.setdefault("RAYON_NUM_THREADS", "1")
# Room for the interpreter, the library and ordinary work; a block of 2^31 float32 values
# does not fit.
ADDRESS_SPACE = 6 << 30


def odd(name, mx):
    if name == "object":
        return object()
    if name == "function":
        return lambda *a, **k: None
    if name == "dtype_category":
        return mx.floating
    raise ValueError(name)


def make(spec, lib):
    if isinstance(spec, Odd):
        return odd(spec.name, lib.core)
    if isinstance(spec, (list, tuple)) and any(isinstance(s, Odd) for s in spec):
        return type(spec)(make(s, lib) for s in spec)
    return build(spec, lib)


def arrays_in(values, mx):
    """The arrays among `values` (one level deep), with a copy of their contents."""
    found = []
    for v in values:
        if isinstance(v, mx.array) and v.size < (1 << 16):
            found.append((v, np.array(v.astype(mx.float32) if v.dtype == mx.bfloat16 else v)))
    return found


def evaluate_all(out, mx):
    if isinstance(out, mx.array):
        mx.eval(out)
    elif isinstance(out, (list, tuple)):
        for o in out:
            evaluate_all(o, mx)
    elif isinstance(out, dict):
        for o in out.values():
            evaluate_all(o, mx)


def run(case, lib):
    mx = lib.core
    try:
        fn = resolve(case.fn, lib)
        args = tuple(make(a, lib) for a in case.args)
        kwargs = {k: make(v, lib) for k, v in case.kwargs.items()}
    except Exception as e:  # noqa: BLE001 - a spec lazulite rejects while being built
        return ("raise", type(e).__name__)
    inputs = arrays_in(args + tuple(kwargs.values()), mx)
    try:
        evaluate_all(fn(*args, **kwargs), mx)
        return ("ok",)
    except Exception as e:  # noqa: BLE001 - any ordinary exception is a fine answer
        for array, before in inputs:
            now = np.array(array.astype(mx.float32) if array.dtype == mx.bfloat16 else array)
            if now.shape != before.shape or not np.array_equal(now, before, equal_nan=True):
                return ("input changed", type(e).__name__)
        return ("raise", type(e).__name__)
    except BaseException as e:  # noqa: BLE001 - a Rust panic reaches Python as this
        if type(e).__name__ == "PanicException":
            return ("panic", str(e)[:300])
        return ("not an Exception", type(e).__name__)


def main():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    with open(sys.argv[1], "rb") as f:
        cases = pickle.load(f)
    lib = lazulite_lib()
    with open(sys.argv[2], "ab") as out:
        for case in cases:
            pickle.dump((case.id, run(case, lib)), out)
            out.flush()


if __name__ == "__main__":
    main()
