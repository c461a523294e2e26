"""The deterministic list of calls the harness makes on both libraries.

Every case's data comes from a NumPy generator seeded with a hash of the case's id, so a
case's values do not change when others are added. Ids read as
``function/what is varied``; the allow-list and the known gaps select cases by id.
"""

import re
import zlib

import numpy as np

from .spec import Arr, Case, Dt, Key

INTS = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
DTYPES = ["bool_", *INTS, *FLOATS, "complex64"]


def rng_for(case_id):
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def values(rng, shape, dtype, kind="any"):
    with np.errstate(over="ignore", invalid="ignore"):
        return _values(rng, shape, dtype, kind)


def _values(rng, shape, dtype, kind):
    """NumPy values suiting `dtype` (bfloat16 as float32). `kind`: any, positive, unit
    (inside (-1, 1)), nonzero, special (with nan, inf, -0.0 and large numbers)."""
    if dtype == "bool_":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        lo = 0 if dtype.startswith("u") else -5
        if kind == "positive":
            lo = 1
        v = rng.integers(lo, 10 if lo >= 0 else 6, size=shape)
        if kind == "nonzero":
            v = np.where(v == 0, 3, v)
        return v.astype(dtype)
    if kind == "positive":
        v = rng.uniform(0.1, 4.0, shape)
    elif kind == "unit":
        v = rng.uniform(-0.95, 0.95, shape)
    else:
        v = rng.normal(0, 2.0, shape)
    if kind == "special" and v.size:
        flat = v.reshape(-1)
        specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e-30, 0.5, -2.5]
        flat[: min(len(specials), flat.size)] = specials[: flat.size]
    if dtype == "complex64":
        im = rng.normal(0, 2.0, shape) if kind != "special" else rng.normal(0, 1.0, shape)
        return (v + 1j * im).astype(np.complex64)
    return v.astype({"float16": np.float16, "float64": np.float64}.get(dtype, np.float32))


def arr(case_id, shape, dtype="float32", layout="c", kind="any", salt=""):
    """An `Arr` of `shape` whose array is contiguous ("c"), a transposed view ("T"), a
    strided slice ("slice") or a broadcast ("bcast")."""
    rng = rng_for(case_id + "|" + salt)
    shape = tuple(shape)
    if layout == "T" and len(shape) >= 2:
        return Arr(values(rng, shape[::-1], dtype, kind), dtype, (("T",),))
    if layout == "slice" and len(shape) >= 1:
        big = (shape[0] * 2 + 1, *shape[1:])
        return Arr(values(rng, big, dtype, kind), dtype, (("slice", slice(1, None, 2)),))
    if layout == "bcast" and len(shape) >= 1:
        return Arr(values(rng, (1, *shape[1:]), dtype, kind), dtype, (("bcast", shape),))
    return Arr(values(rng, shape, dtype, kind), dtype)


CASES = []


# Calls that, with indices out of range, make MLX read or write outside its buffers. A
# write there corrupts the heap of the process, and later cases of the same process can
# hang or crash; so these run in a process of their own. So do calls whose outcome in MLX
# was seen to depend on what ran before in the process (a singular inverse, float indices).
INDEX_FNS = ("take", "take_along_axis", "put_along_axis", "slice", "slice_update", "array.__getitem__", "snippet.setitem",
             "snippet.at_", "gather_mm", "segmented_mm", "as_strided", "split", "unique", "partition", "argpartition",
             "topk", "linalg.")
RISKY = re.compile(r"oob|past|negative|too-big|zero-step|dup|empty|indices|singular|not-spd|float-index")


def add(fn, label, *args, check="value", **kwargs):
    ns = fn.split(".")[0] if fn.split(".")[0] in ("linalg", "fft", "random", "fast", "nn", "optimizers", "utils") else "core"
    if fn.startswith("array."):
        ns = "array"
    if fn.startswith("snippet."):
        ns = SNIPPET_NS.get(fn.split(".")[1], "core")
    alone = fn.startswith(INDEX_FNS) and bool(RISKY.search(label))
    CASES.append(Case(f"{fn}/{label}", fn, args, kwargs, check, ns, alone))


SNIPPET_NS = {}

SHAPES = {"0d": (), "empty": (0,), "empty2": (2, 0), "3d": (2, 3, 4)}

# ---------------------------------------------------------------- elementwise, one input
UNARY = {
    "abs": "any", "arccos": "unit", "arccosh": "positive", "arcsin": "unit", "arcsinh": "any",
    "arctan": "any", "arctanh": "unit", "acos": "unit", "acosh": "positive", "asin": "unit",
    "asinh": "any", "atan": "any", "atanh": "unit", "ceil": "any", "conj": "any",
    "conjugate": "any", "cos": "any", "cosh": "any", "degrees": "any", "erf": "any",
    "erfinv": "unit", "exp": "any", "expm1": "any", "floor": "any", "imag": "any",
    "isfinite": "any", "isinf": "any", "isnan": "any", "isneginf": "any", "isposinf": "any",
    "log": "positive", "log10": "positive", "log1p": "positive", "log2": "positive",
    "logical_not": "any", "negative": "any", "positive": "any", "radians": "any",
    "real": "any", "reciprocal": "nonzero", "round": "any", "rsqrt": "positive",
    "sigmoid": "any", "sign": "any", "sin": "any", "sinh": "any", "sqrt": "positive",
    "square": "any", "stop_gradient": "any", "tan": "any", "tanh": "any", "trunc": "any",
    "bitwise_invert": "any", "zeros_like": "any", "ones_like": "any", "contiguous": "any",
    "matrix_transpose": "any",
}
for fn, kind in UNARY.items():
    for dt in DTYPES:
        cid = f"{fn}/{dt}"
        add(fn, dt, arr(cid, (2, 3), dt, kind=kind))
    for layout in ("T", "slice", "bcast"):
        cid = f"{fn}/float32-{layout}"
        add(fn, f"float32-{layout}", arr(cid, (2, 3), "float32", layout, kind))
    for sname, shape in SHAPES.items():
        if fn == "matrix_transpose" and len(shape) < 2:
            continue
        cid = f"{fn}/float32-{sname}"
        add(fn, f"float32-{sname}", arr(cid, shape, "float32", kind=kind))
    add(fn, "float32-special", arr(f"{fn}/special", (3, 3), "float32", kind="special"))
    add(fn, "int32-T", arr(f"{fn}/int32-T", (2, 3), "int32", "T", kind))
    add(fn, "keyword-a", a=arr(f"{fn}/kw", (2, 3), "float32", kind=kind))
for fn in ("zeros_like", "ones_like"):
    for dt in ("int8", "float16", "complex64", "bool_"):
        add(fn, f"dtype-{dt}", arr(f"{fn}/d", (2, 2)), dtype=Dt(dt))
add("round", "decimals-2", arr("round/d2", (2, 3)), 2)
add("round", "decimals-neg1", arr("round/dn", (2, 3)) , decimals=-1)
add("round", "decimals-1-float16", arr("round/d16", (2, 3), "float16"), 1)
add("contiguous", "allow_col_major", arr("contiguous/acm", (3, 2), layout="T"), allow_col_major=True)

# ---------------------------------------------------------------- elementwise, two inputs
BINARY = {
    "add": "any", "subtract": "any", "multiply": "any", "divide": "nonzero",
    "floor_divide": "nonzero", "remainder": "nonzero", "divmod": "nonzero", "power": "positive",
    "maximum": "any", "minimum": "any", "equal": "any", "not_equal": "any", "greater": "any",
    "greater_equal": "any", "less": "any", "less_equal": "any", "logical_and": "any",
    "logical_or": "any", "logical_xor": "any", "arctan2": "any", "atan2": "any",
    "logaddexp": "any", "bitwise_and": "any", "bitwise_or": "any", "bitwise_xor": "any",
    "left_shift": "positive", "right_shift": "positive", "bitwise_left_shift": "positive",
    "bitwise_right_shift": "positive", "array_equal": "any", "isclose": "any",
    "allclose": "any", "pow": "positive",
}
MIXED = [("int32", "float32"), ("uint8", "int8"), ("int64", "float16"), ("bool_", "int32"),
         ("float16", "bfloat16"), ("uint32", "int32"), ("uint64", "int64"), ("float32", "float64"),
         ("float32", "complex64"), ("bool_", "float16"), ("int16", "uint16")]
for fn, kind in BINARY.items():
    for dt in DTYPES:
        cid = f"{fn}/{dt}"
        add(fn, dt, arr(cid, (2, 3), dt), arr(cid, (2, 3), dt, kind=kind, salt="b"))
    for a, b in MIXED:
        cid = f"{fn}/{a}+{b}"
        add(fn, f"{a}+{b}", arr(cid, (2, 3), a), arr(cid, (2, 3), b, kind=kind, salt="b"))
    for dt in ("bool_", "uint8", "int32", "float16", "float32", "complex64"):
        cid = f"{fn}/{dt}-scalars"
        x = arr(cid, (2, 3), dt)
        for sname, s in (("int", 3), ("float", 2.5), ("bool", True), ("negint", -2)):
            add(fn, f"{dt}-op-{sname}", x, s)
        add(fn, f"int-op-{dt}", 2, arr(cid, (2, 3), dt, kind=kind, salt="r"))
    add(fn, "scalar-scalar", 3, 4)
    add(fn, "float-int", 2.5, 4)
    add(fn, "broadcast", arr(f"{fn}/bc", (2, 1, 3)), arr(f"{fn}/bc", (4, 1), kind=kind, salt="b"))
    add(fn, "broadcast-bad", arr(f"{fn}/bb", (2, 3)), arr(f"{fn}/bb", (4,), kind=kind, salt="b"))
    for layout in ("T", "slice", "bcast"):
        cid = f"{fn}/{layout}"
        add(fn, f"float32-{layout}", arr(cid, (2, 3), "float32", layout), arr(cid, (2, 3), kind=kind, salt="b"))
    add(fn, "0d", arr(f"{fn}/0d", ()), arr(f"{fn}/0d", (), kind=kind, salt="b"))
    add(fn, "empty", arr(f"{fn}/e", (0, 3)), arr(f"{fn}/e", (3,), kind=kind, salt="b"))
    add(fn, "special", arr(f"{fn}/sp", (3, 3), kind="special"), arr(f"{fn}/sp", (3, 3), kind="special", salt="b"))
    add(fn, "int-zero-divisor", arr(f"{fn}/z", (4,), "int32", kind="positive"), Arr(np.array([0, 1, 0, 2], np.int32), "int32")) if kind == "nonzero" else None
for fn in ("isclose", "allclose"):
    a = arr(f"{fn}/kw", (3,))
    add(fn, "rtol-atol", a, arr(f"{fn}/kw", (3,), salt="b"), rtol=0.5, atol=1.0)
    add(fn, "equal_nan", arr(f"{fn}/n", (3, 3), kind="special"), arr(f"{fn}/n", (3, 3), kind="special"), equal_nan=True)
add("array_equal", "equal_nan", arr("array_equal/n", (3, 3), kind="special"), arr("array_equal/n", (3, 3), kind="special"), equal_nan=True)
add("array_equal", "shapes-differ", arr("ae/s", (2, 3)), arr("ae/s", (3, 2)))
add("add", "keywords", a=arr("add/kw", (2,)), b=arr("add/kw", (2,), salt="b"))

# ---------------------------------------------------------------- reductions
REDUCE = ["sum", "prod", "max", "min", "mean", "var", "std", "logsumexp", "all", "any",
          "median", "minmax"]
AXES = {"none": None, "0": 0, "neg1": -1, "tuple": (0, 2), "neg-tuple": (-1, -3), "empty-tuple": (),
        "oob": 3, "oob-neg": -4, "dup": (1, 1), "list": [0, 1]}
for fn in REDUCE + ["argmax", "argmin", "count_nonzero"]:
    for dt in DTYPES:
        cid = f"{fn}/{dt}"
        add(fn, dt, arr(cid, (2, 3), dt))
        add(fn, f"{dt}-axis1", arr(cid, (2, 3), dt), 1) if fn != "count_nonzero" else add(fn, f"{dt}-axis1", arr(cid, (2, 3), dt), axis=1)
    for aname, axis in AXES.items():
        if fn in ("argmax", "argmin") and isinstance(axis, (tuple, list)):
            continue
        cid = f"{fn}/axis-{aname}"
        add(fn, f"axis-{aname}", arr(cid, (2, 3, 4)), axis=axis)
        add(fn, f"axis-{aname}-keepdims", arr(cid, (2, 3, 4)), axis=axis, keepdims=True)
    for layout in ("T", "slice", "bcast"):
        add(fn, f"{layout}-axis0", arr(f"{fn}/{layout}", (2, 3), layout=layout), axis=0)
    for sname, shape in SHAPES.items():
        add(fn, sname, arr(f"{fn}/{sname}", shape))
    add(fn, "empty-axis1", arr(f"{fn}/ea", (0, 3)), axis=1)
    add(fn, "empty-axis0", arr(f"{fn}/ea0", (0, 3)), axis=0)
    add(fn, "special", arr(f"{fn}/sp", (3, 3), kind="special"), axis=1)
for fn in ("var", "std"):
    add(fn, "ddof1", arr(f"{fn}/dd", (3, 4)), axis=1, ddof=1)
    add(fn, "ddof-too-big", arr(f"{fn}/dd", (3, 4)), axis=1, ddof=5)
add("softmax", "default", arr("softmax/d", (2, 3)))
for aname, axis in AXES.items():
    add("softmax", f"axis-{aname}", arr(f"softmax/{aname}", (2, 3, 4)), axis=axis)
for dt in DTYPES:
    add("softmax", dt, arr(f"softmax/{dt}", (2, 3), dt), axis=-1)
add("softmax", "precise", arr("softmax/p", (2, 3), "float16"), axis=-1, precise=True)
add("softmax", "special", arr("softmax/sp", (3, 3), kind="special"), axis=-1)

# ---------------------------------------------------------------- scans
for fn in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "cumulative_sum", "cumulative_prod"):
    for dt in DTYPES:
        add(fn, dt, arr(f"{fn}/{dt}", (2, 3), dt), axis=1)
    for aname, axis in (("none", None), ("0", 0), ("neg1", -1), ("oob", 2), ("oob-neg", -3)):
        add(fn, f"axis-{aname}", arr(f"{fn}/ax", (2, 3)), axis=axis)
    add(fn, "positional-axis", arr(f"{fn}/pa", (2, 3)), 0)
    add(fn, "reverse", arr(f"{fn}/r", (2, 3)), axis=1, reverse=True)
    add(fn, "exclusive", arr(f"{fn}/x", (2, 3)), axis=1, inclusive=False)
    add(fn, "reverse-exclusive", arr(f"{fn}/rx", (2, 3)), axis=0, reverse=True, inclusive=False)
    add(fn, "T", arr(f"{fn}/T", (3, 4), layout="T"), axis=0)
    add(fn, "0d", arr(f"{fn}/0d", ()))
    add(fn, "empty", arr(f"{fn}/e", (0, 3)), axis=0)
    add(fn, "special", arr(f"{fn}/sp", (3, 3), kind="special"), axis=1)
for fn in ("cumsum", "cumprod"):
    for dt in ("float32", "int64", "float16"):
        add(fn, f"dtype-{dt}", arr(f"{fn}/dt", (2, 3), "int8"), axis=1, dtype=Dt(dt))

# ---------------------------------------------------------------- sorting
for fn in ("sort", "argsort"):
    for dt in DTYPES:
        add(fn, dt, arr(f"{fn}/{dt}", (3, 5), dt))
    for aname, axis in (("none", None), ("0", 0), ("oob", 2), ("oob-neg", -3)):
        add(fn, f"axis-{aname}", arr(f"{fn}/ax", (3, 5)), axis=axis)
    add(fn, "T", arr(f"{fn}/T", (3, 5), layout="T"), axis=0)
    add(fn, "special", arr(f"{fn}/sp", (3, 3), kind="special"))
    add(fn, "0d", arr(f"{fn}/0d", ()))
    add(fn, "empty", arr(f"{fn}/e", (0, 3)))
