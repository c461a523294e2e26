"""Arrays from Python and NumPy data, and back: dtypes as MLX gives them, the buffer
protocol without copies, item/tolist."""

import array as pyarray

import numpy as np
import pytest
from conftest import DTYPES, NP, name

import lazulite.core as mx


@pytest.mark.parametrize(
    "value, dtype",
    [
        (1, mx.int32), (2**31 - 1, mx.int32), (-(2**31), mx.int32), (2**31, mx.int64),
        (1.5, mx.float32), (True, mx.bool_), (1 + 2j, mx.complex64),
        ([1, 2.5], mx.float32), ([True, 2], mx.int32), ([True, 2.5], mx.float32),
        ([1, 2j], mx.complex64), ([True, False], mx.bool_), ([1, 2**40], mx.int64),
        ((1, 2), mx.int32), ([], mx.float32), ([[]], mx.float32),
        (np.float64(1.5), mx.float32), (np.int64(1), mx.int64), (np.bool_(True), mx.bool_),
        (np.array(1.5), mx.float32), (np.array([1.0]), mx.float32),
        (np.array([1], np.uint64), mx.uint64), (np.array([1 + 2j]), mx.complex64),
        ([np.float64(1), 2], mx.float32),
    ],
)
def test_constructor_dtypes_follow_mlx(value, dtype):
    assert mx.array(value).dtype == dtype


def test_constructor_values_and_shapes():
    a = mx.array([[1, 2], [3, 4]])
    assert a.shape == (2, 2) and isinstance(a.shape, tuple)
    assert a.tolist() == [[1, 2], [3, 4]]
    assert mx.array([]).shape == (0,)
    assert mx.array([[], []]).shape == (2, 0)
    assert mx.array([[1], [2.5]]).tolist() == [[1.0], [2.5]]
    assert mx.array(300, mx.uint8).item() == 44
    assert mx.array([300, -1], mx.uint8).tolist() == [44, 255]
    assert mx.array(2.7, mx.int32).item() == 2
    assert mx.array(0.1, mx.float64).item() == 0.1
    assert mx.array(0.1).item() == float(np.float32(0.1))
    assert mx.array(1e300).item() == float("inf")
    assert mx.array(np.array([1.5]), mx.float64).dtype == mx.float64
    assert mx.array([mx.array(1), mx.array(2)]).tolist() == [1, 2]
    stacked = mx.array([mx.array([1]), mx.array([2.5])])
    assert stacked.shape == (2, 1) and stacked.dtype == mx.float32
    assert mx.array(mx.array([1, 2]), mx.float32).dtype == mx.float32


@pytest.mark.parametrize(
    "value, message",
    [
        ([1, [2]], "Initialization encountered extra dimension."),
        ([[1, 2], [3]], "Initialization encountered non-uniform length."),
        ([[1], 2], "Initialization encountered non-uniform length."),
        ("a", "Invalid type str received in array initialization."),
        (range(3), "Invalid type range received in array initialization."),
        (object(), "Invalid type object received in array initialization."),
    ],
)
def test_constructor_errors(value, message):
    with pytest.raises(ValueError, match=message):
        mx.array(value)


def test_constructor_rejects_non_dtype():
    with pytest.raises(TypeError):
        mx.array([1.5], "float32")


def test_deep_nesting_does_not_overflow_the_stack():
    nested = 1
    for _ in range(100_000):
        nested = [nested]
    assert mx.array(nested).ndim == 100_000


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d in NP], ids=name)
def test_numpy_round_trip_every_dtype(dtype):
    values = np.array([[0, 1, 2], [3, 4, 5]]).astype(NP[dtype])
    a = mx.array(values, dtype)
    assert a.dtype == dtype and a.shape == (2, 3)
    back = np.array(a)
    assert back.dtype == NP[dtype]
    np.testing.assert_array_equal(back, values)


def test_numpy_inputs_of_any_layout():
    base = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    for view in [base.T, base[:, ::-1, ::2], base[..., 1], np.broadcast_to(base[0, 0], (3, 4))]:
        np.testing.assert_array_equal(np.array(mx.array(view)), view)
    big_endian = np.arange(4, dtype=">i4")
    np.testing.assert_array_equal(np.array(mx.array(big_endian)), [0, 1, 2, 3])


def test_numpy_input_is_copied():
    values = np.arange(3, dtype=np.float32)
    a = mx.array(values)
    values[0] = 10
    assert a.tolist() == [0.0, 1.0, 2.0]


