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


# Gradients of a real loss of complex inputs follow MLX's convention: dL/dx + i dL/dy (the
# direction of steepest ascent), checked against float64 central differences.
z2 = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
GRADIENT_CASES = {
    "multiply": (lambda x: x * mx.array(z2), lambda x: x * z2),
    "divide": (lambda x: mx.array(z2) / x, lambda x: z2 / x),
    "power": (lambda x: mx.power(x, mx.array(z2)), lambda x: x ** z2.astype(complex)),
    "power of exponent": (lambda x: mx.power(mx.array(z2), x), lambda x: z2.astype(complex) ** x),
    "exp": (mx.exp, np.exp), "log": (mx.log, np.log), "sin": (mx.sin, np.sin), "tanh": (mx.tanh, np.tanh),
    "sqrt": (mx.sqrt, np.sqrt), "reciprocal": (mx.reciprocal, lambda x: 1 / x),
    "arcsin": (mx.arcsin, np.arcsin), "arccosh": (mx.arccosh, np.arccosh), "arctanh": (mx.arctanh, np.arctanh),
    "abs": (mx.abs, np.abs), "real": (mx.real, np.real), "imag": (mx.imag, np.imag),
    "conjugate": (mx.conjugate, np.conjugate),
    "prod": (lambda x: mx.prod(x, keepdims=True), lambda x: np.prod(x, keepdims=True)),
    "cumprod": (mx.cumprod, np.cumprod),
    "matmul": (lambda x: mx.array(np.outer(z2, z2)) @ x, lambda x: np.outer(z2, z2) @ x),
    "fft": (mx.fft.fft, np.fft.fft), "ifft": (mx.fft.ifft, np.fft.ifft),
    "take_along_axis": (lambda x: mx.take_along_axis(x, mx.array([2, 0]), 0), lambda x: x[[2, 0]]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_of_complex_inputs(name):
    f, np_f = GRADIENT_CASES[name]
    x = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64) + 0.5
    w_shape = np.shape(np_f(x.astype(complex)))
    w = rng.standard_normal(w_shape) + 1j * rng.standard_normal(w_shape)

    def loss(v):
        return np.real(np.sum(w * np_f(v)))

    expected = np.zeros(3, complex)
    for k in range(3):
        e = np.zeros(3, complex)
        e[k] = 1e-6
        expected[k] = (loss(x + e) - loss(x - e)) / 2e-6 + 1j * (loss(x + 1j * e) - loss(x - 1j * e)) / 2e-6
    got = mx.grad(lambda v: mx.real(mx.sum(mx.array(w.astype(np.complex64)) * f(v))))(mx.array(x))
    assert got.dtype == mx.complex64
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-3, atol=1e-3)


def test_complex_vjp_and_custom_rules_use_the_same_convention():
    # Real MLX 0.32.4: the vjp of x * c with cotangent 1 is conj(c).
    c = mx.array([2 - 1j, 1 + 1j])
    _, (g,) = mx.vjp(lambda x: x * c, [mx.array([1 + 2j, 3 + 0j])], [mx.ones(2, mx.complex64)])
    np.testing.assert_allclose(np.array(g), [2 + 1j, 1 - 1j])

    @mx.custom_function
    def square(x):
        return x * x

    @square.vjp
    def square_vjp(primals, cotangent, output):
        # Written in MLX's convention: the cotangent times conj(f'(x)).
        return cotangent * 2 * mx.conjugate(primals)

    z = mx.array([1 + 2j, -0.5 + 0.25j])
    reference = mx.grad(lambda x: mx.real(mx.sum(x * x * (1 - 1j))))(z)
    custom = mx.grad(lambda x: mx.real(mx.sum(square(x) * (1 - 1j))))(z)
    np.testing.assert_allclose(np.array(custom), np.array(reference), rtol=1e-6)


def test_jvps_of_real_parts_of_complex_inputs():
    z = np.array([1 + 2j, -0.5 + 0.25j], np.complex64)
    t = np.array([0.3 - 1j, 2 + 0.5j], np.complex64)
    for f, expected in [(mx.abs, np.real(np.conj(z) * t) / np.abs(z)), (mx.real, t.real), (mx.imag, t.imag)]:
        _, (got,) = mx.jvp(f, [mx.array(z)], [mx.array(t)])
        assert got.dtype == mx.float32
        np.testing.assert_allclose(np.array(got), expected, rtol=1e-6)
