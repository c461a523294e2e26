"""Module-level API: dtype objects, categories, finfo/iinfo, constants, memory."""

import math

import numpy as np
import pytest
from conftest import DTYPES

import lazulite.core as mx


def test_dtype_objects():
    sizes = [1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8]
    assert [d.size for d in DTYPES] == sizes
    assert mx.float32 == mx.float32 and mx.float32 != mx.float16
    assert hash(mx.float32) == hash(mx.float32)
    assert (mx.float32 == "float32") is False and (mx.float32 == np.float32) is False
    assert type(mx.float32) is mx.Dtype
    assert not hasattr(mx, "complex128")


def test_issubdtype():
    assert mx.issubdtype(mx.float32, mx.floating)
    assert mx.issubdtype(mx.int8, mx.integer)
    assert not mx.issubdtype(mx.uint8, mx.signedinteger)
    assert not mx.issubdtype(mx.bool_, mx.integer)
    assert mx.issubdtype(mx.float32, mx.float32)
    assert mx.issubdtype(mx.complex64, mx.inexact)
    assert mx.issubdtype(mx.floating, mx.number)
    assert mx.issubdtype(mx.bool_, mx.generic)
    assert mx.issubdtype(mx.bfloat16, mx.floating)
    assert not mx.issubdtype(mx.floating, mx.float32)
    assert not mx.issubdtype(mx.inexact, mx.floating)


def test_result_type_and_can_cast():
    assert mx.result_type(mx.array([1], mx.uint8), 1) == mx.uint8
    assert mx.result_type(mx.int8, mx.float16) == mx.float16
    with pytest.raises(ValueError, match="Inputs must be arrays or dtypes"):
        mx.result_type(1.0)
    with pytest.raises(ValueError, match="At least one array or dtype"):
        mx.result_type()
    assert mx.can_cast(mx.int32, mx.float32) and not mx.can_cast(mx.float32, mx.int32)
    assert mx.can_cast(mx.int64, mx.float32) and not mx.can_cast(mx.uint8, mx.int8)
    assert mx.can_cast(mx.bool_, mx.int8) and not mx.can_cast(mx.float16, mx.bfloat16)
    assert not mx.can_cast(mx.array([1]), mx.int8)


def test_finfo_iinfo():
    f = mx.finfo(mx.float16)
    assert (f.min, f.max, f.eps, f.bits, f.dtype) == (-65504.0, 65504.0, 0.0009765625, 16, mx.float16)
    assert mx.finfo(mx.bfloat16).eps == 0.0078125
    assert mx.finfo(mx.complex64).dtype == mx.float32
    assert mx.iinfo(mx.uint64).max == 2**64 - 1 and mx.iinfo(mx.int64).min == -(2**63)
    with pytest.raises(ValueError, match=r"\[finfo\] dtype int32 is not inexact."):
        mx.finfo(mx.int32)
    with pytest.raises(ValueError, match=r"\[iinfo\] Only integer types supported but bool was provided"):
        mx.iinfo(mx.bool_)


def test_constants():
    assert mx.pi == math.pi and mx.e == math.e and mx.inf == math.inf and math.isnan(mx.nan)
    assert mx.newaxis is None and mx.euler_gamma == pytest.approx(0.5772156649015329)


def test_memory_functions():
    mx.clear_cache()
    mx.reset_peak_memory()
    before = mx.get_active_memory()
    a = mx.zeros((1024,), mx.float32) + 1
    mx.eval(a)
    assert mx.get_active_memory() >= before + 4096
    assert mx.get_peak_memory() >= mx.get_active_memory()
    del a
    assert mx.get_cache_memory() >= 4096
    mx.clear_cache()
    assert mx.get_cache_memory() == 0
    old = mx.set_cache_limit(0)
    assert mx.set_cache_limit(old) == 0
    old = mx.set_memory_limit(1 << 40)
    assert mx.set_memory_limit(old) == 1 << 40


def test_stream_is_accepted_and_ignored():
    assert mx.add(1, 2, stream=None).item() == 3
    assert mx.abs(mx.array(-1), stream=mx.cpu).item() == 1
    assert mx.array([1.0]).sqrt(stream=None).item() == 1.0


# mx.can_cast(row, column) in MLX 0.32.4, dtypes in DTYPES order.
CAN_CAST = """
11111111111111
.1111.11111111
..111..1111111
...11...111111
....1....11111
.....111111111
......11111111
.......1111111
........111111
.........1.111
..........1111
...........111
............11
.............1
"""


def test_can_cast_table_matches_mlx():
    for source, row in zip(DTYPES, CAN_CAST.split()):
        assert [mx.can_cast(source, target) for target in DTYPES] == [c == "1" for c in row], source
