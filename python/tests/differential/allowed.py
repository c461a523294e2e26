"""The allow-list: cases where lazulite deliberately differs from MLX 0.32.4 because it
does better. Each entry names a function, the case labels it covers (shell-style
patterns on the part of the case id after the "/"), the kinds of difference it allows
(see compare.py) and why. Nothing that is merely missing or wrong in lazulite belongs
here: that goes to known_gaps.py. docs/differences.md describes these behaviours.

Cases where MLX itself crashes (a signal kills the process: SIGFPE on an integer
division by zero, SIGSEGV on a negative index past the start) are not listed: the
harness records them as "MLX crashes" whatever lazulite does, except in the cases of an
entry here (an out-of-bounds write that kills MLX on some runs only counts as allowed).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Allowed:
    fn: str
    labels: tuple
    kinds: tuple
    why: str


BOUNDS = ("MLX does not check indices: it reads (or writes) memory outside the array and returns "
          "whatever is there; lazulite raises IndexError")
ZERO_DIVISOR = ("an integer division by zero has no defined result in MLX (C++ undefined behaviour: the "
                "remainder comes back as the dividend, divmod kills the process with SIGFPE); lazulite "
                "gives 0, as NumPy does")
FLOAT64 = ("MLX's CPU build computes this float64 function through float32 (its results are off by "
           "about 1e-8 relative); lazulite computes in float64")
WIDER_DTYPES = "MLX refuses this dtype; lazulite computes the result (as NumPy does)"
DOCUMENTED_KEYWORD = ("MLX documents `a` (and `b`) as keyword arguments but its binding refuses them; "
                      "lazulite accepts the documented signature (test_signatures.py)")
SCALARS = ("MLX's binding refuses a Python scalar here (TypeError) where its other functions take one; "
           "lazulite takes it as a 0-d array, so every call that works in MLX works the same")

CPU_NYI = ("MLX's CPU build raises RuntimeError (NYI) for quantized-input products other than one row "
           "times a packed weight; lazulite computes them as MLX's GPU builds define them")

ALLOWED = [
    # Bounds checks.
    Allowed("take", ("oob", "oob-neg"), ("raises-only-lazulite",), BOUNDS),
    Allowed("take", ("oob-int",), ("exception-class",),
            "MLX fails on an integer index past the end with an unrelated error from an internal squeeze "
            "(ValueError); lazulite raises IndexError"),
    Allowed("take_along_axis", ("oob",), ("raises-only-lazulite",), BOUNDS),
    Allowed("put_along_axis", ("oob",), ("raises-only-lazulite",), BOUNDS),
    Allowed("slice", ("past-end",), ("raises-only-lazulite",), BOUNDS),
    Allowed("slice_update", ("past-end",), ("raises-only-lazulite",), BOUNDS),
    Allowed("gather_mm", ("oob",), ("raises-only-lazulite",), BOUNDS),
    Allowed("array.__getitem__", ("oob-int", "oob-array", "oob-neg-array"), ("raises-only-lazulite",), BOUNDS),
    Allowed("snippet.setitem", ("oob-int", "oob-array"), ("raises-only-lazulite",), BOUNDS),
    *[Allowed(f"snippet.at_{op}", ("oob",), ("raises-only-lazulite",), BOUNDS)
      for op in ("add", "subtract", "multiply", "divide", "maximum", "minimum")],
    # Boolean masks.
    Allowed("array.__getitem__", ("bool-mask",), ("raises-only-mlx",),
            "MLX refuses boolean masks (ValueError: boolean indices are not yet supported); lazulite "
            "selects the elements, as NumPy does"),
    # Values MLX gets wrong.
    Allowed("remainder", ("int-zero-divisor", "bool_", "int-op-bool_"), ("value",), ZERO_DIVISOR),
    Allowed("array.__rmod__", ("*-bool_-*",), ("value",), ZERO_DIVISOR),
    Allowed("power", ("*-op-negint",), ("value",),
            "MLX gives 0 for every integer raised to a negative integer power, 1 ** -2 included; "
            "lazulite gives the integer result (1 for 1, +-1 for -1, 0 otherwise)"),
    Allowed("pow", ("*-op-negint",), ("value",),
            "MLX gives 0 for every integer raised to a negative integer power, 1 ** -2 included; "
            "lazulite gives the integer result (1 for 1, +-1 for -1, 0 otherwise)"),
    Allowed("astype", ("to-uint8", "to-uint16", "to-uint32", "to-uint64", "to-int8", "to-int16", "to-int32",
                       "to-int64"), ("value",),
            "converting NaN, infinities or out-of-range floats to integers is C++ undefined behaviour in "
            "MLX (x86 gives the 'integer indefinite' value, 0 or the minimum); lazulite saturates (NaN "
            "gives 0), as Rust's conversions do"),
    Allowed("full", ("bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                     "complex64"), ("dtype",),
            "MLX ignores `dtype` when the fill value is a Python float (mx.full((2,), 1.5, mx.int32) is "
            "float32); lazulite returns the dtype asked for"),
    Allowed("prod", ("empty2",), ("value",),
            "MLX gives 0 for the product of an empty (2, 0) array; the empty product is 1 (NumPy)"),
    Allowed("all", ("empty2",), ("value",),
            "MLX gives False for `all` of an empty (2, 0) array; `all` of nothing is True (NumPy)"),
    Allowed("logsumexp", ("bool_", "uint8", "uint16", "uint32", "uint64"), ("value",),
            "MLX's logsumexp of bool and unsigned arrays is wrong (inf for small unsigned values); "
            "lazulite gives log(sum(exp(a))) in float32"),
    Allowed("left_shift", ("*-op-negint",), ("value",),
            "a shift by a negative count is C++ undefined behaviour in MLX (x86 shifts by the count "
            "modulo the width); lazulite gives 0"),
    Allowed("bitwise_left_shift", ("*-op-negint",), ("value",),
            "a shift by a negative count is C++ undefined behaviour in MLX (x86 shifts by the count "
            "modulo the width); lazulite gives 0"),
    Allowed("linalg.cholesky", ("not-spd",), ("value",),
            "for a matrix that is not positive definite MLX returns an arbitrary matrix; lazulite fills "
            "the factor with NaN, which a caller can detect"),
    # Float64 computed in float64.
    *[Allowed(fn, ("float64", "float64-*", "float32+float64"), ("value",), FLOAT64)
      for fn in ("cos", "sin", "exp", "erf", "erfinv", "sigmoid", "logaddexp", "logsumexp", "softmax",
                 "logcumsumexp", "random.normal")],
    # Raising where MLX silently accepts a meaningless argument.
    Allowed("linalg.eigh", ("bad-uplo",), ("raises-only-lazulite",),
            "MLX accepts any UPLO string silently; lazulite raises ValueError for one other than 'L' or 'U'"),
    # Calls MLX refuses with an internal error where the result is well defined.
    Allowed("take", ("int-index-flat",), ("raises-only-mlx",),
            "MLX fails on a negative integer index without an axis (an internal squeeze error); "
            "lazulite returns the element, as NumPy does"),
    Allowed("vecdot", ("broadcast",), ("raises-only-mlx",),
            "MLX refuses operands of different ranks ('axis is out of bounds'); lazulite broadcasts "
            "them, as NumPy's vecdot does"),
    Allowed("median", ("axis-empty-tuple", "axis-empty-tuple-keepdims"), ("raises-only-mlx",),
            "MLX fails on axis=() with an internal flatten error; lazulite reduces over no axes, as MLX's "
            "own sum and mean do"),
    # Products MLX's CPU build leaves unimplemented.
    Allowed("qqmm", ("several-rows", "float-weight"), ("raises-only-mlx",), CPU_NYI),
    Allowed("gather_qqmm", ("*",), ("raises-only-mlx",), CPU_NYI),
    Allowed("snippet.nn_QQLinear", ("training",), ("raises-only-mlx",), CPU_NYI),
    # More dtypes.
    Allowed("nan_to_num", ("float64", "complex64"), ("raises-only-mlx",), WIDER_DTYPES),
    Allowed("expm1", ("complex64",), ("raises-only-mlx",), WIDER_DTYPES),
    Allowed("linalg.det", ("complex64",), ("raises-only-mlx",), WIDER_DTYPES),
    Allowed("linalg.slogdet", ("complex64",), ("raises-only-mlx",), WIDER_DTYPES),
    Allowed("random.uniform", ("float64",), ("raises-only-mlx",), WIDER_DTYPES),
    Allowed("block_masked_mm", ("float16",), ("raises-only-mlx",), WIDER_DTYPES),
    Allowed("random.gumbel", ("float64",), ("raises-only-mlx",), WIDER_DTYPES),
    Allowed("random.truncated_normal", ("float64",), ("raises-only-mlx",), WIDER_DTYPES),
    # Documented signatures MLX's binding does not accept.
    *[Allowed(fn, ("keyword-a",), ("raises-only-mlx",), DOCUMENTED_KEYWORD)
      for fn in ("conj", "conjugate", "isfinite", "isinf", "isnan", "isneginf", "isposinf")],
    Allowed("add", ("keywords",), ("raises-only-mlx",), DOCUMENTED_KEYWORD),
    Allowed("bitwise_invert", ("keyword-a",), ("exception-class",),
            DOCUMENTED_KEYWORD + " (here MLX's TypeError for the keyword comes before the ValueError "
            "for the float input that lazulite raises)"),
    # Python scalars where MLX insists on arrays.
    Allowed("isclose", ("*-op-*", "int-op-*", "scalar-scalar", "float-int"), ("raises-only-mlx",), SCALARS),
    Allowed("allclose", ("*-op-*", "int-op-*", "scalar-scalar", "float-int"), ("raises-only-mlx",), SCALARS),
    Allowed("searchsorted", ("scalar-value",), ("raises-only-mlx",), SCALARS),
    Allowed("block_masked_mm", ("scalar",), ("exception-class",), SCALARS),
    Allowed("put_along_axis", ("scalar-values",), ("raises-only-mlx",), SCALARS),
    Allowed("result_type", ("scalar-array",), ("raises-only-mlx",), SCALARS),
]
