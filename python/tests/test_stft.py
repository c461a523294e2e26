"""`mx.fft.stft` and `mx.fft.istft` against a NumPy evaluation of their definitions
(np.pad, frames by fancy indexing, numpy.fft, a loop for overlap-add), with MLX 0.32.4's
defaults, result shapes and dtypes, and errors (measured with mlx 0.32.4); gradients
against finite differences of the NumPy reference; vmap against a loop."""

import numpy as np
import pytest

import lazulite.core as mx

rng = np.random.default_rng(5)


def real(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def cplx(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def centred_window(window, win_length, n_fft):
    w = np.ones(win_length) if window is None else np.asarray(window, np.float64)
    before = (n_fft - w.shape[0]) // 2
    return np.pad(w, (before, n_fft - w.shape[0] - before))


def np_stft(x, n_fft=2048, hop_length=None, win_length=None, window=None, center=True,
            pad_mode="reflect", norm="backward", onesided=None):
    x = np.asarray(x)
    hop = n_fft // 4 if hop_length is None else hop_length
    w = centred_window(window, n_fft if win_length is None else win_length, n_fft)
    onesided = not np.iscomplexobj(x) if onesided is None else onesided
    rows = x.reshape(-1, x.shape[-1]).astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if center:
        rows = np.pad(rows, [(0, 0), (n_fft // 2, n_fft // 2)], mode=pad_mode)
    n_frames = 1 + (rows.shape[-1] - n_fft) // hop
    frames = rows[:, np.arange(n_frames)[:, None] * hop + np.arange(n_fft)] * w
    spec = np.fft.rfft(frames.real, axis=-1, norm=norm) if onesided else np.fft.fft(frames, axis=-1, norm=norm)
    spec = np.swapaxes(spec, -1, -2)
    return spec.reshape(x.shape[:-1] + spec.shape[-2:])


def np_istft(z, n_fft=None, hop_length=None, win_length=None, window=None, center=True,
             norm="backward", onesided=None, length=None):
    z = np.asarray(z).astype(np.complex128)
    onesided = True if onesided is None else onesided
    n_freq, n_frames = z.shape[-2:]
    if n_fft is None:
        n_fft = 2 * (n_freq - 1) if onesided else n_freq
    hop = n_fft // 4 if hop_length is None else hop_length
    w = centred_window(window, n_fft if win_length is None else win_length, n_fft)
    spectra = np.swapaxes(z.reshape(-1, n_freq, n_frames), -1, -2)
    if onesided:
        frames = np.fft.irfft(spectra, n=n_fft, axis=-1, norm=norm)
    else:
        frames = np.fft.ifft(spectra, n=n_fft, axis=-1, norm=norm).real
    frames = frames * w
    total = n_fft + (n_frames - 1) * hop
    signal = np.zeros((frames.shape[0], total))
    envelope = np.zeros(total)
    for t in range(n_frames):
        signal[:, t * hop:t * hop + n_fft] += frames[:, t]
        envelope[t * hop:t * hop + n_fft] += w ** 2
    signal /= np.maximum(envelope, 1e-8)
    start = n_fft // 2 if center else 0
    if length is None:
        signal = signal[:, start:total - n_fft // 2 if center else total]
    else:
        signal = signal[:, start:max(start, min(total, start + length))]
        if signal.shape[-1] < length:
            signal = np.pad(signal, [(0, 0), (0, length - signal.shape[-1])])
    return signal.reshape(z.shape[:-2] + signal.shape[-1:])


def close(got, want, tol=1e-5):
    got = np.asarray(got)
    assert got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def hann(n):
    return np.hanning(n).astype(np.float32)


STFT_CASES = [
    ("n_fft-8", (20,), dict(n_fft=8)),
    ("hop-window", (33,), dict(n_fft=16, hop_length=5, window=hann(12))),
    ("win_length", (20,), dict(n_fft=8, win_length=5)),
    ("odd", (19,), dict(n_fft=7, hop_length=2)),
    ("edge", (20,), dict(n_fft=8, pad_mode="edge")),
    ("constant", (20,), dict(n_fft=8, pad_mode="constant")),
    ("symmetric", (20,), dict(n_fft=8, pad_mode="symmetric")),
    ("reflect-longer-than-input", (3,), dict(n_fft=10)),
    ("no-center", (30,), dict(n_fft=8, center=False, hop_length=3)),
    ("ortho", (20,), dict(n_fft=8, norm="ortho")),
    ("forward-two-sided", (20,), dict(n_fft=8, norm="forward", onesided=False)),
    ("hop-past-frame", (20,), dict(n_fft=4, hop_length=7)),
    ("batch", (2, 3, 17), dict(n_fft=6, hop_length=2)),
    ("empty-batch", (0, 20), dict(n_fft=8)),
    ("default-n_fft", (3000,), dict()),
]


@pytest.mark.parametrize("label,shape,kw", STFT_CASES, ids=[c[0] for c in STFT_CASES])
def test_stft_values(label, shape, kw):
    x = real(*shape)
    args = {k: mx.array(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    got = mx.fft.stft(mx.array(x), **args)
    assert got.dtype == mx.complex64
    close(got, np_stft(x, **kw))


def test_stft_complex_and_other_dtypes():
    z = cplx(24)
    got = mx.fft.stft(mx.array(z), n_fft=8)
    assert got.shape == (8, 13)
    close(got, np_stft(z, n_fft=8))
    close(mx.fft.stft(mx.array(z), n_fft=8, onesided=True), np_stft(z.real, n_fft=8))
    x = real(20)
    for dtype in (mx.float16, mx.bfloat16, mx.float64, mx.int32, mx.bool_):
        a = mx.array(x).astype(dtype)
        got = mx.fft.stft(a, n_fft=8)
        assert got.dtype == mx.complex64 and got.shape == (5, 11)
        close(got, np_stft(np.array(a.astype(mx.float32)), n_fft=8), tol=1e-4)
    for dtype in (mx.float16, mx.float64, mx.int32, mx.complex64):
        window = mx.ones(8, dtype=dtype)
        close(mx.fft.stft(mx.array(x), n_fft=8, window=window), np_stft(x, n_fft=8))


ISTFT_CASES = [
    ("default", (5, 11), dict()),
    ("hop-window", (9, 7), dict(hop_length=3, window=hann(16))),
    ("odd", (4, 9), dict(n_fft=7, hop_length=2)),
    ("smaller-n_fft", (5, 11), dict(n_fft=4)),
    ("larger-n_fft", (5, 11), dict(n_fft=20)),
    ("no-center", (5, 11), dict(center=False)),
    ("two-sided", (7, 6), dict(onesided=False, norm="ortho")),
    ("forward", (5, 11), dict(norm="forward", win_length=6)),
    ("length-long", (5, 11), dict(length=27)),
    ("length-short", (5, 11), dict(length=3)),
    ("length-zero", (5, 11), dict(length=0)),
    ("length-negative", (5, 11), dict(length=-2)),
    ("hop-past-frame", (3, 3), dict(n_fft=4, hop_length=7)),
    ("batch", (2, 3, 5, 4), dict(hop_length=3)),
    ("empty-batch", (0, 5, 4), dict()),
]


@pytest.mark.parametrize("label,shape,kw", ISTFT_CASES, ids=[c[0] for c in ISTFT_CASES])
def test_istft_values(label, shape, kw):
    z = cplx(*shape)
    args = {k: mx.array(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    got = mx.fft.istft(mx.array(z), **args)
    assert got.dtype == mx.float32
    close(got, np_istft(z, **kw), tol=1e-4)


def test_istft_dtypes():
    z = mx.array(cplx(5, 4))
    assert mx.fft.istft(z, window=mx.ones(8, dtype=mx.float64)).dtype == mx.float64
    assert mx.fft.istft(z, window=mx.ones(8, dtype=mx.float16)).dtype == mx.float32
    real_input = mx.ones((5, 4), dtype=mx.int32)
    close(mx.fft.istft(real_input), np_istft(np.ones((5, 4))))


@pytest.mark.parametrize("n_fft,hop,window,onesided", [
    (16, None, None, True),
    (16, 4, hann(16), True),
    (15, 5, hann(12), True),
    (8, 8, None, False),
])
def test_round_trip(n_fft, hop, window, onesided):
    x = real(2, 50)
    w = None if window is None else mx.array(window)
    spec = mx.fft.stft(mx.array(x), n_fft=n_fft, hop_length=hop, window=w, onesided=onesided)
    back = mx.fft.istft(spec, n_fft=n_fft, hop_length=hop, window=w, onesided=onesided, length=50)
    close(back, x.astype(np.float64), tol=1e-4)


def test_gradients_match_finite_differences():
    x = real(24).astype(np.float64)
    wr, wi = real(5, 13), real(5, 13)
    window = hann(7)

    def np_loss(v):
        s = np_stft(v, n_fft=8, hop_length=2, window=window)
        return float(np.sum(s.real * wr + s.imag * wi))

    def loss(v):
        s = mx.fft.stft(v, n_fft=8, hop_length=2, window=mx.array(window))
        return mx.sum(mx.real(s) * mx.array(wr) + mx.imag(s) * mx.array(wi))

    grad = np.array(mx.grad(loss)(mx.array(x.astype(np.float32))))
    eye = np.eye(x.size)
    fd = np.array([(np_loss(x + e) - np_loss(x - e)) / 2 for e in eye])
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-4)

    z = cplx(5, 6)
    u = real(15)

    def np_iloss(re, im):
        return float(np.sum(np_istft(re + 1j * im, hop_length=3, window=hann(8)) * u))

    def iloss(re, im):
        spec = re + 1j * im
        return mx.sum(mx.fft.istft(spec, hop_length=3, window=mx.array(hann(8))) * mx.array(u))

    g_re, g_im = mx.grad(iloss, argnums=(0, 1))(mx.array(z.real), mx.array(z.imag))
    re, im = z.real.astype(np.float64), z.imag.astype(np.float64)
    eye = np.eye(re.size).reshape(-1, *re.shape)
    fd_re = np.array([(np_iloss(re + e, im) - np_iloss(re - e, im)) / 2 for e in eye]).reshape(re.shape)
    fd_im = np.array([(np_iloss(re, im + e) - np_iloss(re, im - e)) / 2 for e in eye]).reshape(re.shape)
    np.testing.assert_allclose(np.array(g_re), fd_re, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.array(g_im), fd_im, rtol=1e-4, atol=1e-4)


def test_vmap_matches_a_loop():
    x = mx.array(real(3, 20))
    f = mx.vmap(lambda v: mx.fft.stft(v, n_fft=8, hop_length=3), in_axes=0)
    close(f(x), np.stack([np.array(mx.fft.stft(x[i], n_fft=8, hop_length=3)) for i in range(3)]))
    z = mx.array(cplx(5, 3, 6))
    g = mx.vmap(lambda s: mx.fft.istft(s, hop_length=3), in_axes=1)
    close(g(z), np.stack([np.array(mx.fft.istft(z[:, i], hop_length=3)) for i in range(3)]))


def test_compile():
    x = mx.array(real(20))
    f = mx.compile(lambda v: mx.fft.istft(mx.fft.stft(v, n_fft=8), length=20))
    close(f(x), np.array(x).astype(np.float64), tol=1e-4)


STFT_ERRORS = [
    (dict(n_fft=0), ValueError, "[stft] n_fft must be positive."),
    (dict(n_fft=8, hop_length=0), ValueError, "[stft] hop_length must be positive."),
    (dict(n_fft=1), ValueError, "[stft] hop_length must be positive."),
    (dict(n_fft=8, win_length=9), ValueError, "[stft] window length must not exceed n_fft."),
    (dict(n_fft=8, win_length=-1), ValueError, "[full] Negative dimensions not allowed."),
    (dict(n_fft=8, window=mx.ones((2, 4))), ValueError, "[stft] window must be a one-dimensional array."),
    (dict(n_fft=8, window=mx.array(1.0)), ValueError, "[stft] window must be a one-dimensional array."),
    (dict(n_fft=8, window=mx.ones(9)), ValueError, "[stft] window length must not exceed n_fft."),
    (dict(n_fft=8, pad_mode="wrap"), ValueError, "Invalid padding mode (wrap) passed to pad"),
    (dict(n_fft=8, norm="none"), ValueError,
     "[stft] Invalid norm. Expected one of {'backward', 'ortho', 'forward'}."),
    (dict(n_fft=30, center=False), ValueError, "[stft] Input is too short for the given n_fft."),
    (dict(n_fft=8.0), TypeError, ""),
]


@pytest.mark.parametrize("kw,exc,message", STFT_ERRORS)
def test_stft_errors(kw, exc, message):
    with pytest.raises(exc) as info:
        mx.fft.stft(mx.array(real(20)), **kw)
    assert message in str(info.value)


def test_stft_input_errors():
    with pytest.raises(ValueError, match="at least one dimension"):
        mx.fft.stft(mx.array(1.0), n_fft=8)
    with pytest.raises(ValueError, match="Cannot infer the shape"):
        mx.fft.stft(mx.zeros((0,)), n_fft=8)
    # An unknown pad mode is not looked at when nothing is padded.
    assert mx.fft.stft(mx.array(real(20)), n_fft=8, center=False, pad_mode="wrap").shape == (5, 7)


ISTFT_ERRORS = [
    ((5,), dict(), "[istft] Input must have at least two dimensions (freq, frames)."),
    ((1, 4), dict(), "[istft] n_fft must be positive."),
    ((5, 4), dict(n_fft=0), "[istft] n_fft must be positive."),
    ((5, 4), dict(hop_length=0), "[istft] hop_length must be positive."),
    ((5, 4), dict(window=mx.ones(9)), "[istft] window length must not exceed n_fft."),
    ((5, 4), dict(win_length=9), "[istft] window length must not exceed n_fft."),
    ((5, 4), dict(win_length=-1), "[full] Negative dimensions not allowed."),
    ((5, 4), dict(window=mx.ones((2, 4))), "[istft] window must be a one-dimensional array."),
    ((5, 4), dict(norm="none"), "[istft] Invalid norm."),
    ((5, 0), dict(), "Cannot infer the shape"),
]


@pytest.mark.parametrize("shape,kw,message", ISTFT_ERRORS)
def test_istft_errors(shape, kw, message):
    with pytest.raises(ValueError) as info:
        mx.fft.istft(mx.array(cplx(*shape)), **kw)
    assert message in str(info.value)


def test_out_of_range_ints_are_type_errors():
    with pytest.raises(TypeError):
        mx.fft.stft(mx.array(real(20)), n_fft=2**31)
    with pytest.raises(TypeError):
        mx.fft.stft(mx.array(real(20)), n_fft=8, hop_length=2**40)
    with pytest.raises(TypeError):
        mx.fft.istft(mx.array(cplx(5, 4)), length=2**40)
