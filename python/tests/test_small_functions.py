"""Small mlx.core functions: windows, convolve, logical_xor, matrix_transpose, minmax,
broadcast_shapes, isdtype, asarray/from_dlpack, get_array_buffer_size, the memory-limit
functions and MLX's aliases. NumPy is the value oracle; messages are MLX 0.32.4's."""

import numpy as np
import pytest

import lazulite.core as mx

WINDOWS = ["bartlett", "blackman", "hamming", "hanning"]
FLOATS = [mx.float16, mx.bfloat16, mx.float32, mx.float64]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("m", [-3, 0, 1, 2, 3, 5, 8, 51])
def test_windows_match_numpy(name, m):
    w = getattr(mx, name)(m)
    assert w.dtype == mx.float32 and w.shape == (max(m, 0),)
    np.testing.assert_allclose(np.array(w), getattr(np, name)(m), atol=1e-6)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("n, m", [(3, 3), (5, 2), (2, 4), (4, 7), (6, 4), (1, 1), (1, 5), (8, 1)])
def test_convolve_matches_numpy(mode, n, m):
    rng = np.random.default_rng(n * 10 + m)
    a, v = rng.standard_normal(n).astype(np.float32), rng.standard_normal(m).astype(np.float32)
    out = mx.convolve(mx.array(a), mx.array(v), mode)
    assert out.dtype == mx.float32
    np.testing.assert_allclose(np.array(out), np.convolve(a, v, mode), rtol=1e-5, atol=1e-5)
    assert mx.convolve(mx.array(a), mx.array(v)).shape == np.convolve(a, v).shape


def test_convolve_strided_inputs_and_dtypes():
    a = np.arange(12, dtype=np.float32)
    np.testing.assert_allclose(
        np.array(mx.convolve(mx.array(a)[::-2], mx.array(a)[1:4], "same")),
        np.convolve(a[::-2], a[1:4], "same"),
    )
    for dtype in FLOATS:
        out = mx.convolve(mx.array([1, 2, 3], dtype), mx.array([1, 1], dtype))
        assert out.dtype == dtype and out.tolist() == [1, 3, 5, 3]
    assert mx.convolve(mx.array([1, 2, 3], mx.float16), mx.array([1.0, 1.0])).dtype == mx.float32


