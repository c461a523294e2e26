"""Ops through the Python API: values against NumPy, result dtypes against MLX's facts
(docs/mlx-reference.md), weak Python scalars, operators incl. reflected and in-place."""

import math
import operator

import numpy as np
import pytest
from conftest import DTYPES, NP, name
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazulite.core as mx

UNARY = {
    "abs": np.abs, "negative": np.negative, "square": np.square, "sqrt": np.sqrt,
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "arcsin": np.arcsin,
    "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "reciprocal": np.reciprocal,
    "logical_not": np.logical_not, "degrees": np.degrees, "radians": np.radians,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "rsqrt": lambda x: 1 / np.sqrt(x),
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "softplus": lambda x: np.logaddexp(x, 0),
}

floats = hnp.arrays(
    np.float32,
    hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
    elements=st.floats(-3, 3, width=32),
)


@pytest.mark.parametrize("op", sorted(UNARY))
@settings(max_examples=25, deadline=None)
@given(x=floats)
def test_unary_matches_numpy(op, x):
    with np.errstate(all="ignore"):
        expected = UNARY[op](x)
    got = np.array(getattr(mx, op)(mx.array(x)))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=2e-6, equal_nan=True)


def test_softplus_is_log_one_plus_exp_without_overflow():
    x = np.array([-1000, -90, -20, -1e-8, 0, 1e-8, 20, 90, 1000, np.inf, -np.inf, np.nan], np.float32)
    expected = np.logaddexp(x.astype(np.float64), 0)
    # atol: -90 gives a subnormal, with few digits.
    np.testing.assert_allclose(np.array(mx.softplus(mx.array(x))), expected, rtol=2e-7, atol=1e-44)
    for dtype in (mx.float16, mx.bfloat16, mx.float64):
        assert mx.softplus(mx.array(x).astype(dtype)).dtype == dtype
    assert mx.softplus(mx.array([1, 2])).dtype == mx.float32
    z = np.array([1 + 2j, -1j, -3 + 0.5j, 40 - 1j], np.complex64)
    expected = np.log1p(np.exp(z.astype(np.complex128)))
    np.testing.assert_allclose(np.array(mx.softplus(mx.array(z))), expected, rtol=1e-6)


def test_softplus_gradient_is_the_sigmoid():
    x = np.linspace(-30, 30, 13).astype(np.float32)
    grad = mx.grad(lambda a: mx.softplus(a).sum())(mx.array(x))
    np.testing.assert_allclose(np.array(grad), 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "arctan2": np.arctan2,
    "logaddexp": np.logaddexp, "equal": np.equal, "not_equal": np.not_equal,
    "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "power": np.power, "floor_divide": np.floor_divide,
    "remainder": np.remainder, "pow": np.power, "atan2": np.arctan2,
}


@pytest.mark.parametrize("op", sorted(BINARY))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_binary_matches_numpy_with_broadcasting(op, data):
    shape_a, shape_b = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3)).input_shapes
    a = data.draw(hnp.arrays(np.float32, shape_a, elements=st.floats(0.5, 3, width=32)))
    b = data.draw(hnp.arrays(np.float32, shape_b, elements=st.floats(0.5, 3, width=32)))
    expected = BINARY[op](a, b)
    got = np.array(getattr(mx, op)(mx.array(a), mx.array(b)))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"])
def test_integer_binary_ops(op):
    a = np.array([[1, 6, -7], [12, 0, 3]], np.int32)
    b = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(np.array(getattr(mx, op)(mx.array(a), mx.array(b))), getattr(np, op)(a, b))


def test_strided_inputs():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = mx.array(base)
    np.testing.assert_allclose(np.array(mx.sin(x.T)), np.sin(base.T), rtol=1e-6)
    np.testing.assert_allclose(np.array(mx.exp(x[::-1, ::2] / 10)), np.exp(base[::-1, ::2] / 10), rtol=1e-6)
    np.testing.assert_allclose(np.array(x[1:3] + x[1:3, 0:1]), base[1:3] + base[1:3, 0:1])


