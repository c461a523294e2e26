"""Python protocols on arrays, as MLX 0.32.4 has them (checked against it): pickle and
copy round-trips (lazulite also pickles bfloat16, which MLX cannot), weak references,
the array API namespace, ``__version__``, ``finfo.smallest_normal``."""

import copy
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
