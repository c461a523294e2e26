"""Writes python/tests/mlx_protocols.json: what real MLX does for the calls in
python/tests/protocol_cases.py (in-place operators over dtypes and right operands,
arrays built from lists holding arrays, NumPy arrays of ml_dtypes' bfloat16, keywords
for parameters MLX documents as positional-only, `isdtype`), every
field and the printed form of `finfo` and `iinfo`, and `__array_namespace_info__()`. Run with a Python that has mlx (and
ml_dtypes, for the bfloat16 facts):

    python tools/mlx_reference/protocols.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_protocols.json"

sys.path.insert(0, str(OUT.parent))
from protocol_cases import (  # noqa: E402 - the table lives with the tests that use it
    FINFO_DTYPES, IINFO_DTYPES, inplace_cases, isdtype_cases, keyword_cases, nested_cases)


def name(dtype):
    return str(dtype).removeprefix("mlx.core.")


def inplace(call):
    try:
        before, after, _ = call()
        mx.eval(after)
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__
    assert after is before  # MLX keeps the object
    return name(after.dtype)


def built(call):
    try:
        a = call()
        return {"dtype": name(a.dtype), "shape": list(a.shape),
                "values": np.array(a.astype(mx.float32)).tolist()}
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__


def answer(call):
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__


def finfo(dtype):
    f = mx.finfo(getattr(mx, dtype))
    return {"bits": f.bits, "dtype": name(f.dtype), "eps": f.eps, "max": f.max, "min": f.min,
            "smallest_normal": f.smallest_normal, "repr": repr(f), "str": str(f)}


def iinfo(dtype):
    f = mx.iinfo(getattr(mx, dtype))
    return {"dtype": name(f.dtype), "max": f.max, "min": f.min, "repr": repr(f), "str": str(f)}


def namespace_info():
    info = mx.__array_namespace_info__()
    kinds = [None, "bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("bool", "complex floating")]
    return {
        "capabilities": info.capabilities(),
        "default_device": str(info.default_device()),
        "devices": [str(d) for d in info.devices()],
        "default_dtypes": {k: name(d) for k, d in info.default_dtypes().items()},
        "dtypes": {str(k): {n: name(d) for n, d in info.dtypes(kind=k).items()} for k in kinds},
    }


facts = {
    "namespace_info": namespace_info(),
    "inplace": {k: inplace(c) for k, c in inplace_cases(mx).items()},
    "nested": {k: built(c) for k, c in nested_cases(mx).items()},
    "keywords": {k: built(c) for k, c in keyword_cases(mx).items()},
    "isdtype": {k: answer(c) for k, c in isdtype_cases(mx).items()},
    "finfo": {d: finfo(d) for d in FINFO_DTYPES},
    "iinfo": {d: iinfo(d) for d in IINFO_DTYPES},
}
try:
    import ml_dtypes

    b = np.array([[1.5, 2.25, -3.0], [0.1, 1e30, -0.0]], dtype=ml_dtypes.bfloat16)
    facts["bfloat16_numpy"] = {
        "whole": built(lambda: mx.array(b)),
        "strided": built(lambda: mx.array(b[:, ::2])),
        "transposed": built(lambda: mx.array(b.T)),
        "scalar": built(lambda: mx.array(b[0, 0])),
        "as_float32": built(lambda: mx.array(b, dtype=mx.float32)),
        "in_list": built(lambda: mx.array([b[0], b[1]])),
    }
except ImportError:
    print("ml_dtypes is missing: no bfloat16 facts")
OUT.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
print(f"wrote {OUT}")
