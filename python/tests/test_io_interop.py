"""Saving and loading from Python: round trips of every format and dtype, files written by
the libraries that define the formats (NumPy, the `safetensors` and `gguf` packages) read
by lazulite and the other way round, file objects, MLX's errors, and every example of the
MLX's guide page on saving and loading. (The Rust side is tested in crates/lazulite/tests/suite/io.rs.)"""

import io
import pathlib

import numpy as np
import pytest

import lazulite.core as mx

DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
          "int64", "float16", "float32", "float64", "complex64"]
ALL_DTYPES = DTYPES + ["bfloat16"]


def pattern(name, shape=(2, 3)):
    """Values exact in every dtype, as numpy and as lazulite arrays (bfloat16: the
    float32 values, and the lazulite array cast to bfloat16)."""
    n = int(np.prod(shape))
    i = np.arange(n)
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
    if name == "bfloat16":
        expected = np.asarray(v, np.float32).reshape(shape)
        return expected, mx.array(expected).astype(mx.bfloat16)
    expected = np.asarray(v).astype(np.bool_ if name == "bool_" else name).reshape(shape)
    return expected, mx.array(expected, dtype=getattr(mx, name))


def same(got, expected, name):
    """A loaded lazulite array equals the numpy values and has the dtype `name`."""
    assert got.dtype == getattr(mx, name), (got.dtype, name)
    if name == "bfloat16":
        got = got.astype(mx.float32)
    got = np.array(got)
    assert got.shape == expected.shape and np.array_equal(got, expected)


# ---- round trips through lazulite alone ----------------------------------------------

@pytest.mark.parametrize("name", ALL_DTYPES)
def test_npy_round_trip(tmp_path, name):
    expected, a = pattern(name)
    mx.save(str(tmp_path / "a"), a)
    same(mx.load(str(tmp_path / "a.npy")), expected, name)


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_round_trip(tmp_path, compressed):
    save = mx.savez_compressed if compressed else mx.savez
    arrays = {name: pattern(name) for name in ALL_DTYPES}
    save(tmp_path / "z.npz", **{k: v[1] for k, v in arrays.items()})
    loaded = mx.load(tmp_path / "z.npz")
    assert sorted(loaded) == sorted(arrays)
    for name, (expected, _) in arrays.items():
        same(loaded[name], expected, name)


def test_safetensors_round_trip(tmp_path):
    arrays = {name: pattern(name) for name in ALL_DTYPES}
    mx.save_safetensors(tmp_path / "s", {k: v[1] for k, v in arrays.items()},
                        metadata={"format": "mlx", "x": "y"})
    loaded, metadata = mx.load(str(tmp_path / "s.safetensors"), return_metadata=True)
    assert metadata == {"format": "mlx", "x": "y"}
    for name, (expected, _) in arrays.items():
        same(loaded[name], expected, name)


def test_gguf_round_trip(tmp_path):
    names = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64"]
    arrays = {name: pattern(name) for name in names}
    metadata = {
        "s": "text", "l": ["a", "b"], "empty": [],
        "i": mx.array(3, dtype=mx.int32), "u": mx.array(7, dtype=mx.uint64),
        "b": mx.array(True), "f": mx.array([1.5, 2.5]),
    }
    mx.save_gguf(str(tmp_path / "g"), {k: v[1] for k, v in arrays.items()}, metadata)
    loaded, meta = mx.load(str(tmp_path / "g.gguf"), return_metadata=True)
    for name, (expected, _) in arrays.items():
        same(loaded[name], expected, name)
    assert meta["s"] == "text" and meta["l"] == ["a", "b"] and meta["empty"] == []
    assert meta["i"].dtype == mx.int32 and meta["i"].item() == 3
    assert meta["u"].dtype == mx.uint64 and meta["u"].item() == 7
    assert meta["b"].item() is True
    assert meta["f"].tolist() == [1.5, 2.5]
    assert sorted(mx.load(str(tmp_path / "g.gguf"))) == sorted(names)


