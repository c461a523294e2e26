"""Files written by lazulite read by the libraries that define the formats (NumPy, the
`safetensors` and `gguf` packages), and the seed's save/load examples. Skipped until
`lazulite.core` binds `save` (the Rust side is tested in crates/lazulite/tests/io.rs)."""

import numpy as np
import pytest

mx = pytest.importorskip("lazulite.core")
if not hasattr(mx, "save"):
    pytest.skip("lazulite.core has no save/load bindings yet", allow_module_level=True)

DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
          "int64", "float16", "float32", "float64", "complex64"]


def pattern(name, shape=(2, 3)):
    """Values exact in every dtype, as numpy and as lazulite arrays."""
    n = int(np.prod(shape))
    i = np.arange(n)
    dtype = np.bool_ if name == "bool_" else np.dtype(name)
    if name == "bool_":
        v = i % 3 == 0
    elif name == "complex64":
        v = (i - 3) * 0.25 + 1j * (i * 0.5)
    elif name.startswith("uint"):
        v = (i * 37) % 251
    elif name.startswith("int"):
        v = (i * 37) % 251 - 125
    else:
        v = (i - 3) * 0.25
    expected = np.asarray(v).astype(dtype).reshape(shape)
    return expected, mx.array(expected)


@pytest.mark.parametrize("name", DTYPES)
def test_numpy_reads_npy(tmp_path, name):
    expected, a = pattern(name)
    mx.save(str(tmp_path / "a"), a)
    got = np.load(tmp_path / "a.npy")
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


@pytest.mark.parametrize("compressed", [False, True])
def test_numpy_reads_npz(tmp_path, compressed):
    save = mx.savez_compressed if compressed else mx.savez
    arrays = {name: pattern(name) for name in DTYPES}
    first = arrays.pop("float32")
    save(str(tmp_path / "z"), first[1], **{k: v[1] for k, v in arrays.items()})
    with np.load(tmp_path / "z.npz") as got:
        assert np.array_equal(got["arr_0"], first[0])
        for k, (expected, _) in arrays.items():
            assert got[k].dtype == expected.dtype and np.array_equal(got[k], expected)


def test_safetensors_package_reads_ours(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {name: pattern(name) for name in DTYPES if name != "complex64"}
    mx.save_safetensors(str(tmp_path / "s"), {k: v[1] for k, v in arrays.items()},
                        metadata={"k": "v"})
    got = st.load_file(str(tmp_path / "s.safetensors"))
    for k, (expected, _) in arrays.items():
        assert got[k].dtype == expected.dtype and np.array_equal(got[k], expected)


def test_gguf_package_reads_ours(tmp_path):
    gguf = pytest.importorskip("gguf")
    names = ["float32", "float16", "float64", "int8", "int16", "int32", "int64"]
    arrays = {name: pattern(name) for name in names}
    mx.save_gguf(str(tmp_path / "g"), {k: v[1] for k, v in arrays.items()},
                 {"s": "str", "l": ["x", "y"], "n": mx.array(3, dtype=mx.int32)})
    reader = gguf.GGUFReader(tmp_path / "g.gguf")
    tensors = {t.name: t for t in reader.tensors}
    for k, (expected, _) in arrays.items():
        got = np.asarray(tensors[k].data).reshape(expected.shape)
        assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert reader.fields["s"].contents() == "str"
    assert reader.fields["l"].contents() == ["x", "y"]
    assert reader.fields["n"].contents() == 3


def test_seed_examples(tmp_path):
    a = mx.array([1.0])
    mx.save(str(tmp_path / "array"), a)
    assert (tmp_path / "array.npy").exists()
    assert repr(mx.load(str(tmp_path / "array.npy"))) == "array([1], dtype=float32)"
    b = mx.array([2.0])
    mx.savez(str(tmp_path / "arrays"), a, b=b)
    loaded = mx.load(str(tmp_path / "arrays.npz"))
    assert sorted(loaded) == ["arr_0", "b"]
    assert repr(loaded["b"]) == "array([2], dtype=float32)"
    mx.save_safetensors(str(tmp_path / "arrays"), {"a": a, "b": b})
    assert sorted(mx.load(str(tmp_path / "arrays.safetensors"))) == ["a", "b"]
