"""`mx.linalg` against numpy.linalg on random shapes (batched too), reconstructions
(Q@R, U@diag(S)@Vt, V diag(w) V^T, L[p]@U), gradients against float64 finite
differences, vmap against a loop, and MLX's errors. MLX runs these on the CPU stream
(`stream=mx.cpu`); lazulite checks `stream` (the GPU raises) and otherwise ignores it."""

import numpy as np
import pytest

import lazulite.core as mx

RNG = np.random.default_rng(2024)
SHAPES = [(1, 1), (3, 3), (5, 5), (2, 4, 4), (2, 3, 2, 2)]
RECTANGLES = [(4, 3), (3, 4), (5, 5), (2, 6, 2), (3, 2, 5)]
def arr(a, *args):
    """An mx.array keeping NumPy's float64 (mx.array makes float32 of float64 input)."""
    if args:
        return mx.array(a, *args)
    a = np.asarray(a)
    return mx.array(a, mx.float64) if a.dtype == np.float64 else mx.array(a)


TOL = {mx.float32: 2e-4, mx.float64: 1e-10}
NPT = {mx.float32: np.float32, mx.float64: np.float64}


def well(shape, dtype=mx.float64):
    n = shape[-1]
    a = RNG.standard_normal(shape) + n * np.eye(n)
    return a.astype(NPT[dtype])


def spd(shape, dtype=mx.float64):
    a = RNG.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(NPT[dtype])


