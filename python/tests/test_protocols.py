"""Python protocols on arrays, as MLX 0.32.4 has them (checked against it): pickle and
copy round-trips (lazulite also pickles bfloat16, which MLX cannot), weak references,
the array API namespace, ``__version__``, ``finfo.smallest_normal``."""

import copy
import re
import pickle
import weakref

import numpy as np
import pytest

import lazulite
import lazulite.core as mx

CASES = [
    mx.array([1.5, -2.0]),
    mx.array([1, 2], mx.bfloat16),
    mx.array([1, 2], mx.float16),
    mx.array(3 + 4j),
    mx.array([True, False]),
    mx.array(7, mx.uint64),
    mx.array(-5, mx.int8),
    mx.zeros((0, 3)),
    mx.arange(12).reshape(3, 4).T,
    mx.arange(10)[::3],
]


@pytest.mark.parametrize("a", CASES, ids=lambda a: f"{a.dtype}{a.shape}")
def test_pickle_and_copy_round_trip(a):
    for b in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert b.dtype == a.dtype and b.shape == a.shape
        np.testing.assert_array_equal(np.array(b.astype(mx.float32) if a.dtype == mx.bfloat16 else b),
                                      np.array(a.astype(mx.float32) if a.dtype == mx.bfloat16 else a))


def test_weak_references():
    a = mx.ones(2)
    ref = weakref.ref(a)
    assert ref() is a
    del a
    assert ref() is None


def test_array_namespace_and_version():
    assert mx.ones(2).__array_namespace__() is mx
    assert mx.ones(2).__array_namespace__(api_version="2023.12") is mx
    assert mx.__version__ == lazulite.core.__version__ and mx.__version__.count(".") == 2


def test_finfo_fields_as_mlx():
    # MLX 0.32.4: bits, dtype, eps, max, min, smallest_normal (no `tiny`).
    for dtype, normal in [(mx.float16, 2.0**-14), (mx.bfloat16, 2.0**-126), (mx.float32, 2.0**-126),
                          (mx.float64, 2.0**-1022), (mx.complex64, 2.0**-126)]:
        info = mx.finfo(dtype)
        assert info.smallest_normal == normal and isinstance(info.smallest_normal, float)
    assert not hasattr(mx.finfo(mx.float32), "tiny")


class Given:
    """An object that gives an array through MLX's `__mlx_array__` protocol."""

    def __init__(self, values, dtype=None):
        self.values, self.dtype = values, dtype
        self.calls = 0

    def __mlx_array__(self):
        self.calls += 1
        return mx.array(self.values, self.dtype)


def test_mlx_array_protocol_builds_arrays():
    for make in (lambda o, **kw: mx.array(o, **kw), lambda o, **kw: mx.asarray(o, **kw)):
        a = make(Given([1, 2]))
        assert a.dtype == mx.int32 and a.tolist() == [1, 2]
        b = make(Given([1, 2]), dtype=mx.float16)
        assert b.dtype == mx.float16 and b.tolist() == [1.0, 2.0]

    class Both(Given):
        def __array__(self, dtype=None, copy=None):
            return np.array([9, 9])

    # The protocol comes before NumPy's, as in MLX.
    assert mx.array(Both([7])).tolist() == [7]
    # lazulite also opens the protocol inside lists, as it opens arrays there.
    assert mx.array([Given([1, 2]), [3, 4]]).tolist() == [[1, 2], [3, 4]]


def test_mlx_array_protocol_operands_keep_their_dtype():
    ints = mx.array([1, 2])
    floats = Given([1.5, 2.5])
    expected = np.array([1, 2]) + np.array([1.5, 2.5], np.float32)
    # As MLX 0.32.4: an operator's operand keeps the dtype its array has (a NumPy array
    # would take the other operand's, int32 here).
    for result in (ints + floats, floats + ints, mx.add(ints, floats), mx.add(floats, ints),
                   ints + mx.ArrayLike(floats)):
        assert result.dtype == mx.float32
        np.testing.assert_array_equal(np.array(result), expected)
    x = mx.array([1.0, 2.0])
    x *= Given([3.0, 4.0])
    assert x.tolist() == [3.0, 8.0]
    assert (ints == Given([1, 5])).tolist() == [True, False]
    with pytest.raises(ValueError, match="Floating point types not allowed with bitwise and."):
        mx.array([True]) & floats


def test_mlx_array_protocol_in_functions():
    g = Given([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.array(mx.exp(g)), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)
    assert mx.sum(g).item() == 6.0
    assert mx.where(mx.array([True, False, True]), g, 0).tolist() == [1.0, 0.0, 3.0]
    assert mx.concatenate([g, mx.ArrayLike(Given([4.0]))]).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert mx.maximum(g, 2).tolist() == [2.0, 2.0, 3.0]


def test_mlx_array_protocol_errors():
    class Gives:
        def __init__(self, value):
            self.value = value

        def __mlx_array__(self):
            return self.value

    for value, name in (([1, 2], "list"), (3, "int"), (np.ones(2), "ndarray"), (mx.ArrayLike(Given([1])), "ArrayLike")):
        message = f"Gives.__mlx_array__() returned {name}, not an array."
        for call in (lambda o: mx.array(o), lambda o: mx.add(o, 1), lambda o: mx.array([1]) + o, lambda o: mx.sum(o)):
            with pytest.raises(TypeError, match=re.escape(message)):
                call(Gives(value))

    class Raises:
        def __mlx_array__(self):
            raise KeyError("inner")

    # What the method raises reaches the caller, as in MLX.
    with pytest.raises(KeyError, match="inner"):
        mx.array(Raises())
    with pytest.raises(KeyError, match="inner"):
        mx.array([1]) + Raises()


def test_array_like_wraps_any_object():
    for bad in (lambda: mx.ArrayLike(), lambda: mx.ArrayLike(1, 2), lambda: mx.ArrayLike(arg=1)):
        with pytest.raises(TypeError):
            bad()
    assert not isinstance(mx.array(1), mx.ArrayLike)
    assert not isinstance(Given([1]), mx.ArrayLike)
    wrapped = mx.ArrayLike(3)
    assert isinstance(wrapped, mx.ArrayLike) and wrapped != mx.ArrayLike(3)
    # A wrapped object without the protocol is no array, as the object alone is not.
    with pytest.raises(ValueError, match="Invalid type ArrayLike received in array initialization."):
        mx.array(wrapped)