for fn in ("partition", "argpartition"):
    for dt in ("int32", "float32", "uint8", "bfloat16"):
        add(fn, f"{dt}-kth2", arr(f"{fn}/{dt}", (3, 6), dt), 2, check="partition")
    add(fn, "kth-neg", arr(f"{fn}/kn", (3, 6)), -1, check="partition")
    add(fn, "kth-oob", arr(f"{fn}/ko", (3, 6)), 6, check="partition")
    add(fn, "axis0", arr(f"{fn}/a0", (5, 3)), 1, axis=0, check="partition")
    add(fn, "axis-none", arr(f"{fn}/an", (3, 4)), 3, axis=None, check="partition")
    add(fn, "axis-oob", arr(f"{fn}/ao", (3, 4)), 1, axis=2, check="partition")
for dt in ("int32", "float32", "uint8", "float16", "bool_", "complex64"):
    add("topk", dt, arr(f"topk/{dt}", (3, 6), dt), 2, check="sorted-last")
add("topk", "axis0", arr("topk/a0", (5, 3)), 2, axis=0, check="sorted-last")
add("topk", "axis-none", arr("topk/an", (3, 4)), 3, axis=None, check="sorted-last")
add("topk", "k-too-big", arr("topk/kb", (3, 4)), 5)
add("topk", "k-zero", arr("topk/k0", (3, 4)), 0)
add("topk", "keyword-k", arr("topk/kk", (3, 4)), k=2, check="sorted-last")

# ---------------------------------------------------------------- shapes and layout
x234 = lambda cid, dt="float32", layout="c": arr(cid, (2, 3, 4), dt, layout)  # noqa: E731
for dt in DTYPES:
    add("reshape", dt, x234(f"reshape/{dt}", dt), (4, 6))
    add("transpose", dt, x234(f"transpose/{dt}", dt), (2, 0, 1))
    add("flatten", dt, x234(f"flatten/{dt}", dt))
    add("astype", f"to-{dt}", arr(f"astype/{dt}", (2, 3), kind="special"), Dt(dt))
    add("astype", f"from-{dt}", arr(f"astype/from-{dt}", (2, 3), dt), Dt("float32"))
    add("astype", f"{dt}-to-int8", arr(f"astype/i8-{dt}", (2, 3), dt), Dt("int8"))
    add("astype", f"{dt}-to-uint32", arr(f"astype/u32-{dt}", (2, 3), dt), Dt("uint32"))
    add("view", f"int32-as-{dt}", arr(f"view/{dt}", (2, 4), "int32"), Dt(dt))
    add("broadcast_to", dt, arr(f"broadcast_to/{dt}", (1, 3), dt), (2, 3))
    add("pad", dt, arr(f"pad/{dt}", (2, 3), dt), 1)
    add("tile", dt, arr(f"tile/{dt}", (2, 3), dt), (2, 1))
    add("repeat", dt, arr(f"repeat/{dt}", (2, 3), dt), 2, 1)
    add("roll", dt, arr(f"roll/{dt}", (2, 3), dt), 1, 1)
    add("flip", dt, arr(f"flip/{dt}", (2, 3), dt))
    add("concatenate", dt, [arr(f"concatenate/{dt}", (2, 3), dt), arr(f"concatenate/{dt}", (1, 3), dt, salt="b")])
    add("stack", dt, [arr(f"stack/{dt}", (2, 3), dt), arr(f"stack/{dt}", (2, 3), dt, salt="b")])
    add("where", dt, arr(f"where/{dt}", (2, 3), "bool_"), arr(f"where/{dt}", (2, 3), dt, salt="x"), arr(f"where/{dt}", (2, 3), dt, salt="y"))
    add("clip", dt, arr(f"clip/{dt}", (2, 3), dt), 0, 3)
    add("nan_to_num", dt, arr(f"nan_to_num/{dt}", (3, 3), dt, kind="special"))
    add("diag", dt, arr(f"diag/{dt}", (3, 3), dt))
    add("diagonal", dt, arr(f"diagonal/{dt}", (3, 4), dt))
    add("trace", dt, arr(f"trace/{dt}", (3, 3), dt))
    add("tril", dt, arr(f"tril/{dt}", (3, 4), dt))
    add("triu", dt, arr(f"triu/{dt}", (3, 4), dt), 1)
    add("diff", dt, arr(f"diff/{dt}", (2, 5), dt))
    add("squeeze", dt, arr(f"squeeze/{dt}", (1, 3, 1), dt))
    add("expand_dims", dt, arr(f"expand_dims/{dt}", (2, 3), dt), 0)
    add("swapaxes", dt, x234(f"swapaxes/{dt}", dt), 0, 2)
    add("moveaxis", dt, x234(f"moveaxis/{dt}", dt), 0, -1)
    add("split", dt, arr(f"split/{dt}", (4, 3), dt), 2)
    add("full", dt, (2, 3), 1.5, Dt(dt))
    add("zeros", dt, (2, 3), Dt(dt))
    add("ones", dt, (2, 2), Dt(dt))
    add("eye", dt, 3, dtype=Dt(dt))
    add("identity", dt, 2, Dt(dt))
    add("tri", dt, 3, 4, 1, Dt(dt))
    add("arange", dt, 0, 5, 1, Dt(dt))
    add("linspace", dt, 0, 4, 5, dtype=Dt(dt))
    add("full_like", dt, arr(f"full_like/{dt}", (2, 3), dt), 2)
    add("array", f"list-{dt}", [[1, 0, 3], [2, 5, 1]], Dt(dt))
    add("asarray", f"list-{dt}", [1.5, -2.0, 0.0], Dt(dt))
for layout in ("T", "slice", "bcast"):
    for fn, extra in (("reshape", ((6,),)), ("flatten", ()), ("transpose", ()), ("squeeze", ()),
                      ("expand_dims", (-1,)), ("swapaxes", (0, 1)), ("moveaxis", (1, 0)),
                      ("pad", (((0, 1), (2, 0)),)), ("tile", (2,)), ("repeat", (2,)),
                      ("roll", (-1,)), ("flip", ()), ("diag", ()), ("diagonal", ()), ("trace", ()),
                      ("tril", ()), ("triu", ()), ("diff", ()), ("split", (3, 1)), ("astype", (Dt("int32"),)),
                      ("view", (Dt("int32"),)), ("clip", (-1, 1)), ("broadcast_to", ((3, 2, 3),)),
                      ("unflatten", (1, (3, 1))), ("atleast_3d", ()), ("unstack", ())):
        add(fn, f"float32-{layout}", arr(f"{fn}/{layout}", (2, 3), layout=layout), *extra)
    add("concatenate", f"float32-{layout}", [arr(f"cat/{layout}", (2, 3), layout=layout), arr(f"cat/{layout}", (2, 3))], axis=1)
    add("stack", f"float32-{layout}", [arr(f"stack/{layout}", (2, 3), layout=layout), arr(f"stack/{layout}", (2, 3))], axis=-1)
    add("where", f"float32-{layout}", arr(f"where/{layout}", (2, 3), "bool_", layout), arr(f"where/{layout}", (2, 3), layout=layout, salt="x"), 0.0)

SHAPE_CALLS = [
    ("reshape", "infer", x234, ((-1, 4),), {}), ("reshape", "two-infer", x234, ((-1, -1),), {}),
    ("reshape", "bad-size", x234, ((5, 5),), {}), ("reshape", "keyword-shape", x234, (), {"shape": (24,)}),
    ("reshape", "negative-other", x234, ((-2, 12),), {}), ("reshape", "zero-dim", x234, ((0, -1),), {}),
    ("transpose", "none", x234, (), {}), ("transpose", "neg-axes", x234, ((-1, 0, 1),), {}),
    ("transpose", "bad-axes", x234, ((0, 1),), {}), ("transpose", "dup-axes", x234, ((0, 0, 1),), {}),
    ("transpose", "oob-axes", x234, ((0, 1, 3),), {}), ("transpose", "keyword-axes", x234, (), {"axes": [2, 1, 0]}),
    ("permute_dims", "axes", x234, ((1, 2, 0),), {}), ("permute_dims", "none", x234, (), {}),
    ("flatten", "start-end", x234, (1, 2), {}), ("flatten", "neg", x234, (), {"start_axis": -2}),
    ("flatten", "oob", x234, (), {"start_axis": 3}), ("flatten", "start-after-end", x234, (2, 1), {}),
    ("unflatten", "basic", x234, (2, (2, 2)), {}), ("unflatten", "infer", x234, (-1, (2, -1)), {}),
    ("unflatten", "bad", x234, (2, (3, 2)), {}), ("unflatten", "oob", x234, (3, (2, 2)), {}),
    ("squeeze", "axis", lambda c: arr(c, (1, 3, 1)), (0,), {}), ("squeeze", "axes", lambda c: arr(c, (1, 3, 1)), ((0, -1),), {}),
    ("squeeze", "not-one", lambda c: arr(c, (1, 3, 1)), (1,), {}), ("squeeze", "oob", lambda c: arr(c, (1, 3, 1)), (3,), {}),
    ("expand_dims", "neg", x234, (-1,), {}), ("expand_dims", "tuple", x234, ((0, 2),), {}),
    ("expand_dims", "oob", x234, (5,), {}), ("expand_dims", "oob-neg", x234, (-5,), {}),
    ("expand_dims", "dup", x234, ((1, 1),), {}), ("expand_dims", "0d", lambda c: arr(c, ()), (0,), {}),
    ("swapaxes", "oob", x234, (0, 3), {}), ("swapaxes", "neg", x234, (-1, -3), {}),
    ("moveaxis", "oob", x234, (0, 3), {}), ("moveaxis", "keywords", x234, (), {"source": 2, "destination": 0}),
    ("broadcast_to", "bad", x234, ((3, 4),), {}), ("broadcast_to", "prepend", x234, ((5, 2, 3, 4),), {}),
    ("broadcast_to", "scalar", lambda c: 3.0, ((2, 2),), {}), ("broadcast_to", "0d", lambda c: arr(c, ()), ((2,),), {}),
    ("tile", "int", x234, (2,), {}), ("tile", "more-reps", x234, ((2, 1, 1, 2),), {}),
    ("tile", "zero", x234, ((0, 1, 1),), {}), ("repeat", "flat", x234, (2,), {}),
    ("repeat", "axis-neg", x234, (3, -1), {}), ("repeat", "axis-oob", x234, (2, 3), {}),
    ("repeat", "zero", x234, (0, 1), {}), ("repeat", "keyword", x234, (), {"repeats": 2, "axis": 0}),
    ("roll", "flat", x234, (5,), {}), ("roll", "axes", x234, ((1, 2), (0, 2)), {}),
    ("roll", "neg", x234, (-7, -1), {}), ("roll", "oob", x234, (1, 3), {}),
    ("roll", "mismatch", x234, ((1, 2), (0,)), {}), ("roll", "tuple-shift-no-axis", x234, ((1, 2),), {}),
    ("flip", "axis", x234, (), {"axis": 1}), ("flip", "axes", x234, (), {"axis": (0, -1)}),
    ("flip", "oob", x234, (), {"axis": 3}),
    ("pad", "pairs", x234, ([(0, 1), (1, 0), (2, 2)],), {}), ("pad", "pair", x234, ((1, 2),), {}),
    ("pad", "constant", x234, (1,), {"constant_values": 7}), ("pad", "edge", x234, (2,), {"mode": "edge"}),
    ("pad", "reflect", x234, (1,), {"mode": "reflect"}), ("pad", "symmetric", x234, (2,), {"mode": "symmetric"}),
    ("pad", "negative", x234, (-1,), {}), ("pad", "bad-mode", x234, (1,), {"mode": "wrap"}),
    ("pad", "too-many", x234, ([(1, 1)] * 4,), {}), ("pad", "0d", lambda c: arr(c, ()), (1,), {}),
    ("split", "sections", lambda c: arr(c, (6, 2)), (3,), {}), ("split", "indices", lambda c: arr(c, (6, 2)), ([1, 4],), {}),
    ("split", "uneven", lambda c: arr(c, (5, 2)), (2,), {}), ("split", "axis", lambda c: arr(c, (2, 6)), (2,), {"axis": -1}),
    ("split", "oob", lambda c: arr(c, (2, 6)), (2,), {"axis": 2}), ("split", "indices-past", lambda c: arr(c, (6, 2)), ([2, 9],), {}),
    ("split", "indices-unsorted", lambda c: arr(c, (6, 2)), ([4, 1],), {}),
    ("unstack", "axis", x234, (), {"axis": 1}), ("unstack", "oob", x234, (), {"axis": 3}),
    ("unstack", "neg", x234, (), {"axis": -1}),
    ("diag", "k", lambda c: arr(c, (3, 3)), (1,), {}), ("diag", "vector", lambda c: arr(c, (3,)), (), {}),
    ("diag", "vector-k", lambda c: arr(c, (3,)), (), {"k": -2}), ("diag", "3d", x234, (), {}),
    ("diagonal", "offset", x234, (1, 0, 2), {}), ("diagonal", "neg-axes", x234, (), {"axis1": -1, "axis2": -2}),
    ("diagonal", "same-axes", x234, (0, 1, 1), {}), ("diagonal", "oob", x234, (0, 0, 3), {}),
    ("trace", "offset", lambda c: arr(c, (3, 4)), (1,), {}), ("trace", "dtype", lambda c: arr(c, (3, 3), "int8"), (), {"dtype": Dt("float32")}),
    ("trace", "3d", x234, (0, 1, 2), {}),
    ("tril", "k-neg", lambda c: arr(c, (3, 4)), (-1,), {}), ("tril", "3d", x234, (), {}), ("tril", "1d", lambda c: arr(c, (3,)), (), {}),
    ("triu", "3d", x234, (), {}),
    ("diff", "n2", lambda c: arr(c, (2, 5)), (2,), {}), ("diff", "axis0", lambda c: arr(c, (3, 5)), (), {"axis": 0}),
    ("diff", "n-too-big", lambda c: arr(c, (2, 5)), (6,), {}), ("diff", "n-zero", lambda c: arr(c, (2, 5)), (0,), {}),
    ("diff", "oob", lambda c: arr(c, (2, 5)), (1, 2), {}), ("diff", "negative-n", lambda c: arr(c, (2, 5)), (-1,), {}),
    ("diff", "bool", lambda c: arr(c, (2, 5), "bool_"), (), {}),
    ("clip", "none-min", x234, (None, 0.5), {}), ("clip", "none-max", x234, (-0.5, None), {}),
    ("clip", "both-none", x234, (None, None), {}), ("clip", "array-bounds", x234, (lambda c: arr(c, (4,), salt="lo"), 1.0), {}),
    ("clip", "keywords", x234, (), {"a_min": -1, "a_max": 1}),
    ("nan_to_num", "values", lambda c: arr(c, (3, 3), kind="special"), (), {"nan": 1.0, "posinf": 2.0, "neginf": -2.0}),
    ("nan_to_num", "float16-special", lambda c: arr(c, (3, 3), "float16", kind="special"), (), {}),
    ("nan_to_num", "scalar", lambda c: float("nan"), (), {}),
    ("where", "scalars", lambda c: arr(c, (2, 3), "bool_"), (1, 2.5), {}),
    ("where", "int-cond", lambda c: arr(c, (2, 3), "int32"), (1, 0), {}),
    ("where", "broadcast", lambda c: arr(c, (2, 1), "bool_"), (lambda c: arr(c, (3,), "int8", salt="x"), lambda c: arr(c, (2, 3), "float16", salt="y")), {}),
    ("where", "bad-broadcast", lambda c: arr(c, (2, 3), "bool_"), (lambda c: arr(c, (4,), salt="x"), 0), {}),
    ("concatenate", "axis-none", lambda c: [arr(c, (2, 3)), arr(c, (3, 1), salt="b")], (), {"axis": None}),
    ("concatenate", "axis-neg", lambda c: [arr(c, (2, 3)), arr(c, (2, 1), salt="b")], (-1,), {}),
    ("concatenate", "mismatch", lambda c: [arr(c, (2, 3)), arr(c, (2, 2), salt="b")], (), {}),
    ("concatenate", "oob", lambda c: [arr(c, (2, 3)), arr(c, (2, 3), salt="b")], (), {"axis": 2}),
    ("concatenate", "ndim-mismatch", lambda c: [arr(c, (2, 3)), arr(c, (3,), salt="b")], (), {}),
    ("concatenate", "mixed-dtypes", lambda c: [arr(c, (2, 3), "int8"), arr(c, (2, 3), "float16", salt="b")], (), {}),
    ("concatenate", "tuple", lambda c: (arr(c, (2, 3)), arr(c, (2, 3), salt="b")), (), {}),
    ("concatenate", "empty-list", lambda c: [], (), {}), ("concatenate", "one", lambda c: [arr(c, (2, 3))], (), {}),
    ("concatenate", "0d", lambda c: [arr(c, ()), arr(c, (), salt="b")], (), {}),
    ("concat", "basic", lambda c: [arr(c, (2, 3)), arr(c, (2, 3), salt="b")], (1,), {}),
    ("stack", "axis-neg", lambda c: [arr(c, (2, 3)), arr(c, (2, 3), salt="b")], (-1,), {}),
    ("stack", "mismatch", lambda c: [arr(c, (2, 3)), arr(c, (3, 2), salt="b")], (), {}),
    ("stack", "oob", lambda c: [arr(c, (2, 3)), arr(c, (2, 3), salt="b")], (), {"axis": 3}),
    ("stack", "mixed-dtypes", lambda c: [arr(c, (2, 3), "int32"), arr(c, (2, 3), "bool_", salt="b")], (), {}),
    ("stack", "empty-list", lambda c: [], (), {}), ("stack", "0d", lambda c: [arr(c, ()), arr(c, (), salt="b")], (), {}),
    ("atleast_1d", "0d", lambda c: arr(c, ()), (), {}), ("atleast_2d", "0d", lambda c: arr(c, ()), (), {}),
    ("atleast_3d", "0d", lambda c: arr(c, ()), (), {}), ("atleast_1d", "1d", lambda c: arr(c, (3,)), (), {}),
    ("atleast_2d", "1d", lambda c: arr(c, (3,)), (), {}), ("atleast_3d", "1d", lambda c: arr(c, (3,)), (), {}),
    ("atleast_3d", "2d", lambda c: arr(c, (2, 3)), (), {}), ("atleast_2d", "3d", x234, (), {}),
    ("atleast_1d", "several", lambda c: arr(c, ()), (lambda c: arr(c, (2, 2), salt="b"),), {}),
    ("atleast_2d", "several", lambda c: arr(c, (3,)), (lambda c: arr(c, (), salt="b"),), {}),
    ("broadcast_arrays", "two", lambda c: arr(c, (2, 1)), (lambda c: arr(c, (3,), "int32", salt="b"),), {}),
    ("broadcast_arrays", "bad", lambda c: arr(c, (2, 3)), (lambda c: arr(c, (4,), salt="b"),), {}),
    ("broadcast_arrays", "one", lambda c: arr(c, (2, 3)), (), {}),
    ("meshgrid", "xy", lambda c: arr(c, (3,)), (lambda c: arr(c, (2,), salt="b"),), {}),
    ("meshgrid", "ij", lambda c: arr(c, (3,)), (lambda c: arr(c, (2,), salt="b"),), {"indexing": "ij"}),
    ("meshgrid", "sparse", lambda c: arr(c, (3,)), (lambda c: arr(c, (2,), salt="b"),), {"sparse": True}),
    ("meshgrid", "bad-indexing", lambda c: arr(c, (3,)), (lambda c: arr(c, (2,), salt="b"),), {"indexing": "xx"}),
    ("meshgrid", "three", lambda c: arr(c, (3,)), (lambda c: arr(c, (2,), salt="b"), lambda c: arr(c, (4,), "int32", salt="c")), {}),
    ("as_strided", "window", lambda c: arr(c, (8,)), ((3, 4), (2, 1)), {}),
    ("as_strided", "offset", lambda c: arr(c, (8,)), ((2, 2), (1, 1), 3), {}),
    ("as_strided", "keywords", lambda c: arr(c, (2, 3)), (), {"shape": (3, 2), "strides": (1, 3)}),
    ("as_strided", "defaults", lambda c: arr(c, (2, 3)), (), {}),
    ("view", "size-change", lambda c: arr(c, (2, 4), "int32"), (Dt("int8"),), {}),
    ("view", "bad-last", lambda c: arr(c, (2, 3), "int8"), (Dt("int32"),), {}),
    ("view", "0d-wider", lambda c: arr(c, (), "int8"), (Dt("int16"),), {}),
    ("view", "scalar", lambda c: 1.0, (Dt("int32"),), {}),
    ("view", "T-narrow", lambda c: arr(c, (2, 3), "int32", "T"), (Dt("int8"),), {}),
    ("swapaxes", "keywords", x234, (), {"axis1": 0, "axis2": 1}),
]
for fn, label, first, extra, kw in SHAPE_CALLS:
    cid = f"{fn}/{label}"
    mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
    add(fn, label, mk(first), *[mk(e) for e in extra], **{k: mk(v) for k, v in kw.items()})

