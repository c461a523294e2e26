"""complex64 inputs wherever MLX takes them: the inverse trigonometric and hyperbolic
functions, logaddexp, the infinity tests and isclose/allclose, against NumPy's values
(computed in complex128, C99's principal branches)."""

import numpy as np
import pytest

import lazulite.core as mx

rng = np.random.default_rng(7)
# Random points, both signs of zero on the branch cuts, and points on the cuts themselves.
POINTS = np.concatenate([
    (rng.standard_normal(64) * 2 + 1j * rng.standard_normal(64) * 2),
    np.array([2 + 0j, -2 + 0j, 0.5 + 0j, -0.5 + 0j, 0 + 2j, 0 - 2j, 0 + 0.5j, 1e-3 + 1e-4j, 30 - 40j]),
    # Where the textbook formulas cancel: near 0 and near 1.
    np.array([1e-5 - 2e-5j, 1 + 1e-8j, 1 - 1e-8j, -1 + 1e-8j, 1e-8j]),
    np.array([complex(2, -0.0), complex(-2, -0.0), complex(-0.0, 2), complex(-0.0, -2)]),
]).astype(np.complex64)

FUNCTIONS = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_inverse_functions_of_complex_inputs(name):
    got = getattr(mx, name)(mx.array(POINTS))
    assert got.dtype == mx.complex64
    expected = getattr(np, name)(POINTS.astype(np.complex128))
    np.testing.assert_allclose(np.array(got), expected, rtol=2e-6, atol=1e-10)


def test_inverse_functions_match_mlx_on_branch_cuts():
    # Values printed by real MLX 0.32.4 (C++'s std::atanh, std::acosh, std::asin).
    np.testing.assert_allclose(np.array(mx.arctanh(mx.array([2 + 0j, 0.5 + 0j]))),
                               [0.549306 + 1.570796j, 0.549306 + 0j], atol=1e-6)
    np.testing.assert_allclose(np.array(mx.arccosh(mx.array([0.5 + 0j]))), [1.047198j], atol=1e-6)
    np.testing.assert_allclose(np.array(mx.arcsin(mx.array([2 + 0j]))), [1.570796 + 1.316958j], atol=1e-6)


def test_logaddexp_of_complex_inputs():
    a, b = POINTS, POINTS[::-1].copy()
    got = mx.logaddexp(mx.array(a), mx.array(b))
    assert got.dtype == mx.complex64
    expected = np.log(np.exp(a.astype(np.complex128)) + np.exp(b.astype(np.complex128)))
    finite = np.isfinite(expected)
    # Equal up to a whole turn of the imaginary part (both are logarithms of the same sum).
    diff = np.array(got)[finite] - expected[finite]
    turns = np.round(diff.imag / (2 * np.pi))
    np.testing.assert_allclose(diff - 2j * np.pi * turns, 0, atol=2e-5)
    # MLX's value (0.32.4) for one pair.
    np.testing.assert_allclose(np.array(mx.logaddexp(mx.array([1 + 2j]), mx.array([-3 + 0.5j]))),
                               [1.00146 + 1.98176j], atol=1e-5)


def test_infinity_tests_of_complex_inputs():
    inf, nan = float("inf"), float("nan")
    z = mx.array([complex(inf, 0), complex(-inf, 0), complex(0, inf), complex(1, -inf), 1 + 2j, complex(nan, 0)])
    # +-inf as complex numbers: an infinite real part and a zero imaginary part (as MLX).
    assert mx.isposinf(z).tolist() == [True, False, False, False, False, False]
    assert mx.isneginf(z).tolist() == [False, True, False, False, False, False]
    assert mx.isinf(z).tolist() == [True, True, True, True, False, False]


def test_isclose_and_allclose_of_complex_inputs():
    a = mx.array([1 + 2j, 1 + 2.0000001j, complex("nan"), 1 + 2j])
    b = mx.array([1 + 2j, 1 + 2j, complex("nan"), 1 + 2.1j])
    assert mx.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False]
    assert mx.isclose(a, b).tolist() == [True, True, False, False]
    assert not mx.allclose(mx.array([1 + 2j]), mx.array([1 + 2.1j])).item()
    assert mx.allclose(mx.array([1 + 2j]), mx.array([1 + 2.0000001j])).item()


def test_products_of_complex_inputs():
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    b = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))).astype(np.complex64)
    c = (rng.standard_normal((2,)) + 1j * rng.standard_normal((2,))).astype(np.complex64)
    got = mx.addmm(mx.array(c), mx.array(a), mx.array(b), alpha=0.5, beta=2.0)
    assert got.dtype == mx.complex64
    np.testing.assert_allclose(np.array(got), 0.5 * (a @ b) + 2.0 * c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.array(mx.array(a) @ mx.array(b[:, 0])), a @ b[:, 0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.array(mx.outer(mx.array(c), mx.array(a[0]))), np.outer(c, a[0]), rtol=1e-6)
    with pytest.raises(ValueError, match="addmm"):
        mx.addmm(mx.zeros(2, mx.int32), mx.zeros((2, 2), mx.int32), mx.zeros((2, 2), mx.int32))