# MLX's promotion table (docs/mlx-reference.md section a), rows and columns in this order.
ORDER = ["b", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "c64"]
PROMOTION = """
b    b   u8  u16  u32  u64   i8  i16  i32  i64  f16 bf16  f32  f64  c64
u8  u8   u8  u16  u32  u64  i16  i16  i32  i64  f16 bf16  f32  f64  c64
u16 u16  u16  u16  u32  u64  i32  i32  i32  i64  f16 bf16  f32  f64  c64
u32 u32  u32  u32  u32  u64  i64  i64  i64  i64  f16 bf16  f32  f64  c64
u64 u64  u64  u64  u64  u64  f32  f32  f32  f32  f16 bf16  f32  f64  c64
i8  i8  i16  i32  i64  f32   i8  i16  i32  i64  f16 bf16  f32  f64  c64
i16 i16  i16  i32  i64  f32  i16  i16  i32  i64  f16 bf16  f32  f64  c64
i32 i32  i32  i32  i64  f32  i32  i32  i32  i64  f16 bf16  f32  f64  c64
i64 i64  i64  i64  i64  f32  i64  i64  i64  i64  f16 bf16  f32  f64  c64
f16 f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f32  f64  c64
bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16  f32 bf16  f32  f64  c64
f32 f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64
f64 f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c64
c64 c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64
"""
SHORT = dict(zip(ORDER, DTYPES))


def test_promotion_table_matches_mlx():
    for row in PROMOTION.strip().splitlines():
        left, *results = row.split()
        for right, result in zip(ORDER, results):
            a, b = mx.zeros(1, SHORT[left]), mx.zeros(1, SHORT[right])
            assert (a + b).dtype == SHORT[result], (left, right)
            assert mx.result_type(SHORT[left], SHORT[right]) == SHORT[result]


# Weak Python scalars (docs/mlx-reference.md section b): a+True, a+1, a+1.5, a+1j, a/2.
WEAK = {
    "b": ("b", "i32", "f32", "c64", "f32"), "u8": ("u8", "u8", "f32", "c64", "f32"),
    "u64": ("u64", "u64", "f32", "c64", "f32"), "i8": ("i8", "i8", "f32", "c64", "f32"),
    "i64": ("i64", "i64", "f32", "c64", "f32"), "f16": ("f16", "f16", "f16", "c64", "f16"),
    "bf16": ("bf16", "bf16", "bf16", "c64", "bf16"), "f64": ("f64", "f64", "f64", "c64", "f64"),
    "c64": ("c64", "c64", "c64", "c64", "c64"),
}


@pytest.mark.parametrize("dtype", sorted(WEAK))
def test_weak_python_scalars(dtype):
    a = mx.ones(2, SHORT[dtype])
    results = [a + True, a + 1, a + 1.5, a + 1j, a / 2]
    assert [r.dtype for r in results] == [SHORT[d] for d in WEAK[dtype]]
    assert (1.5 + a).dtype == (a + 1.5).dtype
    assert mx.result_type(a, 1) == SHORT[WEAK[dtype][1]]


def test_weak_scalar_overflow_and_numpy_scalars():
    a = mx.array([1], mx.uint8)
    with pytest.raises(ValueError, match="Converting 300 to uint8 would result in overflow"):
        a + 300
    with pytest.raises(ValueError, match="overflow"):
        mx.add(a, -1)
    assert (a - 2).tolist() == [255]
    assert (mx.array([1], mx.float16) + np.float64(1)).dtype == mx.float16
    assert (a + np.int64(1)).dtype == mx.uint8
    assert (mx.array([1], mx.int8) + mx.array(1)).dtype == mx.int32


def test_operators_and_reflected_operators():
    a = mx.array([1.0, 2.0, 4.0])
    n = np.array([1.0, 2.0, 4.0], np.float32)
    for op in [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge,
               operator.eq, operator.ne]:
        np.testing.assert_allclose(np.array(op(a, 3)), op(n, 3))
        np.testing.assert_allclose(np.array(op(3, a)), op(3, n))
        np.testing.assert_allclose(np.array(op(a, a)), op(n, n))
    i = mx.array([6, 3], mx.int32)
    assert (i & 3).tolist() == [2, 3] and (i | 1).tolist() == [7, 3] and (i ^ 1).tolist() == [7, 2]
    assert (i << 1).tolist() == [12, 6] and (i >> 1).tolist() == [3, 1]
    assert (-a).tolist() == [-1, -2, -4] and abs(-a).tolist() == [1, 2, 4]
    assert (+a).tolist() == [1, 2, 4] and (~i).tolist() == [-7, -4]
    assert (~mx.array(True)).item() is False
    assert mx.divmod(mx.array([-7, 7]), 3)[0].tolist() == [-3, 2]
    with pytest.raises(TypeError):
        1 << mx.array(1)
    with pytest.raises(ValueError, match="Floating point types not allowed"):
        ~mx.zeros(2)