# ---------------------------------------------------------------- creation
CREATE = [
    ("zeros", "int-shape", (3,), {}), ("zeros", "0d", ((),), {}), ("zeros", "negative", ((-1, 2),), {}),
    ("zeros", "keyword", (), {"shape": (2,), "dtype": Dt("int16")}), ("zeros", "list-shape", ([2, 0],), {}),
    ("ones", "default", ((2, 3),), {}), ("ones", "empty", ((0,),), {}),
    ("full", "array-vals", ((2, 3), lambda c: arr(c, (3,), "int32")), {}), ("full", "bad-broadcast", ((2, 3), lambda c: arr(c, (2,))), {}),
    ("full", "int-val", ((2,), 3), {}), ("full", "bool-val", ((2,), True), {}), ("full", "float-val", ((2,), 2.5), {}),
    ("full", "complex-val", ((2,), 1 + 2j), {}), ("full", "int-shape", (4, 0.5), {}),
    ("full", "keyword", (), {"shape": [2], "vals": 1, "dtype": Dt("float16")}),
    ("full_like", "dtype", (lambda c: arr(c, (2, 2)), 3), {"dtype": Dt("int32")}),
    ("full_like", "array-vals", (lambda c: arr(c, (2, 3), "int32"), lambda c: arr(c, (3,), "float32", salt="v")), {}),
    ("empty", "shape", ((2, 3),), {"dtype": Dt("int32")}),
    ("empty_like", "shape", (lambda c: arr(c, (2, 3), "int32"),), {}),
    ("eye", "rect", (2, 4), {}), ("eye", "k", (3, 3, 1), {}), ("eye", "k-neg", (3,), {"k": -2}), ("eye", "k-far", (3,), {"k": 5}),
    ("eye", "negative", (-2,), {}), ("eye", "zero", (0,), {}), ("eye", "keywords", (), {"n": 2, "m": 3, "k": 0, "dtype": Dt("int8")}),
    ("identity", "zero", (0,), {}), ("identity", "negative", (-1,), {}),
    ("tri", "square", (3,), {}), ("tri", "k-neg", (3, 3, -1), {}), ("tri", "keywords", (), {"n": 2, "m": 4, "k": 1}),
    ("arange", "stop", (5,), {}), ("arange", "float", (0.5, 3.0, 0.5), {}), ("arange", "neg-step", (5, 0, -2), {}),
    ("arange", "empty", (5, 0), {}), ("arange", "zero-step", (0, 5, 0), {}), ("arange", "float-stop", (3.5,), {}),
    ("arange", "keyword-dtype", (0, 4), {"dtype": Dt("float16")}), ("arange", "keywords", (), {"start": 1, "stop": 4, "step": 1}),
    ("arange", "int-float-step", (0, 3, 0.5), {}), ("arange", "float-int-dtype", (0.5, 4.5), {"dtype": Dt("int32")}),
    ("arange", "start-stop", (2, 7), {}), ("arange", "bool-dtype", (0, 2), {"dtype": Dt("bool_")}),
    ("linspace", "default", (0, 1), {}), ("linspace", "num", (-1, 1, 7), {}), ("linspace", "one", (2, 5, 1), {}),
    ("linspace", "zero", (2, 5, 0), {}), ("linspace", "negative", (0, 1, -2), {}), ("linspace", "reverse", (3, -3, 4), {}),
    ("linspace", "endpoint", (0, 1, 4), {"endpoint": False}),
    ("bartlett", "5", (5,), {}), ("blackman", "5", (5,), {}), ("hamming", "5", (5,), {}), ("hanning", "5", (5,), {}),
    ("bartlett", "1", (1,), {}), ("blackman", "0", (0,), {}), ("hamming", "1", (1,), {}), ("hanning", "0", (0,), {}),
    ("hanning", "negative", (-3,), {}),
    ("array", "nested-ints", ([[1, 2], [3, 4]],), {}), ("array", "floats", ([1.5, 2],), {}), ("array", "bools", ([True, False],), {}),
    ("array", "mixed-bool-int", ([True, 2],), {}), ("array", "complex", ([1 + 1j, 2],), {}), ("array", "scalar-int", (3,), {}),
    ("array", "scalar-float", (2.5,), {}), ("array", "scalar-bool", (False,), {}), ("array", "ragged", ([[1, 2], [3]],), {}),
    ("array", "empty-list", ([],), {}), ("array", "big-int", (2**40,), {}), ("array", "too-big-int", (2**70,), {}),
    ("array", "numpy-float64", (np.arange(3.0),), {}), ("array", "numpy-int16", (np.arange(3, dtype=np.int16),), {}),
    ("array", "numpy-uint64", (np.arange(3, dtype=np.uint64),), {}), ("array", "numpy-bool", (np.array([True, False]),), {}),
    ("array", "numpy-0d", (np.float32(1.5),), {}), ("array", "numpy-strided", (np.arange(12.0).reshape(3, 4)[::2, 1::2],), {}),
    ("array", "from-array", (lambda c: arr(c, (2, 2), "int8"),), {}), ("array", "from-array-dtype", (lambda c: arr(c, (2, 2), "int8"), Dt("float32")), {}),
    ("array", "list-of-arrays", ([lambda c: arr(c, (2,)), lambda c: arr(c, (2,), salt="b")],), {}),
    ("array", "keyword-dtype", ([1, 2],), {"dtype": Dt("int8")}), ("array", "tuple", ((1, 2, 3),), {}),
    ("array", "nan-inf", ([float("nan"), float("inf")],), {}), ("array", "neg-int-to-uint", ([-1], Dt("uint8")), {}),
    ("asarray", "array", (lambda c: arr(c, (2, 2)),), {}), ("asarray", "scalar", (3,), {}), ("asarray", "numpy", (np.arange(4, dtype=np.int8),), {}),
    ("asarray", "dtype", ([1, 2], Dt("float16")), {}),
]
for fn, label, args, kw in CREATE:
    cid = f"{fn}/{label}"
    mk = lambda v: v(cid) if callable(v) else [mk(x) for x in v] if isinstance(v, list) else v  # noqa: E731
    check = "shape" if fn in ("empty", "empty_like") else "value"
    add(fn, label, *[mk(a) for a in args], check=check, **{k: mk(v) for k, v in kw.items()})

# ---------------------------------------------------------------- indexing functions
IDX = lambda c, vals, dt="int32": Arr(np.array(vals), dt)  # noqa: E731
INDEXING = [
    ("take", "flat", (lambda c: arr(c, (3, 4)), IDX(0, [0, 5, 11])), {}),
    ("take", "axis", (lambda c: arr(c, (3, 4)), IDX(0, [2, 0])), {"axis": 1}),
    ("take", "axis-neg", (lambda c: arr(c, (3, 4)), IDX(0, [[1], [0]])), {"axis": -2}),
    ("take", "negative-index", (lambda c: arr(c, (3, 4)), IDX(0, [-1, -3])), {"axis": 0}),
    ("take", "int-index", (lambda c: arr(c, (3, 4)), 2), {"axis": 0}),
    ("take", "int-index-flat", (lambda c: arr(c, (3, 4)), -1), {}),
    ("take", "uint8-index", (lambda c: arr(c, (3, 4)), IDX(0, [1, 2], "uint8")), {"axis": 1}),
    ("take", "int64-index", (lambda c: arr(c, (3, 4)), IDX(0, [1, 2], "int64")), {"axis": 1}),
    ("take", "float-index", (lambda c: arr(c, (3, 4)), IDX(0, [1.0], "float32")), {"axis": 1}),
    ("take", "bool-index", (lambda c: arr(c, (3, 4)), IDX(0, [True, False], "bool_")), {"axis": 1}),
    ("take", "axis-oob", (lambda c: arr(c, (3, 4)), IDX(0, [0])), {"axis": 2}),
    ("take", "oob", (lambda c: arr(c, (3, 4)), IDX(0, [4])), {"axis": 1}),
    ("take", "oob-neg", (lambda c: arr(c, (3, 4)), IDX(0, [-5])), {"axis": 1}),
    ("take", "oob-int", (lambda c: arr(c, (3, 4)), 7), {"axis": 1}),
    ("take", "empty-index", (lambda c: arr(c, (3, 4)), Arr(np.zeros((0,), np.int32), "int32")), {"axis": 1}),
    ("take", "T", (lambda c: arr(c, (3, 4), layout="T"), IDX(0, [0, 2])), {"axis": 0}),
    ("take", "0d-source", (lambda c: arr(c, ()), IDX(0, [0])), {}),
    ("take_along_axis", "basic", (lambda c: arr(c, (3, 4)), IDX(0, [[0], [3], [1]])), {"axis": 1}),
    ("take_along_axis", "axis0", (lambda c: arr(c, (3, 4)), IDX(0, [[2, 1, 0, 0]])), {"axis": 0}),
    ("take_along_axis", "none", (lambda c: arr(c, (3, 4)), IDX(0, [0, 11, -1])), {"axis": None}),
    ("take_along_axis", "broadcast", (lambda c: arr(c, (3, 4)), IDX(0, [[1, 2]])), {"axis": 1}),
    ("take_along_axis", "ndim-mismatch", (lambda c: arr(c, (3, 4)), IDX(0, [1, 2])), {"axis": 1}),
    ("take_along_axis", "negative", (lambda c: arr(c, (3, 4)), IDX(0, [[-1], [-4], [0]])), {"axis": 1}),
    ("take_along_axis", "oob", (lambda c: arr(c, (3, 4)), IDX(0, [[4], [0], [1]])), {"axis": 1}),
    ("take_along_axis", "axis-oob", (lambda c: arr(c, (3, 4)), IDX(0, [[0]])), {"axis": 2}),
    ("take_along_axis", "float-index", (lambda c: arr(c, (3, 4)), IDX(0, [[0.0]], "float32")), {"axis": 1}),
    ("put_along_axis", "basic", (lambda c: arr(c, (3, 4)), IDX(0, [[0], [3], [1]]), lambda c: arr(c, (3, 1), salt="v")), {"axis": 1}),
    ("put_along_axis", "scalar-values", (lambda c: arr(c, (3, 4)), IDX(0, [[0], [3], [1]]), 9.0), {"axis": 1}),
    ("put_along_axis", "none", (lambda c: arr(c, (3, 4)), IDX(0, [0, 5]), lambda c: arr(c, (2,), salt="v")), {"axis": None}),
    ("put_along_axis", "int-into-float", (lambda c: arr(c, (3, 4)), IDX(0, [[1]]), lambda c: arr(c, (1, 1), "int32", salt="v")), {"axis": 0}),
    ("put_along_axis", "float-into-int", (lambda c: arr(c, (3, 4), "int32"), IDX(0, [[1]]), lambda c: arr(c, (1, 1), "float32", salt="v")), {"axis": 0}),
    ("put_along_axis", "oob", (lambda c: arr(c, (3, 4)), IDX(0, [[5], [0], [1]]), lambda c: arr(c, (3, 1), salt="v")), {"axis": 1}),
    ("put_along_axis", "negative", (lambda c: arr(c, (3, 4)), IDX(0, [[-1], [0], [1]]), lambda c: arr(c, (3, 1), salt="v")), {"axis": 1}),
    ("put_along_axis", "axis-oob", (lambda c: arr(c, (3, 4)), IDX(0, [[0]]), lambda c: arr(c, (1, 1), salt="v")), {"axis": -3}),
    ("slice", "basic", (lambda c: arr(c, (4, 5)), IDX(0, [1, 2]), [0, 1], [2, 2]), {}),
    ("slice", "one-axis", (lambda c: arr(c, (4, 5)), IDX(0, [3]), [1], [2]), {}),
    ("slice", "past-end", (lambda c: arr(c, (4, 5)), IDX(0, [3, 4]), [0, 1], [2, 2]), {}),
    ("slice", "size-too-big", (lambda c: arr(c, (4, 5)), IDX(0, [0]), [0], [5]), {}),
    ("slice", "mismatch", (lambda c: arr(c, (4, 5)), IDX(0, [0, 1]), [0], [1]), {}),
    ("slice_update", "basic", (lambda c: arr(c, (4, 5)), lambda c: arr(c, (2, 2), salt="u"), IDX(0, [1, 2]), [0, 1]), {}),
    ("slice_update", "past-end", (lambda c: arr(c, (4, 5)), lambda c: arr(c, (2, 2), salt="u"), IDX(0, [3, 4]), [0, 1]), {}),
    ("slice_update", "int-update", (lambda c: arr(c, (4, 5)), lambda c: arr(c, (1, 2), "int32", salt="u"), IDX(0, [1, 2]), [0, 1]), {}),
    ("searchsorted", "left", (Arr(np.array([1.0, 2, 2, 5]), "float32"), lambda c: arr(c, (3, 2))), {}),
    ("searchsorted", "right", (Arr(np.array([1.0, 2, 2, 5]), "float32"), Arr(np.array([2.0, 0, 9]), "float32")), {"side": "right"}),
    ("searchsorted", "int", (Arr(np.array([1, 3, 5]), "int32"), Arr(np.array([0, 3, 6]), "int32")), {}),
    ("searchsorted", "mixed", (Arr(np.array([1, 3, 5]), "int32"), Arr(np.array([0.5, 3.5]), "float32")), {}),
    ("searchsorted", "bad-side", (Arr(np.array([1, 3, 5]), "int32"), Arr(np.array([0, 3, 6]), "int32")), {"side": "middle"}),
    ("searchsorted", "2d-sorted", (lambda c: arr(c, (2, 3)), Arr(np.array([0.0]), "float32")), {}),
    ("searchsorted", "scalar-value", (Arr(np.array([1, 3, 5]), "int32"), 2), {}),
    ("unique", "size", (Arr(np.array([3, 1, 3, 2, 1]), "int32"), 5), {}),
    ("unique", "size-small", (Arr(np.array([3, 1, 3, 2, 1]), "int32"), 2), {}),
    ("unique", "all-returns", (Arr(np.array([3, 1, 3, 2, 1]), "int32"), 4), {"return_index": True, "return_inverse": True, "return_counts": True}),
    ("unique", "fill", (Arr(np.array([3.0, 1, 3]), "float32"), 4), {"fill_value": -1}),
    ("unique", "2d", (lambda c: arr(c, (2, 3), "int32"), 6), {}),
    ("unique", "nan", (Arr(np.array([np.nan, 1.0, np.nan]), "float32"), 3), {}),
]
for fn, label, args, kw in INDEXING:
    cid = f"{fn}/{label}"
    mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
    add(fn, label, *[mk(a) for a in args], **{k: mk(v) for k, v in kw.items()})
