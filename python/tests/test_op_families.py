"""Reductions, scans, sorts, shape ops, creation, ternary and linear algebra through the
Python API, against NumPy; array methods; MLX's result dtypes and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazulite.core as mx


def check(got, expected, rtol=1e-5, atol=1e-5):
    got = np.array(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


REDUCTIONS = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean,
    "var": np.var, "std": np.std, "all": np.all, "any": np.any, "median": np.median,
    "logsumexp": lambda x, axis=None, keepdims=False: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
}

nonempty = hnp.arrays(
    np.float32,
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    elements=st.floats(-2, 2, width=32),
)


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@settings(max_examples=20, deadline=None)
@given(x=nonempty, data=st.data())
def test_reductions_match_numpy(op, x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    keepdims = data.draw(st.booleans())
    expected = REDUCTIONS[op](x.astype(np.float64), axis=axis, keepdims=keepdims)
    check(getattr(mx, op)(mx.array(x), axis=axis, keepdims=keepdims), expected, rtol=1e-4, atol=1e-4)
    if op not in ("median",):
        check(getattr(mx.array(x), op)(axis, keepdims), expected, rtol=1e-4, atol=1e-4)


def test_logsumexp_over_axes_of_length_one():
    # A sampler's logsumexp(logits) reduces a (1, V) row over every axis.
    x = np.linspace(-30, 30, 1000, dtype=np.float32).reshape(1, 1000)
    expected = np.log(np.exp(x.astype(np.float64)).sum(keepdims=True))
    check(mx.logsumexp(mx.array(x), keepdims=True), expected, rtol=1e-6)
    check(mx.logsumexp(mx.array(x)), expected.reshape(()), rtol=1e-6)
    y = x.reshape(1, 1000, 1)
    check(mx.logsumexp(mx.array(y), axis=[0, 2]), y[0, :, 0], rtol=1e-6)
    check(mx.logsumexp(mx.array(y), axis=[0, 1], keepdims=True), expected.reshape(1, 1, 1), rtol=1e-6)
    assert mx.logsumexp(mx.ones((1, 1, 1)), axis=[0, 2]).shape == (1,)
    rows = mx.array([[-np.inf, -np.inf], [np.inf, 0.0]], mx.float32)
    assert mx.logsumexp(rows[:1]).item() == -np.inf and mx.logsumexp(rows[1:]).item() == np.inf
    grad = mx.grad(lambda a: mx.logsumexp(a))(mx.array(x))
    check(grad, np.exp(x - expected), rtol=1e-4, atol=1e-7)


def test_reduction_axes_lists_and_strided_inputs():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.array(x)
    check(mx.sum(a, axis=[0, -1]), x.sum(axis=(0, 2)))
    check(mx.mean(a.transpose(2, 0, 1), axis=(1, 2), keepdims=True), x.transpose(2, 0, 1).mean(axis=(1, 2), keepdims=True))
    check(mx.max(a[:, ::-1, 1:]), x[:, ::-1, 1:].max())
    check(mx.var(a, axis=1, ddof=1), x.var(axis=1, ddof=1))
    check(a.var(axis=1, correction=1), x.var(axis=1, ddof=1))
    check(a.std(0, True, 1), x.std(axis=0, keepdims=True, ddof=1))
    check(mx.argmax(a, axis=1), x.argmax(axis=1))
    check(a.argmin(keepdims=True), np.array(x.argmin()).reshape(1, 1, 1))
    check(mx.count_nonzero(mx.array([[0, 1], [2, 0]]), axis=0), [1, 1])
    check(mx.softmax(a, axis=-1), np.exp(x) / np.exp(x).sum(-1, keepdims=True))
    check(mx.softmax(a, axis=-1, precise=True), np.exp(x) / np.exp(x).sum(-1, keepdims=True))
    assert mx.sum(mx.array([True, True])).dtype == mx.int32
    assert mx.mean(mx.array([1, 2])).dtype == mx.float32
    assert mx.argmax(a).dtype == mx.uint32
    assert mx.sum(mx.zeros((0, 3)), axis=0).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(IndexError):
        mx.sum(a, axis=3)
    with pytest.raises(ValueError):
        mx.sum(a, axis=[0, 0])


SCANS = {"cumsum": np.cumsum, "cumprod": np.cumprod,
         "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate,
         "logcumsumexp": lambda x, axis: np.logaddexp.accumulate(x, axis=axis)}


@pytest.mark.parametrize("op", sorted(SCANS))
def test_scans(op):
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
    a = mx.array(x)
    for axis in (0, 1, -1):
        check(getattr(mx, op)(a, axis=axis), SCANS[op](x, axis=axis))
        check(getattr(a, op)(axis), SCANS[op](x, axis=axis))
        check(getattr(mx, op)(a, axis, reverse=True), np.flip(SCANS[op](np.flip(x, axis), axis=axis), axis))
    check(getattr(mx, op)(a), SCANS[op](x.reshape(-1), axis=0))


def test_scan_options():
    a = mx.array([1, 2, 3, 4])
    assert mx.cumsum(a, inclusive=False).tolist() == [0, 1, 3, 6]
    assert mx.cumsum(a, reverse=True, inclusive=False).tolist() == [9, 7, 4, 0]
    assert mx.cumsum(a, dtype=mx.float32).dtype == mx.float32
    assert mx.cumprod(mx.array([True, False])).dtype == mx.bool_
    assert mx.cumprod(mx.array([True, True, False, True])).tolist() == [True, True, False, False]


def exclusive(reference, axis):
    """An inclusive NumPy scan shifted by one along `axis`, the identity first."""
    identity = {np.cumsum: 0, np.cumprod: 1}.get(reference, None)
    def scan(x, axis=axis):
        full = reference(x, axis=axis)
        first = np.take(full, [0], axis=axis)
        if identity is None:  # max, min, logaddexp: their identities
            first = np.full_like(first, {np.maximum.accumulate: -np.inf}.get(reference, np.inf))
        else:
            first = np.full_like(first, identity)
        return np.concatenate([first, np.delete(full, -1, axis=axis)], axis=axis)
    return scan


@pytest.mark.parametrize("shape,axis", [((300_001,), 0), ((3, 70_000), 1), ((70_000, 3), 0),
                                        ((2, 600, 300), 1), ((600, 700), 0)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin"])
def test_long_scans_match_numpy_in_order(op, shape, axis):
    # Long enough to be split among threads; each line is still combined in NumPy's
    # order, so float32 results are equal, not merely close.
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.5, size=shape).astype(np.float32)
    if op in ("cummax", "cummin"):
        x = rng.standard_normal(shape).astype(np.float32)
    reference = {"cumsum": np.cumsum, "cumprod": np.cumprod,
                 "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}[op]
    a = mx.array(x)
    fn = getattr(mx, op)
    flipped = lambda f: lambda v, axis: np.flip(f(np.flip(v, axis), axis=axis), axis)  # noqa: E731
    cases = [
        (fn(a, axis=axis), reference(x, axis=axis)),
        (fn(a * 1, axis=axis), reference(x, axis=axis)),  # a donated input, scanned in place
        (fn(a, axis=axis, reverse=True), flipped(reference)(x, axis)),
        (fn(a * 1, axis=axis, inclusive=False), exclusive(reference, axis)(x)),
        (fn(a, axis=axis, reverse=True, inclusive=False), flipped(exclusive(reference, axis))(x, axis)),
    ]
    for got, want in cases:
        np.testing.assert_array_equal(np.array(got), want)


def test_sort_family():
    x = np.array([[3, 1, 2], [9, 7, 8]], dtype=np.int32)
    a = mx.array(x)
    check(mx.sort(a), np.sort(x))
    check(mx.sort(a, axis=0), np.sort(x, axis=0))
    check(mx.sort(a, axis=None), np.sort(x, axis=None))
    check(mx.argsort(a), np.argsort(x, kind="stable"))
    assert mx.argsort(a).dtype == mx.uint32
    p = np.array(mx.partition(a, 1, axis=1))
    assert (p[:, 1] == np.sort(x, axis=1)[:, 1]).all()
    ap = np.array(mx.argpartition(a, 1))
    assert (np.take_along_axis(x, ap, 1)[:, 1] == np.sort(x, axis=1)[:, 1]).all()
    assert sorted(np.array(mx.topk(mx.array([5, 1, 9, 3]), 2)).tolist()) == [5, 9]
    s = mx.array([1.0, 2.0, 3.0])
    check(mx.searchsorted(s, mx.array([2.0, 0.0, 5.0])), np.searchsorted([1, 2, 3], [2, 0, 5]))
    check(mx.searchsorted(s, mx.array([2.0]), side="right"), [2])
    check(mx.diff(mx.array([1, 4, 9, 16])), [3, 5, 7])
    with pytest.raises(ValueError):
        mx.topk(mx.array([1, 2]), 3)


def test_shape_ops():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.array(x)
    check(mx.flatten(a, 1), x.reshape(2, 12))
    check(a.flatten(), x.reshape(-1))
    check(mx.unflatten(mx.array(x.reshape(2, 12)), 1, (3, 4)), x)
    check(mx.squeeze(mx.array(x[:, :1]), 1), x[:, 0])
    check(mx.array(x[:1]).squeeze(), x[0])
    check(mx.expand_dims(a, (0, -1)), x[None, ..., None])
    check(mx.swapaxes(a, 0, 2), x.swapaxes(0, 2))
    check(a.swapaxes(0, 1), x.swapaxes(0, 1))
    check(mx.moveaxis(a, 0, -1), np.moveaxis(x, 0, -1))
    check(a.moveaxis(2, 0), np.moveaxis(x, 2, 0))
    check(mx.concatenate([a, a], axis=1), np.concatenate([x, x], axis=1))
    check(mx.concatenate([a, a], axis=None), np.concatenate([x, x], axis=None))
    check(mx.concat([a, a]), np.concatenate([x, x]))
    check(mx.stack([a, a], axis=-1), np.stack([x, x], axis=-1))
    parts = mx.split(a, 2, axis=2)
    assert isinstance(parts, list) and len(parts) == 2
    check(parts[1], np.split(x, 2, axis=2)[1])
    check(a.split([1, 3], axis=2)[1], np.split(x, [1, 3], axis=2)[1])
    rows = mx.unstack(a, axis=1)
    assert isinstance(rows, tuple) and len(rows) == 3
    check(rows[2], x[:, 2])
    check(mx.pad(a, 1), np.pad(x, 1))
    check(mx.pad(a, [(0, 1), (1, 0), (2, 2)], constant_values=-1.0), np.pad(x, [(0, 1), (1, 0), (2, 2)], constant_values=-1))
    check(mx.pad(a, (1, 2), mode="edge"), np.pad(x, (1, 2), mode="edge"))
    check(mx.pad(a, 1, mode="reflect"), np.pad(x, 1, mode="reflect"))
    check(mx.pad(a, 1, mode="symmetric"), np.pad(x, 1, mode="symmetric"))
    check(mx.tile(a, (2, 1, 1)), np.tile(x, (2, 1, 1)))
    check(mx.tile(a, 2), np.tile(x, 2))
    check(mx.repeat(a, 2, axis=1), np.repeat(x, 2, axis=1))
    check(mx.repeat(a, 2), np.repeat(x, 2))
    check(mx.roll(a, 2), np.roll(x, 2))
    check(mx.roll(a, (1, -1), (0, 2)), np.roll(x, (1, -1), (0, 2)))
    check(mx.flip(a), np.flip(x))
    check(mx.flip(a, axis=[0, 2]), np.flip(x, axis=(0, 2)))
    windows = mx.as_strided(mx.arange(6), shape=(3, 2), strides=(1, 1))
    assert windows.tolist() == [[0, 1], [1, 2], [2, 3]]
    check(mx.view(mx.array([1.0], mx.float32), mx.int32), np.array([1.0], np.float32).view(np.int32))
    check(mx.array([1.0]).view(mx.uint32), np.array([1.0], np.float32).view(np.uint32))
    check(mx.contiguous(a.T), x.T)
    assert mx.atleast_1d(mx.array(1)).shape == (1,)
    pair = mx.atleast_2d(mx.array(1), mx.array([1, 2]))
    assert isinstance(pair, list) and [p.shape for p in pair] == [(1, 1), (1, 2)]
    assert mx.atleast_3d(mx.array([1, 2])).shape == (1, 2, 1)
    b = mx.broadcast_arrays(mx.array([1, 2]), mx.array([[1], [2], [3]]))
    assert isinstance(b, list) and [t.shape for t in b] == [(3, 2), (3, 2)]
    with pytest.raises(ValueError):
        mx.split(a, 5, axis=2)
    with pytest.raises(ValueError):
        mx.concatenate([a, mx.ones((1, 2))])
    with pytest.raises(ValueError):
        mx.pad(a, 1, mode="wrap")


def test_creation():
    assert mx.empty((2, 3)).shape == (2, 3) and mx.empty(2).dtype == mx.float32
    check(mx.full_like(mx.array([1, 2]), 7), [7, 7])
    assert mx.full_like(mx.array([1, 2]), 7.5).dtype == mx.int32
    assert mx.full_like(mx.array([1, 2]), 7.5, dtype=mx.float32).tolist() == [7.5, 7.5]
    check(mx.linspace(0, 1, 5), np.linspace(0, 1, 5))
    check(mx.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False))
    assert mx.linspace(0, 10, 3, dtype=mx.int32).tolist() == [0, 5, 10]
    assert mx.linspace(0, 1).shape == (50,)
    check(mx.eye(3, 4, k=1), np.eye(3, 4, k=1))
    check(mx.identity(3), np.identity(3))
    check(mx.tri(3, 4, k=-1), np.tri(3, 4, k=-1))
    assert mx.tri(2).dtype == mx.float32
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(mx.tril(mx.array(x), -1), np.tril(x, -1))
    check(mx.triu(mx.array(x), 1), np.triu(x, 1))
    gx, gy = mx.meshgrid(mx.array([1, 2, 3]), mx.array([4, 5]))
    ex, ey = np.meshgrid([1, 2, 3], [4, 5])
    check(gx, ex)
    check(gy, ey)
    gx, gy = mx.meshgrid(mx.array([1, 2, 3]), mx.array([4, 5]), indexing="ij", sparse=True)
    ex, ey = np.meshgrid([1, 2, 3], [4, 5], indexing="ij", sparse=True)
    check(gx, ex)
    check(gy, ey)
    check(mx.diag(mx.array([1, 2])), np.diag([1, 2]))
    check(mx.diag(mx.array(x), k=1), np.diag(x, k=1))
    check(mx.array(x).diag(-1), np.diag(x, -1))
    check(mx.diagonal(mx.array(x), 1), np.diagonal(x, 1))
    y = np.arange(24).reshape(2, 3, 4)
    check(mx.array(y).diagonal(0, 1, 2), np.diagonal(y, 0, 1, 2))
    check(mx.trace(mx.array(x)), np.trace(x))
    check(mx.trace(mx.array(y), offset=1, axis1=1, axis2=2), np.trace(y, 1, 1, 2))
    assert mx.trace(mx.eye(3, dtype=mx.int8)).dtype == mx.int32
    with pytest.raises(ValueError):
        mx.trace(mx.array([1, 2]))


def test_ternary():
    c = mx.array([True, False, True])
    assert mx.where(c, 1, 2.5).tolist() == [1.0, 2.5, 1.0]
    assert mx.where(c, mx.array([1, 2, 3]), 0).dtype == mx.int32
    check(mx.clip(mx.array([-2.0, 0.5, 3.0]), -1, 1), [-1, 0.5, 1])
    check(mx.clip(mx.array([-2.0, 0.5, 3.0]), None, 1), [-2, 0.5, 1])
    with pytest.raises(ValueError):
        mx.clip(mx.array([1.0]), None, None)
    v = mx.nan_to_num(mx.array([np.nan, np.inf, -np.inf, 1.0]))
    check(v, np.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)))
    check(mx.nan_to_num(mx.array([np.nan, np.inf]), nan=5.0, posinf=9.0), [5.0, 9.0])
    check(mx.isclose(mx.array([1.0, 1.1]), mx.array([1.0, 1.0])), [True, False])
    check(mx.isclose(mx.array([np.nan]), mx.array([np.nan]), equal_nan=True), [True])
    assert mx.allclose(mx.array([1.0]), mx.array([1.0 + 1e-7])).item() is True
    assert mx.array_equal(mx.array([1, 2]), mx.array([1.0, 2.0])).item() is True
    assert mx.array_equal(mx.array([1, 2]), mx.array([1, 2, 3])).item() is False


def test_linalg():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    c = rng.standard_normal((3, 5)).astype(np.float32)
    A, B, C = mx.array(a), mx.array(b), mx.array(c)
    check(mx.matmul(A, B), a @ b, rtol=1e-4)
    check(A @ B, a @ b, rtol=1e-4)
    check(a @ B, a @ b, rtol=1e-4)
    check(A.T @ mx.array(c), a.T @ c, rtol=1e-4)
    D = mx.array(a)
    D @= B
    check(D, a @ b, rtol=1e-4)
    check(mx.addmm(C, A, B, alpha=2.0, beta=0.5), 2 * a @ b + 0.5 * c, rtol=1e-4)
    v, w = a[0], b[:, 0]
    check(mx.inner(mx.array(v), mx.array(w)), np.inner(v, w), rtol=1e-4)
    check(mx.outer(mx.array(v), mx.array(w)), np.outer(v, w))
    check(mx.tensordot(A, B, axes=1), np.tensordot(a, b, axes=1), rtol=1e-4)
    check(mx.tensordot(A, mx.array(a), axes=[[0, 1], [0, 1]]), np.tensordot(a, a, axes=[[0, 1], [0, 1]]), rtol=1e-4)
    check(mx.tensordot(A, mx.array(a)), np.tensordot(a, a), rtol=1e-4)
    check(mx.kron(mx.array([[1, 2]]), mx.array([[1], [3]])), np.kron([[1, 2]], [[1], [3]]))
    check(mx.einsum("ij,jk->ik", A, B), a @ b, rtol=1e-4)
    check(mx.einsum("ii", mx.array(a[:, :3])), np.einsum("ii", a[:, :3]), rtol=1e-4)
    check(mx.vecdot(A, mx.array(a)), (a * a).sum(-1), rtol=1e-4)
    check(mx.vecdot(A, mx.array(a), axis=0), (a * a).sum(0), rtol=1e-4)
    with pytest.raises(ValueError):
        mx.matmul(A, A)
    with pytest.raises(ValueError):
        A @ A


@pytest.mark.parametrize("transposed", [True, False])
def test_bfloat16_products_of_a_few_rows_at_any_magnitude(transposed):
    # A few bfloat16 rows against bfloat16 weights (a decode step's products), rows from
    # subnormal to near the float32 limit and one spanning 70 orders of magnitude, against
    # float64 NumPy, within the result's rounding to bfloat16.
    rng = np.random.default_rng(7)
    w = mx.array(rng.normal(size=(40, 256)).astype(np.float32)).astype(mx.bfloat16)
    dense = np.array(w.astype(mx.float32)).astype(np.float64)
    mixed = rng.normal(size=256) * 10.0 ** rng.uniform(-40, 30, size=256)
    for magnitudes in ([1e-39], [1e-30], [1.0], [1e36], [1e-39, 1.0, 1e36]):
        x = np.stack([rng.normal(size=256) * m for m in magnitudes] + [mixed])
        x = mx.array(x.astype(np.float32)).astype(mx.bfloat16)
        rows = np.array(x.astype(mx.float32)).astype(np.float64)
        product = x @ w.T if transposed else x @ mx.array(np.ascontiguousarray(dense.T), mx.bfloat16)
        out = np.array(product.astype(mx.float32))
        want, size = rows @ dense.T, np.abs(rows) @ np.abs(dense).T
        np.testing.assert_array_less(np.abs(out - want), 2**-8 * np.abs(want) + 1e-5 * size + 2**-133)


VIEWS = {
    "contiguous": lambda ns, a, padded: a,
    "two batch axes": lambda ns, a, padded: a.reshape(2, 3, 12, 20),
    "every other matrix": lambda ns, a, padded: a[::2],
    "rows with gaps": lambda ns, a, padded: padded[..., :20],
    "batch axis behind the rows": lambda ns, a, padded: a.reshape(12, 6, 20).transpose(1, 0, 2),
    "broadcast batch": lambda ns, a, padded: ns.broadcast_to(a[:1], (4, 12, 20)),
    "length-1 batch axis": lambda ns, a, padded: a.reshape(6, 1, 12, 20),
}


@pytest.mark.parametrize("layout", list(VIEWS))
@pytest.mark.parametrize("weight", ["rows", "transposed"])
def test_batched_inputs_against_one_weight(layout, weight):
    """`x @ W` and `addmm` with `x` batched (6 x 12 x 20) and `W` shared by the batch (a
    layer applied to a batch of sequences), over views that can and cannot be taken as
    one product of all the rows, against NumPy in float64."""
    rng = np.random.default_rng(7)
    a, padded = rng.standard_normal((6, 12, 20)), rng.standard_normal((6, 12, 23))
    w = rng.standard_normal((20, 24)) if weight == "rows" else rng.standard_normal((24, 20)).T
    bias = rng.standard_normal(24)
    for dtype, npt, tol in [(mx.float64, np.float64, 1e-10), (mx.float32, np.float32, 1e-4)]:
        x = VIEWS[layout](np, a.astype(npt), padded.astype(npt)).astype(np.float64)
        xs = VIEWS[layout](mx, mx.array(a.astype(npt), dtype), mx.array(padded.astype(npt), dtype))
        ws = mx.array(w.astype(npt), dtype) if weight == "rows" else mx.array(w.T.astype(npt), dtype).T
        want = x @ w.astype(npt)
        c = rng.standard_normal(want.shape).astype(npt)
        check(xs @ ws, want, rtol=tol, atol=tol)
        check(mx.addmm(mx.array(bias.astype(npt), dtype), xs, ws), want + bias.astype(npt), rtol=tol, atol=tol)
        check(mx.addmm(mx.array(c, dtype), xs, ws, alpha=0.5, beta=2.0), 0.5 * want + 2.0 * c,
              rtol=tol, atol=tol)


# Unary-shaped ops of the new families on any layout: (lazulite, NumPy) per name.
LAYOUT_OPS = {
    "sort": (lambda a: mx.sort(a, axis=0), lambda x: np.sort(x, axis=0)),
    "cumsum": (lambda a: mx.cumsum(a, axis=-1), lambda x: np.cumsum(x, axis=-1)),
    "cummax": (lambda a: mx.cummax(a, axis=0), lambda x: np.maximum.accumulate(x, axis=0)),
    "flip": (lambda a: mx.flip(a, axis=1), lambda x: np.flip(x, axis=1)),
    "roll": (lambda a: mx.roll(a, 2, 1), lambda x: np.roll(x, 2, axis=1)),
    "flatten": (lambda a: mx.flatten(a), lambda x: x.reshape(-1)),
    "tril": (lambda a: mx.tril(a), np.tril),
    "pad": (lambda a: mx.pad(a, [(1, 0), (0, 2)], mode="edge"), lambda x: np.pad(x, [(1, 0), (0, 2)], mode="edge")),
    "sum": (lambda a: mx.sum(a, axis=0), lambda x: x.sum(axis=0)),
    "max": (lambda a: a.max(axis=1, keepdims=True), lambda x: x.max(axis=1, keepdims=True)),
    "matmul": (lambda a: a @ a.T, lambda x: x @ x.T),
    "repeat": (lambda a: mx.repeat(a, 2, axis=0), lambda x: np.repeat(x, 2, axis=0)),
    "clip": (lambda a: mx.clip(a, -1, 1), lambda x: np.clip(x, -1, 1)),
}

matrices = hnp.arrays(
    np.float32,
    hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=5),
    elements=st.floats(-3, 3, width=32),
)


@pytest.mark.parametrize("op", sorted(LAYOUT_OPS))
@settings(max_examples=8, deadline=None)
@given(x=matrices, layout=st.sampled_from(["contiguous", "transposed", "reversed", "broadcast"]))
def test_new_ops_on_any_layout(op, x, layout):
    ours, numpy = LAYOUT_OPS[op]
    a = mx.array(x)
    if layout == "transposed":
        a, x = a.T, x.T
    elif layout == "reversed":
        a, x = a[::-1, ::-2], x[::-1, ::-2]
    elif layout == "broadcast" and x.shape[0] > 0:
        a, x = mx.broadcast_to(a[:1], (3, x.shape[1])), np.broadcast_to(x[:1], (3, x.shape[1]))
    if (x.shape[1] == 0 and op == "max") or (x.size == 0 and op == "pad"):
        with pytest.raises(ValueError):
            mx.eval(ours(a))
        return
    check(ours(a), numpy(x), rtol=1e-4, atol=1e-4)


def test_zero_dimensional_inputs():
    s = mx.array(2.5)
    assert mx.sum(s).item() == 2.5 and mx.sum(s).shape == ()
    assert mx.cumsum(s).tolist() == [2.5]
    assert mx.atleast_2d(s).shape == (1, 1)
    assert mx.expand_dims(s, 0).shape == (1,)
    assert mx.sort(s, axis=None).tolist() == [2.5]
    assert mx.where(True, s, 0.0).item() == 2.5
    with pytest.raises((ValueError, IndexError)):
        mx.swapaxes(s, 0, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int32, np.uint8, np.bool_,
                                   np.complex64])
def test_reductions_of_broadcast_arrays_match_numpy(dtype):
    # Axes along which an array repeats one element (stride 0) are folded by doubling, not
    # element by element; axes 1 and 3 repeat, axes 0 and 2 do not.
    rng = np.random.default_rng(5)
    # Near 1, so that the products of 19800 elements stay finite in any order.
    base = rng.choice(np.array([-1.0, -0.999, 0.0, 1.0, 1.001, 1.002]), size=(3, 1, 5, 1))
    base = base.astype(np.int64) if np.issubdtype(dtype, np.integer) else base
    base = base.astype(dtype)
    x = np.broadcast_to(base, (3, 40, 5, 33))
    a = mx.broadcast_to(mx.array(base), x.shape)
    exact = not np.issubdtype(dtype, np.inexact)
    wide = np.int64 if exact else np.complex128 if dtype == np.complex64 else np.float64
    ops = ["sum", "prod", "max", "min", "any", "all", "mean"]
    for axis in (None, 0, 1, 3, (1, 3), (0, 1), (1, 2, 3), (0, 2)):
        for op in ops:
            if dtype == np.complex64 and op in ("max", "min"):
                continue
            got = np.array(getattr(mx, op)(a, axis=axis))
            expected = getattr(np, op)(x.astype(wide), axis=axis)
            if exact and op != "mean":
                np.testing.assert_array_equal(got, expected.astype(got.dtype), err_msg=f"{op} {axis}")
            else:
                rtol = 2e-3 if dtype == np.float16 else 1e-5
                np.testing.assert_allclose(got, expected.astype(got.dtype), rtol=rtol, err_msg=f"{op} {axis}")
    if not exact:
        # Elementwise ops on a broadcast array compute its one value once, as they would
        # compute each element of the array stored.
        check(mx.exp(a), np.exp(x.astype(wide)), rtol=2e-3)
        np.testing.assert_array_equal(np.array(mx.exp(a)), np.array(mx.exp(mx.array(x))))
        check(mx.abs(mx.full((300, 500), -2.5, dtype=mx.float32)), np.full((300, 500), 2.5))
    nan = mx.broadcast_to(mx.array([[1.0], [np.nan]]), (2, 1000))
    check(mx.max(nan, axis=1), [1.0, np.nan])
    check(mx.min(nan), np.nan)


@pytest.mark.parametrize("shape,axis", [((600, 300), 0), ((70_000, 3), 0), ((20, 10, 1000), (0, 1)),
                                        ((17, 9000), 0)])
def test_reductions_over_leading_axes_match_numpy(shape, axis):
    # Large enough to be cut into runs of rows folded on several threads and merged.
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    ints = rng.integers(-1000, 1000, size=shape).astype(np.int32)
    a, ai = mx.array(x), mx.array(ints)
    np.testing.assert_array_equal(np.array(mx.max(a, axis=axis)), x.max(axis=axis))
    np.testing.assert_array_equal(np.array(mx.min(a, axis=axis)), x.min(axis=axis))
    np.testing.assert_array_equal(np.array(mx.sum(ai, axis=axis)), ints.sum(axis=axis))
    np.testing.assert_allclose(np.array(mx.sum(a, axis=axis)),
                               x.astype(np.float64).sum(axis=axis), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(np.array(mx.mean(a, axis=axis)),
                               x.astype(np.float64).mean(axis=axis), rtol=1e-5, atol=1e-5)