def test_views_save_their_values(tmp_path):
    base = mx.arange(24).reshape(2, 3, 4)
    views = {"t": base.transpose(2, 0, 1), "r": base[:, ::-1, ::2], "b": mx.broadcast_to(
        mx.array([1, 2, 3]), (4, 3)), "s": mx.array(5.0), "e": mx.zeros((0, 3))}
    mx.save_safetensors(tmp_path / "v.safetensors", views)
    mx.savez(tmp_path / "v.npz", **views)
    for file in ["v.safetensors", "v.npz"]:
        loaded = mx.load(tmp_path / file)
        for k, v in views.items():
            assert loaded[k].shape == v.shape and np.array_equal(np.array(loaded[k]), np.array(v))


def test_saving_evaluates_and_loading_is_lazy(tmp_path):
    a = mx.exp(mx.zeros((3,)))
    assert "name:exp state:invalid" in mx.to_trace(a)
    mx.save(tmp_path / "a.npy", a)
    assert mx.to_trace(a) == ""  # evaluated: no graph left
    b = mx.load(tmp_path / "a.npy")
    assert "name:load state:invalid" in mx.to_trace(b + 1)
    assert b.tolist() == [1.0, 1.0, 1.0]


def test_load_format_argument(tmp_path):
    mx.save_safetensors(tmp_path / "w.safetensors", {"x": mx.ones((2,))})
    (tmp_path / "w.safetensors").rename(tmp_path / "weights.bin")
    assert mx.load(str(tmp_path / "weights.bin"), format="safetensors")["x"].tolist() == [1, 1]


def test_save_replaces_atomically(tmp_path):
    mx.save(tmp_path / "a.npy", mx.zeros((3,)))
    old = mx.load(tmp_path / "a.npy")
    mx.save(tmp_path / "a.npy", mx.ones((3,)))
    assert old.tolist() == [0, 0, 0]
    assert mx.load(tmp_path / "a.npy").tolist() == [1, 1, 1]
    assert [p.name for p in tmp_path.iterdir()] == ["a.npy"]


# ---- file objects ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["npy", "npz", "npz_compressed", "safetensors"])
def test_file_objects(tmp_path, kind):
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    buffer = io.BytesIO()
    if kind == "npy":
        mx.save(buffer, a)
    elif kind == "npz":
        mx.savez(buffer, a, b=a)
    elif kind == "npz_compressed":
        mx.savez_compressed(buffer, a, b=a)
    else:
        mx.save_safetensors(buffer, {"b": a})
    fmt = kind.split("_")[0]
    buffer.seek(0)
    loaded = mx.load(buffer, format=fmt)
    got = loaded if fmt == "npy" else loaded["b"]
    assert got.tolist() == a.tolist()
    path = tmp_path / f"f.{fmt}"
    path.write_bytes(buffer.getvalue())
    with open(path, "rb") as f:  # format from the file's name
        got = mx.load(f)
        got = got if fmt == "npy" else got["b"]
        assert got.tolist() == a.tolist()
    with open(tmp_path / "w.npy", "wb") as f:
        mx.save(f, a)
    assert np.load(tmp_path / "w.npy").tolist() == a.tolist()


def test_file_object_errors(tmp_path):
    buffer = io.BytesIO()
    mx.save(buffer, mx.array([1]))
    buffer.seek(0)
    with pytest.raises(ValueError, match="infer file format"):
        mx.load(buffer)
    with pytest.raises(ValueError, match="Input must be a string"):
        mx.save_gguf(io.BytesIO(), {"a": mx.array([1.0])})
    with pytest.raises(ValueError, match="Input must be a string"):
        mx.load(io.BytesIO(), format="gguf")
    (tmp_path / "t.npy").write_text("text")
    with open(tmp_path / "t.npy") as f:  # text mode
        with pytest.raises(ValueError, match="binary mode"):
            mx.load(f)


# ---- errors, as MLX raises them -------------------------------------------------------