def close(got, want, dtype=mx.float64):
    np.testing.assert_allclose(np.array(got), want, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [mx.float32, mx.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_square_ops_match_numpy(shape, dtype):
    a = well(shape, dtype)
    x = arr(a)
    close(mx.linalg.inv(x, stream=mx.cpu), np.linalg.inv(a), dtype)
    assert mx.linalg.inv(x).dtype == dtype
    b = RNG.standard_normal(shape[:-1] + (2,)).astype(NPT[dtype])
    close(mx.linalg.solve(x, arr(b)), np.linalg.solve(a, b), dtype)
    close(mx.linalg.solve_triangular(x, arr(b)), np.linalg.solve(np.tril(a), b), dtype)
    close(mx.linalg.solve_triangular(x, arr(b), upper=True), np.linalg.solve(np.triu(a), b), dtype)
    close(mx.linalg.tri_inv(x), np.linalg.inv(np.tril(a)), dtype)
    close(mx.linalg.tri_inv(x, upper=True), np.linalg.inv(np.triu(a)), dtype)
    close(mx.linalg.det(x), np.linalg.det(a), dtype)
    sign, logabs = mx.linalg.slogdet(x)
    want_sign, want_log = np.linalg.slogdet(a)
    close(sign, want_sign, dtype)
    close(logabs, want_log, dtype)
    s = spd(shape, dtype)
    l = mx.linalg.cholesky(arr(s))
    close(l, np.linalg.cholesky(s), dtype)
    close(mx.linalg.cholesky_inv(l), np.linalg.inv(s), dtype)
    close(mx.linalg.cholesky_inv(mx.linalg.cholesky(arr(s), upper=True), upper=True), np.linalg.inv(s), dtype)
    close(mx.linalg.eigvalsh(arr(s)), np.linalg.eigvalsh(s), dtype)
    close(mx.linalg.eigvalsh(arr(np.tril(s)), UPLO="L"), np.linalg.eigvalsh(s), dtype)
    close(mx.linalg.eigvalsh(arr(np.triu(s)), UPLO="U"), np.linalg.eigvalsh(s), dtype)
    w, v = mx.linalg.eigh(arr(s))
    close(arr(np.array(v) * np.array(w)[..., None, :]) @ mx.swapaxes(v, -1, -2), s, dtype)


@pytest.mark.parametrize("dtype", [mx.float32, mx.float64])
@pytest.mark.parametrize("shape", RECTANGLES)
def test_factorizations_match_numpy_and_reconstruct(shape, dtype):
    a = RNG.standard_normal(shape).astype(NPT[dtype])
    x = arr(a)
    q, r = mx.linalg.qr(x)
    want_q, want_r = np.linalg.qr(a)
    close(q, want_q, dtype)
    close(r, want_r, dtype)
    close(q @ r, a, dtype)
    u, s, vt = mx.linalg.svd(x)
    m, n = shape[-2:]
    assert u.shape == shape[:-2] + (m, m) and vt.shape == shape[:-2] + (n, n)
    close(s, np.linalg.svd(a, compute_uv=False), dtype)
    close(mx.linalg.svd(x, compute_uv=False), np.linalg.svd(a, compute_uv=False), dtype)
    k = min(m, n)
    close(u[..., :k] * mx.expand_dims(s, -2) @ vt[..., :k, :], a, dtype)
    close(mx.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(m), u.shape), dtype)
    close(vt @ mx.swapaxes(vt, -1, -2), np.broadcast_to(np.eye(n), vt.shape), dtype)
    close(mx.linalg.pinv(x), np.linalg.pinv(a), dtype)
    p, l, uu = mx.linalg.lu(x)
    assert p.dtype == mx.uint32 and l.shape == shape[:-2] + (m, k) and uu.shape == shape[:-2] + (k, n)
    rebuilt = np.take_along_axis(np.array(l @ uu), np.array(p)[..., None].astype(np.int64), axis=-2)
    np.testing.assert_allclose(rebuilt, a, rtol=TOL[dtype], atol=TOL[dtype])
    packed, pivots = mx.linalg.lu_factor(x)
    assert packed.shape == x.shape and pivots.shape == shape[:-2] + (k,) and pivots.dtype == mx.uint32


def test_lu_matches_mlx_permutation_convention():
    a = arr([[1.0, 2, 0, 0], [0, 0, 1, 0], [5, 1, 1, 0], [0, 9, 0, 1]])
    p, l, u = mx.linalg.lu(a)
    assert p.tolist() == [3, 2, 0, 1]
    assert mx.linalg.lu_factor(a)[1].tolist() == [2, 3, 3, 3]
    np.testing.assert_allclose(np.array(l)[np.array(p)] @ np.array(u), np.array(a), atol=1e-6)


VECTOR_ORDS = [None, 0, 1, 2, 3, 0.5, -1, -2, np.inf, -np.inf]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norms(ord):
    v = RNG.standard_normal((3, 5)).astype(np.float32)
    v[0, 1] = 0.0
    for axis in (0, 1, -1):
        for keepdims in (False, True):
            got = mx.linalg.norm(arr(v), ord, axis, keepdims)
            close(got, np.linalg.norm(v, ord, axis, keepdims), mx.float32)
    if ord is not None:
        close(mx.linalg.norm(arr(v[1]), ord), np.linalg.norm(v[1], ord), mx.float32)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norms(ord):
    x = RNG.standard_normal((3, 4, 5))
    close(mx.linalg.norm(arr(x[0]), ord), np.linalg.norm(x[0], ord))
    for axis in [(0, 1), (2, 0), (-1, -2)]:
        for keepdims in (False, True):
            got = mx.linalg.norm(arr(x), ord, axis, keepdims)
            close(got, np.linalg.norm(x, ord, axis, keepdims))


def test_norm_defaults_and_dtypes():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    close(mx.linalg.norm(arr(x)), np.sqrt((x.astype(np.float64) ** 2).sum()), mx.float32)
    assert mx.linalg.norm(arr([[4, 1], [2, 3]])).dtype == mx.float32
    assert mx.linalg.norm(arr([1.0, 2.0], mx.float16)).dtype == mx.float16
    assert mx.linalg.norm(arr([True, False])).item() == 1.0
    assert mx.linalg.norm(arr([3 + 4j])).item() == 5.0
    assert mx.linalg.norm(arr([3 + 4j])).dtype == mx.float32
    assert mx.linalg.norm(arr(-3.0)).item() == 3.0
    assert mx.linalg.norm(mx.zeros((0,))).item() == 0.0
    assert mx.linalg.norm(arr([3.0, -4.0, 0.0]), 0).item() == 2.0


def test_cross():
    a = RNG.standard_normal((4, 3)).astype(np.float32)
    b = RNG.standard_normal((3,)).astype(np.float32)
    close(mx.linalg.cross(arr(a), arr(b)), np.cross(a, b), mx.float32)
    c = RNG.standard_normal((3, 2))
    close(mx.linalg.cross(arr(c), arr(c[::-1]), axis=0), np.cross(c, c[::-1], axis=0))
    got = mx.linalg.cross(mx.array([1, 2, 3]), mx.array([4, 5, 6]))
    assert got.dtype == mx.int32 and got.tolist() == [-3, 6, -3]
    assert mx.linalg.cross(arr([1.0, 2]), arr([4.0, 5])).tolist() == [0, 0, -3]


def test_strided_inputs():
    a = well((5, 5))
    t = arr(a).T
    close(mx.linalg.inv(t), np.linalg.inv(a.T))
    rev = arr(a)[::-1, ::2]
    close(mx.linalg.svd(rev, compute_uv=False), np.linalg.svd(a[::-1, ::2], compute_uv=False))
    bc = mx.broadcast_to(arr(a), (3, 5, 5))
    close(mx.linalg.det(bc), np.linalg.det(np.broadcast_to(a, (3, 5, 5))))


def test_errors_match_mlx():
    ints = arr([[4, 1], [2, 3]])
    with pytest.raises(ValueError, match=r"\[linalg::inv\] Arrays must have type float32 or float64"):
        mx.linalg.inv(ints)
    with pytest.raises(ValueError, match="Inverses are only defined for square matrices"):
        mx.linalg.inv(mx.ones((2, 3)))
    with pytest.raises(ValueError, match=">= 2 dimensions"):
        mx.linalg.inv(mx.ones((3,)))
    with pytest.raises(ValueError, match="float32 or float64"):
        mx.linalg.qr(mx.ones((3, 3), mx.float16))
    with pytest.raises(ValueError, match="Only defined for square matrices"):
        mx.linalg.eigh(mx.ones((2, 3)))
    with pytest.raises(ValueError, match="UPLO"):
        mx.linalg.eigh(mx.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="must promote to float32 or float64"):
        mx.linalg.solve(mx.eye(2, dtype=mx.float16), mx.ones(2, mx.float16))
    with pytest.raises(ValueError, match="must match second to last dimension"):
        mx.linalg.solve(mx.eye(2), mx.ones(3))
    with pytest.raises(ValueError, match="size 2 or 3"):
        mx.linalg.cross(mx.ones(4), mx.ones(4))
    with pytest.raises(ValueError, match="Norm 'fro' only supported for matrices"):
        mx.linalg.norm(mx.ones(3), "fro")
    with pytest.raises(ValueError, match="Invalid ord value 'foo' for matrix norm"):
        mx.linalg.norm(mx.ones((3, 3)), "foo")
    with pytest.raises(ValueError, match="Invalid ord 3 for matrix norm"):
        mx.linalg.norm(mx.ones((3, 3)), 3)
    with pytest.raises(ValueError, match="Received too many axes for norm"):
        mx.linalg.norm(mx.ones((2, 3, 4)), 2)
    with pytest.raises(ValueError, match="Duplicate axes"):
        mx.linalg.norm(mx.ones((2, 3, 4)), axis=(0, 0))
    with pytest.raises(IndexError):
        mx.linalg.norm(mx.ones((2, 3, 4)), axis=5)
    # A singular matrix: MLX raises RuntimeError when evaluated; det is 0.
    singular = mx.ones((2, 2))
    with pytest.raises(RuntimeError, match="singular"):
        mx.eval(mx.linalg.inv(singular))
    with pytest.raises(RuntimeError, match="singular"):
        mx.eval(mx.linalg.solve(singular, mx.ones(2)))
    assert mx.linalg.det(singular).item() == 0.0
    assert singular.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def finite_difference_check(f, *inputs, eps=1e-6):
    """<w, J u> from central differences equals <vjp(w), u> and <w, jvp(u)> (float64)."""
    xs = [np.asarray(x, dtype=np.float64) for x in inputs]
    dirs = [RNG.standard_normal(x.shape) for x in xs]
    out = np.array(f(*[arr(x) for x in xs]))
    w = RNG.standard_normal(out.shape)
    plus = np.array(f(*[arr(x + eps * d) for x, d in zip(xs, dirs)]))
    minus = np.array(f(*[arr(x - eps * d) for x, d in zip(xs, dirs)]))
    fd = float(np.sum((plus - minus) / (2 * eps) * w))
    _, grads = mx.vjp(lambda *a: f(*a), [arr(x) for x in xs], [arr(w)])
    via_vjp = sum(float(np.sum(np.array(g) * d)) for g, d in zip(grads, dirs))
    assert abs(via_vjp - fd) < 1e-5 * (1 + abs(fd)), (via_vjp, fd)
    return fd


def weighted(*outs):
    total = 0.0
    for i, o in enumerate(outs):
        w = np.random.default_rng(i).standard_normal(o.shape)
        total = total + mx.sum(o * arr(w))
    return total


def test_gradients_match_finite_differences():
    a = well((3, 3))
    finite_difference_check(mx.linalg.inv, a)
    finite_difference_check(mx.linalg.solve, a, RNG.standard_normal((3, 2)))
    finite_difference_check(lambda x, b: mx.linalg.solve_triangular(x, b, upper=True), a, RNG.standard_normal(3))
    finite_difference_check(mx.linalg.tri_inv, a)
    finite_difference_check(mx.linalg.cholesky, spd((4, 4)))
    finite_difference_check(lambda x: mx.linalg.cholesky(x, upper=True), spd((4, 4)))
    finite_difference_check(mx.linalg.det, a)
    finite_difference_check(mx.linalg.pinv, RNG.standard_normal((4, 3)))
    finite_difference_check(mx.linalg.eigvalsh, spd((4, 4)))
    finite_difference_check(lambda x: weighted(*mx.linalg.eigh(x, UPLO="U")[:1], mx.linalg.eigh(x)[1] ** 2), spd((4, 4)))
    for shape in [(4, 4), (5, 3), (3, 5)]:
        x = RNG.standard_normal(shape)
        finite_difference_check(lambda y: mx.linalg.svd(y, compute_uv=False), x)
        finite_difference_check(lambda y: weighted(*mx.linalg.qr(y)), x)
        finite_difference_check(lambda y: mx.linalg.norm(y, "nuc"), x)
        finite_difference_check(lambda y: mx.linalg.norm(y, 2), x)
        finite_difference_check(lambda y: mx.linalg.norm(y, np.inf), x)
    finite_difference_check(lambda y: weighted(mx.linalg.svd(y)[1], mx.linalg.svd(y)[0] ** 2), RNG.standard_normal((4, 4)))
    finite_difference_check(lambda y: mx.linalg.norm(y, 3, axis=-1), RNG.standard_normal((2, 5)))
    finite_difference_check(lambda p, q: mx.linalg.cross(p, q), RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)))


