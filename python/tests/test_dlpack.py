"""DLPack both ways: `array.__dlpack__` / `__dlpack_device__` read by NumPy and JAX, and
`mx.array(obj)` over any producer's `__dlpack__` (shared memory, never written by
lazulite), plus the framework examples of MLX's guide page on NumPy conversion (JAX;
PyTorch and TensorFlow when installed)."""

import gc
import sys

import numpy as np
import pytest

import lazulite.core as mx

NUMPY_DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
                "int64", "float16", "float32", "float64", "complex64"]


def values(name, shape=(2, 3)):
    i = np.arange(int(np.prod(shape)))
    if name == "bool_":
        v = i % 2 == 0
    elif name == "complex64":
        v = i * 0.5 - 1j * i
    else:
        v = i * 3 % 7
    return np.asarray(v).astype(np.bool_ if name == "bool_" else name).reshape(shape)


class Producer:
    """Any object speaking DLPack (like a PyTorch or CuPy tensor), here over another
    object's `__dlpack__`."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def address(a):
    return np.array(a, copy=False).__array_interface__["data"][0]


# ---- export -----------------------------------------------------------------------------

def test_device_is_cpu():
    assert mx.array([1.0]).__dlpack_device__() == (1, 0)


def test_capsule_protocol():
    capsule = mx.array([1.0, 2.0]).__dlpack__()
    assert "dltensor" in repr(capsule) and "used" not in repr(capsule)
    del capsule  # unconsumed: its destructor frees the export
    gc.collect()
    with pytest.raises(BufferError):
        mx.array([1.0]).__dlpack__(dl_device=(2, 0))


@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_numpy_from_dlpack(name):
    expected = values(name)
    a = mx.array(expected, dtype=getattr(mx, name))
    got = np.from_dlpack(a)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert got.__array_interface__["data"][0] == address(a)  # no copy


def test_numpy_from_dlpack_views():
    base = mx.arange(24, dtype=mx.int32).reshape(2, 3, 4)
    n = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    cases = [
        (base.transpose(2, 0, 1), n.transpose(2, 0, 1)),
        (base[:, ::-1, ::2], n[:, ::-1, ::2]),
        (base[1], n[1]),
        (mx.broadcast_to(mx.array([1, 2, 3]), (4, 3)), np.broadcast_to([1, 2, 3], (4, 3))),
        (mx.array(7), np.array(7)),
        (mx.zeros((0, 3), dtype=mx.int32), np.zeros((0, 3), np.int32)),
    ]
    for a, expected in cases:
        got = np.from_dlpack(a)
        assert got.shape == expected.shape and np.array_equal(got, expected)


def test_export_evaluates_and_keeps_memory_alive():
    a = mx.exp(mx.zeros((1000,)))
    got = np.from_dlpack(a)
    del a
    gc.collect()
    _ = [mx.ones((1000,)) * 5 for _ in range(10)]  # would reuse freed memory
    assert np.array_equal(got, np.ones(1000, np.float32))


def test_copy_true_exports_a_copy():
    a = mx.arange(4, dtype=mx.float32)
    shared = np.from_dlpack(Producer(a))
    assert shared.__array_interface__["data"][0] == address(a)

    class Copying(Producer):
        def __dlpack__(self, **kwargs):
            return self.inner.__dlpack__(copy=True)

    copied = np.from_dlpack(Copying(a))
    assert copied.__array_interface__["data"][0] != address(a)
    assert np.array_equal(copied, [0, 1, 2, 3])


def test_bfloat16_round_trip_through_dlpack():
    a = mx.array([1.5, -2.0, 3.25]).astype(mx.bfloat16)
    b = mx.array(Producer(a))
    assert b.dtype == mx.bfloat16
    assert b.astype(mx.float32).tolist() == [1.5, -2.0, 3.25]


# ---- import -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_array_from_dlpack_producer(name):
    n = values(name)
    a = mx.array(Producer(n))
    expected_dtype = mx.float32 if name == "float64" else getattr(mx, name)  # as MLX
    assert a.dtype == expected_dtype
    assert np.array_equal(np.array(a), n.astype(np.float32) if name == "float64" else n)
    assert mx.array(Producer(n), dtype=mx.int64).dtype == mx.int64


def test_import_shares_memory_and_is_never_written():
    n = np.arange(6, dtype=np.float32)
    a = mx.array(Producer(n))
    assert address(a) == n.__array_interface__["data"][0]  # zero-copy
    y = mx.exp(mx.array(Producer(n)))  # a lone input would be reused in place
    mx.eval(y)
    assert np.array_equal(n, np.arange(6, dtype=np.float32))
    assert np.allclose(np.array(y), np.exp(n))
    assert a.tolist() == [0, 1, 2, 3, 4, 5]


def test_import_strided_producers():
    n = np.arange(24, dtype=np.int16).reshape(4, 6)
    for view in [n.T, n[::-1, ::2], n[1:3, 2:5], np.broadcast_to(n[0], (3, 6))]:
        a = mx.array(Producer(view))
        assert a.shape == view.shape and np.array_equal(np.array(a), view)


def test_import_consumes_capsules_of_both_versions():
    class Recording(Producer):
        """Keeps the capsules it hands out; `legacy` producers take no max_version."""

        def __init__(self, inner, legacy):
            super().__init__(inner)
            self.legacy, self.capsules = legacy, []

        def __dlpack__(self, **kwargs):
            if self.legacy and kwargs:
                raise TypeError("unexpected keyword argument 'max_version'")
            self.capsules.append(self.inner.__dlpack__(**kwargs))
            return self.capsules[-1]

    n = np.arange(4, dtype=np.int32)
    for legacy, name in [(False, "used_dltensor_versioned"), (True, "used_dltensor")]:
        producer = Recording(n, legacy)
        assert mx.array(producer).tolist() == [0, 1, 2, 3]
        assert f'"{name}"' in repr(producer.capsules[-1])
    readonly = np.broadcast_to(n, (2, 4))  # only a versioned capsule can carry it
    assert mx.array(Producer(readonly)).tolist() == [[0, 1, 2, 3]] * 2


def test_import_releases_the_producer():
    n = np.ones(5, np.float32)
    before = sys.getrefcount(n)
    a = mx.array(Producer(n))
    assert sys.getrefcount(n) > before  # the producer's capsule holds n
    del a
    gc.collect()
    assert sys.getrefcount(n) == before  # our array is gone: deleter called once


def test_empty_and_scalar_imports():
    assert mx.array(Producer(np.zeros((0, 2), np.int32))).shape == (0, 2)
    s = mx.array(Producer(np.array(3, np.int8)))
    assert s.shape == () and s.item() == 3 and s.dtype == mx.int8


# ---- JAX ----------------------------------------------------------------------------------

def test_jax_guide_example():
    jnp = pytest.importorskip("jax.numpy")
    a = mx.arange(3)
    b = jnp.array(a)
    c = mx.array(b)
    assert b.tolist() == [0, 1, 2] and c.tolist() == [0, 1, 2]
    assert c.dtype == mx.int32


def test_jax_both_ways():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    for name in ["bool_", "int8", "uint16", "int32", "float16", "float32", "complex64"]:
        n = values(name)
        a = mx.array(n, dtype=getattr(mx, name))
        j = jax.dlpack.from_dlpack(a)
        assert j.dtype == n.dtype and np.array_equal(np.asarray(j), n)
        k = jnp.asarray(np.array(a))
        back = mx.array(k)
        assert back.dtype == getattr(mx, name) and np.array_equal(np.array(back), n)
    bf = jnp.array([1.5, -2.0], dtype=jnp.bfloat16)
    a = mx.array(bf)
    assert a.dtype == mx.bfloat16 and a.astype(mx.float32).tolist() == [1.5, -2.0]
    j = jax.dlpack.from_dlpack(a)
    assert j.dtype == jnp.bfloat16 and j.astype(jnp.float32).tolist() == [1.5, -2.0]


def test_jax_import_is_zero_copy():
    jax = pytest.importorskip("jax")
    j = jax.numpy.arange(16, dtype=jax.numpy.float32)
    a = mx.array(j)
    assert address(a) == j.unsafe_buffer_pointer()
    assert mx.sum(a).item() == 120


# ---- PyTorch and TensorFlow (guide examples; skipped when not installed) -----------------

def test_torch_guide_example():
    torch = pytest.importorskip("torch")
    a = mx.arange(3)
    b = torch.tensor(memoryview(a))
    c = mx.array(b.numpy())
    assert c.tolist() == [0, 1, 2]
    assert mx.array(torch.arange(4, dtype=torch.float32)).tolist() == [0, 1, 2, 3]
    assert torch.from_dlpack(mx.arange(3)).tolist() == [0, 1, 2]


def test_tensorflow_guide_example():
    tf = pytest.importorskip("tensorflow")
    a = mx.arange(3)
    b = tf.constant(memoryview(a))
    c = mx.array(b)
    assert c.tolist() == [0, 1, 2]