def test_errors(tmp_path):
    a = mx.array([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"\[load\] Failed to open file"):
        mx.load(str(tmp_path / "missing.npy"))
    with pytest.raises(FileNotFoundError):  # and a FileNotFoundError too
        mx.load(str(tmp_path / "missing.npy"))
    with pytest.raises(RuntimeError):
        mx.save(str(tmp_path / "no" / "dir"), a)
    with pytest.raises(ValueError, match="Could not infer file format from extension"):
        mx.load(str(tmp_path / "noext"))
    with pytest.raises(ValueError, match="Unknown file format bin"):
        mx.load(str(tmp_path / "x.bin"))
    with pytest.raises(ValueError, match="Unknown file format foo"):
        mx.load(str(tmp_path / "x.npy"), format="foo")
    mx.save(str(tmp_path / "x.npy"), a)
    with pytest.raises(ValueError, match="metadata not supported for format npy"):
        mx.load(str(tmp_path / "x.npy"), return_metadata=True)
    with pytest.raises(ValueError, match="Input must be a file-like object, or string"):
        mx.save(3, a)
    with pytest.raises(ValueError, match="file-like object opened in binary mode, or string"):
        mx.load(123)
    with pytest.raises(TypeError):
        mx.save(str(tmp_path / "l"), [1, 2])
    with pytest.raises(TypeError):
        mx.save(str(tmp_path / "n"), np.ones(2))
    with pytest.raises(ValueError, match="Cannot use un-named variables and keyword arr_0"):
        mx.savez(str(tmp_path / "z"), a, arr_0=a)
    with pytest.raises(RuntimeError):
        mx.savez(str(tmp_path / "z"), np.ones(2))
    with pytest.raises(ValueError, match="Metadata must be a dictionary with string keys"):
        mx.save_safetensors(str(tmp_path / "s"), {"a": a}, metadata={"k": 1})
    with pytest.raises(TypeError):
        mx.save_safetensors(str(tmp_path / "s"), [a])
    with pytest.raises(RuntimeError, match="dtype uint8 is not supported"):
        mx.save_gguf(str(tmp_path / "g"), {"a": mx.array([1], mx.uint8)})
    with pytest.raises(RuntimeError):
        mx.save_gguf(str(tmp_path / "g"), {"a": a}, {"n": 3})
    with pytest.raises(RuntimeError):
        mx.save_gguf(str(tmp_path / "g"), {"a": a}, {"n": mx.zeros((2, 2))})
    with pytest.raises(RuntimeError):
        mx.save_gguf(str(tmp_path / "g"), {"a": a}, {"n": [1, 2]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]


@pytest.mark.parametrize("ext", ["npy", "npz", "safetensors", "gguf"])
def test_malformed_files_raise(tmp_path, ext):
    path = tmp_path / f"bad.{ext}"
    path.write_bytes(b"hello")
    with pytest.raises((RuntimeError, ValueError)):
        loaded = mx.load(str(path))
        mx.eval(list(loaded.values()) if isinstance(loaded, dict) else loaded)


def test_truncated_file_raises(tmp_path):
    mx.save(tmp_path / "a.npy", mx.arange(1000))
    data = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "a.npy").write_bytes(data[:-8])
    with pytest.raises(RuntimeError, match="truncated"):
        mx.eval(mx.load(tmp_path / "a.npy"))


# ---- NumPy reads lazulite's files and the other way round -----------------------------

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


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "big-endian", "big-endian F"])
def test_lazulite_reads_numpy_npy(tmp_path, name, layout):
    expected, _ = pattern(name, (3, 4))
    written = expected
    if "big-endian" in layout:
        written = written.astype(written.dtype.newbyteorder(">"))
    if "F" in layout:
        written = np.asfortranarray(written)
    np.save(tmp_path / "a.npy", written)
    same(mx.load(str(tmp_path / "a.npy")), expected, name)


@pytest.mark.parametrize("compressed", [False, True])
def test_lazulite_reads_numpy_npz(tmp_path, compressed):
    save = np.savez_compressed if compressed else np.savez
    arrays = {name: pattern(name)[0] for name in DTYPES}
    save(tmp_path / "z.npz", np.arange(5), **arrays)
    loaded = mx.load(str(tmp_path / "z.npz"))
    assert loaded["arr_0"].tolist() == list(range(5))
    for name, expected in arrays.items():
        same(loaded[name], expected, name)


def test_lazulite_reads_numpy_scalar_and_empty(tmp_path):
    np.save(tmp_path / "s.npy", np.float64(2.5))
    np.save(tmp_path / "e.npy", np.zeros((0, 4), np.int16))
    s, e = mx.load(str(tmp_path / "s.npy")), mx.load(str(tmp_path / "e.npy"))
    assert s.shape == () and s.dtype == mx.float64 and s.item() == 2.5
    assert e.shape == (0, 4) and e.dtype == mx.int16


