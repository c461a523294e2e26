"""`mx.fft` against numpy.fft (computed in float64), with MLX's signatures, result
dtypes and errors (measured with mlx 0.32.4); gradients through the transforms against
float64 finite differences / analytic NumPy gradients; vmap against a loop."""

import numpy as np
import pytest

import lazulite.core as mx

rng = np.random.default_rng(11)


def real(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def cplx(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def close(got, want, n=None):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    n = n or max(want.shape or (1,))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.log2(n + 2) * scale * 4)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 12, 17, 64, 100, 1024, 4099])
def test_one_dimensional_transforms(n):
    x, z = real(3, n), cplx(3, n)
    y = mx.fft.fft(mx.array(z))
    assert y.dtype == mx.complex64
    close(y, np.fft.fft(z.astype(np.complex128)))
    close(mx.fft.ifft(mx.array(z)), np.fft.ifft(z.astype(np.complex128)))
    r = mx.fft.rfft(mx.array(x))
    assert r.shape == (3, n // 2 + 1)
    close(r, np.fft.rfft(x.astype(np.float64)))
    h = cplx(3, n // 2 + 1)
    b = mx.fft.irfft(mx.array(h), n=n)
    assert b.dtype == mx.float32
    close(b, np.fft.irfft(h.astype(np.complex128), n=n))


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_norms_axes_and_lengths(norm):
    z = cplx(4, 6, 5)
    zw = z.astype(np.complex128)
    close(mx.fft.fft(mx.array(z), n=3, axis=1, norm=norm), np.fft.fft(zw, n=3, axis=1, norm=norm))
    close(mx.fft.ifft(mx.array(z), n=9, axis=-3, norm=norm), np.fft.ifft(zw, n=9, axis=0, norm=norm))
    x = real(4, 6, 5)
    close(mx.fft.rfft(mx.array(x), n=8, axis=0, norm=norm),
          np.fft.rfft(x.astype(np.float64), n=8, axis=0, norm=norm))
    close(mx.fft.irfft(mx.array(z), n=7, axis=1, norm=norm), np.fft.irfft(zw, n=7, axis=1, norm=norm))
    close(mx.fft.fft2(mx.array(z), norm=norm), np.fft.fft2(zw, norm=norm))
    close(mx.fft.ifftn(mx.array(z), s=[3, 8], axes=[2, 0], norm=norm),
          np.fft.ifftn(zw, s=[3, 8], axes=[2, 0], norm=norm))
    close(mx.fft.rfftn(mx.array(x), norm=norm), np.fft.rfftn(x.astype(np.float64), norm=norm))
    close(mx.fft.irfft2(mx.array(z), s=(5, 6), norm=norm), np.fft.irfft2(zw, s=(5, 6), norm=norm))
    close(mx.fft.irfftn(mx.array(z), s=(3, 4, 5), axes=(0, 1, 2), norm=norm),
          np.fft.irfftn(zw, s=(3, 4, 5), axes=(0, 1, 2), norm=norm))


@pytest.mark.parametrize("rows, n", [(40, 1024), (37, 48), (16, 512)])
def test_many_rows_transformed_in_batches(rows, n):
    # Rows are transformed 16 at a time, interleaved, and spread over threads: full
    # batches, a short last one, and a split between tasks must all land in place.
    x, z = real(rows, n), cplx(rows, n)
    close(mx.fft.fft(mx.array(z)), np.fft.fft(z.astype(np.complex128)))
    close(mx.fft.ifft(mx.array(z)), np.fft.ifft(z.astype(np.complex128)))
    close(mx.fft.rfft(mx.array(x)), np.fft.rfft(x.astype(np.float64)))
    h = cplx(rows, n // 2 + 1)
    close(mx.fft.irfft(mx.array(h), n=n), np.fft.irfft(h.astype(np.complex128), n=n))
    close(mx.fft.rfft(mx.array(x.T), axis=0), np.fft.rfft(x.T.astype(np.float64), axis=0))


def test_strided_inputs():
    z = cplx(8, 10)
    a = mx.array(z)
    zw = z.astype(np.complex128)
    close(mx.fft.fft(a.T), np.fft.fft(zw.T))
    close(mx.fft.fft(a[::-1, ::-2]), np.fft.fft(zw[::-1, ::-2]))
    close(mx.fft.rfft(mx.real(a)[:, 1::3], axis=0), np.fft.rfft(zw.real[:, 1::3], axis=0))
    row = mx.broadcast_to(a[:1], (4, 10))
    close(mx.fft.ifft(row), np.fft.ifft(np.broadcast_to(zw[:1], (4, 10))))


def test_dtypes_follow_mlx():
    for dtype in [mx.bool_, mx.uint8, mx.int32, mx.int64, mx.float16, mx.bfloat16, mx.float32, mx.float64]:
        a = mx.ones((4,), dtype=dtype)
        assert mx.fft.fft(a).dtype == mx.complex64
        assert mx.fft.rfft(a).dtype == mx.complex64
        assert mx.fft.irfft(a).dtype == mx.float32
    c = mx.array([1 + 2j, 3 - 1j, 0.5 + 0.5j, 2j])
    # rfft of complex input drops the imaginary part, as MLX.
    close(mx.fft.rfft(c), np.fft.rfft([1.0, 3.0, 0.5, 0.0]))
    same = mx.fft.fftn(mx.array(real(3, 4)), axes=[])
    assert same.dtype == mx.float32 and same.shape == (3, 4)
    assert mx.fft.fftshift(mx.arange(7)).dtype == mx.int32


def test_shifts_and_frequencies():
    x = real(3, 4, 5)
    for axes in [None, [1], [-1, 0], 2]:
        assert np.array_equal(mx.fft.fftshift(mx.array(x), axes=axes), np.fft.fftshift(x, axes=axes))
        assert np.array_equal(mx.fft.ifftshift(mx.array(x), axes=axes), np.fft.ifftshift(x, axes=axes))
    for n, d in [(1, 1.0), (5, 1.0), (8, 0.5), (9, 2)]:
        f = mx.fft.fftfreq(n, d)
        assert f.dtype == mx.float32
        np.testing.assert_allclose(f, np.fft.fftfreq(n, d), rtol=1e-6)
        np.testing.assert_allclose(mx.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d), rtol=1e-6)


def test_errors():
    a = mx.array(real(3, 4))
    with pytest.raises(ValueError, match=r"Invalid FFT output size requested \(0\)"):
        mx.fft.fft(a, n=0)
    with pytest.raises(ValueError, match=r"\(0\)"):
        mx.fft.irfft(mx.array([1.0]))
    with pytest.raises(IndexError):
        mx.fft.fft(a, axis=2)
    with pytest.raises(IndexError):
        mx.fft.fft(mx.array(1.0))
    with pytest.raises(IndexError):
        mx.fft.fft2(mx.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="Shape and axes have different sizes"):
        mx.fft.fft2(a, s=(2,))
    with pytest.raises(ValueError, match=r"Duplicated axis received \(0,0\)"):
        mx.fft.fft2(a, axes=(0, 0))
    with pytest.raises(ValueError, match="`axes` should not be `None` if `s` is not `None`"):
        mx.fft.fftn(a, s=(5,))
    with pytest.raises(ValueError, match="Invalid norm"):
        mx.fft.fft(a, norm="bad")
    with pytest.raises(IndexError):
        mx.fft.fftshift(a, axes=3)
    with pytest.raises(ValueError, match="`n` must be greater than 0"):
        mx.fft.fftfreq(0)
    with pytest.raises(ValueError, match="`d` must be non-zero"):
        mx.fft.rfftfreq(4, d=0)
    with pytest.raises(TypeError):
        mx.fft.fft(a, n=2.0)


def test_grad_through_rfft_in_a_loss():
    x = real(16).astype(np.float64)
    w = real(9).astype(np.float64)

    def loss_np(v):
        return float(np.sum(w * np.abs(np.fft.rfft(v)) ** 2))

    def loss(v):
        return mx.sum(mx.array(w.astype(np.float32)) * mx.abs(mx.fft.rfft(v)) ** 2)

    g = np.asarray(mx.grad(loss)(mx.array(x.astype(np.float32))))
    eps = 1e-6
    fd = np.array([(loss_np(x + eps * e) - loss_np(x - eps * e)) / (2 * eps) for e in np.eye(16)])
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-3)


def test_grad_through_irfft_and_fft():
    h = cplx(5)

    def loss(v):
        return mx.sum(mx.fft.irfft(v, n=8) ** 2)

    # d/dRe + i d/dIm of the float64 loss by central differences.
    def loss_np(v):
        return float(np.sum(np.fft.irfft(v, n=8) ** 2))

    eps = 1e-6
    hw = h.astype(np.complex128)
    fd = np.array([
        (loss_np(hw + eps * e) - loss_np(hw - eps * e)) / (2 * eps)
        + 1j * (loss_np(hw + 1j * eps * e) - loss_np(hw - 1j * eps * e)) / (2 * eps)
        for e in np.eye(5)
    ])
    np.testing.assert_allclose(np.asarray(mx.grad(loss)(mx.array(h))), fd, rtol=1e-4, atol=1e-4)

    def loss2(v):
        return mx.sum(mx.abs(mx.fft.fft(v, n=6)) ** 2)

    def loss2_np(v):
        return float(np.sum(np.abs(np.fft.fft(v, n=6)) ** 2))

    fd = np.array([
        (loss2_np(hw + eps * e) - loss2_np(hw - eps * e)) / (2 * eps)
        + 1j * (loss2_np(hw + 1j * eps * e) - loss2_np(hw - 1j * eps * e)) / (2 * eps)
        for e in np.eye(5)
    ])
    np.testing.assert_allclose(np.asarray(mx.grad(loss2)(mx.array(h))), fd, rtol=1e-4, atol=1e-4)


def test_vjp_convention_matches_mlx():
    # Values measured with mlx 0.32.4.
    g = mx.array([1 + 1j, 2 - 1j, 3 + 0.5j])
    _, (v,) = mx.vjp(lambda x: mx.fft.rfft(x), [mx.arange(4, dtype=mx.float32)], [g])
    np.testing.assert_allclose(v, [6.0, -1.0, 2.0, -3.0], atol=1e-5)
    _, (v,) = mx.vjp(lambda x: mx.fft.irfft(x), [g], [mx.arange(4, dtype=mx.float32)])
    np.testing.assert_allclose(v, [1.5, -1 + 1j, -0.5], atol=1e-5)
    _, (v,) = mx.vjp(lambda x: mx.fft.fft(x), [g], [g])
    np.testing.assert_allclose(v, 3 * np.fft.ifft(np.asarray(g).astype(np.complex128)), atol=1e-5)


def test_vmap_matches_a_loop():
    x = real(5, 3, 8)
    f = lambda v: mx.fft.rfft(v, axis=0)  # noqa: E731
    got = mx.vmap(f, in_axes=1)(mx.array(x))
    want = np.stack([np.asarray(f(mx.array(x[:, i]))) for i in range(3)])
    close(got, want)
    z = cplx(4, 6)
    got = mx.vmap(lambda v: mx.fft.ifft(v, n=4))(mx.array(z))
    close(got, np.fft.ifft(z.astype(np.complex128), n=4, axis=-1))


def test_signatures():
    import inspect

    names = lambda f: list(inspect.signature(f).parameters)  # noqa: E731
    assert names(mx.fft.fft) == ["a", "n", "axis", "norm", "stream"]
    assert names(mx.fft.irfftn) == ["a", "s", "axes", "norm", "stream"]
    assert names(mx.fft.fftshift) == ["a", "axes", "stream"]
    assert names(mx.fft.rfftfreq) == ["n", "d", "stream"]
    y = mx.fft.fft(a=mx.arange(12.0).reshape(3, 4), n=3, axis=0, norm="ortho")
    assert y.shape == (3, 4)
