"""8-bit E4M3 floats (`to_fp8`, `from_fp8`) against real MLX 0.32.4 (mlx_fp8.json, written
by tools/mlx_reference/fp8.py): every byte decoded, and the encoding of every E4M3 value,
the midpoints between neighbours (ties to even), random magnitudes and specials; plus
dtypes and MLX's errors."""

import json
from pathlib import Path

import numpy as np
import pytest

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_fp8.json").read_text())


def floats(values):
    """JSON numbers, with None or "nan"/"-nan" for NaN (of that sign)."""
    nan = {None: np.nan, "nan": np.nan, "-nan": -np.nan}
    return np.array([nan[v] if v in nan else v for v in values], np.float32)


def test_decoding_every_byte_equals_mlx():
    got = np.array(mx.from_fp8(mx.arange(256).astype(mx.uint8), dtype=mx.float32))
    np.testing.assert_array_equal(got, floats(FACTS["decoded"]))
    # Signed zero survives.
    assert np.signbit(got[128]) and not np.signbit(got[0])


def test_encoding_equals_mlx():
    got = np.array(mx.to_fp8(mx.array(floats(FACTS["inputs"]))))
    np.testing.assert_array_equal(got, np.array(FACTS["encoded"], np.uint8))


def test_dtypes_and_round_trip():
    x = mx.array([0.5, -3.0, 240.0])
    for dtype in (mx.float16, mx.bfloat16, mx.float32, mx.float64):
        encoded = mx.to_fp8(x.astype(dtype))
        assert encoded.dtype == mx.uint8
        assert mx.from_fp8(encoded, dtype=dtype).dtype == dtype
        np.testing.assert_array_equal(np.array(mx.from_fp8(encoded, dtype=mx.float32)), [0.5, -3.0, 240.0])
    assert mx.from_fp8(mx.to_fp8(x)).dtype == mx.bfloat16


def test_errors_as_mlx():
    with pytest.raises(ValueError, match=r"\[to_fp8\] Only real floating types are supported"):
        mx.to_fp8(mx.ones(2, mx.int32))
    with pytest.raises(ValueError, match=r"\[from_fp8\] Input must have type uint8"):
        mx.from_fp8(mx.ones(2))
    with pytest.raises(ValueError, match=r"\[from_fp8\] Only real floating types are supported"):
        mx.from_fp8(mx.ones(2, mx.uint8), dtype=mx.int32)


def write_safetensors(path, tensors):
    """A .safetensors file written by hand: NumPy has no 8-bit float dtypes to save from."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)


def test_fp8_safetensors_load_as_bytes_as_in_mlx(tmp_path):
    # MLX 0.32.4 loads F8_E4M3 and F8_E8M0 tensors as uint8 and refuses F8_E5M2 with a
    # RuntimeError.
    write_safetensors(tmp_path / "f8.safetensors", {
        "w": ("F8_E4M3", [2, 128], bytes(range(256))), "s": ("F8_E8M0", [4], bytes([0, 127, 128, 255]))})
    loaded = mx.load(str(tmp_path / "f8.safetensors"))
    assert loaded["w"].dtype == loaded["s"].dtype == mx.uint8
    assert loaded["w"].shape == (2, 128) and loaded["s"].tolist() == [0, 127, 128, 255]
    decoded = np.array(mx.from_fp8(loaded["w"].reshape(-1), dtype=mx.float32))
    np.testing.assert_array_equal(decoded, floats(FACTS["decoded"]))
    write_safetensors(tmp_path / "e5m2.safetensors", {"w": ("F8_E5M2", [2], bytes([1, 2]))})
    with pytest.raises(RuntimeError, match="unsupported dtype 'F8_E5M2'"):
        mx.load(str(tmp_path / "e5m2.safetensors"))
