"""Ops with a NumPy array next to an array (test_numpy_operands.py), as a function of the
module (`mlx.core` or `lazulite.core`) so that both run the same table. MLX converts the
NumPy operand with the array's dtype; NumPy scalars stay weakly typed like Python's."""

import numpy as np

ARRAY_DTYPES = ["bool_", "uint8", "int32", "float16", "bfloat16", "float32", "complex64"]
NUMPY_OPERANDS = {
    "f64": lambda: np.array([1.5, 2.5]),
    "f32": lambda: np.array([1.5, -2.5], np.float32),
    "i64": lambda: np.array([3, -1]),
    "bool": lambda: np.array([True, False]),
    "c128": lambda: np.array([1 + 2j, 2.5]),
    "0-d f64": lambda: np.array(1.5),
    "np.float64": lambda: np.float64(1.5),
}


def cases(mx):
    """name -> function of (array, numpy operand)."""
    return {
        "a + n": lambda a, n: a + n,
        "a * n": lambda a, n: a * n,
        "a < n": lambda a, n: a < n,
        "a == n": lambda a, n: a == n,
        "a // n": lambda a, n: a // n,
        "a += n": lambda a, n: iadd(a, n),
        "add(a, n)": lambda a, n: mx.add(a, n),
        "subtract(n, a)": lambda a, n: mx.subtract(n, a),
        "maximum(a, n)": lambda a, n: mx.maximum(a, n),
        "power(n, a)": lambda a, n: mx.power(n, a),
        "where(a, a, n)": lambda a, n: mx.where(mx.array([True, False]), a, n),
        "where(a, n, a)": lambda a, n: mx.where(mx.array([True, False]), n, a),
    }


def iadd(a, n):
    a = a[...]
    a += n
    return a


def outcome(mx, case, dtype, operand):
    """The result's dtype and values (as float pairs), or the exception's type name."""
    a = mx.array([1, 2]).astype(getattr(mx, dtype))
    try:
        r = cases(mx)[case](a, NUMPY_OPERANDS[operand]())
        values = np.array(r.astype(mx.complex64)).tolist()
        return [str(r.dtype).removeprefix("mlx.core."), [[v.real, v.imag] for v in values]]
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__
