"""repr/str as MLX prints them (docs/mlx-reference.md section c) and print options."""

import numpy as np
import pytest

import lazulite.core as mx


@pytest.mark.parametrize(
    "make, text",
    [
        (lambda: mx.array(1.5), "array(1.5, dtype=float32)"),
        (lambda: mx.array(True), "array(True, dtype=bool)"),
        (lambda: mx.array(1 + 2j), "array(1+2j, dtype=complex64)"),
        (lambda: mx.array(-0.0), "array(-0, dtype=float32)"),
        (lambda: mx.array(1, mx.complex64), "array(1+0j, dtype=complex64)"),
        (lambda: mx.array(1 / 3), "array(0.333333, dtype=float32)"),
        (lambda: mx.array([1, 2, 3]), "array([1, 2, 3], dtype=int32)"),
        (lambda: mx.array([[1, 2], [3, 4]]), "array([[1, 2],\n       [3, 4]], dtype=int32)"),
        (lambda: mx.array([]), "array([], dtype=float32)"),
        (lambda: mx.arange(10000), "array([0, 1, 2, ..., 9997, 9998, 9999], dtype=int32)"),
        (lambda: mx.array([0.1, 1e-8]), "array([0.1, 1e-08], dtype=float32)"),
        (lambda: mx.array([1e10, 1]), "array([1e+10, 1], dtype=float32)"),
        (lambda: mx.array([0.1, 1.5, -2, 65504], mx.float16), "array([0.0999756, 1.5, -2, 65504], dtype=float16)"),
        (lambda: mx.array([1, 2], mx.bfloat16), "array([1, 2], dtype=bfloat16)"),
        (lambda: mx.array(np.array([2**63], np.uint64)), "array([9223372036854775808], dtype=uint64)"),
        (lambda: mx.array([1 + 2j, -3.5 - 1j, 0j]), "array([1+2j, -3.5-1j, 0+0j], dtype=complex64)"),
        (lambda: mx.arange(6).reshape(2, 3).T, "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int32)"),
    ],
)
def test_repr_matches_mlx(make, text):
    a = make()
    assert repr(a) == text
    assert str(a) == text


def test_precision_and_context():
    x = mx.array([1 / 3, 2, 123456.789, 1e-8])
    assert mx.get_printoptions().precision == -1
    mx.set_printoptions(precision=2)
    assert repr(x) == "array([0.33, 2.00, 123456.79, 0.00], dtype=float32)"
    assert mx.get_printoptions().precision == 2
    mx.set_printoptions()
    with mx.printoptions(precision=3):
        assert repr(mx.array([1, 2])) == "array([1, 2], dtype=int32)"
        assert repr(mx.array(1.0)) == "array(1.000, dtype=float32)"
    assert repr(x) == "array([0.333333, 2, 123457, 1e-08], dtype=float32)"
    with pytest.raises(TypeError):
        mx.set_printoptions(threshold=3)


def test_format():
    assert format(mx.array(1.5), ".2f") == "1.50"
    assert f"{mx.array(1.5)}" == "1.5"
    assert format(mx.array([1.5]), "") == "array([1.5], dtype=float32)"


def test_dtype_and_category_reprs():
    assert repr(mx.float32) == str(mx.float32) == "mlx.core.float32"
    assert repr(mx.bool_) == "mlx.core.bool"
    assert repr(mx.floating) == "DtypeCategory.floating"
    assert repr(mx.finfo(mx.float16)) == "finfo(min=-65504, max=65504, dtype=float16)"
    assert repr(mx.finfo(mx.float32)) == "finfo(min=-3.40282e+38, max=3.40282e+38, dtype=float32)"
    assert repr(mx.iinfo(mx.int8)) == "iinfo(min=-128, max=127, dtype=int8)"