def test_grad_through_mx_grad():
    a = arr(well((3, 3)))
    g = mx.grad(lambda x: mx.linalg.det(x))(a)
    want = np.linalg.det(np.array(a)) * np.linalg.inv(np.array(a)).T
    close(g, want)


@pytest.mark.parametrize("fn", [
    mx.linalg.inv,
    lambda x: mx.linalg.tri_inv(x, upper=True),
    mx.linalg.eigvalsh,
    lambda x: mx.linalg.eigh(x)[1] ** 2,
    lambda x: mx.linalg.svd(x, compute_uv=False),
    lambda x: mx.linalg.qr(x)[1],
    lambda x: mx.linalg.lu(x)[2],
    mx.linalg.det,
    mx.linalg.pinv,
    mx.linalg.cholesky,
    lambda x: mx.linalg.norm(x, "nuc"),
])
def test_vmap_matches_a_loop(fn):
    batch = np.stack([spd((4, 4)) for _ in range(3)], axis=2)
    x = arr(batch)
    got = mx.vmap(fn, in_axes=2)(x)
    want = np.stack([np.array(fn(arr(batch[:, :, i]))) for i in range(3)])
    np.testing.assert_allclose(np.array(got), want, rtol=1e-10, atol=1e-10)


def test_vmap_solve_with_shared_matrix():
    a = well((3, 3))
    bs = RNG.standard_normal((4, 3))
    got = mx.vmap(mx.linalg.solve, in_axes=(None, 0))(arr(a), arr(bs))
    close(got, np.stack([np.linalg.solve(a, b) for b in bs]))


