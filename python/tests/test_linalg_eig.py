"""`mx.linalg.eig` / `eigvals` on general square matrices against numpy.linalg.eig.

Eigenvalue order and eigenvector phase are not unique: eigenvalues are compared as
multisets, eigenvectors by `a v = v diag(w)` and unit norms. For generic matrices the
order is also compared with NumPy's on the transpose: MLX hands its row-major buffer to
LAPACK, so that is the order MLX returns. complex64 matrices are also compared with real
MLX's results and with LAPACK's `zgeev` (mlx_eig_complex.json, written by
tools/mlx_reference/eig_complex.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

import lazulite.core as mx

RNG = np.random.default_rng(77)
HERE = Path(__file__).parent


def arr(a):
    a = np.asarray(a)
    return mx.array(a, mx.float64) if a.dtype == np.float64 else mx.array(a)


def assert_same_multiset(got, want, tol):
    got, want = list(np.ravel(got)), list(np.ravel(want))
    assert len(got) == len(want)
    for w in want:
        i = int(np.argmin([abs(g - w) for g in got]))
        assert abs(got[i] - w) <= tol, (w, got)
        got.pop(i)


def check(a, tol=None, order=False):
    # The results are complex64 for float64 input too: float32 rounding either way.
    tol = tol or 5e-6 * max(1, a.shape[-1])
    w, v = mx.linalg.eig(arr(a), stream=mx.cpu)
    assert w.dtype == mx.complex64 and v.dtype == mx.complex64
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    w, v = np.array(w), np.array(v)
    np.testing.assert_array_equal(np.array(mx.linalg.eigvals(arr(a))), w)
    a64 = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    want = np.linalg.eigvals(a64)
    scale = max(1.0, np.abs(a64).max()) if a.size else 1.0
    for got_m, want_m in zip(w.reshape(-1, a.shape[-1]), want.reshape(-1, a.shape[-1])):
        assert_same_multiset(got_m, want_m, tol * scale)
    if order:
        np.testing.assert_allclose(w, np.linalg.eigvals(np.swapaxes(a64, -1, -2)), atol=1e-4)
    residual = a64 @ v - v * w[..., None, :]
    assert np.abs(residual).max(initial=0) <= 10 * tol * scale
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=1e-5)
    return w, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (4, 4), (7, 7), (3, 5, 5), (2, 2, 3, 3)])
def test_random_matrices(shape, dtype):
    check(RNG.standard_normal(shape).astype(dtype), order=True)


def complex_normal(shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (4, 4), (7, 7), (3, 5, 5), (2, 2, 3, 3)])
def test_random_complex_matrices(shape):
    w, v = check(complex_normal(shape), order=True)
    # Every eigenvector's largest entry is real and positive, as zgeev leaves it.
    for vm in v.reshape(-1, shape[-1], shape[-1]):
        top = vm[np.argmax(np.abs(vm), axis=0), np.arange(shape[-1])]
        assert np.all(top.imag == 0) and np.all(top.real > 0)


def test_complex_structured_matrices():
    m = complex_normal((5, 5))
    hermitian = (m + m.conj().T).astype(np.complex64)
    w, v = check(hermitian)
    np.testing.assert_allclose(w.imag, 0, atol=1e-5)
    np.testing.assert_allclose(v.conj().T @ v, np.eye(5), atol=1e-5)
    check(np.triu(complex_normal((5, 5))))
    graded = 10.0 ** np.linspace(-3, 3, 5)
    check((graded[:, None] * complex_normal((5, 5)) / graded[None, :]).astype(np.complex64), tol=1e-4)
    w, v = check(np.diag([2j, 1.0, 3 - 1j]).astype(np.complex64))
    np.testing.assert_array_equal(w, [2j, 1, 3 - 1j])
    np.testing.assert_array_equal(v, np.eye(3))
    # Non-normal: a Jordan-like block, and real matrices stored as complex64.
    check(np.array([[1 + 1j, 5, 0], [0, 1 + 1j, 5], [0, 0, 2]], np.complex64), tol=1e-3)
    check(RNG.standard_normal((4, 4)).astype(np.complex64), order=True)


def from_pairs(x):
    x = np.asarray(x)
    return x[..., 0] + 1j * x[..., 1]


MLX_CASES = json.loads((HERE / "mlx_eig_complex.json").read_text())


@pytest.mark.parametrize("case", MLX_CASES, ids=lambda c: c["name"])
def test_complex_matches_lapack_and_mlx(case):
    a = from_pairs(case["a"]).astype(np.complex64)
    w, v = mx.linalg.eig(mx.array(a), stream=mx.cpu)
    w, v = np.array(w), np.array(v)
    np.testing.assert_array_equal(np.array(mx.linalg.eigvals(mx.array(a))), w)
    # zgeev on the transpose in double precision, as lazulite computes: same order, and the
    # conjugated left eigenvectors of the transpose are the right eigenvectors of `a`.
    np.testing.assert_allclose(w, from_pairs(case["zgeev_w"]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v, from_pairs(case["zgeev_vl"]).conj(), atol=2e-5)
    # MLX (cgeev, single precision) finds the same eigenvalues, in the same order unless
    # single-precision rounding reorders them. It returns the left eigenvectors of the
    # transpose unconjugated, which are eigenvectors of conj(a): lazulite returns those
    # of `a`, equal to MLX's conjugated (same phase convention) up to rounding.
    mlx_w, mlx_v = from_pairs(case["w"]), from_pairs(case["v"])
    for wm, vm, mlx_wm, mlx_vm in zip(w.reshape(-1, a.shape[-1]), v.reshape(-1, *a.shape[-2:]),
                                      mlx_w.reshape(-1, a.shape[-1]), mlx_v.reshape(-1, *a.shape[-2:])):
        for j in range(len(wm)):
            k = int(np.argmin(np.abs(mlx_wm - wm[j])))
            assert abs(mlx_wm[k] - wm[j]) <= 1e-5 * max(1, abs(wm[j]))
            magnitudes = np.sort(np.abs(vm[:, j]))
            if len(magnitudes) > 1 and magnitudes[-1] - magnitudes[-2] < 1e-4:
                # A tie for the largest entry: the phase follows rounding; compare directions.
                assert abs(abs(np.vdot(mlx_vm[:, k].conj(), vm[:, j])) - 1) <= 1e-5
            else:
                np.testing.assert_allclose(vm[:, j], mlx_vm[:, k].conj(), atol=2e-5)


def test_complex_pairs_are_adjacent_and_conjugate():
    theta = 0.3
    r = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    a = np.zeros((4, 4))
    a[:2, :2], a[2:, 2:] = 3 * r, [[0.5, -2.0], [2.0, 0.5]]
    basis = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
    w, v = check(basis @ a @ np.linalg.inv(basis))
    for i in (0, 2):
        assert w[i].imag > 0 and w[i + 1] == np.conj(w[i])
        np.testing.assert_array_equal(v[:, i + 1], np.conj(v[:, i]))
        assert v[np.argmax(np.abs(v[:, i])), i].imag == 0


def test_mlx_example_and_rotation():
    w, v = mx.linalg.eig(mx.array([[1.0, -2.0], [-2.0, 1.0]]), stream=mx.cpu)
    np.testing.assert_allclose(np.array(w), [3, -1], atol=1e-6)
    h = np.sqrt(0.5)
    np.testing.assert_allclose(np.array(v), [[h, h], [-h, h]], atol=1e-6)
    w, v = mx.linalg.eig(mx.array([[0.0, -1.0], [1.0, 0.0]]))
    np.testing.assert_array_equal(np.array(w), [1j, -1j])
    np.testing.assert_allclose(np.array(v), [[h, h], [-h * 1j, h * 1j]], atol=1e-7)


@pytest.mark.parametrize(
    "a",
    [
        np.diag([2.0, 1.0, 3.0]).astype(np.float32),
        np.triu(RNG.standard_normal((5, 5))),
        np.tril(RNG.standard_normal((5, 5))).astype(np.float32),
        2 * np.eye(3),
        np.zeros((3, 3), np.float32),
        np.roll(np.eye(5), 1, axis=0),
    ],
    ids=["diagonal", "upper", "lower", "scaled identity", "zero", "cyclic permutation"],
)
def test_structured_matrices(a):
    check(a)


def test_diagonal_keeps_its_order_and_unit_vectors():
    w, v = check(np.diag([2.0, 1.0, 3.0]).astype(np.float32))
    np.testing.assert_array_equal(w, [2, 1, 3])
    np.testing.assert_array_equal(v, np.eye(3))


def test_defective_matrix():
    a = np.array([[2.0, 1.0], [0.0, 2.0]])
    w, v = mx.linalg.eig(arr(a))
    np.testing.assert_allclose(np.array(w), [2, 2], atol=1e-7)
    np.testing.assert_allclose(np.abs(np.array(v)[0]), [1, 1], atol=1e-7)


def test_empty_and_views():
    for dtype in (mx.float32, mx.complex64):
        w, v = mx.linalg.eig(mx.zeros((3, 0, 0), dtype=dtype))
        assert w.shape == (3, 0) and v.shape == (3, 0, 0) and w.dtype == mx.complex64
    a = RNG.standard_normal((2, 4, 4)).astype(np.float32)
    x = mx.array(a)
    np.testing.assert_array_equal(np.array(mx.linalg.eigvals(x.swapaxes(-1, -2))),
                                  np.array(mx.linalg.eigvals(mx.array(np.ascontiguousarray(a.swapaxes(-1, -2))))))
    np.testing.assert_array_equal(np.array(mx.linalg.eigvals(x[::-1, ::-1])),
                                  np.array(mx.linalg.eigvals(mx.array(a[::-1, ::-1].copy()))))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_vmap_equals_a_loop(dtype):
    a = RNG.standard_normal((3, 3, 4)).astype(dtype)
    if dtype == np.complex64:
        a = a + 1j * RNG.standard_normal((3, 3, 4)).astype(np.float32)
    w, v = mx.vmap(mx.linalg.eig, in_axes=2)(mx.array(a))
    assert w.shape == (4, 3) and v.shape == (4, 3, 3)
    for i in range(4):
        wi, vi = mx.linalg.eig(mx.array(np.ascontiguousarray(a[:, :, i])))
        np.testing.assert_array_equal(np.array(w[i]), np.array(wi))
        np.testing.assert_array_equal(np.array(v[i]), np.array(vi))


def test_errors_match_mlx():
    with pytest.raises(ValueError, match=r"\[linalg::eig\] Only defined for square matrices"):
        mx.linalg.eig(mx.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"\[linalg::eigvals\] Arrays must have >= 2 dimensions"):
        mx.linalg.eigvals(mx.zeros((3,)))
    for dtype in (mx.int32, mx.float16, mx.bfloat16, mx.bool_):
        with pytest.raises(ValueError, match="Arrays must have type float32, float64 or complex64"):
            mx.linalg.eig(mx.zeros((2, 2), dtype=dtype))
    with pytest.raises(ValueError, match="vjp"):
        mx.grad(lambda x: mx.linalg.eigvals(x).real.sum())(mx.eye(2))
    for dtype in (mx.float32, mx.complex64):
        with pytest.raises(ValueError, match="jvp"):
            mx.jvp(lambda x: mx.linalg.eigvals(x), [mx.eye(2, dtype=dtype)], [mx.ones((2, 2), dtype=dtype)])


@pytest.mark.parametrize("bad", [np.nan, np.inf, complex(0, np.inf)])
def test_non_finite_input_raises_as_numpy(bad):
    a = np.array([[1.0, bad], [0.0, 1.0]], np.complex64 if np.iscomplexobj(bad) else np.float32)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.eig(a)
    with pytest.raises(ValueError, match="infs or NaNs"):
        mx.eval(mx.linalg.eig(mx.array(a))[0])
