"""Array members that only one of MLX and lazulite had (`mT`, `bytes(a)`, the pickle
state, `__div__`/`__rdiv__`, `del a[i]`, reflected bitwise operators), written once
against a module `mx` for tools/mlx_reference/array_protocol.py (which records what real
MLX does in python/tests/mlx_array_protocol.json) and python/tests/test_array_protocol.py.
"""

import numpy as np


def arrays(mx):
    """name -> an array: dtypes, 0-d and empty arrays, views and a lazy result."""
    return {
        "int32": mx.array([1, -2, 3], mx.int32),
        "float32_matrix": mx.arange(6, dtype=mx.float32).reshape(2, 3),
        "transposed": mx.arange(6).reshape(2, 3).T,
        "strided": mx.arange(10)[::3],
        "broadcast": mx.broadcast_to(mx.array([1.5, 2.5]), (3, 2)),
        "scalar_uint8": mx.array(3, mx.uint8),
        "bool": mx.array([True, False, True]),
        "float16": mx.array([0.5, -1.0], mx.float16),
        "bfloat16": mx.array([1.0, -2.5], mx.bfloat16),
        "complex64": mx.array([1 + 2j, -3j]),
        "int64_3d": mx.arange(24, dtype=mx.int64).reshape(2, 3, 4),
        "empty": mx.zeros((0, 3)),
        "lazy": mx.arange(4) * 2 + 1,
    }


def outcome(call):
    """What `call()` gives, as JSON values: an array's dtype, shape and values (floats as
    float32 values), bytes as hex, or the name of the exception it raises."""
    try:
        value = call()
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return {"raises": type(e).__name__}
    return described(value)


def described(value):
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, tuple):
        return {"tuple": [described(v) for v in value]}
    if hasattr(value, "dtype") and hasattr(value, "shape") and hasattr(value, "tolist"):
        values = value.tolist()
        if "complex" in str(value.dtype):
            values = repr(values)
        return {"dtype": str(value.dtype).split(".")[-1], "shape": list(value.shape),
                "type": "numpy" if isinstance(value, np.ndarray) else "array", "values": values}
    return {"value": value, "type": type(value).__name__}


def blank(mx):
    """An array object to restore a pickle state into: MLX's unpickling makes an
    uninitialised one with `__new__` (an initialised MLX array refuses `__setstate__`);
    lazulite's arrays take a state whatever they hold."""
    try:
        return mx.array.__new__(mx.array)
    except TypeError:
        return mx.array(0)


def calls(mx):
    """name -> a call whose outcome MLX and lazulite share."""
    out = {}
    for name, a in arrays(mx).items():
        out[f"bytes {name}"] = lambda a=a: bytes(a)
        out[f"__bytes__ {name}"] = lambda a=a: a.__bytes__()
        out[f"mT {name}"] = lambda a=a: a.mT
        out[f"__getstate__ {name}"] = lambda a=a: a.__getstate__()

        def restored(a=a):
            b = blank(mx)
            b.__setstate__(a.__getstate__())
            return b

        out[f"__setstate__ {name}"] = restored
    x = mx.array([1, 2, 4], mx.int32)
    f = mx.array([1.0, 0.0, -2.0])
    for name, other in [("int", 2), ("float", 0.5), ("bool", True), ("complex", 1j), ("array", f),
                        ("list", [1, 2, 3]), ("str", "x"), ("None", None)]:
        out[f"__div__ {name}"] = lambda other=other: x.__div__(other)
        out[f"__rdiv__ {name}"] = lambda other=other: x.__rdiv__(other)
    out["__setstate__ wrong length"] = lambda: blank(mx).__setstate__((x,))
    out["__setstate__ not a tuple"] = lambda: blank(mx).__setstate__([x, 7])
    out["mT of mT"] = lambda: mx.arange(6).reshape(1, 2, 3).mT.mT

    def delete():
        a = mx.arange(3)
        del a[0]

    out["del a[0]"] = delete
    for symbol in ["&", "|", "^", "<<", ">>"]:
        out[f"1 {symbol} a"] = eval(f"lambda: 1 {symbol} x", {"x": x})  # noqa: S307 - fixed operator text
        out[f"a {symbol} 1"] = eval(f"lambda: x {symbol} 1", {"x": x})  # noqa: S307
    out["True & a"] = lambda: True & mx.array([True, False])
    out["list @ a"] = lambda: [[1, 2, 3]] @ mx.ones((3, 2))
    return out