# ---- the safetensors package ----------------------------------------------------------

def test_safetensors_package_reads_ours(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {name: pattern(name) for name in DTYPES if name != "complex64"}
    mx.save_safetensors(str(tmp_path / "s"), {k: v[1] for k, v in arrays.items()},
                        metadata={"k": "v"})
    got = st.load_file(str(tmp_path / "s.safetensors"))
    for k, (expected, _) in arrays.items():
        assert got[k].dtype == expected.dtype and np.array_equal(got[k], expected)


def test_lazulite_reads_safetensors_package(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {name: pattern(name, (4, 5))[0] for name in DTYPES if name != "complex64"}
    st.save_file(arrays, str(tmp_path / "p.safetensors"), metadata={"who": "safetensors"})
    loaded, metadata = mx.load(str(tmp_path / "p.safetensors"), return_metadata=True)
    assert metadata == {"who": "safetensors"}
    for name, expected in arrays.items():
        same(loaded[name], expected, name)


# ---- the gguf package -----------------------------------------------------------------

def test_gguf_package_reads_ours(tmp_path):
    gguf = pytest.importorskip("gguf")
    names = ["float32", "float16", "float64", "int8", "int16", "int32", "int64"]
    arrays = {name: pattern(name) for name in names}
    mx.save_gguf(str(tmp_path / "g"), {k: v[1] for k, v in arrays.items()},
                 {"s": "str", "l": ["x", "y"], "n": mx.array(3, dtype=mx.int32),
                  "v": mx.array([1.5, 2.5])})
    reader = gguf.GGUFReader(tmp_path / "g.gguf")
    tensors = {t.name: t for t in reader.tensors}
    for k, (expected, _) in arrays.items():
        got = np.asarray(tensors[k].data).reshape(expected.shape)
        assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert reader.fields["s"].contents() == "str"
    assert reader.fields["l"].contents() == ["x", "y"]
    assert reader.fields["n"].contents() == 3
    assert reader.fields["v"].contents() == [1.5, 2.5]


def gguf_write(gguf, path, tensors, kv=()):
    writer = gguf.GGUFWriter(str(path), "test")
    for key, value in kv:
        if isinstance(value, str):
            writer.add_string(key, value)
        elif isinstance(value, list):
            writer.add_array(key, value)
        else:
            writer.add_uint32(key, value)
    for name, (data, kwargs) in tensors.items():
        writer.add_tensor(name, data, **kwargs)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_lazulite_reads_gguf_package(tmp_path):
    gguf = pytest.importorskip("gguf")
    names = ["float32", "float16", "float64", "int8", "int16", "int32", "int64"]
    arrays = {name: pattern(name, (3, 4, 5))[0] for name in names}
    gguf_write(gguf, tmp_path / "p.gguf", {k: (v, {}) for k, v in arrays.items()},
               [("s", "text"), ("l", ["a", "b"]), ("n", 7)])
    loaded, meta = mx.load(str(tmp_path / "p.gguf"), return_metadata=True)
    for name, expected in arrays.items():
        same(loaded[name], expected, name)
    assert meta["general.architecture"] == "test"
    assert meta["s"] == "text" and meta["l"] == ["a", "b"]
    assert meta["n"].dtype == mx.uint32 and meta["n"].item() == 7


@pytest.mark.parametrize("qtype", ["Q8_0", "Q4_0", "Q4_1"])
def test_gguf_package_tensors_load_as_mlx_quantized_triples(tmp_path, qtype):
    gguf = pytest.importorskip("gguf")
    quants = pytest.importorskip("gguf.quants")
    kind = getattr(gguf.GGMLQuantizationType, qtype)
    bits = 8 if qtype == "Q8_0" else 4
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 64)).astype(np.float32)
    blocks = quants.quantize(data, kind)
    expected = quants.dequantize(blocks, kind).reshape(data.shape)
    gguf_write(gguf, tmp_path / "q.gguf", {"layer.weight": (blocks, {"raw_dtype": kind})})
    loaded = mx.load(str(tmp_path / "q.gguf"))
    w, scales, biases = loaded["layer.weight"], loaded["layer.scales"], loaded["layer.biases"]
    assert (w.dtype, w.shape) == (mx.uint32, (4, 64 * bits // 32))
    assert scales.dtype == biases.dtype == mx.float16 and scales.shape == biases.shape == (4, 2)
    # In float32, scale * level + bias is ggml's value exactly (up to the sign of zero).
    values = mx.dequantize(w, scales.astype(mx.float32), biases.astype(mx.float32), 32, bits)
    np.testing.assert_array_equal(np.array(values), expected)
    # The triple is ready for a quantized product.
    x = rng.standard_normal((3, 64)).astype(np.float32)
    y = mx.quantized_matmul(mx.array(x), w, scales, biases, transpose=True, group_size=32, bits=bits)
    np.testing.assert_allclose(np.array(y), x @ expected.T, rtol=2e-3, atol=2e-3)


def test_quantized_gguf_loads_as_real_mlx_loads_it():
    """python/tests/mlx_gguf: a file of Q4_0, Q4_1 and Q8_0 tensors (llama.cpp's names, a
    short name, three dimensions) and what MLX 0.32.4's `mx.load` gives for it
    (tools/mlx_reference/gguf_quantized.py)."""
    here = pathlib.Path(__file__).parent / "mlx_gguf"
    ours = mx.load(str(here / "quantized.gguf"))
    theirs = np.load(here / "quantized_by_mlx.npz")
    assert sorted(ours) == sorted(theirs.files)
    for name in theirs.files:
        assert np.array(ours[name]).dtype == theirs[name].dtype, name
        np.testing.assert_array_equal(np.array(ours[name]), theirs[name], err_msg=name)


# ---- the seed: mlx-saving-and-loading.rst ----------------------------------------------

def test_guide_save_single_array(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = mx.array([1.0])
    mx.save("array", a)
    assert pathlib.Path("array.npy").exists()  # the extension is added
    assert repr(mx.load("array.npy")) == "array([1], dtype=float32)"
    # The seed writes `mx.load("array.npy", a)`: `a` lands in `format`, which MLX refuses.
    with pytest.raises(TypeError):
        mx.load("array.npy", a)


def test_guide_savez(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = mx.array([1.0])
    b = mx.array([2.0])
    mx.savez("arrays", a, b=b)
    loaded = mx.load("arrays.npz")
    assert isinstance(loaded, dict) and sorted(loaded) == ["arr_0", "b"]
    assert repr(loaded["b"]) == "array([2], dtype=float32)"
    assert repr(loaded["arr_0"]) == "array([1], dtype=float32)"


def test_guide_save_safetensors_and_gguf(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = mx.array([1.0])
    b = mx.array([2.0])
    mx.save_safetensors("arrays", {"a": a, "b": b})
    loaded = mx.load("arrays.safetensors")
    assert sorted(loaded) == ["a", "b"] and loaded["b"].tolist() == [2.0]
    mx.save_gguf("arrays", {"a": a, "b": b})
    loaded = mx.load("arrays.gguf")
    assert sorted(loaded) == ["a", "b"] and loaded["a"].tolist() == [1.0]


def test_gguf_tensors_of_up_to_eight_dimensions_as_mlx_writes_them(tmp_path):
    here = pathlib.Path(__file__).parent / "mlx_gguf"
    theirs = mx.load(str(here / "eight_dims.gguf"))
    np.testing.assert_array_equal(np.array(theirs["five"]), np.arange(32, dtype=np.float32).reshape((2,) * 5))
    np.testing.assert_array_equal(np.array(theirs["eight"]), np.arange(6, dtype=np.int32).reshape(1, 1, 1, 1, 1, 2, 1, 3))
    ours = {"a": mx.arange(8.0).reshape((2, 1, 2, 1, 2, 1, 1, 1))}
    mx.save_gguf(str(tmp_path / "ours.gguf"), ours)
    assert mx.load(str(tmp_path / "ours.gguf"))["a"].tolist() == ours["a"].tolist()
    # MLX writes nine dimensions and then aborts reading them; lazulite refuses to write.
    with pytest.raises(RuntimeError, match="9 dimensions"):
        mx.save_gguf(str(tmp_path / "nine.gguf"), {"a": mx.ones((1,) * 9)})