def test_convolve_errors():
    one = mx.array([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\[convolve\] Invalid mode."):
        mx.convolve(one, one, "foo")
    for a, v in [(mx.zeros((2, 2)), one), (one, mx.zeros((2, 2))), (mx.array(3.0), one)]:
        with pytest.raises(ValueError, match=r"\[convolve\] Inputs must be 1D."):
            mx.convolve(a, v)
    with pytest.raises(ValueError, match=r"\[convolve\] Inputs cannot be empty."):
        mx.convolve(mx.zeros((0,)), one)
    with pytest.raises(ValueError, match=r"\[conv\] Invalid input array with type int32"):
        mx.convolve(mx.array([1, 2, 3]), mx.array([1, 1]))


def test_logical_xor():
    a = np.array([[1, 0, 2], [0, 0, 3]], dtype=np.int32)
    b = np.array([True, False, False])
    out = mx.logical_xor(mx.array(a), mx.array(b))
    assert out.dtype == mx.bool_
    np.testing.assert_array_equal(np.array(out), np.logical_xor(a, b))
    assert mx.logical_xor(True, False).item() is True
    np.testing.assert_array_equal(np.array(mx.logical_xor(mx.array(a), 0)), np.logical_xor(a, 0))
    x = np.array([0.0, np.nan, -1.5], dtype=np.float32)
    np.testing.assert_array_equal(np.array(mx.logical_xor(mx.array(x), mx.array(x)[::-1])), np.logical_xor(x, x[::-1]))


def test_matrix_transpose():
    a = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.array(mx.matrix_transpose(mx.array(a))), np.matrix_transpose(a))
    with pytest.raises(ValueError, match=r"\[matrix_transpose\] Input array must have at least 2 dimensions."):
        mx.matrix_transpose(mx.array([1, 2]))


@pytest.mark.parametrize("axis", [None, 0, -1, [0, 2]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_minmax(axis, keepdims):
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    lo, hi = mx.minmax(mx.array(a), axis=axis, keepdims=keepdims)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    np.testing.assert_array_equal(np.array(lo), a.min(axis=np_axis, keepdims=keepdims))
    np.testing.assert_array_equal(np.array(hi), a.max(axis=np_axis, keepdims=keepdims))
    assert isinstance(mx.minmax(mx.array(a)), tuple)


def test_minmax_errors():
    with pytest.raises(ValueError, match=r"\[min\]"):
        mx.minmax(mx.array([]))


def test_broadcast_shapes():
    for shapes in [((1,), (3, 1)), ((6, 7), (5, 6, 1), (7,)), ((5, 1, 4), (1, 3, 1)), ([2, 3],), ((2, 3), ()), ((0, 1), (3,))]:
        assert mx.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    assert isinstance(mx.broadcast_shapes([2, 3]), tuple)
    with pytest.raises(ValueError, match=r"\[broadcast_shapes\] Shapes \(2,3\) and \(4\) cannot be broadcast."):
        mx.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match=r"\[broadcast_shapes\] Must provide at least one shape."):
        mx.broadcast_shapes()
    with pytest.raises(TypeError):
        mx.broadcast_shapes(3, (3,))


ALL = [mx.bool_, mx.uint8, mx.uint16, mx.uint32, mx.uint64, mx.int8, mx.int16, mx.int32, mx.int64,
       mx.float16, mx.bfloat16, mx.float32, mx.float64, mx.complex64]
KINDS = {  # kind -> NumPy's answer for the dtype of the same name (bfloat16: as float16)
    "bool": "bool", "signed integer": "signed integer", "unsigned integer": "unsigned integer",
    "integral": "integral", "real floating": "real floating", "complex floating": "complex floating",
    "numeric": "numeric",
}


def numpy_dtype(dtype):
    return np.dtype("float16" if dtype == mx.bfloat16 else "bool" if dtype == mx.bool_ else str(dtype).split(".")[-1])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_isdtype_kinds_match_numpy(kind):
    for dtype in ALL:
        assert mx.isdtype(dtype, kind) == np.isdtype(numpy_dtype(dtype), kind), dtype


def test_isdtype_dtypes_tuples_and_errors():
    assert mx.isdtype(mx.float32, mx.float32) and not mx.isdtype(mx.float32, mx.float16)
    assert mx.isdtype(mx.int8, ("bool", mx.int8)) and not mx.isdtype(mx.int8, ("bool", mx.int16))
    assert not mx.isdtype(mx.float32, ())
    with pytest.raises(ValueError, match=r"\[isdtype\] Unknown data type kind: 'foo'."):
        mx.isdtype(mx.float32, "foo")
    for kind in (mx.floating, 3, (("bool",),)):
        with pytest.raises(ValueError, match=r"\[isdtype\] `kind` must be a dtype, a string, or a tuple"):
            mx.isdtype(mx.float32, kind)
    with pytest.raises(TypeError):
        mx.isdtype("float32", "numeric")


def test_asarray_and_from_dlpack():
    a = mx.asarray([1, 2])
    assert a.dtype == mx.int32 and a.tolist() == [1, 2]
    n = np.arange(3.0)
    b = mx.asarray(n, dtype=mx.float16)
    assert b.dtype == mx.float16 and b.tolist() == [0, 1, 2]
    c = mx.asarray(a, copy=True)
    assert c is not a and c.tolist() == a.tolist()
    with pytest.raises(ValueError, match="Unable to avoid copy while creating an array as requested."):
        mx.asarray(a, copy=False)
    with pytest.raises(ValueError, match=r"\[convert\] Cannot import a CPU array without a copy."):
        mx.asarray(n, copy=False)
    d = mx.from_dlpack(np.arange(3))
    np.testing.assert_array_equal(np.array(d), np.arange(3))
    assert d.dtype == mx.int64
    np.testing.assert_array_equal(np.array(mx.from_dlpack(n[::2])), n[::2])
    with pytest.raises(TypeError):
        mx.from_dlpack([1, 2])
    with pytest.raises(ValueError, match="without a copy"):
        mx.from_dlpack(n, copy=False)


def test_get_array_buffer_size():
    a = mx.array([1.0, 2.0])
    mx.eval(a)
    assert mx.get_array_buffer_size(a) == a.nbytes == 8
    x = mx.zeros((3,), mx.float16) + 1
    mx.eval(x)
    assert mx.get_array_buffer_size(x, [a, {"x": x}], 3, "leaf") == 8 + 6
    assert mx.get_array_buffer_size() == 0
    view = a[1:]
    mx.eval(view)
    assert mx.get_array_buffer_size(view, a) == 8
    with pytest.raises(ValueError, match=r"\[get_array_buffer_size\] Arrays must be evaluated before querying buffer size."):
        mx.get_array_buffer_size(mx.ones((10,)) * 2)


def test_memory_limits():
    old = mx.set_memory_limit(1 << 40)
    try:
        assert mx.get_memory_limit() == 1 << 40
    finally:
        mx.set_memory_limit(old)
    assert mx.get_memory_limit() == old
    assert mx.set_wired_limit(100) == 0 and mx.set_wired_limit(0) == 0


def test_aliases():
    assert mx.empty_like is mx.zeros_like
    assert mx.cumulative_sum is mx.cumsum and mx.cumulative_prod is mx.cumprod
    assert mx.empty_like(mx.array([1.0, 2.0])).tolist() == [0.0, 0.0]


# Python's True and False where MLX's binding expects ints (shapes, axes, counts, an
# index) count as 1 and 0; the expected answers are real MLX 0.32.4's.
BOOLS_AS_INTS = {
    "reshape": (lambda: mx.arange(12).reshape((True, 12)).shape, (1, 12)),
    "zeros": (lambda: mx.zeros((True, 2)).shape, (1, 2)),
    "ones": (lambda: mx.ones(True).shape, (1,)),
    "broadcast_to": (lambda: mx.broadcast_to(mx.array(1), (True, 3)).shape, (1, 3)),
    "sum axis": (lambda: mx.sum(mx.ones((2, 3)), axis=True).shape, (2,)),
    "transpose": (lambda: mx.transpose(mx.ones((2, 3)), (True, False)).shape, (3, 2)),
    "expand_dims": (lambda: mx.expand_dims(mx.ones((2, 3)), True).shape, (2, 1, 3)),
    "squeeze": (lambda: mx.squeeze(mx.ones((2, 1)), True).shape, (2,)),
    "take": (lambda: mx.take(mx.arange(3), True).tolist(), 1),
    "tile": (lambda: mx.tile(mx.arange(2), (True, 2)).shape, (1, 4)),
    "pad": (lambda: mx.pad(mx.arange(2), True).tolist(), [0, 0, 1, 0]),
    "roll": (lambda: mx.roll(mx.arange(3), True).tolist(), [2, 0, 1]),
    "random.normal": (lambda: mx.random.normal((True, 2)).shape, (1, 2)),
}


@pytest.mark.parametrize("name", sorted(BOOLS_AS_INTS))
def test_bools_count_as_ints_as_in_mlx(name):
    call, expected = BOOLS_AS_INTS[name]
    assert call() == expected