for dt in DTYPES:
    add("take", dt, arr(f"take/{dt}", (3, 4), dt), IDX(0, [2, 0]), axis=1)
    add("take_along_axis", dt, arr(f"tal/{dt}", (3, 4), dt), IDX(0, [[0], [3], [1]]), axis=1)
    add("put_along_axis", dt, arr(f"pal/{dt}", (3, 4), dt), IDX(0, [[0], [3], [1]]), arr(f"pal/{dt}", (3, 1), dt, salt="v"), axis=1)
    add("searchsorted", dt, Arr(np.sort(values(rng_for(dt), (5,), dt)) if dt != "complex64" else np.arange(5.0).astype(np.complex64), dt),
        arr(f"ss/{dt}", (3,), dt))
    add("unique", dt, arr(f"unique/{dt}", (6,), dt), 6)
    add("slice_update", dt, arr(f"su/{dt}", (3, 4), dt), arr(f"su/{dt}", (2, 2), dt, salt="u"), IDX(0, [1, 1]), [0, 1])

# ---------------------------------------------------------------- array methods and indexing
GETITEM = {
    "int": 1, "neg-int": -1, "oob-int": 5, "oob-neg-int": -6, "slice": slice(1, None), "step": slice(None, None, -2),
    "tuple": (1, slice(0, 2)), "ellipsis": (Ellipsis, 0), "none": (None, 1), "two-ellipsis": (Ellipsis, Ellipsis),
    "too-many": (0, 0, 0, 0), "slice-past": slice(3, 10), "zero-step": slice(None, None, 0),
    "int-array": Arr(np.array([0, 2]), "int32"), "neg-array": Arr(np.array([-1, 0]), "int32"),
    "oob-array": Arr(np.array([0, 9]), "int32"), "oob-neg-array": Arr(np.array([-9]), "int32"),
    "2d-array": Arr(np.array([[0, 1], [2, 3]]), "int64"), "uint-array": Arr(np.array([1]), "uint8"),
    "float-array": Arr(np.array([1.0]), "float32"), "list": [0, 2], "list-neg": [-1],
    "mixed": (slice(None), Arr(np.array([1, 0]), "int32")), "two-arrays": (Arr(np.array([0, 1]), "int32"), Arr(np.array([2, 0]), "int32")),
    "apart": (Arr(np.array([0, 1]), "int32"), slice(None), Arr(np.array([1, 0]), "int32")),
    "bool-mask": Arr(np.array([True, False, True, False, True]), "bool_"),
    "bool-scalar": True, "float": 1.0, "string": "a", "np-int": np.int64(2),
}
for label, index in GETITEM.items():
    add("array.__getitem__", label, arr(f"getitem/{label}", (5, 3, 2)), index)
add("array.__getitem__", "0d-empty-tuple", arr("getitem/0d", ()), ())
add("array.__getitem__", "0d-int", arr("getitem/0di", ()), 0)
add("array.__getitem__", "T-slice", arr("getitem/T", (3, 4), layout="T"), (slice(None), 1))
for label, index, upd in (("int", 1, 2.0), ("slice", slice(0, 2), -1.0), ("array", Arr(np.array([0, 2]), "int32"), 3.0),
                          ("oob-int", 7, 1.0), ("oob-array", Arr(np.array([9]), "int32"), 1.0),
                          ("dup-array", Arr(np.array([1, 1]), "int32"), Arr(np.array([[5.0], [6.0]]), "float32")),
                          ("bad-shape", slice(0, 2), Arr(np.zeros((3, 3)), "float32"))):
    add("snippet.setitem", label, arr(f"setitem/{label}", (4, 2)), index, upd)
for fn in ("add", "subtract", "multiply", "divide", "max", "min", "prod", "maximum", "minimum"):
    for label, index in (("int", 1), ("array", Arr(np.array([0, 0, 2]), "int32")), ("oob", Arr(np.array([5]), "int32"))):
        add(f"snippet.at_{fn}", label, arr(f"at/{fn}", (4,)), index, 2.0) if fn not in ("max", "min", "prod") else None
METHODS = [
    ("sum", (), {"axis": 0}), ("prod", (1,), {}), ("max", (), {"keepdims": True}), ("min", (-1,), {}), ("mean", (), {}),
    ("var", (), {"ddof": 1}), ("std", (0,), {}), ("logsumexp", (1,), {}), ("all", (), {}), ("any", (0,), {}),
    ("argmax", (), {"axis": 1}), ("argmin", (), {}), ("cumsum", (1,), {}), ("cumprod", (), {"axis": 0, "reverse": True}),
    ("cummax", (0,), {}), ("cummin", (), {"axis": 1}), ("logcumsumexp", (1,), {}), ("flatten", (), {}),
    ("squeeze", (), {}), ("swapaxes", (0, 1), {}), ("moveaxis", (1, 0), {}), ("split", (3,), {"axis": 1}),
    ("diagonal", (), {}), ("diag", (), {"k": 1}), ("reshape", (3, 2), {}), ("reshape", ((6,),), {}),
    ("transpose", (), {}), ("transpose", (1, 0), {}), ("astype", (Dt("int8"),), {}), ("round", (1,), {}),
    ("abs", (), {}), ("exp", (), {}), ("log", (), {}), ("sqrt", (), {}), ("square", (), {}), ("rsqrt", (), {}),
    ("reciprocal", (), {}), ("sin", (), {}), ("cos", (), {}), ("log1p", (), {}), ("log2", (), {}), ("log10", (), {}),
    ("conj", (), {}), ("tolist", (), {}), ("item", (), {}), ("__len__", (), {}), ("__abs__", (), {}), ("__neg__", (), {}),
    ("__invert__", (), {}), ("__bool__", (), {}), ("__int__", (), {}), ("__float__", (), {}), ("__contains__", (1.0,), {}),
    ("__matmul__", (lambda c: arr(c, (3, 2), salt="m"),), {}), ("__pow__", (2,), {}), ("__rpow__", (2,), {}),
    ("__floordiv__", (2,), {}), ("__rfloordiv__", (2,), {}), ("__mod__", (0.5,), {}), ("__rmod__", (3,), {}),
    ("__truediv__", (2,), {}), ("__rtruediv__", (1,), {}), ("__lt__", (0,), {}), ("__ge__", (0,), {}),
    ("__eq__", (None,), {}), ("__ne__", ("a",), {}), ("__and__", (True,), {}), ("__or__", (1,), {}), ("__xor__", (1,), {}),
    ("__lshift__", (1,), {}), ("__rshift__", (1,), {}), ("__radd__", (1,), {}), ("__rsub__", (1,), {}),
    ("__add__", ([1, 2, 3],), {}), ("__iter__", (), {}), ("__hash__", (), {}), ("__array__", (), {}),
    ("__copy__", (), {}), ("__deepcopy__", ({},), {}), ("__round__", (), {}), ("__repr__", (), {}), ("__str__", (), {}),
    ("__format__", ("",), {}), ("__index__", (), {}), ("__div__", (2,), {}), ("__rdiv__", (3,), {}),
    ("__bytes__", (), {}),
]
for i, (name, margs, mkw) in enumerate(METHODS):
    for dt in ("float32", "int32", "bool_"):
        for shape in ((2, 3), ()):
            cid = f"array.{name}/{i}-{dt}-{len(shape)}d"
            mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
            if name == "__iter__":
                add("snippet.iterate", f"{dt}-{len(shape)}d", arr(cid, shape, dt))
                continue
            check = "shape" if name in ("__hash__",) else "value"
            add(f"array.{name}", f"{i}-{dt}-{len(shape)}d", arr(cid, shape, dt), *[mk(a) for a in margs], check=check, **mkw)
for prop in ("shape", "dtype", "ndim", "size", "itemsize", "nbytes", "T", "mT", "real", "imag"):
    for dt in ("float32", "complex64", "int8"):
        add("snippet.property", f"{prop}-{dt}", arr(f"prop/{prop}{dt}", (2, 3), dt), prop)

# ---------------------------------------------------------------- products and convolutions
for dt in DTYPES:
    add("matmul", dt, arr(f"matmul/{dt}", (2, 3), dt), arr(f"matmul/{dt}", (3, 4), dt, salt="b"), check="loose")
    add("inner", dt, arr(f"inner/{dt}", (2, 3), dt), arr(f"inner/{dt}", (4, 3), dt, salt="b"), check="loose")
    add("outer", dt, arr(f"outer/{dt}", (3,), dt), arr(f"outer/{dt}", (2,), dt, salt="b"))
    add("kron", dt, arr(f"kron/{dt}", (2, 2), dt), arr(f"kron/{dt}", (1, 3), dt, salt="b"))
    add("tensordot", dt, arr(f"td/{dt}", (2, 3, 4), dt), arr(f"td/{dt}", (3, 4, 2), dt, salt="b"), check="loose")
    add("vecdot", dt, arr(f"vecdot/{dt}", (2, 3), dt), arr(f"vecdot/{dt}", (2, 3), dt, salt="b"), check="loose")
    add("addmm", dt, arr(f"addmm/{dt}", (2, 4), dt, salt="c"), arr(f"addmm/{dt}", (2, 3), dt), arr(f"addmm/{dt}", (3, 4), dt, salt="b"), check="loose")