def test_in_place_operators_rebind_and_may_change_dtype():
    x = mx.array([1, 2, 3])
    alias = x
    alias += 1.5
    assert x is alias and x.dtype == mx.float32 and x.tolist() == [2.5, 3.5, 4.5]
    x = mx.array([6, 7])
    for op, expected in [("__isub__", [4, 5]), ("__imul__", [8, 10]), ("__ifloordiv__", [4, 5]),
                         ("__imod__", [0, 1]), ("__ipow__", [0, 1]), ("__ior__", [0, 3])]:
        x = getattr(x, op)(2 if op != "__ior__" else mx.array([0, 2]))
        assert x.tolist() == expected, op


# Operators on 0-d arrays and scalars compute single values (no array, no graph); the
# same operators on arrays of shape (1,) take the path of arrays and are the oracle.
SCALAR_OPERATORS = {
    operator.add: operator.iadd, operator.sub: operator.isub, operator.mul: operator.imul,
    operator.truediv: operator.itruediv, operator.floordiv: operator.ifloordiv,
    operator.mod: operator.imod, operator.pow: operator.ipow, operator.and_: operator.iand,
    operator.or_: operator.ior, operator.xor: operator.ixor, operator.lshift: operator.ilshift,
    operator.rshift: operator.irshift, operator.lt: None, operator.le: None, operator.gt: None,
    operator.ge: None, operator.eq: None, operator.ne: None,
}


