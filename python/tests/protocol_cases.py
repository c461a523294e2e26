"""Calls whose outcome is compared with real MLX by test_protocol_fidelity.py, as
functions of the module (`mlx.core` or `lazulite.core`) so that the generator of
mlx_protocols.json (tools/mlx_reference/protocols.py) runs the same table."""

INPLACE_DTYPES = ["bool_", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "complex64"]
INPLACE_OPS = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", "@="]
# Right operands, as source text evaluated with `mx` in scope.
INPLACE_RIGHT = ["2", "1.5", "True", "mx.array(2)", "mx.array(2.5)", "mx.array([1, 2], mx.int8)",
                 "mx.array([[1.0], [2.0]])", "None", "'a'", "[1, 2]"]


def inplace_cases(mx):
    """name -> function returning (left array before, left array after, right operand)."""
    cases = {}
    for dtype in INPLACE_DTYPES:
        for op in INPLACE_OPS:
            for right in INPLACE_RIGHT:
                def call(dtype=dtype, op=op, right=right):
                    shape_left = op == "@="
                    x = mx.array([[3, 4], [5, 6]] if shape_left else [3, 4], getattr(mx, dtype))
                    before = x
                    scope = {"x": x, "r": eval(right, {"mx": mx})}
                    exec(f"x {op} r", {}, scope)
                    return before, scope["x"], scope["r"]
                cases[f"{dtype} {op} {right}"] = call
    return cases


def nested_cases(mx):
    """name -> function building an array from a list holding arrays."""
    A = mx.array
    return {
        "arrays": lambda: A([A([1, 2]), A([3, 4])]),
        "arrays_and_floats": lambda: A([A([1, 2]), [3.5, 4]]),
        "floats_and_array": lambda: A([[3.5, 4], A([1, 2])]),
        "int64_and_ints": lambda: A([A([1, 2], mx.int64), [3, 4]]),
        "uint8_and_ints": lambda: A([A([1, 2], mx.uint8), [3, 4]]),
        "uint8_and_bools": lambda: A([A([1, 2], mx.uint8), [True, False]]),
        "int8_and_uint8": lambda: A([A([1, 2], mx.int8), A([3, 4], mx.uint8)]),
        "bool_and_bools": lambda: A([A([True, False]), [True, True]]),
        "float16_and_ints": lambda: A([A([1, 2], mx.float16), [3, 4]]),
        "float16_and_floats": lambda: A([A([1, 2], mx.float16), [3.5, 4]]),
        "bfloat16_and_float16": lambda: A([A([1, 2], mx.bfloat16), A([3, 4], mx.float16)]),
        "float64_and_floats": lambda: A([A([1, 2], mx.float64), [3.5, 4]]),
        "int32_and_complex": lambda: A([A([1, 2]), [3j, 4]]),
        "uint32_and_large_int": lambda: A([A([1, 2], mx.uint32), [3, 2**40]]),
        "scalar_arrays": lambda: A([A(1, mx.uint8), A(2, mx.uint8)]),
        "scalar_array_and_int": lambda: A([A(1, mx.uint8), 2]),
        "scalar_array_and_bool": lambda: A([A(1, mx.int8), True]),
        "scalar_array_and_float": lambda: A([A(1, mx.float16), 2.5]),
        "nested_levels": lambda: A([[A([1, 2]), A([3, 4])], [A([5, 6]), [7, 8]]]),
        "nested_scalar_arrays": lambda: A([[A(1, mx.int8), 3], A([2, 4], mx.int16)]),
        "lazy_arrays": lambda: A([A([1, 2]) + 1, A([3, 4]) * 2]),
        "transposed_array": lambda: A([A([[1, 2], [3, 4]]).T, [[5, 6], [7, 8]]]),
        "empty_arrays": lambda: A([A([], mx.int8), A([], mx.int8)]),
        "with_dtype": lambda: A([A([1, 2]), [3.5, 4]], dtype=mx.int32),
        "with_dtype_float16": lambda: A([A([1, 2]), [3.5, 4]], dtype=mx.float16),
        "ragged_list": lambda: A([A([1, 2]), [3]]),
        "ragged_arrays": lambda: A([A([1, 2]), A([[3, 4]])]),
        "array_and_scalar": lambda: A([A([1, 2]), 3]),
        "array_and_empty_list": lambda: A([A([1, 2]), []]),
    }


FINFO_DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64"]
IINFO_DTYPES = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]


def keyword_cases(mx):
    """name -> call passing parameters by keyword that MLX documents as positional-only."""
    a = mx.arange(6).reshape(2, 3)
    return {
        "roll_shift_axis": lambda: mx.roll(a, shift=1, axis=1),
        "roll_axis": lambda: mx.roll(a, 1, axis=0),
        "roll_a": lambda: mx.roll(a=a, shift=1),
        "tile_reps": lambda: mx.tile(a, reps=2),
        "where_x_y": lambda: mx.where(a > 2, x=a, y=0),
        "matmul_b": lambda: mx.matmul(a, b=a.T),
        "tensordot_b": lambda: mx.tensordot(a, b=a.T),
    }


ALL_DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
              "float16", "bfloat16", "float32", "float64", "complex64"]
ISDTYPE_KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("bool", "real floating"), "float32",
                 ("int8", "complex floating"), "foo", 3]


def isdtype_cases(mx):
    """name -> call of mx.isdtype; kinds given as text name dtypes when they are dtypes."""
    def kind(k):
        if isinstance(k, tuple):
            return tuple(kind(x) for x in k)
        return getattr(mx, k) if isinstance(k, str) and k in ALL_DTYPES + ["float32"] else k
    return {f"{d} {k!r}": (lambda d=d, k=k: mx.isdtype(getattr(mx, d), kind(k)))
            for d in ALL_DTYPES for k in ISDTYPE_KINDS}