PRODUCTS = [
    ("matmul", "vec-mat", (lambda c: arr(c, (3,)), lambda c: arr(c, (3, 2), salt="b")), {}),
    ("matmul", "mat-vec", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (3,), salt="b")), {}),
    ("matmul", "vec-vec", (lambda c: arr(c, (3,)), lambda c: arr(c, (3,), salt="b")), {}),
    ("matmul", "batch-broadcast", (lambda c: arr(c, (2, 1, 2, 3)), lambda c: arr(c, (4, 3, 2), salt="b")), {}),
    ("matmul", "mismatch", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (2, 3), salt="b")), {}),
    ("matmul", "0d", (lambda c: arr(c, ()), lambda c: arr(c, (3,), salt="b")), {}),
    ("matmul", "empty-k", (lambda c: arr(c, (2, 0)), lambda c: arr(c, (0, 3), salt="b")), {}),
    ("matmul", "T", (lambda c: arr(c, (3, 2), layout="T"), lambda c: arr(c, (2, 4), layout="T", salt="b")), {}),
    ("matmul", "slice", (lambda c: arr(c, (3, 3), layout="slice"), lambda c: arr(c, (3, 2), layout="bcast", salt="b")), {}),
    ("matmul", "mixed", (lambda c: arr(c, (2, 3), "int32"), lambda c: arr(c, (3, 2), "float16", salt="b")), {}),
    ("addmm", "alpha-beta", (lambda c: arr(c, (2, 2), salt="c"), lambda c: arr(c, (2, 3)), lambda c: arr(c, (3, 2), salt="b")), {"alpha": 2.0, "beta": 0.5}),
    ("addmm", "broadcast-c", (lambda c: arr(c, (2,), salt="c"), lambda c: arr(c, (2, 3)), lambda c: arr(c, (3, 2), salt="b")), {}),
    ("addmm", "batched", (lambda c: arr(c, (2, 2, 2), salt="c"), lambda c: arr(c, (2, 2, 3)), lambda c: arr(c, (3, 2), salt="b")), {}),
    ("inner", "1d", (lambda c: arr(c, (3,)), lambda c: arr(c, (3,), salt="b")), {}),
    ("inner", "0d", (lambda c: arr(c, ()), lambda c: arr(c, (3,), salt="b")), {}),
    ("inner", "mismatch", (lambda c: arr(c, (3,)), lambda c: arr(c, (4,), salt="b")), {}),
    ("outer", "2d", (lambda c: arr(c, (2, 2)), lambda c: arr(c, (3,), salt="b")), {}),
    ("outer", "0d", (lambda c: arr(c, ()), lambda c: arr(c, (3,), salt="b")), {}),
    ("kron", "1d-2d", (lambda c: arr(c, (2,)), lambda c: arr(c, (2, 2), salt="b")), {}),
    ("kron", "0d", (lambda c: arr(c, ()), lambda c: arr(c, (2,), salt="b")), {}),
    ("tensordot", "int-axes", (lambda c: arr(c, (2, 3, 4)), lambda c: arr(c, (4, 2), salt="b")), {"axes": 1}),
    ("tensordot", "list-axes", (lambda c: arr(c, (2, 3, 4)), lambda c: arr(c, (4, 3), salt="b")), {"axes": [[1, 2], [1, 0]]}),
    ("tensordot", "zero", (lambda c: arr(c, (2,)), lambda c: arr(c, (3,), salt="b")), {"axes": 0}),
    ("tensordot", "mismatch", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (2, 3), salt="b")), {"axes": 1}),
    ("tensordot", "too-many", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (2, 3), salt="b")), {"axes": 3}),
    ("vecdot", "axis", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (2, 3), salt="b")), {"axis": 0}),
    ("vecdot", "broadcast", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (3,), salt="b")), {}),
    ("vecdot", "complex", (lambda c: arr(c, (3,), "complex64"), lambda c: arr(c, (3,), "complex64", salt="b")), {}),
    ("vecdot", "oob", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (2, 3), salt="b")), {"axis": 2}),
    ("einsum", "matmul", ("ij,jk->ik", lambda c: arr(c, (2, 3)), lambda c: arr(c, (3, 2), salt="b")), {}),
    ("einsum", "trace", ("ii", lambda c: arr(c, (3, 3))), {}), ("einsum", "diag", ("ii->i", lambda c: arr(c, (3, 3))), {}),
    ("einsum", "transpose", ("ij->ji", lambda c: arr(c, (2, 3))), {}), ("einsum", "sum", ("ij->", lambda c: arr(c, (2, 3))), {}),
    ("einsum", "implicit", ("ij,jk", lambda c: arr(c, (2, 3)), lambda c: arr(c, (3, 2), salt="b")), {}),
    ("einsum", "ellipsis", ("...ij,...jk->...ik", lambda c: arr(c, (4, 2, 3)), lambda c: arr(c, (3, 2), salt="b")), {}),
    ("einsum", "outer", ("i,j->ij", lambda c: arr(c, (3,)), lambda c: arr(c, (2,), salt="b")), {}),
    ("einsum", "three", ("ij,jk,kl->il", lambda c: arr(c, (2, 3)), lambda c: arr(c, (3, 4), salt="b"), lambda c: arr(c, (4, 2), salt="c")), {}),
    ("einsum", "bad-operands", ("ij,jk->ik", lambda c: arr(c, (2, 3))), {}),
    ("einsum", "bad-shape", ("ij,jk->ik", lambda c: arr(c, (2, 3)), lambda c: arr(c, (2, 2), salt="b")), {}),
    ("einsum", "bad-subscript", ("ij->k", lambda c: arr(c, (2, 3))), {}),
    ("einsum", "int", ("ij,jk->ik", lambda c: arr(c, (2, 3), "int32"), lambda c: arr(c, (3, 2), "int32", salt="b")), {}),
    ("convolve", "full", (lambda c: arr(c, (6,)), lambda c: arr(c, (3,), salt="b")), {}),
    ("convolve", "same", (lambda c: arr(c, (6,)), lambda c: arr(c, (3,), salt="b")), {"mode": "same"}),
    ("convolve", "valid", (lambda c: arr(c, (6,)), lambda c: arr(c, (3,), salt="b")), {"mode": "valid"}),
    ("convolve", "swapped", (lambda c: arr(c, (3,)), lambda c: arr(c, (6,), salt="b")), {}),
    ("convolve", "bad-mode", (lambda c: arr(c, (6,)), lambda c: arr(c, (3,), salt="b")), {"mode": "wide"}),
    ("convolve", "2d", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (3,), salt="b")), {}),
    ("conv1d", "basic", (lambda c: arr(c, (2, 8, 3)), lambda c: arr(c, (4, 3, 3), salt="w")), {}),
    ("conv1d", "stride-pad-dil", (lambda c: arr(c, (2, 9, 3)), lambda c: arr(c, (4, 3, 3), salt="w")), {"stride": 2, "padding": 1, "dilation": 2}),
    ("conv1d", "groups", (lambda c: arr(c, (1, 8, 4)), lambda c: arr(c, (4, 3, 2), salt="w")), {"groups": 2}),
    ("conv1d", "bad-channels", (lambda c: arr(c, (2, 8, 3)), lambda c: arr(c, (4, 3, 2), salt="w")), {}),
    ("conv1d", "bad-groups", (lambda c: arr(c, (1, 8, 4)), lambda c: arr(c, (4, 3, 2), salt="w")), {"groups": 3}),
    ("conv1d", "kernel-too-big", (lambda c: arr(c, (1, 2, 1)), lambda c: arr(c, (1, 5, 1), salt="w")), {}),
    ("conv1d", "2d-input", (lambda c: arr(c, (8, 3)), lambda c: arr(c, (4, 3, 3), salt="w")), {}),
    ("conv1d", "int", (lambda c: arr(c, (1, 5, 1), "int32"), lambda c: arr(c, (1, 2, 1), "int32", salt="w")), {}),
    ("conv1d", "float16", (lambda c: arr(c, (1, 5, 2), "float16"), lambda c: arr(c, (2, 2, 2), "float16", salt="w")), {}),
    ("conv2d", "basic", (lambda c: arr(c, (1, 5, 5, 2)), lambda c: arr(c, (3, 3, 3, 2), salt="w")), {}),
    ("conv2d", "tuples", (lambda c: arr(c, (1, 6, 5, 2)), lambda c: arr(c, (3, 2, 3, 2), salt="w")), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    ("conv2d", "groups", (lambda c: arr(c, (1, 5, 5, 4)), lambda c: arr(c, (2, 3, 3, 2), salt="w")), {"groups": 2}),
    ("conv3d", "basic", (lambda c: arr(c, (1, 4, 4, 4, 1)), lambda c: arr(c, (2, 2, 2, 2, 1), salt="w")), {"padding": 1}),
    ("conv_general", "basic", (lambda c: arr(c, (1, 6, 2)), lambda c: arr(c, (3, 3, 2), salt="w")), {"stride": 2, "padding": ([1], [2]), "input_dilation": 2}),
    ("conv_general", "flip", (lambda c: arr(c, (1, 5, 5, 1)), lambda c: arr(c, (1, 2, 2, 1), salt="w")), {"flip": True, "kernel_dilation": [2, 1]}),
    ("conv_transpose1d", "basic", (lambda c: arr(c, (1, 5, 2)), lambda c: arr(c, (3, 3, 2), salt="w")), {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose2d", "basic", (lambda c: arr(c, (1, 4, 4, 2)), lambda c: arr(c, (3, 3, 3, 2), salt="w")), {"stride": 2}),
    ("conv_transpose3d", "basic", (lambda c: arr(c, (1, 3, 3, 3, 1)), lambda c: arr(c, (1, 2, 2, 2, 1), salt="w")), {}),
    ("conv_transpose1d", "output-padding-too-big", (lambda c: arr(c, (1, 5, 2)), lambda c: arr(c, (3, 3, 2), salt="w")), {"stride": 2, "output_padding": 2}),
    ("block_masked_mm", "masks", (lambda c: arr(c, (64, 64)), lambda c: arr(c, (64, 64), salt="b")), {"block_size": 32, "mask_out": Arr(np.array([[True, False], [False, True]]), "bool_")}),
    ("block_masked_mm", "no-mask", (lambda c: arr(c, (32, 32)), lambda c: arr(c, (32, 32), salt="b")), {"block_size": 32}),
    ("block_masked_mm", "lhs-rhs", (lambda c: arr(c, (70, 40)), lambda c: arr(c, (40, 66), salt="b")), {"block_size": 32, "mask_lhs": Arr(np.array([[True, False], [True, True], [False, True]]), "bool_"), "mask_rhs": Arr(np.array([[True, False, True], [False, True, True]]), "bool_")}),
    ("block_masked_mm", "all-three", (lambda c: arr(c, (2, 64, 64)), lambda c: arr(c, (64, 64), salt="b")), {"block_size": 64, "mask_out": Arr(np.array([[[True]], [[False]]]), "bool_"), "mask_lhs": Arr(np.array([[True]]), "bool_"), "mask_rhs": Arr(np.array([[True]]), "bool_")}),
    ("block_masked_mm", "float-masks", (lambda c: arr(c, (64, 64)), lambda c: arr(c, (64, 64), salt="b")), {"block_size": 32, "mask_out": Arr(np.array([[0.5, 1.0], [2.0, 0.0]]), "float32"), "mask_lhs": Arr(np.array([[1.0, 0.25], [0.0, 1.0]]), "float32")}),
    ("block_masked_mm", "mixed-masks", (lambda c: arr(c, (64, 64)), lambda c: arr(c, (64, 64), salt="b")), {"block_size": 32, "mask_lhs": Arr(np.array([[True, False], [True, True]]), "bool_"), "mask_rhs": Arr(np.array([[0.5, 1.0], [1.0, 3.0]]), "float32")}),
    ("block_masked_mm", "vector-lhs", (lambda c: arr(c, (64,)), lambda c: arr(c, (64, 64), salt="b")), {"block_size": 32, "mask_lhs": Arr(np.array([True, False]), "bool_"), "mask_out": Arr(np.array([False, True]), "bool_")}),
    ("block_masked_mm", "vector-rhs", (lambda c: arr(c, (64, 64)), lambda c: arr(c, (64,), salt="b")), {"block_size": 32, "mask_rhs": Arr(np.array([True, False]), "bool_"), "mask_out": Arr(np.array([True, False]), "bool_")}),
    ("block_masked_mm", "float16", (lambda c: arr(c, (32, 32), "float16"), lambda c: arr(c, (32, 32), "float16", salt="b")), {"block_size": 32, "mask_out": Arr(np.array([[True]]), "bool_")}),
    ("block_masked_mm", "block-16", (lambda c: arr(c, (32, 32)), lambda c: arr(c, (32, 32), salt="b")), {"block_size": 16, "mask_out": Arr(np.array([[True]]), "bool_")}),
    ("block_masked_mm", "int", (lambda c: arr(c, (32, 32), "int32"), lambda c: arr(c, (32, 32), "int32", salt="b")), {"block_size": 32, "mask_out": Arr(np.array([[True]]), "bool_")}),
    ("block_masked_mm", "mismatch", (lambda c: arr(c, (32, 16)), lambda c: arr(c, (32, 32), salt="b")), {"block_size": 32, "mask_out": Arr(np.array([[True]]), "bool_")}),
    ("block_masked_mm", "scalar", (1.0, lambda c: arr(c, (32, 32), salt="b")), {"block_size": 32, "mask_out": Arr(np.array([[True]]), "bool_")}),
    ("gather_mm", "rhs-indices", (lambda c: arr(c, (3, 1, 4)), lambda c: arr(c, (2, 4, 3), salt="b")), {"rhs_indices": Arr(np.array([1, 0, 1]), "uint32")}),
    ("gather_mm", "both", (lambda c: arr(c, (2, 1, 4)), lambda c: arr(c, (2, 4, 3), salt="b")), {"lhs_indices": Arr(np.array([1, 0, 0]), "uint32"), "rhs_indices": Arr(np.array([0, 0, 1]), "uint32")}),
    ("gather_mm", "none", (lambda c: arr(c, (2, 4)), lambda c: arr(c, (4, 3), salt="b")), {}),
    ("gather_mm", "oob", (lambda c: arr(c, (3, 1, 4)), lambda c: arr(c, (2, 4, 3), salt="b")), {"rhs_indices": Arr(np.array([1, 5, 1]), "uint32")}),
    ("gather_mm", "int32-indices", (lambda c: arr(c, (3, 1, 4)), lambda c: arr(c, (2, 4, 3), salt="b")), {"rhs_indices": Arr(np.array([1, 0, 1]), "int32")}),
    ("segmented_mm", "basic", (lambda c: arr(c, (2, 6)), lambda c: arr(c, (6, 3), salt="b"), Arr(np.array([[0, 2], [2, 6]]), "uint32")), {}),
    ("segmented_mm", "batched-empty", (lambda c: arr(c, (3, 8)), lambda c: arr(c, (8, 2), salt="b"), Arr(np.array([[[0, 8], [3, 3]], [[1, 5], [5, 8]]]), "int32")), {}),
    ("segmented_mm", "keyword", (lambda c: arr(c, (2, 4)), lambda c: arr(c, (4, 2), salt="b")), {"segments": Arr(np.array([[0, 4]]), "int64")}),
    ("segmented_mm", "float16", (lambda c: arr(c, (2, 4), "float16"), lambda c: arr(c, (4, 2), "float32", salt="b"), Arr(np.array([[0, 3]]), "uint32")), {}),
    ("segmented_mm", "batched-a", (lambda c: arr(c, (2, 2, 4)), lambda c: arr(c, (4, 2), salt="b"), Arr(np.array([[0, 4]]), "uint32")), {}),
    ("segmented_mm", "bad-segments", (lambda c: arr(c, (2, 4)), lambda c: arr(c, (4, 2), salt="b"), Arr(np.array([0, 4, 1]), "uint32")), {}),
    ("segmented_mm", "float-segments", (lambda c: arr(c, (2, 4)), lambda c: arr(c, (4, 2), salt="b"), Arr(np.array([[0.0, 4.0]]), "float32")), {}),
    ("segmented_mm", "int", (lambda c: arr(c, (2, 4), "int32"), lambda c: arr(c, (4, 2), "int32", salt="b"), Arr(np.array([[0, 4]]), "uint32")), {}),
    ("hadamard_transform", "basic", (lambda c: arr(c, (2, 8)),), {}), ("hadamard_transform", "scale", (lambda c: arr(c, (4,)),), {"scale": 0.5}),
    ("hadamard_transform", "not-power", (lambda c: arr(c, (6,)),), {}), ("hadamard_transform", "int", (lambda c: arr(c, (4,), "int32"),), {}),
    ("hadamard_transform", "float16", (lambda c: arr(c, (2, 16), "float16"),), {}), ("hadamard_transform", "12", (lambda c: arr(c, (12,)),), {}),
    ("to_fp8", "basic", (lambda c: arr(c, (2, 5), kind="special"),), {}), ("to_fp8", "float16", (lambda c: arr(c, (4,), "float16"),), {}),
    ("from_fp8", "basic", (Arr(np.arange(0, 256, 17), "uint8"),), {}), ("from_fp8", "float32", (Arr(np.arange(0, 256, 17), "uint8"),), {"dtype": Dt("float32")}),
    ("from_fp8", "not-uint8", (lambda c: arr(c, (3,)),), {}),
    ("quantize", "default", (lambda c: arr(c, (4, 64)),), {}), ("quantize", "bits4-g32", (lambda c: arr(c, (4, 64)),), {"group_size": 32, "bits": 4}),
    ("quantize", "bits8", (lambda c: arr(c, (2, 64)),), {"bits": 8}), ("quantize", "bits3", (lambda c: arr(c, (2, 64)),), {"bits": 3, "group_size": 64}),
    ("quantize", "bad-group", (lambda c: arr(c, (2, 64)),), {"group_size": 48}), ("quantize", "not-divisible", (lambda c: arr(c, (2, 40)),), {}),
    ("quantize", "1d", (lambda c: arr(c, (64,)),), {}), ("quantize", "bad-mode", (lambda c: arr(c, (2, 64)),), {"mode": "other"}),
    ("snippet.quantize_roundtrip", "g64b4", (lambda c: arr(c, (4, 64)),), {}),
    ("snippet.quantized_matmul", "transpose", (lambda c: arr(c, (2, 64)), lambda c: arr(c, (8, 64), salt="w")), {}),
    ("snippet.quantized_matmul", "no-transpose", (lambda c: arr(c, (2, 64)), lambda c: arr(c, (64, 64), salt="w")), {"transpose": False}),
    ("snippet.gather_qmm", "rhs", (lambda c: arr(c, (3, 1, 64)), lambda c: arr(c, (2, 8, 64), salt="w")), {}),
    *[("quantize", m, (lambda c: arr(c, (4, 64)),), {"mode": m}) for m in ("mxfp4", "mxfp8", "nvfp4")],
    ("quantize", "nvfp4-group32", (lambda c: arr(c, (2, 64)),), {"mode": "nvfp4", "group_size": 32}),
    ("quantize", "mxfp8-bits4", (lambda c: arr(c, (2, 64)),), {"mode": "mxfp8", "bits": 4}),
    ("quantize", "float16-mxfp4", (lambda c: arr(c, (2, 64), "float16"),), {"mode": "mxfp4"}),
    ("quantize", "bfloat16-nvfp4", (lambda c: arr(c, (2, 64), "bfloat16"),), {"mode": "nvfp4"}),
    *[("snippet.quantize_roundtrip_fp", m, (lambda c: arr(c, (4, 64)),), {"mode": m}) for m in ("mxfp4", "mxfp8", "nvfp4")],
    *[("snippet.quantized_matmul_fp", m, (lambda c: arr(c, (2, 64)), lambda c: arr(c, (8, 64), salt="w")), {"mode": m})
      for m in ("mxfp4", "mxfp8", "nvfp4")],
    ("snippet.quantized_matmul_fp", "no-transpose", (lambda c: arr(c, (2, 64)), lambda c: arr(c, (64, 64), salt="w")),
     {"mode": "mxfp8", "transpose": False}),
    *[("snippet.gather_qmm_fp", m, (lambda c: arr(c, (3, 1, 64)), lambda c: arr(c, (2, 8, 64), salt="w")), {"mode": m})
      for m in ("mxfp4", "mxfp8", "nvfp4")],
]
for fn, label, args, kw in PRODUCTS:
    cid = f"{fn}/{label}"
    mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
    add(fn, label, *[mk(a) for a in args], check="loose", **{k: mk(v) for k, v in kw.items()})

for label, args in (("matmul", ("ij,jk->ik", (2, 3), (3, 4))), ("three", ("ij,jk,kl->il", (2, 3), (3, 40), (40, 2))),
                    ("bad", ("ij,jk->ik", (2, 3), (2, 4)))):
    add("einsum_path", label, args[0], *[arr(f"einsum_path/{label}", s, salt=str(i)) for i, s in enumerate(args[1:])])
add("qqmm", "several-rows", arr("qqmm/d", (2, 64)), arr("qqmm/d", (8, 64), salt="w"))
add("qqmm", "float-weight", arr("qqmm/f", (1, 64)), arr("qqmm/f", (8, 64), salt="w"))
for m in ("nvfp4", "mxfp8", "mxfp4"):
    for dt in ("float32", "bfloat16", "float16"):
        cid = f"snippet.qqmm_packed/{m}-{dt}"
        add("snippet.qqmm_packed", f"{m}-{dt}", arr(cid, (1, 64), dt), arr(cid, (8, 64), dt, salt="w"),
            check="loose", mode=m)
add("gather_qqmm", "default", arr("gqqmm/d", (2, 64)), arr("gqqmm/d", (8, 64), salt="w"))
for fmt in ("npy", "npz", "npz_compressed", "safetensors", "gguf"):
    SNIPPET_NS[f"save_load_{fmt}"] = "core"
    add(f"snippet.save_load_{fmt}", "float32-int8", arr(f"save/{fmt}", (2, 3)), arr(f"save/{fmt}", (4,), "int8", salt="b"))
add("snippet.printoptions_state", "2", 2)

# ---------------------------------------------------------------- linalg
def spd(cid, n, dtype="float32", batch=()):
    rng = rng_for(cid)
    m = rng.normal(size=(*batch, n, n))
    return Arr(m @ np.swapaxes(m, -1, -2) + n * np.eye(n), dtype)


def lower(cid, n, dtype="float32"):
    rng = rng_for(cid)
    return Arr(np.tril(rng.normal(size=(n, n))) + 3 * np.eye(n), dtype)


for dt in ("float32", "float64", "float16", "int32", "complex64", "bfloat16"):
    c = f"linalg/{dt}"
    add("linalg.inv", dt, spd(c, 3, dt), check="loose")
    add("linalg.cholesky", dt, spd(c, 3, dt), check="loose")
    add("linalg.qr", dt, arr(c, (4, 3), dt), check="sign-free")
    add("linalg.svd", dt, arr(c, (3, 4), dt), check="sign-free")
    add("linalg.eigh", dt, spd(c, 3, dt), check="sign-free")
    add("linalg.eigvalsh", dt, spd(c, 3, dt), check="loose")
    add("linalg.det", dt, spd(c, 3, dt), check="loose")
    add("linalg.slogdet", dt, spd(c, 3, dt), check="loose")
    add("linalg.solve", dt, spd(c, 3, dt), arr(c, (3,), dt, salt="b"), check="loose")
    add("linalg.norm", dt, arr(c, (3, 4), dt), check="loose")
    add("linalg.pinv", dt, arr(c, (3, 4), dt), check="loose")
    add("linalg.lu", dt, spd(c, 3, dt), check="loose")
    add("linalg.lu_factor", dt, spd(c, 3, dt), check="loose")
    add("linalg.tri_inv", dt, lower(c, 3, dt), check="loose")
    add("linalg.cholesky_inv", dt, Arr(np.linalg.cholesky(spd(c, 3).base), dt), check="loose")
    add("linalg.solve_triangular", dt, lower(c, 3, dt), arr(c, (3, 2), dt, salt="b"), check="loose")
    add("linalg.cross", dt, arr(c, (2, 3), dt), arr(c, (2, 3), dt, salt="b"), check="loose")
    add("linalg.eigvals", dt, spd(c, 3, dt), check="sorted-last")
    add("linalg.eig", dt, spd(c, 3, dt), check="sign-free")
LINALG = [
    ("linalg.inv", "batched", (lambda c: spd(c, 3, batch=(2,)),), {}), ("linalg.inv", "singular", (Arr(np.ones((2, 2)), "float32"),), {}),
    ("linalg.inv", "not-square", (lambda c: arr(c, (2, 3)),), {}), ("linalg.inv", "1d", (lambda c: arr(c, (3,)),), {}),
    ("linalg.inv", "empty", (Arr(np.zeros((0, 0)), "float32"),), {}), ("linalg.inv", "T", (lambda c: Arr(spd(c, 3).base, "float32", (("T",),)),), {}),
    ("linalg.cholesky", "upper", (lambda c: spd(c, 3),), {"upper": True}), ("linalg.cholesky", "not-spd", (Arr(-np.eye(2), "float32"),), {}),
    ("linalg.cholesky", "not-square", (lambda c: arr(c, (2, 3)),), {}), ("linalg.cholesky_inv", "upper", (lambda c: Arr(np.linalg.cholesky(spd(c, 3).base).T, "float32"),), {"upper": True}),
    ("linalg.qr", "wide", (lambda c: arr(c, (3, 5)),), {}), ("linalg.qr", "batched", (lambda c: arr(c, (2, 3, 3)),), {}), ("linalg.qr", "1d", (lambda c: arr(c, (3,)),), {}),
    ("linalg.svd", "no-uv", (lambda c: arr(c, (4, 3)),), {"compute_uv": False}), ("linalg.svd", "batched", (lambda c: arr(c, (2, 3, 2)),), {}),
    ("linalg.svd", "1d", (lambda c: arr(c, (3,)),), {}),
    ("linalg.eigh", "upper", (lambda c: arr(c, (3, 3)),), {"UPLO": "U"}), ("linalg.eigh", "bad-uplo", (lambda c: spd(c, 3),), {"UPLO": "X"}),
    ("linalg.eigvalsh", "lower-only", (lambda c: arr(c, (3, 3)),), {}), ("linalg.eigh", "not-square", (lambda c: arr(c, (2, 3)),), {}),
    ("linalg.det", "batched", (lambda c: arr(c, (2, 3, 3)),), {}), ("linalg.det", "singular", (Arr(np.ones((3, 3)), "float32"),), {}),
    ("linalg.slogdet", "negative", (Arr(np.diag([1.0, -2.0, 3.0]), "float32"),), {}), ("linalg.slogdet", "singular", (Arr(np.zeros((2, 2)), "float32"),), {}),
    ("linalg.solve", "matrix-rhs", (lambda c: spd(c, 3), lambda c: arr(c, (3, 2), salt="b")), {}),
    ("linalg.solve", "batched", (lambda c: spd(c, 3, batch=(2,)), lambda c: arr(c, (2, 3), salt="b")), {}),
    ("linalg.solve", "mismatch", (lambda c: spd(c, 3), lambda c: arr(c, (4,), salt="b")), {}),
    ("linalg.solve", "int", (Arr(np.array([[2, 1], [1, 3]]), "int32"), Arr(np.array([1, 2]), "int32")), {}),
    ("linalg.solve_triangular", "upper", (lambda c: Arr(lower(c, 3).base.T.copy(), "float32"), lambda c: arr(c, (3,), salt="b")), {"upper": True}),
    ("linalg.tri_inv", "upper", (lambda c: Arr(lower(c, 3).base.T.copy(), "float32"),), {"upper": True}),
    ("linalg.norm", "vector", (lambda c: arr(c, (5,)),), {}), ("linalg.norm", "ord-1", (lambda c: arr(c, (5,)),), {"ord": 1}),
    ("linalg.norm", "ord-inf", (lambda c: arr(c, (5,)),), {"ord": float("inf")}), ("linalg.norm", "ord-neg-inf", (lambda c: arr(c, (5,)),), {"ord": -float("inf")}),
    ("linalg.norm", "ord-0", (lambda c: arr(c, (5,)),), {"ord": 0}), ("linalg.norm", "ord-3", (lambda c: arr(c, (5,)),), {"ord": 3}),
    ("linalg.norm", "ord-neg1", (lambda c: arr(c, (5,)),), {"ord": -1}),
    ("linalg.norm", "fro", (lambda c: arr(c, (3, 4)),), {"ord": "fro"}), ("linalg.norm", "nuc", (lambda c: arr(c, (3, 4)),), {"ord": "nuc"}),
    ("linalg.norm", "matrix-1", (lambda c: arr(c, (3, 4)),), {"ord": 1}), ("linalg.norm", "matrix-inf", (lambda c: arr(c, (3, 4)),), {"ord": float("inf")}),
    ("linalg.norm", "matrix-2", (lambda c: arr(c, (3, 4)),), {"ord": 2}), ("linalg.norm", "matrix-neg2", (lambda c: arr(c, (3, 4)),), {"ord": -2}),
    ("linalg.norm", "matrix-neg1", (lambda c: arr(c, (3, 4)),), {"ord": -1}),
    ("linalg.norm", "axis", (lambda c: arr(c, (3, 4)),), {"axis": 1}), ("linalg.norm", "axes", (lambda c: arr(c, (2, 3, 4)),), {"axis": (0, 2)}),
    ("linalg.norm", "keepdims", (lambda c: arr(c, (3, 4)),), {"axis": 0, "keepdims": True}), ("linalg.norm", "3d", (lambda c: arr(c, (2, 3, 4)),), {}),
    ("linalg.norm", "fro-vector", (lambda c: arr(c, (5,)),), {"ord": "fro"}), ("linalg.norm", "bad-ord", (lambda c: arr(c, (3, 4)),), {"ord": "bad"}),
    ("linalg.norm", "axis-oob", (lambda c: arr(c, (3, 4)),), {"axis": 2}), ("linalg.norm", "three-axes", (lambda c: arr(c, (2, 3, 4)),), {"axis": (0, 1, 2)}),
    ("linalg.norm", "complex", (lambda c: arr(c, (3,), "complex64"),), {}), ("linalg.norm", "int", (lambda c: arr(c, (3,), "int32"),), {}),
    ("linalg.norm", "0d", (lambda c: arr(c, ()),), {}),
    ("linalg.cross", "axis0", (lambda c: arr(c, (3, 2)), lambda c: arr(c, (3, 2), salt="b")), {"axis": 0}),
    ("linalg.cross", "two", (lambda c: arr(c, (2,)), lambda c: arr(c, (2,), salt="b")), {}),
    ("linalg.cross", "broadcast", (lambda c: arr(c, (2, 3)), lambda c: arr(c, (3,), salt="b")), {}),
    ("linalg.pinv", "batched", (lambda c: arr(c, (2, 2, 3)),), {}), ("linalg.lu", "rect", (lambda c: arr(c, (3, 4)),), {}),
    ("linalg.eig", "rotation", (Arr(np.array([[0.0, -1.0], [1.0, 0.0]]), "float32"),), {}),
    ("linalg.eigvals", "rotation", (Arr(np.array([[0.0, -1.0], [1.0, 0.0]]), "float32"),), {}),
    ("linalg.eig", "complex-general", (lambda c: arr(c, (4, 4), "complex64"),), {}),
    ("linalg.eigvals", "complex-batched", (lambda c: arr(c, (2, 3, 3), "complex64"),), {}),
    ("matrix_norm", "fro", (lambda c: arr(c, (3, 4)),), {}),
]
for fn, label, args, kw in LINALG:
    cid = f"{fn}/{label}"
    mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
    check = "sign-free" if fn in ("linalg.qr", "linalg.svd", "linalg.eigh", "linalg.eig") else "loose"
    if fn == "linalg.eigvals":
        check = "sorted-last"
    add(fn, label, *[mk(a) for a in args], check=check, **{k: mk(v) for k, v in kw.items()})

# ---------------------------------------------------------------- fft
for dt in ("float32", "float64", "complex64", "float16", "int32", "bfloat16", "bool_"):
    c = f"fft/{dt}"
    for fn in ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn",
               "fftshift", "ifftshift"):
        add(f"fft.{fn}", dt, arr(c, (4, 6), dt), check="loose")
FFT = [
    ("fft", "n-pad", {"n": 8}), ("fft", "n-crop", {"n": 3}), ("fft", "axis0", {"axis": 0}), ("fft", "axis-oob", {"axis": 2}),
    ("fft", "n-zero", {"n": 0}), ("fft", "norm-ortho", {"norm": "ortho"}), ("fft", "norm-forward", {"norm": "forward"}),
    ("fft", "norm-bad", {"norm": "bad"}), ("ifft", "norm-ortho", {"norm": "ortho"}), ("rfft", "n-odd", {"n": 5}),
    ("irfft", "n", {"n": 9}), ("irfft", "norm-forward", {"norm": "forward"}), ("rfft", "axis0", {"axis": 0}),
    ("fft2", "s", {"s": (3, 8)}), ("fft2", "axes", {"axes": [0, 1]}), ("fft2", "axes-dup", {"axes": [1, 1]}),
    ("fftn", "axes", {"axes": [0]}), ("fftn", "s", {"s": (2, 2)}), ("fftn", "s-mismatch", {"s": (2,), "axes": [0, 1]}),
    ("rfftn", "axes", {"axes": [1, 0]}), ("irfftn", "s", {"s": (4, 6)}), ("irfft2", "s", {"s": (4, 5)}),
    ("fftshift", "axes", {"axes": 0}), ("ifftshift", "axes", {"axes": [1]}), ("fftshift", "axes-oob", {"axes": [2]}),
    ("ifft2", "norm-forward", {"norm": "forward"}), ("rfft2", "s", {"s": (4, 4)}),
]
for fn, label, kw in FFT:
    add(f"fft.{fn}", label, arr(f"fft/{fn}/{label}", (4, 6)), check="loose", **kw)
for fn in ("fft", "rfft", "fftshift"):
    add(f"fft.{fn}", "1d", arr(f"fft/{fn}/1d", (7,)), check="loose")
    add(f"fft.{fn}", "0d", arr(f"fft/{fn}/0d", ()), check="loose")
    add(f"fft.{fn}", "3d", arr(f"fft/{fn}/3d", (2, 3, 4)), check="loose")
    add(f"fft.{fn}", "T", arr(f"fft/{fn}/T", (4, 6), layout="T"), check="loose")
    add(f"fft.{fn}", "empty", arr(f"fft/{fn}/e", (2, 0)), check="loose")
for fn in ("fftfreq", "rfftfreq"):
    add(f"fft.{fn}", "8", 8, check="loose")
    add(f"fft.{fn}", "7-d", 7, 0.5, check="loose")
    add(f"fft.{fn}", "zero", 0, check="loose")
    add(f"fft.{fn}", "keyword", n=5, d=2.0, check="loose")
add("fft.stft", "basic", arr("stft/b", (64,)), n_fft=16, check="loose")
add("fft.stft", "hop-window", arr("stft/h", (64,)), n_fft=16, hop_length=4, window=arr("stft/w", (16,), kind="positive"), check="loose")
add("fft.stft", "no-center", arr("stft/nc", (64,)), n_fft=16, center=False, check="loose")
add("fft.stft", "onesided-false", arr("stft/os", (32,)), n_fft=8, onesided=False, check="loose")
add("fft.istft", "basic", arr("istft/b", (9, 5), "complex64"), n_fft=16, check="loose")
add("snippet.stft_roundtrip", "hann", arr("stftr/h", (64,)))

# ---------------------------------------------------------------- random
for dt in ("float32", "float16", "bfloat16", "float64", "int32", "complex64"):
    for fn in ("uniform", "normal", "gumbel", "laplace", "truncated_normal"):
        if fn == "truncated_normal":
            add(f"random.{fn}", dt, -1.0, 2.0, (2, 3), Dt(dt), key=Key(1))
        elif fn == "uniform":
            add(f"random.{fn}", dt, 0, 1, (2, 3), Dt(dt), key=Key(1))
        else:
            add(f"random.{fn}", dt, (2, 3), Dt(dt), key=Key(1))
for dt in ("int32", "uint8", "int64", "int8", "float32", "uint32", "int16", "uint64", "bool_"):
    add("random.randint", dt, 0, 10, (3, 4), Dt(dt), key=Key(2))
RANDOM = [
    ("key", "0", (0,), {}), ("key", "big", (2**40 + 5,), {}), ("key", "negative", (-1,), {}),
    ("split", "2", (Key(3),), {}), ("split", "num", (Key(3),), {"num": 5}), ("split", "zero", (Key(3), 0), {}),
    ("split", "bad-key", (Arr(np.array([1, 2, 3]), "uint32"),), {}),
    ("uniform", "default", (), {"key": Key(4)}), ("uniform", "bounds-array", (Arr(np.array([0.0, 10.0]), "float32"), 20.0, (3, 2)), {"key": Key(4)}),
    ("uniform", "shape-only", (), {"shape": (5,), "key": Key(4)}), ("uniform", "low-high-swapped", (1.0, 0.0, (4,)), {"key": Key(4)}),
    ("uniform", "bad-broadcast", (Arr(np.zeros(3), "float32"), 1.0, (2,)), {"key": Key(4)}), ("uniform", "int-dtype", (0, 1, (2,), Dt("int32")), {"key": Key(4)}),
    ("uniform", "batched-key", (0, 1, (3,)), {"key": Arr(np.array([[0, 1], [0, 2]]), "uint32")}),
    ("normal", "loc-scale", ((3,),), {"loc": 2.0, "scale": 0.5, "key": Key(5)}), ("normal", "array-loc", ((2, 3),), {"loc": Arr(np.array([0.0, 10, 20]), "float32"), "key": Key(5)}),
    ("normal", "default", (), {"key": Key(5)}), ("normal", "negative-shape", ((-1,),), {"key": Key(5)}),
    ("normal", "big", ((1000,),), {"key": Key(6)}), ("uniform", "big", (0, 1, (1000,)), {"key": Key(6)}),
    ("randint", "array-bounds", (Arr(np.array([0, 100]), "int32"), 200, (4, 2)), {"key": Key(7)}), ("randint", "high-lt-low", (5, 1, (3,)), {"key": Key(7)}),
    ("randint", "float-bounds", (0.5, 9.5, (3,)), {"key": Key(7)}), ("randint", "negative", (-100, -90, (5,)), {"key": Key(7)}),
    ("bernoulli", "default", (), {"key": Key(8)}), ("bernoulli", "p", (0.3, (5,)), {"key": Key(8)}),
    ("bernoulli", "p-array", (Arr(np.array([0.0, 0.5, 1.0]), "float32"),), {"key": Key(8)}), ("bernoulli", "p-shape", (Arr(np.array([0.1, 0.9]), "float32"), (3, 2)), {"key": Key(8)}),
    ("bernoulli", "p-bad-shape", (Arr(np.array([0.1, 0.9]), "float32"), (3,)), {"key": Key(8)}), ("bernoulli", "p-int", (1, (3,)), {"key": Key(8)}),
    ("truncated_normal", "arrays", (Arr(np.array([-1.0, 0.0]), "float32"), Arr(np.array([0.0, 3.0]), "float32")), {"key": Key(9)}),
    ("truncated_normal", "shape", (-0.5, 0.5), {"shape": (4,), "key": Key(9)}),
    ("gumbel", "shape", ((4,),), {"key": Key(10)}), ("laplace", "loc-scale", ((4,),), {"loc": 1.0, "scale": 3.0, "key": Key(10)}),
    ("categorical", "basic", (lambda c: arr(c, (2, 5)),), {"key": Key(11)}), ("categorical", "num-samples", (lambda c: arr(c, (2, 5)),), {"num_samples": 4, "key": Key(11)}),
    ("categorical", "shape", (lambda c: arr(c, (2, 5)),), {"shape": (3, 2), "key": Key(11)}), ("categorical", "axis0", (lambda c: arr(c, (5, 2)),), {"axis": 0, "key": Key(11)}),
    ("categorical", "both", (lambda c: arr(c, (2, 5)),), {"shape": (2,), "num_samples": 2, "key": Key(11)}),
    ("categorical", "bad-shape", (lambda c: arr(c, (2, 5)),), {"shape": (3,), "key": Key(11)}),
    ("permutation", "int", (6,), {"key": Key(12)}), ("permutation", "array", (lambda c: arr(c, (5, 2)),), {"key": Key(12)}),
    ("permutation", "axis", (lambda c: arr(c, (3, 4)),), {"axis": 1, "key": Key(12)}), ("permutation", "zero", (0,), {"key": Key(12)}),
    ("multivariate_normal", "basic", (Arr(np.zeros(2), "float32"), Arr(np.array([[2.0, 0.5], [0.5, 1.0]]), "float32"), (3,)), {"key": Key(13)}),
    ("multivariate_normal", "bad-cov", (Arr(np.zeros(2), "float32"), Arr(np.eye(3), "float32")), {"key": Key(13)}),
    ("multivariate_normal", "float64", (Arr(np.zeros(2), "float64"), Arr(np.eye(2), "float64")), {"key": Key(13)}),
]
for fn, label, args, kw in RANDOM:
    cid = f"random.{fn}/{label}"
    mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
    # float64 multivariate draws are float32 draws widened (in both libraries).
    check = "float32-math" if (fn, label) == ("multivariate_normal", "float64") else "loose"
    add(f"random.{fn}", label, *[mk(a) for a in args], check=check, **{k: mk(v) for k, v in kw.items()})
for name in ("seed_then_uniform", "seed_then_normal", "seed_then_randint", "seed_then_bernoulli", "seed_twice"):
    SNIPPET_NS[name] = "random"
    add(f"snippet.{name}", "3", 3)

# ---------------------------------------------------------------- fast
FAST = [
    ("rms_norm", "basic", (lambda c: arr(c, (2, 8)), lambda c: arr(c, (8,), salt="w"), 1e-5), {}),
    ("rms_norm", "no-weight", (lambda c: arr(c, (2, 8)), None, 1e-5), {}),
    ("rms_norm", "float16", (lambda c: arr(c, (2, 8), "float16"), lambda c: arr(c, (8,), "float16", salt="w"), 1e-5), {}),
    ("rms_norm", "bfloat16", (lambda c: arr(c, (2, 8), "bfloat16"), lambda c: arr(c, (8,), "float32", salt="w"), 1e-5), {}),
    ("rms_norm", "bad-weight", (lambda c: arr(c, (2, 8)), lambda c: arr(c, (4,), salt="w"), 1e-5), {}),
    ("rms_norm", "keywords", (), {"x": lambda c: arr(c, (3, 4)), "weight": lambda c: arr(c, (4,), salt="w"), "eps": 1e-6}),
    ("rms_norm", "int", (lambda c: arr(c, (2, 8), "int32"), None, 1e-5), {}),
    ("layer_norm", "basic", (lambda c: arr(c, (2, 8)), lambda c: arr(c, (8,), salt="w"), lambda c: arr(c, (8,), salt="b"), 1e-5), {}),
    ("layer_norm", "none", (lambda c: arr(c, (2, 8)), None, None, 1e-5), {}),
    ("layer_norm", "bias-only", (lambda c: arr(c, (2, 8)), None, lambda c: arr(c, (8,), salt="b"), 1e-5), {}),
    ("layer_norm", "float16", (lambda c: arr(c, (2, 8), "float16"), None, None, 1e-5), {}),
    ("layer_norm", "bad-bias", (lambda c: arr(c, (2, 8)), None, lambda c: arr(c, (3,), salt="b"), 1e-5), {}),
    ("rope", "basic", (lambda c: arr(c, (1, 2, 4, 8)), 8), {"traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
    ("rope", "traditional", (lambda c: arr(c, (1, 2, 4, 8)), 8), {"traditional": True, "base": 10000.0, "scale": 1.0, "offset": 3}),
    ("rope", "partial", (lambda c: arr(c, (1, 4, 8)), 4), {"traditional": False, "base": 100.0, "scale": 0.5, "offset": 1}),
    ("rope", "array-offset", (lambda c: arr(c, (1, 4, 8)), 8), {"traditional": False, "base": 10000.0, "scale": 1.0, "offset": Arr(np.array(2), "int32")}),
    ("rope", "freqs", (lambda c: arr(c, (1, 4, 8)), 8), {"traditional": False, "base": None, "scale": 1.0, "offset": 0, "freqs": lambda c: arr(c, (4,), kind="positive", salt="f")}),
    ("rope", "odd-dims", (lambda c: arr(c, (1, 4, 8)), 3), {"traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
    ("rope", "float16", (lambda c: arr(c, (1, 4, 8), "float16"), 8), {"traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
    ("rope", "1d", (lambda c: arr(c, (8,)), 8), {"traditional": False, "base": 10000.0, "scale": 1.0, "offset": 0}),
    ("scaled_dot_product_attention", "basic", (lambda c: arr(c, (1, 2, 4, 8)), lambda c: arr(c, (1, 2, 5, 8), salt="k"), lambda c: arr(c, (1, 2, 5, 8), salt="v")), {"scale": 0.35}),
    ("scaled_dot_product_attention", "causal", (lambda c: arr(c, (1, 2, 4, 8)), lambda c: arr(c, (1, 2, 4, 8), salt="k"), lambda c: arr(c, (1, 2, 4, 8), salt="v")), {"scale": 0.35, "mask": "causal"}),
    ("scaled_dot_product_attention", "gqa", (lambda c: arr(c, (1, 4, 3, 8)), lambda c: arr(c, (1, 2, 3, 8), salt="k"), lambda c: arr(c, (1, 2, 3, 8), salt="v")), {"scale": 1.0}),
    ("scaled_dot_product_attention", "bool-mask", (lambda c: arr(c, (1, 1, 3, 4)), lambda c: arr(c, (1, 1, 3, 4), salt="k"), lambda c: arr(c, (1, 1, 3, 4), salt="v")), {"scale": 0.5, "mask": Arr(np.tril(np.ones((3, 3), bool)), "bool_")}),
    ("scaled_dot_product_attention", "additive-mask", (lambda c: arr(c, (1, 1, 3, 4)), lambda c: arr(c, (1, 1, 3, 4), salt="k"), lambda c: arr(c, (1, 1, 3, 4), salt="v")), {"scale": 0.5, "mask": lambda c: arr(c, (3, 3), salt="m")}),
    ("scaled_dot_product_attention", "sinks", (lambda c: arr(c, (1, 2, 3, 4)), lambda c: arr(c, (1, 2, 3, 4), salt="k"), lambda c: arr(c, (1, 2, 3, 4), salt="v")), {"scale": 0.5, "sinks": lambda c: arr(c, (2,), salt="s")}),
    ("scaled_dot_product_attention", "bad-mask", (lambda c: arr(c, (1, 1, 3, 4)), lambda c: arr(c, (1, 1, 3, 4), salt="k"), lambda c: arr(c, (1, 1, 3, 4), salt="v")), {"scale": 0.5, "mask": "other"}),
    ("scaled_dot_product_attention", "float16", (lambda c: arr(c, (1, 1, 3, 8), "float16"), lambda c: arr(c, (1, 1, 3, 8), "float16", salt="k"), lambda c: arr(c, (1, 1, 3, 8), "float16", salt="v")), {"scale": 0.3}),
    ("scaled_dot_product_attention", "3d", (lambda c: arr(c, (2, 4, 8)), lambda c: arr(c, (2, 4, 8), salt="k"), lambda c: arr(c, (2, 4, 8), salt="v")), {"scale": 0.3}),
    ("cross_entropy", "basic", (lambda c: arr(c, (3, 5)), Arr(np.array([0, 4, 2]), "int32")), {}),
    ("cross_entropy", "float16", (lambda c: arr(c, (3, 5), "float16"), Arr(np.array([0, 4, 2]), "int32")), {}),
    ("cross_entropy", "bad-targets", (lambda c: arr(c, (3, 5)), Arr(np.array([0, 4]), "int32")), {}),
    ("gated_delta_update", "basic", (lambda c: arr(c, (1, 3, 2, 4)), lambda c: arr(c, (1, 3, 2, 4), salt="k"), lambda c: arr(c, (1, 3, 2, 4), salt="v"),
                                     lambda c: arr(c, (1, 3, 2), kind="unit", salt="g"), lambda c: arr(c, (1, 3, 2), kind="unit", salt="b")), {}),
]


def gdn_args(b=2, t=3, hk=1, dk=4, hv=2, dv=3, dtype="float32", qk_dtype=None, gate_dk=False, steps=None):
    """Arguments of fast.gated_delta_update: q, k, v, gamma, beta (decays and rates in (0, 1))."""
    qk = qk_dtype or dtype
    gate = (b, t, hv, dk) if gate_dk else (b, t, hv)
    return (lambda c: arr(c, (b, t, hk, dk), qk), lambda c: arr(c, (b, steps or t, hk, dk), qk, salt="k"),
            lambda c: arr(c, (b, t, hv, dv), dtype, salt="v"), lambda c: arr(c, gate, dtype, kind="unit", salt="g"),
            lambda c: arr(c, (b, t, hv), dtype, kind="unit", salt="b"))


FAST += [
    ("gated_delta_update", "grouped-heads", gdn_args(), {}),
    ("gated_delta_update", "gate-per-feature", gdn_args(gate_dk=True), {}),
    ("gated_delta_update", "initial-state", gdn_args(), {"initial_state": lambda c: arr(c, (2, 2, 3, 4), salt="s")}),
    ("gated_delta_update", "mask", gdn_args(t=4), {"initial_state": lambda c: arr(c, (2, 2, 3, 4), salt="s"),
                                                   "mask": Arr(np.array([[True, False, True, True], [False, True, False, True]]), "bool_")}),
    ("gated_delta_update", "float16", gdn_args(dtype="float16"), {}),
    ("gated_delta_update", "bfloat16-qk", gdn_args(qk_dtype="bfloat16"), {}),
    ("gated_delta_update", "int-qk", gdn_args(qk_dtype="int32"), {}),
    ("gated_delta_update", "transposed", (lambda c: arr(c, (2, 3, 1, 4), layout="T"),) + gdn_args()[1:], {}),
    ("gated_delta_update", "batch-0", gdn_args(b=0), {}),
    ("gated_delta_update", "short-keys", gdn_args(steps=2), {}),
    ("gated_delta_update", "bad-gate", gdn_args()[:3] + (lambda c: arr(c, (2, 3, 3), kind="unit", salt="g"),) + gdn_args()[4:], {}),
    ("gated_delta_update", "q-3d", (lambda c: arr(c, (2, 3, 4)),) + gdn_args()[1:], {}),
    ("gated_delta_update", "no-steps", gdn_args(t=0), {}),
]
for fn, label, args, kw in FAST:
    cid = f"fast.{fn}/{label}"
    mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
    add(f"fast.{fn}", label, *[mk(a) for a in args], check="loose", **{k: mk(v) for k, v in kw.items()})

# ---------------------------------------------------------------- dtypes and small utilities
for a in DTYPES:
    add("result_type", f"{a}-int8", Dt(a), Dt("int8"))
    add("result_type", f"{a}-float16", Dt(a), Dt("float16"))
    add("result_type", f"{a}-array-uint32", arr(f"rt/{a}", (2,), a), Dt("uint32"))
    add("can_cast", f"{a}-float32", Dt(a), Dt("float32"))
    add("can_cast", f"from-int16-{a}", Dt("int16"), Dt(a))
    add("finfo", a, Dt(a))
    add("iinfo", a, Dt(a))
    for cat in ("floating", "integer", "signedinteger", "unsignedinteger", "complexfloating", "inexact", "number", "generic"):
        add("snippet.issubdtype", f"{a}-{cat}", a, cat)
    for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"):
        add("isdtype", f"{a}-{kind}", Dt(a), kind)
add("result_type", "python-scalars", 1, 2.0)
add("result_type", "scalar-array", 1.0, arr("rt/sa", (2,), "float16"))
add("result_type", "none", )
add("broadcast_shapes", "basic", (2, 1), (3,))
add("broadcast_shapes", "three", (1,), (2, 1, 4), (4,))
add("broadcast_shapes", "bad", (2,), (3,))
add("broadcast_shapes", "empty", ())
add("issubdtype", "float32-float32", Dt("float32"), Dt("float32"))
add("issubdtype", "int8-int16", Dt("int8"), Dt("int16"))
add("isdtype", "tuple-kind", Dt("int8"), ("bool", "integral"))
add("isdtype", "bad-kind", Dt("int8"), "integer")
add("snippet.dtype_attrs", "all")
add("snippet.printing", "float32", arr("print/f", (2, 3)))
add("snippet.printing", "int8", arr("print/i", (2, 3), "int8"))
add("snippet.printing", "bool", arr("print/b", (2, 2), "bool_"))
add("snippet.printing", "complex64", arr("print/c", (2,), "complex64"))
add("snippet.printing", "bfloat16", arr("print/bf", (3,), "bfloat16"))
add("snippet.printing", "special", arr("print/s", (3, 3), kind="special"))
add("snippet.printing", "0d", arr("print/0", ()))
add("snippet.printing", "empty", arr("print/e", (2, 0)))
add("snippet.printing", "large", Arr(np.arange(2000, dtype=np.float32).reshape(40, 50), "float32"))
add("snippet.printing", "precision", arr("print/p", (3,)), 2)

# ---------------------------------------------------------------- transforms
TRANSFORMS = ["grad_sin", "grad_argnums", "grad_argnames", "grad_non_scalar", "grad_int_input", "value_and_grad_tuple",
              "vjp_basic", "jvp_basic", "vmap_basic", "vmap_in_axes", "vmap_out_axes", "vmap_bad_axes", "vmap_size_mismatch",
              "compile_basic", "compile_shapeless", "checkpoint_grad", "custom_function_vjp", "grad_of_grad", "vmap_of_grad",
              "stop_gradient_grad", "grad_through_getitem", "grad_of_sort", "grad_of_cumsum", "jvp_of_max",
              "grad_wrong_output", "grad_dict_input", "vmap_dict", "eval_tree", "depends_basic", "grad_complex"]
for name in TRANSFORMS:
    SNIPPET_NS[name] = "core"
    add(f"snippet.{name}", "f32", arr(f"tr/{name}", (3,)), check="loose")

# ---------------------------------------------------------------- nn
NN_ACT = ["relu", "relu6", "relu2", "leaky_relu", "elu", "celu", "selu", "silu", "gelu", "gelu_approx", "gelu_fast_approx",
          "glu", "hard_shrink", "hard_tanh", "hardswish", "log_sigmoid", "log_softmax", "mish", "prelu", "sigmoid",
          "softmax", "softmin", "softplus", "softshrink", "softsign", "step", "tanh"]
for fn in NN_ACT:
    for dt in ("float32", "float16", "bfloat16", "int32"):
        if fn == "prelu":
            add(f"nn.{fn}", dt, arr(f"nn.{fn}/{dt}", (2, 4), dt), arr(f"nn.{fn}/{dt}", (4,), dt, salt="a"), check="loose")
        else:
            add(f"nn.{fn}", dt, arr(f"nn.{fn}/{dt}", (2, 4), dt), check="loose")
    add(f"nn.{fn}", "special", arr(f"nn.{fn}/sp", (3, 4), kind="special"), check="loose") if fn != "prelu" else None
for fn, kw in (("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.5}), ("celu", {"alpha": 2.0}), ("softplus", {}),
               ("hard_shrink", {"lambd": 1.0}), ("softshrink", {"lambd": 0.2}), ("hard_tanh", {"min_val": -0.5, "max_val": 2.0}),
               ("glu", {"axis": 0}), ("log_softmax", {"axis": 0}), ("softmax", {"axis": 0}), ("softmin", {"axis": 0}), ("step", {"threshold": 0.5})):
    add(f"nn.{fn}", "keywords", arr(f"nn.{fn}/kw", (4, 4)), check="loose", **kw)
NN_LOSS = [
    ("cross_entropy", (lambda c: arr(c, (3, 5)), Arr(np.array([1, 0, 4]), "int32")), {}),
    ("cross_entropy", (lambda c: arr(c, (3, 5)), Arr(np.array([1, 0, 4]), "int32")), {"label_smoothing": 0.1, "reduction": "mean"}),
    ("cross_entropy", (lambda c: arr(c, (3, 5)), lambda c: arr(c, (3, 5), kind="positive", salt="t")), {"reduction": "sum"}),
    ("cross_entropy", (lambda c: arr(c, (3, 5)), Arr(np.array([1, 0, 4]), "int32")), {"weights": Arr(np.array([1.0, 2.0, 0.5]), "float32")}),
    ("cross_entropy", (lambda c: arr(c, (3, 5)), Arr(np.array([1, 0, 4]), "int32")), {"reduction": "bad"}),
    ("binary_cross_entropy", (lambda c: arr(c, (4,)), Arr(np.array([0.0, 1, 1, 0]), "float32")), {}),
    ("binary_cross_entropy", (lambda c: arr(c, (4,), kind="unit"), Arr(np.array([0.0, 1, 1, 0]), "float32")), {"with_logits": False, "reduction": "mean"}),
    ("l1_loss", (lambda c: arr(c, (4,)), lambda c: arr(c, (4,), salt="t")), {}),
    ("mse_loss", (lambda c: arr(c, (4,)), lambda c: arr(c, (4,), salt="t")), {"reduction": "sum"}),
    ("mse_loss", (lambda c: arr(c, (4,)), lambda c: arr(c, (3,), salt="t")), {}),
    ("nll_loss", (lambda c: arr(c, (3, 5)), Arr(np.array([1, 0, 4]), "int32")), {"reduction": "mean"}),
    ("kl_div_loss", (lambda c: arr(c, (3, 5)), lambda c: arr(c, (3, 5), salt="t")), {}),
    ("smooth_l1_loss", (lambda c: arr(c, (5,)), lambda c: arr(c, (5,), salt="t")), {"beta": 0.5}),
    ("triplet_loss", (lambda c: arr(c, (2, 4)), lambda c: arr(c, (2, 4), salt="p"), lambda c: arr(c, (2, 4), salt="n")), {}),
    ("hinge_loss", (lambda c: arr(c, (4,)), Arr(np.array([1.0, -1, 1, -1]), "float32")), {}),
    ("huber_loss", (lambda c: arr(c, (4,)), lambda c: arr(c, (4,), salt="t")), {"delta": 0.5}),
    ("log_cosh_loss", (lambda c: arr(c, (4,)), lambda c: arr(c, (4,), salt="t")), {}),
    ("cosine_similarity_loss", (lambda c: arr(c, (3, 4)), lambda c: arr(c, (3, 4), salt="t")), {}),
    ("margin_ranking_loss", (lambda c: arr(c, (4,)), lambda c: arr(c, (4,), salt="t"), Arr(np.array([1.0, -1, 1, -1]), "float32")), {"margin": 0.1}),
    ("gaussian_nll_loss", (lambda c: arr(c, (4,)), lambda c: arr(c, (4,), salt="t"), lambda c: arr(c, (4,), kind="positive", salt="v")), {}),
]
for i, (fn, args, kw) in enumerate(NN_LOSS):
    cid = f"nn.losses.{fn}/{i}"
    mk = lambda v: v(cid) if callable(v) else v  # noqa: E731
    add(f"nn.losses.{fn}", str(i), *[mk(a) for a in args], check="loose", **{k: mk(v) for k, v in kw.items()})
NN_LAYERS = ["MaxPool3d", "AvgPool3d", "ConvTranspose3d", "Dropout2d_eval", "Dropout2d_train", "Dropout3d_train",
             "QuantizedEmbedding", "Transformer", "TransformerEncoder", "TransformerDecoderLayer",
             "TransformerDecoder", "CELU", "ELU", "HardShrink", "HardTanh", "LeakyReLU", "LogSigmoid", "ReLU2", "ReLU6",
             "SELU", "Sigmoid", "Softmin", "Softplus", "Softshrink", "Softsign", "Linear", "Linear_no_bias", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "Embedding",
             "Embedding_as_linear", "LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm_train", "BatchNorm_eval", "InstanceNorm",
             "MultiHeadAttention", "RoPE", "ALiBi", "SinusoidalPositionalEncoding", "MaxPool1d", "MaxPool2d", "AvgPool1d",
             "AvgPool2d", "Upsample_nearest", "Upsample_linear", "Dropout_eval", "Dropout_train", "GRU", "LSTM", "RNN",
             "TransformerEncoderLayer", "Sequential", "QuantizedLinear", "Linear_grad", "Module_tree", "Identity",
             "GELU", "ReLU", "PReLU", "Softmax", "Tanh", "Hardswish", "Step", "GLU", "LogSoftmax", "Mish", "SiLU",
             "init_normal", "init_uniform", "init_glorot_uniform", "init_he_normal", "init_constant", "init_identity",
             "value_and_grad", "quantize_model"]
for name in NN_LAYERS:
    SNIPPET_NS["nn_" + name] = "nn"
    add(f"snippet.nn_{name}", "f32", check="loose")
SNIPPET_NS["nn_QQLinear"] = "nn"
add("snippet.nn_QQLinear", "training", True, check="loose")
add("snippet.nn_QQLinear", "eval", False, check="loose")

# ---------------------------------------------------------------- optimizers
OPTIMIZERS = ["SGD", "SGD_momentum", "SGD_nesterov", "SGD_weight_decay", "RMSprop", "Adagrad", "AdaDelta", "Adam",
              "Adam_bias_correction", "AdamW", "Adamax", "Lion", "Adafactor", "Muon", "MultiOptimizer", "clip_grad_norm",
              "cosine_decay", "exponential_decay", "step_decay", "linear_schedule", "join_schedules", "schedule_in_optimizer",
              "state_after_steps"]
for name in OPTIMIZERS:
    SNIPPET_NS["opt_" + name] = "optimizers"
    add(f"snippet.opt_{name}", "f32", check="loose")

# ---------------------------------------------------------------- utils
UTILS = ["tree_flatten", "tree_flatten_prefix", "tree_flatten_dict", "tree_unflatten", "tree_unflatten_list", "tree_map",
         "tree_map_rest", "tree_map_with_path", "tree_reduce", "tree_merge", "tree_flatten_leaf"]
for name in UTILS:
    SNIPPET_NS["utils_" + name] = "utils"
    add(f"snippet.utils_{name}", "tree")
SNIPPET_NS.update(printoptions_state="core", setitem="array", iterate="array", property="array", issubdtype="core", dtype_attrs="core",
                  printing="array", quantize_roundtrip="core", quantized_matmul="core", gather_qmm="core",
                  quantize_roundtrip_fp="core", quantized_matmul_fp="core", gather_qmm_fp="core", qqmm_packed="core",
                  stft_roundtrip="fft")
for fn in ("add", "subtract", "multiply", "divide", "maximum", "minimum"):
    SNIPPET_NS[f"at_{fn}"] = "array"
for c in CASES:
    if c.fn.startswith("snippet."):
        c.ns = SNIPPET_NS.get(c.fn.split(".")[1], "core")

# ids are unique
_counts = {}
for _c in CASES:
    _counts[_c.id] = _counts.get(_c.id, 0) + 1
assert len(_counts) == len(CASES), [k for k, n in _counts.items() if n > 1][:5]

# Public names of MLX's namespaces that the cases above reach through snippets.
SNIPPET_COVERS = {
    "core": ["grad", "value_and_grad", "vjp", "jvp", "vmap", "compile", "checkpoint", "depends", "eval", "dequantize",
             "quantized_matmul", "gather_qmm", "printoptions", "get_printoptions", "set_printoptions", "save", "savez",
             "savez_compressed", "save_safetensors", "save_gguf", "load"],
    "random": ["seed"],
    "nn": ["value_and_grad", "quantize"],
}
for _c in CASES:
    _name = _c.fn.split(".", 1)[-1]
    for _prefix, _ns in (("nn_", "nn"), ("opt_", "optimizers"), ("utils_", "utils")):
        if _c.fn.startswith("snippet." + _prefix):
            _rest = _name[len(_prefix):]
            SNIPPET_COVERS.setdefault(_ns, []).extend([_rest, _rest.split("_")[0]] if _ns != "utils" else [_rest, _rest.rsplit("_", 1)[0]])

# Public names no case calls, and why.
NOT_COVERED = {
    "core": {
        **{n: "device, stream and memory management: process state, no value to compare" for n in (
            "clear_cache", "clear_streams", "default_device", "default_stream", "device_count", "device_info",
            "get_active_memory", "get_array_buffer_size", "get_cache_memory", "get_memory_limit", "get_peak_memory",
            "is_available", "new_stream", "new_thread_local_stream", "new_thread_unsafe_stream", "reset_peak_memory",
            "set_cache_limit", "set_default_device", "set_default_stream", "set_memory_limit", "set_wired_limit",
            "stream", "synchronize")},
        "async_eval": "evaluates like eval (covered); the difference is timing",
        "disable_compile": "global switch; compile is covered", "enable_compile": "global switch; compile is covered",
        **{n: "writes and reads files: both directions are checked against MLX's own files (test_export.py)"
           for n in ("export_function", "exporter", "import_function")},
        "export_to_dot": "writes a picture of a graph; node names differ by design",
        "from_dlpack": "needs a producer object of another framework (test_dlpack.py)",
    },
    "fast": {
        "metal_kernel": "user kernels in Metal source: neither library runs them on a CPU",
        "cuda_kernel": "user kernels in CUDA source: neither library runs them on a CPU",
        "precompiled_cuda_kernel": "user kernels in CUDA binaries: neither library runs them on a CPU",
    },
    "nn": {
        **{n: "distributed sharding: needs a group of processes (test_distributed.py)" for n in (
            "AllToShardedLinear", "FullyShardedModule", "QuantizedAllToShardedLinear", "QuantizedShardedToAllLinear",
            "ShardedToAllLinear", "average_gradients", "fully_shard")},
        "Module": "the base class; every layer case exercises it",
    },
    "optimizers": {"Optimizer": "the base class; every optimizer case exercises it"},
}
