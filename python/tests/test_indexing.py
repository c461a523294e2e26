"""Indexing from Python: every example of MLX's guide page on indexing, NumPy as the oracle for
reads (`a[key]`) and writes (`a[key] = v`) of random index expressions, `.at` updates
against NumPy's `ufunc.at`, transforms through indexing, the indexing functions, and
errors (which leave the array intact).

Beyond MLX (documented differences): bool masks select as in NumPy, NumPy arrays and
empty lists index as in NumPy, and out-of-range indices raise IndexError."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazulite.core as mx

# ---------------------------------------------------------------------------------------
# The guide's examples, as written.


def test_guide_ints_and_slices():
    arr = mx.arange(10)
    assert repr(arr[3]) == "array(3, dtype=int32)"
    assert repr(arr[-2]) == "array(8, dtype=int32)"
    assert repr(arr[2:8:2]) == "array([2, 4, 6], dtype=int32)"


def test_guide_ellipsis():
    arr = mx.arange(8).reshape(2, 2, 2)
    expected = "array([[0, 2],\n       [4, 6]], dtype=int32)"
    assert repr(arr[:, :, 0]) == expected
    assert repr(arr[..., 0]) == expected


def test_guide_new_axis():
    arr = mx.arange(8)
    assert arr.shape == (8,)
    assert arr[None].shape == (1, 8)


def test_guide_array_index():
    arr = mx.arange(10)
    idx = mx.array([5, 7])
    assert repr(arr[idx]) == "array([5, 7], dtype=int32)"


def test_guide_in_place_update():
    a = mx.array([1, 2, 3])
    a[2] = 0
    assert repr(a) == "array([1, 2, 0], dtype=int32)"


def test_guide_update_seen_through_every_reference():
    a = mx.array([1, 2, 3])
    b = a
    b[2] = 0
    assert repr(b) == "array([1, 2, 0], dtype=int32)"
    assert repr(a) == "array([1, 2, 0], dtype=int32)"


def test_guide_grad_through_setitem():
    def fun(x, idx):
        x[idx] = 2.0
        return x.sum()

    dfdx = mx.grad(fun)(mx.array([1.0, 2.0, 3.0]), mx.array([1]))
    assert repr(dfdx) == "array([1, 0, 1], dtype=float32)"


def test_guide_other_functions_exist():
    assert callable(mx.take) and callable(mx.take_along_axis)


# ---------------------------------------------------------------------------------------
# Random index expressions against NumPy.


@st.composite
def index_expressions(draw, shape):
    """A key for an array of `shape`, as (NumPy key, lazulite key): ints, slices with any
    steps, None, at most one Ellipsis, integer arrays (broadcasting together) and bool
    masks, in any mix. The lazulite key writes each array as a NumPy array, a lazulite
    array or a list."""
    ndim = len(shape)
    consumed = draw(st.integers(0, ndim))
    # Which axes get which kind of entry.
    kinds = draw(st.lists(st.sampled_from(["int", "slice", "array", "mask", "full"]),
                          min_size=consumed, max_size=consumed))
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, consumed)))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    masks = kinds.count("mask")
    arrays = kinds.count("array")
    if masks and (arrays or masks > 1):
        # Mask positions broadcast with the other arrays only when their counts agree;
        # keep one mask alone among the advanced indices.
        kinds = ["slice" if k in ("mask", "array") else k for k in kinds]
        kinds[kinds.index("slice") if "slice" in kinds else 0] = "mask"
    np_key, mx_key = [], []

    def as_form(a):
        form = draw(st.sampled_from(["numpy", "mlx", "list"]))
        if form == "mlx":
            return mx.array(a)
        if form == "list" and a.ndim > 0 and a.size > 0:
            return a.tolist()
        return a

    # Ellipsis covers the axes after the explicit ones in front of it, so place the
    # explicit entries for the leading axes, then "...", then those for trailing axes.
    lead = ellipsis_at if ellipsis_at is not None else consumed
    axes = list(range(lead)) + list(range(ndim - (consumed - lead), ndim))
    for position, (axis, kind) in enumerate(zip(axes, kinds)):
        if position == ellipsis_at:
            np_key.append(Ellipsis)
            mx_key.append(Ellipsis)
        if draw(st.integers(0, 4)) == 0:
            np_key.append(None)
            mx_key.append(None)
        n = shape[axis]
        if kind == "int" and n > 0:
            i = draw(st.integers(-n, n - 1))
            np_key.append(i)
            mx_key.append(i)
        elif kind == "array" and n > 0:
            sub = batch[len(batch) - draw(st.integers(0, len(batch))):]
            a = np.array(draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(sub)),
                                       max_size=int(np.prod(sub)))), dtype=np.int64).reshape(sub)
            np_key.append(a)
            mx_key.append(as_form(a) if a.ndim > 0 else mx.array(a))
        elif kind == "mask":
            m = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
            np_key.append(m)
            mx_key.append(as_form(m) if n > 0 else m)
        elif kind == "full":
            np_key.append(slice(None))
            mx_key.append(slice(None))
        else:
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))
            s = slice(draw(bound), draw(bound), step)
            np_key.append(s)
            mx_key.append(s)
    if ellipsis_at is not None and ellipsis_at == len(kinds):
        np_key.append(Ellipsis)
        mx_key.append(Ellipsis)
    if draw(st.booleans()):
        np_key.append(None)
        mx_key.append(None)
    if len(np_key) == 1 and draw(st.booleans()):
        return np_key[0], mx_key[0]
    return tuple(np_key), tuple(mx_key)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def array_and_key(draw):
    shape = draw(shapes)
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    np_key, mx_key = draw(index_expressions(shape))
    return a, np_key, mx_key


def numpy_result(a, key):
    try:
        return np.asarray(a[key]), None
    except IndexError as e:
        return None, e


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array_and_key())
def test_read_matches_numpy(case):
    a, np_key, mx_key = case
    expected, error = numpy_result(a, np_key)
    x = mx.array(a)
    if error is not None:
        # NumPy's IndexError for too many indices is MLX's ValueError.
        with pytest.raises(IndexError if "too many" not in str(error) else ValueError):
            np.array(x[mx_key])
        return
    got = x[mx_key]
    assert got.shape == expected.shape
    assert got.dtype == mx.int32
    np.testing.assert_array_equal(np.array(got), expected)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array_and_key(), st.data())
def test_write_matches_numpy(case, data):
    a, np_key, mx_key = case
    target, error = numpy_result(a, np_key)
    if error is not None:
        return
    if data.draw(st.booleans()):
        value = data.draw(st.integers(-100, -1))
        mx_value = value
    else:
        # A value of the indexed shape, or of a trailing part of it (broadcast).
        shape = target.shape[data.draw(st.integers(0, target.ndim)):]
        value = -1 - np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
        forms = [mx.array(value), value] + ([value.tolist()] if value.ndim and value.size else [])
        mx_value = data.draw(st.sampled_from(forms))
    expected = a.copy()
    expected[np_key] = value
    x = mx.array(a)
    alias = x
    x[mx_key] = mx_value
    np.testing.assert_array_equal(np.array(alias), expected)
    assert alias.dtype == mx.int32


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array_and_key(), st.data())
def test_views_of_views(first, data):
    """Indexing the result of an indexing (a view or a gather) agrees with NumPy; a write
    into it rebinds it and leaves the array it came from unchanged (MLX semantics)."""
    a, np_key, mx_key = first
    base, error = numpy_result(a, np_key)
    if error is not None:
        return
    x = mx.array(a)
    y = x[mx_key]
    np_key2, mx_key2 = data.draw(index_expressions(base.shape))
    expected, error = numpy_result(base, np_key2)
    if error is not None:
        return
    got = y[mx_key2]
    np.testing.assert_array_equal(np.array(got), expected)
    written = base.copy()
    written[np_key2] = -7
    y[mx_key2] = -7
    np.testing.assert_array_equal(np.array(y), written)
    np.testing.assert_array_equal(np.array(x), a)


@pytest.mark.parametrize("transpose", [False, True])
def test_strided_sources(transpose):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = mx.array(a)
    if transpose:
        a, x = a.transpose(2, 0, 1), x.transpose(2, 0, 1)
    a, x = a[::-1, 1:, ::2], x[::-1, 1:, ::2]
    keys = [
        (np.array([0, -1, 1]), slice(None), 1),
        (Ellipsis, np.array([[0], [1]]), np.array([0, 1, 0])),
        (1, Ellipsis, None, np.array([1, 0])),
        (a[..., 0] > 20,),
    ]
    for key in keys:
        mx_key = tuple(mx.array(k) if isinstance(k, np.ndarray) else k for k in key)
        np.testing.assert_array_equal(np.array(x[mx_key]), a[key])


# ---------------------------------------------------------------------------------------
# Masks (beyond MLX, NumPy semantics).


def test_bool_masks():
    a = np.arange(12).reshape(3, 4)
    x = mx.array(a)
    m = a % 3 == 0
    np.testing.assert_array_equal(np.array(x[mx.array(m)]), a[m])
    np.testing.assert_array_equal(np.array(x[m]), a[m])
    np.testing.assert_array_equal(np.array(x[[True, False, True]]), a[[True, False, True]])
    np.testing.assert_array_equal(np.array(x[:, [False, True, True, False]]),
                                  a[:, [False, True, True, False]])
    x[mx.array(m)] = -1
    b = a.copy()
    b[m] = -1
    np.testing.assert_array_equal(np.array(x), b)
    y = mx.array(a)
    y[[True, False, True]] = mx.array([7, 8, 9, 10])
    c = a.copy()
    c[[True, False, True]] = [7, 8, 9, 10]
    np.testing.assert_array_equal(np.array(y), c)


def test_mask_shape_mismatch_is_index_error():
    x = mx.arange(4)
    with pytest.raises(IndexError):
        x[[True, False]]
    with pytest.raises(IndexError):
        x[[True, False]] = 1
    assert x.tolist() == [0, 1, 2, 3]


# ---------------------------------------------------------------------------------------
# Writes: values and dtypes.


def test_setitem_values_of_every_form():
    x = mx.zeros((2, 3))
    x[0] = np.array([1, 2, 3])
    x[1, 1:] = [5, 6]
    x[1, 0] = mx.array(4)
    assert x.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert x.dtype == mx.float32
    y = mx.arange(5)
    y[0] = 2.7  # cast to the array's dtype, as MLX
    assert y.tolist() == [2, 1, 2, 3, 4] and y.dtype == mx.int32


def test_setitem_duplicates_keep_one_value():
    a = mx.array([0, 0])
    idx = mx.array([0, 1, 0, 1])
    a[idx] += 1
    assert a.tolist() == [1, 1]


def test_augmented_assignment_on_index():
    a = np.arange(6).reshape(2, 3)
    x = mx.array(a)
    x[:, 1] *= 10
    a[:, 1] *= 10
    np.testing.assert_array_equal(np.array(x), a)


# ---------------------------------------------------------------------------------------
# .at: duplicate indices accumulate.


def test_at_doc_example():
    a = mx.array([0, 0])
    idx = mx.array([0, 1, 0, 1])
    assert repr(a.at[idx].add(1)) == "array([2, 2], dtype=int32)"
    assert a.tolist() == [0, 0]
    assert type(a.at).__name__ == "ArrayAt"


AT_UFUNCS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum,
}


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(AT_UFUNCS)),
    st.lists(st.integers(-5, 4), min_size=0, max_size=12),
    st.booleans(),
    st.data(),
)
def test_at_matches_ufunc_at(method, indices, two_d, data):
    rng = np.random.default_rng(len(indices))
    a = rng.uniform(0.5, 2.0, size=(5, 3) if two_d else (5,)).astype(np.float32)
    idx = np.array(indices, dtype=np.int32)
    values = rng.uniform(0.5, 2.0, size=idx.shape + a.shape[1:]).astype(np.float32)
    scalar = data.draw(st.booleans())
    value = np.float32(1.5) if scalar else values
    expected = a.copy()
    AT_UFUNCS[method].at(expected, idx, value)
    x = mx.array(a)
    got = getattr(x.at[mx.array(idx)], method)(1.5 if scalar else mx.array(values))
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-5)
    np.testing.assert_array_equal(np.array(x), a)


def test_at_with_slices_and_ints():
    a = np.zeros((3, 4), np.int32)
    expected = a.copy()
    np.add.at(expected, (slice(None), [0, 0, 3]), 2)
    got = mx.array(a).at[:, mx.array([0, 0, 3])].add(2)
    np.testing.assert_array_equal(np.array(got), expected)
    b = mx.arange(5)
    assert b.at[1:3].multiply(3).tolist() == [0, 3, 6, 3, 4]
    assert b.at[-1].maximum(10).tolist() == [0, 1, 2, 3, 10]


def test_at_without_index_is_an_error():
    with pytest.raises(ValueError):
        mx.arange(3).at.add(1)


# ---------------------------------------------------------------------------------------
# Transforms through indexing.


def test_grad_through_gather():
    idx = mx.array([0, 2, 2, 4])
    g = mx.grad(lambda x: (x[idx] * mx.array([1.0, 2.0, 3.0, 4.0])).sum())(mx.ones(5))
    assert g.tolist() == [1, 0, 5, 0, 4]


def test_grad_through_setitem_value():
    def fun(v, x):
        x[1:3] = v
        return (x * x).sum()

    g = mx.grad(fun)(mx.array(3.0), mx.ones(4))
    assert g.item() == 12.0  # d/dv of 2 v^2


def test_grad_through_mask_and_at():
    m = mx.array([True, False, True])
    g = mx.grad(lambda x: x[m].sum())(mx.ones(3))
    assert g.tolist() == [1, 0, 1]
    g = mx.grad(lambda v: mx.zeros(3).at[mx.array([0, 0])].add(v).sum())(mx.array(2.0))
    assert g.item() == 2.0


def test_vmap_of_array_indexing_matches_loop():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((6, 5)).astype(np.float32)
    idx = rng.integers(-5, 5, size=(6, 3)).astype(np.int32)

    def fun(x, i):
        return x[i] * 2

    got = mx.vmap(fun)(mx.array(xs), mx.array(idx))
    loop = np.stack([np.array(fun(mx.array(x), mx.array(i))) for x, i in zip(xs, idx)])
    np.testing.assert_allclose(np.array(got), loop)
    fixed = mx.array([4, 0])
    got = mx.vmap(lambda x: x[fixed])(mx.array(xs))
    np.testing.assert_allclose(np.array(got), xs[:, [4, 0]])
    got = mx.vmap(lambda i: mx.array(xs[0])[i], in_axes=0)(mx.array(idx))
    np.testing.assert_allclose(np.array(got), xs[0][idx])


def test_vmap_of_setitem_matches_loop():
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[0], [3], [1]], dtype=np.int32)

    def fun(x, i):
        x[i] = -1.0
        return x

    got = mx.vmap(fun)(mx.array(xs), mx.array(idx))
    loop = np.stack([np.array(fun(mx.array(x), mx.array(i))) for x, i in zip(xs, idx)])
    np.testing.assert_array_equal(np.array(got), loop)


# ---------------------------------------------------------------------------------------
# The indexing functions.


def test_take():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = mx.array(a)
    assert repr(mx.take(x, 2)) == "array(2, dtype=int32)"
    np.testing.assert_array_equal(np.array(mx.take(x, mx.array([[0, 1]]), 1)),
                                  np.take(a, [[0, 1]], 1))
    np.testing.assert_array_equal(np.array(mx.take(x, mx.array([-1, 0]))), np.take(a, [-1, 0]))
    np.testing.assert_array_equal(np.array(mx.take(x, mx.array([2, 0]), axis=-2)),
                                  np.take(a, [2, 0], axis=-2))


def test_take_along_axis():
    a = np.array([[10, 30, 20], [60, 50, 40]])
    i = np.argsort(a, axis=-1)
    x = mx.array(a)
    np.testing.assert_array_equal(np.array(mx.take_along_axis(x, mx.array(i))),
                                  np.take_along_axis(a, i, -1))
    np.testing.assert_array_equal(np.array(mx.take_along_axis(x, mx.array([[0], [2]]), 0 - 1)),
                                  np.take_along_axis(a, np.array([[0], [2]]), -1))
    np.testing.assert_array_equal(np.array(mx.take_along_axis(x, mx.array([5, 0]), None)),
                                  np.take_along_axis(a, np.array([5, 0]), None))


def test_put_along_axis():
    a = np.arange(6).reshape(2, 3)
    x = mx.array(a)
    got = mx.put_along_axis(x, mx.array([[0], [2]]), mx.array(9), 1)
    expected = a.copy()
    np.put_along_axis(expected, np.array([[0], [2]]), 9, 1)
    np.testing.assert_array_equal(np.array(got), expected)
    assert x.tolist() == a.tolist()


def test_slice_and_slice_update_doc_examples():
    a = mx.array([[1, 2, 3], [4, 5, 6]])
    assert repr(mx.slice(a, start_indices=mx.array(1), axes=(0,), slice_size=(1, 2))) \
        == "array([[4, 5]], dtype=int32)"
    assert mx.slice(a, start_indices=mx.array(1), axes=(1,), slice_size=(2, 1)).tolist() \
        == [[2], [5]]
    z = mx.zeros((3, 3))
    got = mx.slice_update(z, mx.ones((1, 2)), start_indices=mx.array([1, 1]), axes=(0, 1))
    assert got.tolist() == [[0, 0, 0], [0, 1, 1], [0, 0, 0]]
    assert z.tolist() == [[0] * 3] * 3


def test_slice_with_computed_start_and_grad():
    a = mx.arange(10, dtype=mx.float32)
    start = mx.argmax(a) - 3
    assert mx.slice(a, start, [0], [3]).tolist() == [6, 7, 8]
    g = mx.grad(lambda x: mx.slice(x, mx.array(2), [0], [3]).sum())(a)
    assert g.tolist() == [0, 0, 1, 1, 1, 0, 0, 0, 0, 0]


def test_slice_out_of_range_is_index_error():
    with pytest.raises(IndexError):
        mx.eval(mx.slice(mx.arange(5), mx.array([4]), (0,), (3,)))
    with pytest.raises(ValueError):
        mx.slice(mx.arange(5), mx.array([0]), (0,), (6,))
    with pytest.raises(IndexError):
        mx.eval(mx.slice_update(mx.zeros((3, 3)), mx.ones((1, 2)), mx.array([2, 2]), (0, 1)))


class _Two:
    def __index__(self):
        return 2


def test_slice_fields_take_ints_and_index_objects_as_mlx():
    # What real MLX 0.32.4 accepts in a slice: ints and objects with __index__; a bool,
    # float, string or array is a ValueError.
    a = np.arange(12)
    x = mx.array(a)
    for key in [slice(np.int32(2), None), slice(_Two(), None), slice(None, -3, 2)]:
        np.testing.assert_array_equal(np.array(x[key]), a[key])
    for bad in [1.5, np.float32(1.5), True, np.True_, "a", mx.array(2)]:
        for key in [slice(bad, None), slice(None, bad), slice(None, None, bad)]:
            with pytest.raises(ValueError, match="Slice indices must be integers or None"):
                x[key]


def test_nonzero_and_argwhere_beyond_mlx():
    a = np.array([[0, 3], [4, 0], [0, 5]])
    nz = mx.nonzero(mx.array(a))
    assert isinstance(nz, tuple) and len(nz) == 2
    for got, expected in zip(nz, np.nonzero(a)):
        np.testing.assert_array_equal(np.array(got), expected)
    np.testing.assert_array_equal(np.array(mx.argwhere(mx.array(a))), np.argwhere(a))


# ---------------------------------------------------------------------------------------
# Errors: the right exception, never a crash, the array intact.


@pytest.mark.parametrize("key, error", [
    (1.5, ValueError),
    ("x", ValueError),
    (True, ValueError),
    ([1.5], ValueError),
    (mx.array([1.0]), ValueError),
    ((0, 0, 0), ValueError),
    ((Ellipsis, Ellipsis), ValueError),
    (slice(None, None, 0), ValueError),
    (slice(1.5, None), ValueError),
    (5, IndexError),
    (-7, IndexError),
    ((slice(None), 4), IndexError),
    ((mx.array([0, 1]), mx.array([0, 1, 2])), IndexError),
    (object(), ValueError),
])
def test_bad_keys(key, error):
    x = mx.arange(6).reshape(2, 3)
    with pytest.raises(error):
        x[key]
    with pytest.raises(error):
        x[key] = 1
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("key", [
    mx.array([5]), [0, 5], np.array([-6]), (slice(None), mx.array([0, 3])), mx.array([2**40], mx.int64),
])
def test_out_of_bounds_index_arrays(key):
    x = mx.arange(6).reshape(2, 3)
    with pytest.raises(IndexError):
        mx.eval(x[key])
    with pytest.raises(IndexError):
        x[key] = 0
    with pytest.raises(IndexError):
        mx.eval(x.at[key].add(1))
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_lazily_computed_out_of_bounds_index_fails_at_eval():
    x = mx.arange(4)
    y = mx.array(x)
    idx = mx.array([1]) + 10  # not evaluated yet: checked by the scatter when it runs
    y[idx] = 0
    with pytest.raises(IndexError):
        mx.eval(y)
    assert x.tolist() == [0, 1, 2, 3]


def test_bad_values():
    x = mx.arange(5)
    with pytest.raises(ValueError):
        x[0] = "x"
    with pytest.raises(ValueError):
        x[0] = mx.ones((2,))
    with pytest.raises(ValueError):
        x[:2] = [1, 2, 3]
    assert x.tolist() == [0, 1, 2, 3, 4]


def test_empty_and_zero_size():
    x = mx.zeros((0, 3))
    assert x[[]].shape == (0, 3)
    assert x[:, 1].shape == (0,)
    assert mx.arange(3)[mx.array([], mx.int32)].shape == (0,)
    y = mx.arange(3)
    y[[]] = 5
    assert y.tolist() == [0, 1, 2]
    assert mx.array(7)[None].shape == (1,)
    assert mx.array(7)[...].item() == 7
    with pytest.raises(ValueError, match="array is 0-dimensional"):
        mx.array(7)[0]


def test_iteration_uses_indexing():
    assert [r.tolist() for r in mx.arange(6).reshape(3, 2)] == [[0, 1], [2, 3], [4, 5]]


# ---------------------------------------------------------------------------------------
# Out of bounds at every entry point: IndexError, at record time for static indices and
# at eval for index arrays (also lazily computed ones); the array, another reference to
# it and an unevaluated input all stay intact.


def _entry_points(x, bad, start):
    rows = bad.reshape(1, 2)
    return {
        "getitem array": lambda: x[:, bad],
        "getitem two arrays": lambda: x[mx.array([0, 1]), bad],
        "take axis": lambda: mx.take(x, bad, 1),
        "take flat": lambda: mx.take(x, bad * 2),
        "take_along_axis": lambda: mx.take_along_axis(x, rows, 1),
        "put_along_axis": lambda: mx.put_along_axis(x, rows, mx.array(0.0), 1),
        "at add": lambda: x.at[:, bad].add(1),
        "at subtract": lambda: x.at[:, bad].subtract(1),
        "at multiply": lambda: x.at[:, bad].multiply(2),
        "at divide": lambda: x.at[:, bad].divide(2),
        "at maximum": lambda: x.at[:, bad].maximum(1),
        "at minimum": lambda: x.at[:, bad].minimum(1),
        "slice": lambda: mx.slice(x, start, (1,), (2, 2)),
        "slice_update": lambda: mx.slice_update(x, mx.zeros((1, 2)), start, (1,)),
    }


@pytest.mark.parametrize("shift", [2, -5])
@pytest.mark.parametrize("lazy_input", [False, True])
@pytest.mark.parametrize("name", sorted(_entry_points(None, mx.zeros(2), None)))
def test_every_entry_point_out_of_bounds(name, shift, lazy_input):
    source = mx.arange(6, dtype=mx.float32).reshape(2, 3)
    x = source + 1 if lazy_input else source  # unevaluated: must not be written into
    alias = x
    bad = mx.array([0, 1]) + shift  # computed lazily: [2, 3] or [-5, -4] on an axis of 3
    start = mx.array([0]) + 2 * shift
    with pytest.raises(IndexError, match="out of bounds"):
        mx.eval(_entry_points(x, bad, start)[name]())
    expected = np.arange(6, dtype=np.float32).reshape(2, 3) + (1 if lazy_input else 0)
    np.testing.assert_array_equal(np.array(x), expected)
    np.testing.assert_array_equal(np.array(alias), expected)


def test_setitem_out_of_bounds_leaves_every_reference_intact():
    x = mx.arange(6).reshape(2, 3)
    alias = x
    computed = mx.array([0, 1]) + 2
    mx.eval(computed)  # evaluated index arrays are checked by the assignment itself
    for key in [(slice(None), computed), mx.array([5]), (0, 3), -3, mx.array([True, False, True])]:
        with pytest.raises(IndexError):
            x[key] = 7
        assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
        assert alias.tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("method", ["add", "subtract", "multiply", "divide", "maximum", "minimum"])
@pytest.mark.parametrize("key", [5, -3, (0, 3), (slice(None), -4), mx.array([True, False, True])])
def test_at_static_out_of_bounds(method, key):
    x = mx.arange(6, dtype=mx.float32).reshape(2, 3)
    with pytest.raises(IndexError):
        getattr(x.at[key], method)(1)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_take_with_an_int_out_of_bounds():
    x = mx.arange(6).reshape(2, 3)
    for call in [lambda: mx.take(x, 6), lambda: mx.take(x, -7), lambda: mx.take(x, 3, 1)]:
        with pytest.raises(IndexError):
            mx.eval(call())
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_large_take_checks_every_index():
    n = 100_000
    a = np.arange(n, dtype=np.float32)
    i = (np.arange(n, dtype=np.int64) * 7919) % n - n // 2
    np.testing.assert_array_equal(np.array(mx.take(mx.array(a), mx.array(i))), a[i])
    for bad in (n, -n - 1):
        j = i.copy()
        j[-1] = bad
        with pytest.raises(IndexError, match=f"Index {bad} is out of bounds"):
            mx.eval(mx.take(mx.array(a), mx.array(j)))


# ---------------------------------------------------------------------------------------
# unique: MLX's signature and results (with a size, lazy); size=None beyond MLX.


def _reference(a, size=None, fill_value=None):
    """MLX's unique from NumPy's unique_all (NaNs distinct, as MLX), padded/truncated."""
    u = np.unique_all(a.reshape(-1))
    values, index = u.values, u.indices.astype(np.uint32)
    inverse, counts = u.inverse_indices.reshape(a.shape).astype(np.uint32), u.counts.astype(np.int32)
    if size is None:
        return values, index, inverse, counts
    k = len(values)
    if size <= k:
        return values[:size], index[:size], np.minimum(inverse, max(size - 1, 0)).astype(np.uint32), counts[:size]
    fill = values[0] if fill_value is None else np.array(fill_value).astype(a.dtype)
    pad = size - k
    return (np.concatenate([values, np.full(pad, fill, a.dtype)]),
            np.concatenate([index, np.full(pad, index[0], np.uint32)]),
            inverse,
            np.concatenate([counts, np.zeros(pad, np.int32)]))


def test_unique_signature_is_mlx():
    import inspect
    params = list(inspect.signature(mx.unique).parameters)
    assert params[:6] == ["a", "size", "return_index", "return_inverse", "return_counts", "fill_value"]


def test_unique_doc_example():
    a = mx.array([2, 1, 2, 3, 1])
    assert repr(mx.unique(a, 3)) == "array([1, 2, 3], dtype=int32)"
    assert mx.unique(a, 5).tolist() == [1, 2, 3, 1, 1]
    values, index, inverse, counts = mx.unique(a, 4, True, True, True, fill_value=0)
    assert values.tolist() == [1, 2, 3, 0]
    assert (index.dtype, index.tolist()) == (mx.uint32, [1, 0, 3, 1])
    assert (inverse.dtype, inverse.tolist()) == (mx.uint32, [1, 0, 1, 2, 0])
    assert (counts.dtype, counts.tolist()) == (mx.int32, [2, 2, 1, 0])
    # Only the requested outputs, in MLX's order.
    v, c = mx.unique(a, 3, return_counts=True)
    assert (v.tolist(), c.tolist()) == ([1, 2, 3], [2, 2, 1])
    assert isinstance(mx.unique(a, 3, return_inverse=True), tuple)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    dtype=st.sampled_from([np.int32, np.uint8, np.float32, np.int64, np.bool_]),
    extra=st.integers(-3, 3),
    data=st.data(),
)
def test_unique_matches_numpy(shape, dtype, extra, data):
    n = int(np.prod(shape))
    raw = data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    a = np.array(raw, dtype=np.int64).astype(dtype).reshape(shape)
    x = mx.array(a)
    k = len(np.unique(a))
    got = mx.unique(x, None, True, True, True)
    for g, e in zip(got, _reference(a)):
        np.testing.assert_array_equal(np.array(g), e)
    size = max(k + extra, 0)
    if n == 0 and size > 0:
        with pytest.raises(ValueError, match="fill value is required"):
            mx.unique(x, size)
        return
    fill = data.draw(st.sampled_from([None, 3]))
    got = mx.unique(x, size, True, True, True, fill_value=fill)
    for name, g, e in zip(["values", "index", "inverse", "counts"], got, _reference(a, size, fill)):
        assert np.array(g).dtype == e.dtype, name
        np.testing.assert_array_equal(np.array(g), e, err_msg=name)


def test_unique_floats_nan_and_signed_zero():
    a = np.array([np.nan, 1.5, -0.0, np.nan, 0.0, 1.5], np.float32)
    values, index, inverse, counts = mx.unique(mx.array(a), None, True, True, True)
    expected = _reference(a)
    np.testing.assert_array_equal(np.array(values), expected[0])  # both NaNs kept
    for g, e in zip((index, inverse, counts), expected[1:]):
        np.testing.assert_array_equal(np.array(g), e)
    assert counts.tolist() == [2, 2, 1, 1]


def test_unique_with_a_size_is_lazy_and_transforms():
    rows = mx.array([[1, 1, 2], [3, 3, 3]])
    assert mx.vmap(lambda r: mx.unique(r, 3))(rows).tolist() == [[1, 2, 1], [3, 3, 3]]
    f = mx.compile(lambda r: mx.unique(r, 3, return_counts=True)[1])
    assert f(mx.array([2, 1, 2, 3, 1])).tolist() == [2, 2, 1]
    g = mx.grad(lambda x: mx.unique(x, 3).sum())(mx.array([1.0, 2.0, 1.0]))
    assert g.tolist() == [2.0, 1.0, 0.0]  # as MLX: the padding reads the first value too


def test_unique_without_a_size_cannot_run_under_transforms():
    rows = mx.array([[1, 1, 2], [3, 3, 3]])
    with pytest.raises(ValueError, match="vmap"):
        mx.vmap(lambda r: mx.unique(r))(rows)
    with pytest.raises(ValueError, match="compile"):
        mx.compile(lambda r: mx.unique(r))(rows)


def test_unique_errors():
    a = mx.array([2, 1, 2])
    with pytest.raises(ValueError, match="negative size"):
        mx.unique(a, -1)
    with pytest.raises(ValueError, match="one element"):
        mx.unique(a, 3, fill_value=mx.array([1, 2]))
    with pytest.raises(ValueError, match="fill value is required"):
        mx.unique(mx.array([], mx.float32), 2)
    assert a.tolist() == [2, 1, 2]