def hermitian(shape):
    a = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(np.complex64)


def adjoint(a):
    return np.conj(np.swapaxes(a, -1, -2))


@pytest.mark.parametrize("shape", SHAPES + [(8, 8)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_hermitian_eigh_matches_numpy(shape, uplo):
    # As MLX: real float32 eigenvalues, complex64 eigenvectors; only the `uplo` triangle
    # is read, so the other is filled with noise.
    h = hermitian(shape)
    other = np.tril(np.ones(shape[-2:]), -1) if uplo == "U" else np.triu(np.ones(shape[-2:]), 1)
    noisy = (h + other * (5 + 7j)).astype(np.complex64)
    w, v = mx.linalg.eigh(mx.array(noisy), UPLO=uplo)
    assert w.dtype == mx.float32 and v.dtype == mx.complex64
    w, v = np.array(w), np.array(v)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h.astype(np.complex128)), atol=1e-5, rtol=1e-5)
    n = shape[-1]
    np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=1e-5)
    np.testing.assert_allclose(adjoint(v) @ v, np.broadcast_to(np.eye(n), v.shape), atol=1e-5)
    values = mx.linalg.eigvalsh(mx.array(noisy), UPLO=uplo)
    assert values.dtype == mx.float32
    np.testing.assert_allclose(np.array(values), w, atol=1e-6)