def test_buffer_protocol_inputs():
    assert mx.array(memoryview(b"ab")).tolist() == [97, 98]
    assert mx.array(bytearray(b"ab")).dtype == mx.uint8
    d = mx.array(pyarray.array("d", [1.0, 2.0]))
    assert d.dtype == mx.float32 and d.tolist() == [1.0, 2.0]


def data_pointer(ndarray):
    return ndarray.__array_interface__["data"][0]


def test_numpy_views_share_memory_without_copy():
    a = mx.arange(6)
    v1 = np.array(a, copy=False)
    v2 = np.asarray(a)
    assert not v1.flags.owndata
    assert data_pointer(v1) == data_pointer(v2)
    assert data_pointer(np.array(a[2:], copy=False)) == data_pointer(v1) + 8
    copy = np.array(a)
    assert data_pointer(copy) != data_pointer(v1)


@pytest.mark.parametrize(
    "make, strides",
    [
        (lambda: mx.arange(6).reshape(2, 3).T, (4, 12)),
        (lambda: mx.arange(6)[::2], (8,)),
        (lambda: mx.arange(6)[::-1], (-4,)),
        (lambda: mx.broadcast_to(mx.array([1, 2]), (2, 2)), (0, 4)),
    ],
)
def test_views_export_their_strides_and_write_through(make, strides):
    a = make()
    v = np.array(a, copy=False)
    assert v.strides == strides
    expected = np.array(a.tolist())
    np.testing.assert_array_equal(v, expected)
    v.flat[0] = 100
    assert a.tolist() == v.tolist()


def test_memoryview_formats():
    formats = {
        mx.bool_: "?", mx.uint8: "B", mx.uint16: "H", mx.uint32: "I", mx.uint64: "Q",
        mx.int8: "b", mx.int16: "h", mx.int32: "i", mx.int64: "q", mx.float16: "e",
        mx.float32: "f", mx.float64: "d", mx.complex64: "Zf", mx.bfloat16: "bfloat16",
    }
    for dtype, fmt in formats.items():
        m = memoryview(mx.zeros(2, dtype))
        assert (m.format, m.itemsize, m.readonly) == (fmt, dtype.size, False)


def test_contiguous_buffer_requests_get_row_major_data():
    a = mx.arange(6).reshape(2, 3).T
    assert bytes(memoryview(a)) == np.arange(6, dtype=np.int32).reshape(2, 3).T.tobytes()


def test_bfloat16_to_numpy_needs_a_cast_first():
    a = mx.array([1, 2], mx.bfloat16)
    with pytest.raises(ValueError):
        np.array(a)
    np.testing.assert_array_equal(np.array(a.astype(mx.float32)), [1.0, 2.0])


def test_view_keeps_memory_alive_after_rebinding():
    a = mx.arange(4)
    v = np.array(a, copy=False)
    a += 1
    del a
    assert v.tolist() == [0, 1, 2, 3]


def test_array_dunder():
    a = mx.array([1, 2])
    out = a.__array__()
    assert isinstance(out, np.ndarray) and out.dtype == np.int32
    assert np.asarray(a, dtype=np.float64).dtype == np.float64


def test_item_and_tolist_types():
    assert type(mx.array(1).item()) is int
    assert type(mx.array(1.5).item()) is float
    assert mx.array(True).item() is True
    assert mx.array(1j).item() == 1j
    assert mx.array([1], mx.bfloat16).item() == 1.0
    assert mx.array(np.array([2**63], np.uint64)).item() == 2**63
    assert mx.array(5).tolist() == 5
    assert mx.zeros((2, 0)).tolist() == [[], []]
    assert mx.array([1 + 1j]).tolist() == [1 + 1j]
    with pytest.raises(ValueError, match="Only length-1 arrays"):
        mx.zeros(3).item()


def test_python_scalar_conversions():
    assert int(mx.array([2.7])) == 2
    assert float(mx.array(3)) == 3.0
    assert complex(mx.array(1)) == 1 + 0j
    assert bool(mx.array([2])) is True and bool(mx.array([0])) is False
    assert [10, 20, 30][mx.array(1)] == 20
    with pytest.raises(TypeError):
        [1][mx.array([0])]
    with pytest.raises(ValueError):
        bool(mx.array([]))
    with pytest.raises(ValueError):
        float(mx.zeros(3))


def test_hash_is_identity():
    a = mx.array(1)
    assert hash(a) == hash(a)
    assert len({a, mx.array(1)}) == 2