def outcome(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - the exception's type is the outcome
        return type(e)


def same_outcome(scalar, array, context):
    if isinstance(array, type):
        assert scalar is array, context
    elif not isinstance(array, mx.array):
        assert scalar == array, context
    else:
        assert isinstance(scalar, mx.array), (context, scalar)
        assert (scalar.shape, scalar.dtype) == ((), array.dtype), context
        got, expected = scalar.tolist(), array.tolist()[0]
        assert got == expected or (got != got and expected != expected), (context, got, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
def test_scalar_arithmetic_matches_arrays_of_one_element(dtype):
    base = mx.array(3).astype(dtype)
    others = [True, 3, -2, 2.5, 300, 1j, np.float32(1.5), None, "a",
              mx.array(2), mx.array(0.5), mx.array(2, mx.uint8), mx.array(True),
              mx.array(2, mx.bfloat16), mx.array(2).astype(dtype)]
    for op, inplace in SCALAR_OPERATORS.items():
        for other in others:
            wide = other.reshape(1) if isinstance(other, mx.array) else other
            context = (op.__name__, name(dtype), other)
            same_outcome(outcome(lambda: op(base, other)), outcome(lambda: op(base.reshape(1), wide)),
                         context)
            same_outcome(outcome(lambda: op(other, base)), outcome(lambda: op(wide, base.reshape(1))),
                         context + ("reflected",))
            if inplace is not None:
                target, wide_target = mx.array(base), base.reshape(1)
                result = outcome(lambda: inplace(target, other))
                if isinstance(result, mx.array):
                    assert result is target, context
                same_outcome(result, outcome(lambda: inplace(wide_target, wide)),
                             context + ("in place",))


def test_scalar_arithmetic_chains_round_as_float32():
    x, reference = mx.array(1.0), np.float32(1.0)
    for _ in range(200):
        x = x * 1.01 + 0.37
        x -= 0.125
        reference = reference * np.float32(1.01) + np.float32(0.37) - np.float32(0.125)
    assert x.dtype == mx.float32 and x.item() == float(reference)
    assert (x > 1.0).item() is True


def test_scalar_results_are_arrays_everywhere():
    y = mx.array(2.0) * 3.0 + 1.0
    assert repr(y) == "array(7, dtype=float32)" and (y.shape, y.ndim, y.size) == ((), 0, 1)
    assert y.item() == 7.0 and np.array(y).tolist() == 7.0 and float(y) == 7.0
    mx.eval(y)
    assert (mx.arange(3) + y).tolist() == [7.0, 8.0, 9.0]
    assert mx.arange(10)[mx.array(1) + 2].item() == 3
    assert mx.grad(lambda t: t * y)(mx.array(2.0)).item() == 7.0
    # grad, vmap and compile see the ops on their inputs, which are no computed values.
    f = lambda t: (t * t + 1.0) ** 2.0  # noqa: E731
    assert mx.grad(f)(mx.array(3.0)).item() == 120.0  # 2 (t^2 + 1) 2t
    xs = mx.array([1.0, 2.0, 3.0])
    assert mx.vmap(f)(xs).tolist() == [f(mx.array(v)).item() for v in xs.tolist()]
    assert mx.compile(f)(mx.array(3.0)).item() == f(mx.array(3.0)).item() == 100.0


def test_comparisons_with_other_types():
    a = mx.zeros(3)
    assert (a == "a") is False and (a != "a") is True
    with pytest.raises(ValueError, match="Cannot perform addition on an mlx.core.array and str"):
        a + "a"
    with pytest.raises(ValueError, match="Cannot perform addition on an mlx.core.array and list"):
        a + [1, 2, 3]
    with pytest.raises(TypeError):
        a + None


def test_array_methods():
    a = mx.array([[1.0, 4.0], [9.0, 16.0]])
    assert a.sqrt().tolist() == [[1, 2], [3, 4]]
    assert a.square().abs().tolist() == [[1, 16], [81, 256]]
    assert a.round(1).dtype == mx.float32 and mx.round(mx.array([0.5, 1.5, 2.5])).tolist() == [0, 2, 2]
    np.testing.assert_allclose(np.array(a.exp().log()), np.array(a), rtol=1e-6)
    assert a.reshape(4).shape == (4,) and a.reshape(1, 4).shape == (1, 4)
    assert a.reshape((4, 1)).shape == (4, 1) and a.reshape([-1]).shape == (4,)
    assert a.transpose().tolist() == a.T.tolist() == [[1, 9], [4, 16]]
    assert a.transpose(1, 0).tolist() == a.transpose((1, 0)).tolist()
    assert a.astype(mx.int8).dtype == mx.int8
    c = mx.array([1 + 2j])
    assert c.real.tolist() == [1] and c.imag.tolist() == [2] and c.conj().tolist() == [1 - 2j]


def test_creation_and_shape_functions():
    assert mx.zeros(3).dtype == mx.float32 and mx.zeros((2, 3), mx.int32).shape == (2, 3)
    assert mx.ones([2]).tolist() == [1, 1] and mx.zeros(()).shape == ()
    assert mx.full(3, 2.5).tolist() == [2.5] * 3 and mx.full((2,), True).dtype == mx.bool_
    assert mx.full((2,), 2**40).dtype == mx.int64 and mx.full((2,), 3, mx.float16).dtype == mx.float16
    assert mx.full((2, 2), mx.array([1, 2])).tolist() == [[1, 2], [1, 2]]
    assert mx.zeros_like(mx.array([1])).dtype == mx.int32
    assert mx.ones_like(mx.array([1]), dtype=mx.float16).dtype == mx.float16
    assert mx.arange(5).tolist() == [0, 1, 2, 3, 4] and mx.arange(5).dtype == mx.int32
    assert mx.arange(5.0).dtype == mx.float32 and mx.arange(0, 3, 0.5).tolist() == [0, 0.5, 1, 1.5, 2, 2.5]
    assert mx.arange(5, 0, -1).tolist() == [5, 4, 3, 2, 1] and mx.arange(-3).tolist() == []
    assert mx.arange(stop=3).tolist() == [0, 1, 2] and mx.arange(start=1, stop=3).tolist() == [1, 2]
    assert mx.arange(0.5, 3, dtype=mx.int32).tolist() == [0, 1, 2]
    assert mx.arange(1, 4, mx.float16).dtype == mx.float16
    assert mx.reshape(mx.arange(6), (2, -1)).shape == (2, 3)
    assert mx.transpose(mx.zeros((2, 3, 4))).shape == (4, 3, 2)
    assert mx.transpose(mx.zeros((2, 3, 4)), [1, 0, 2]).shape == (3, 2, 4)
    assert mx.permute_dims(mx.zeros((2, 3)), (1, 0)).shape == (3, 2)
    assert mx.broadcast_to(1, (2, 2)).tolist() == [[1, 1], [1, 1]]
    assert mx.astype(mx.array([1.7, -2.5]), mx.int32).tolist() == [1, -2]
    assert mx.abs(-2).item() == 2 and mx.add(1, 2.0).dtype == mx.float32


def test_indexing_iteration_and_len():
    x = mx.arange(24).reshape(2, 3, 4)
    n = np.arange(24).reshape(2, 3, 4)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 0), (None, 0), slice(None, None, -1),
                (0, slice(1, None), slice(None, None, -2)), (slice(5, 10),), (1, None, Ellipsis, None)]:
        assert x[key].tolist() == n[key].tolist(), key
        assert x[key].shape == n[key].shape, key
    assert len(x) == 2 and [r.tolist() for r in x] == n.tolist()
    assert isinstance(x[0, 0, 0], mx.array) and x[0, 0, 0].ndim == 0
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[-3]
    with pytest.raises(ValueError, match="Too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(ValueError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError, match="0-dimensional"):
        len(mx.array(1))
    with pytest.raises(TypeError, match="0-dimensional"):
        iter(mx.array(1))


def test_eval_trees_and_threads():
    import threading

    a = mx.arange(1000).astype(mx.float32)
    trees = [mx.sin(a), [mx.cos(a), {"k": mx.exp(a / 1000)}], (mx.sqrt(a),), 1, "ignored"]
    assert mx.eval(*trees) is None
    assert mx.eval() is None
    results = []

    def work():
        results.append(float(mx.sin(a * 2)[3].item()))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [pytest.approx(math.sin(6.0), rel=1e-6)] * 4


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dtype", DTYPES, ids=name)
def test_astype_every_pair_against_numpy(dtype):
    source = np.array([0, 1, 2, 100], np.int64)
    a = mx.array(source)
    for target in DTYPES:
        if target not in NP or dtype not in NP:
            continue
        got = np.array(a.astype(dtype).astype(target))
        expected = source.astype(NP[dtype]).astype(NP[target])
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("m, k, n", [(40, 64, 70), (12, 80, 200), (300, 96, 17)])
def test_products_with_a_transposed_right_operand_match_numpy(dtype, m, k, n):
    # `x @ W.T` with W row-major: the kernel copies W.T row-major, or x column-major with
    # a transposed result, whichever copies less; both against NumPy in float64.
    rng = np.random.default_rng(m + k + n)

    def sample(*shape):
        v = rng.standard_normal(shape)
        return (v + 1j * rng.standard_normal(shape) if dtype == np.complex64 else v).astype(dtype)

    x, w, c = sample(m, k), sample(n, k), sample(m, n)
    lx, lw, lc = (mx.array(v, dtype=getattr(mx, np.dtype(dtype).name)) for v in (x, w, c))
    want = x.astype(np.complex128) @ w.T.astype(np.complex128)
    tol = 1e-12 if dtype == np.float64 else 1e-4
    got = lx @ lw.T
    assert got.dtype == lx.dtype
    np.testing.assert_allclose(np.array(got), want, rtol=tol, atol=tol * np.sqrt(k))
    got = mx.addmm(lc, lx, lw.T, alpha=2.0, beta=0.5)
    np.testing.assert_allclose(np.array(got), 2.0 * want + 0.5 * c, rtol=tol, atol=tol * np.sqrt(k))


def half_values(np_dtype):
    """Every finite magnitude class of a 16-bit float format: zeros, subnormals, values at
    and beside rounding ties, the largest finite values, infinities and NaN, both signs,
    repeated past a vector's width so that whole vectors and tails are both computed."""
    import ml_dtypes

    info = ml_dtypes.finfo(np_dtype)
    base = np.array([0.0, float(info.smallest_subnormal), float(info.smallest_normal), 1.0,
                     1.0 + float(info.eps) / 2, 1.0 + 1.5 * float(info.eps), 3.14159, 1e-3,
                     float(info.max), float(info.max) / 2, np.inf, np.nan], np.float32)
    values = np.concatenate([base, -base, np.linspace(-300, 300, 77, dtype=np.float32)])
    return np.tile(values, 3).astype(np_dtype)


HALF_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
               "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum}
HALF_UNARY = {"negative": np.negative, "abs": np.abs, "sqrt": np.sqrt, "square": np.square}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_elementwise_rounds_once_from_float32(dtype):
    # NumPy's float16 and ml_dtypes' bfloat16 compute in float32 and round to nearest even:
    # the results must agree bit for bit, on contiguous, broadcast and strided operands.
    import ml_dtypes

    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    a = half_values(np_dtype)
    b = np.roll(a, 7)
    x = mx.array(a.astype(np.float32)).astype(getattr(mx, dtype))
    y = mx.array(b.astype(np.float32)).astype(getattr(mx, dtype))

    def same(got, expected):
        got = np.array(got.astype(mx.float32))
        expected = np.asarray(expected).astype(np.float32)
        np.testing.assert_array_equal(got, expected)

    # Strided runs longer than the chunks they are gathered in, one operand donated or not.
    la, lb = np.tile(a, 4), np.tile(b, 4)
    lx = mx.array(la.astype(np.float32)).astype(getattr(mx, dtype))
    ly = mx.array(lb.astype(np.float32)).astype(getattr(mx, dtype))
    zero = np.array(0, np_dtype)

    with np.errstate(all="ignore"):
        for name_, f in HALF_BINARY.items():
            op = getattr(mx, name_)
            same(op(x, y), f(a, b))
            same(op(x, 3.5), f(a, np.array(3.5, np_dtype)))
            same(op(x[::3], y[1::3]), f(a[::3], b[1::3]))
            same(op(x + 0, y), f(a + zero, b))
            same(op(lx[::2], ly[1::2]), f(la[::2], lb[1::2]))
            same(op(lx[::2] + 0, ly[1::2]), f(la[::2] + zero, lb[1::2]))
            same(op(lx[1::2], ly[::2] + 0), f(la[1::2], lb[::2] + zero))
        for name_, f in HALF_UNARY.items():
            op = getattr(mx, name_)
            same(op(x), f(a))
            same(op(x[::2]), f(a[::2]))
            same(op(x * 1), f(a * np.array(1, np_dtype)))
        wide = np.linspace(-7e4, 7e4, 1001, dtype=np.float32)
        same(mx.array(wide).astype(getattr(mx, dtype)), wide.astype(np_dtype))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_sums_round_the_exact_sum_once(dtype):
    # Eighths in [-16, 16] sum exactly in float64 and float32 alike, so NumPy's float64 sum
    # rounded to the dtype is the one right answer; shapes cross the kernels' chunks, and
    # rows are reduced whole, across, strided and transposed.
    import ml_dtypes

    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 129, size=(7, 1500)).astype(np.float64) / 8
    x = mx.array(a.astype(np.float32)).astype(getattr(mx, dtype))

    def same(got, expected):
        expected = np.asarray(expected).astype(np.float32).astype(np_dtype).astype(np.float32)
        np.testing.assert_array_equal(np.array(got.astype(mx.float32)), expected)

    same(x.sum(), a.sum())
    same(x.sum(axis=1), a.sum(axis=1))
    same(x.sum(axis=0), a.sum(axis=0))
    same(x[:, ::3].sum(axis=1), a[:, ::3].sum(axis=1))
    same(x.T.sum(axis=1, keepdims=True), a.T.sum(axis=1, keepdims=True))
    same(x.reshape(-1)[5:].sum(), a.reshape(-1)[5:].sum())
    # Any values: within rounding of the float64 sum (half an ulp, which |sum| x 2^-p
    # bounds for p significant bits).
    b = rng.normal(size=(3, 5000))
    y = mx.array(b.astype(np_dtype).astype(np.float32)).astype(getattr(mx, dtype))
    exact = b.astype(np_dtype).astype(np.float64).sum(axis=1)
    got = np.array(y.sum(axis=1).astype(mx.float32)).astype(np.float64)
    half_ulp = np.abs(exact) * (2.0 ** -8 if dtype == "bfloat16" else 2.0 ** -11)
    assert np.all(np.abs(got - exact) <= half_ulp), (got, exact)