@pytest.mark.parametrize("shape", RECTANGLES + [(1, 1), (6, 1)])
def test_complex_svd_matches_numpy_and_reconstructs(shape):
    a = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)
    u, s, vt = mx.linalg.svd(mx.array(a))
    assert (u.dtype, s.dtype, vt.dtype) == (mx.complex64, mx.float32, mx.complex64)
    u, s, vt = np.array(u), np.array(s), np.array(vt)
    np.testing.assert_allclose(s, np.linalg.svd(a.astype(np.complex128), compute_uv=False), atol=1e-5)
    m, n = shape[-2:]
    k = min(m, n)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, atol=1e-5)
    np.testing.assert_allclose(adjoint(u) @ u, np.broadcast_to(np.eye(m), u.shape), atol=1e-5)
    np.testing.assert_allclose(vt @ adjoint(vt), np.broadcast_to(np.eye(n), vt.shape), atol=1e-5)
    only_s = mx.linalg.svd(mx.array(a), compute_uv=False)
    np.testing.assert_allclose(np.array(only_s), s, atol=1e-6)


def test_complex_decompositions_batch_and_have_no_derivatives():
    h = hermitian((3, 4, 4))
    looped = np.stack([np.array(mx.linalg.eigvalsh(mx.array(x))) for x in h])
    np.testing.assert_allclose(np.array(mx.vmap(mx.linalg.eigvalsh)(mx.array(h))), looped, atol=1e-6)
    # MLX defines no derivative for complex eigh or svd and says so.
    with pytest.raises(ValueError, match=r"\[Primitive::vjp\] Not implemented for Eigh"):
        mx.grad(lambda x: mx.linalg.eigvalsh(x).sum())(mx.array(h[0]))
    with pytest.raises(ValueError, match=r"\[Primitive::vjp\] Not implemented for SVD"):
        mx.grad(lambda x: mx.linalg.svd(x, compute_uv=False).sum())(mx.array(h[0]))
    with pytest.raises(ValueError, match=r"\[Primitive::jvp\] Not implemented for Eigh"):
        mx.jvp(mx.linalg.eigvalsh, [mx.array(h[0])], [mx.array(h[0])])
