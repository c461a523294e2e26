"""`mx.fast` (rms_norm, layer_norm, rope, scaled_dot_product_attention) against NumPy
implementations of the formulas MLX documents, in float64; gradients against finite
differences; MLX's error messages and result dtypes (measured with mlx 0.32.4)."""

import numpy as np
import pytest

import lazulite.core as mx

rng = np.random.default_rng(7)


def normal(*shape, dtype=np.float32):
    return rng.normal(size=shape).astype(dtype)


def np_rms_norm(x, w, eps):
    x = x.astype(np.float64)
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y if w is None else y * w


def np_layer_norm(x, w, b, eps):
    x = x.astype(np.float64)
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    if w is not None:
        y = y * w
    return y if b is None else y + b


def np_rope(x, dims, traditional, base, scale, offset, freqs=None):
    x = x.astype(np.float64)
    steps = x.shape[-2]
    inv = base ** (-np.arange(0, dims, 2) / dims) if freqs is None else 1.0 / freqs
    offset = np.asarray(offset, np.float64).reshape((-1,) + (1,) * (x.ndim - 2))
    theta = ((offset + np.arange(steps)) * scale)[..., None] * inv
    c, s = np.cos(theta), np.sin(theta)
    out = x.copy()
    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2], out[..., 1:dims:2] = x1 * c - x2 * s, x1 * s + x2 * c
    else:
        h = dims // 2
        x1, x2 = x[..., :h], x[..., h:dims]
        out[..., :h], out[..., h:dims] = x1 * c - x2 * s, x1 * s + x2 * c
    return out


def np_attention(q, k, v, scale, mask=None, sinks=None):
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = (q * scale) @ np.swapaxes(k, -1, -2)
    t_q, t_kv = s.shape[-2:]
    if isinstance(mask, str):
        visible = np.arange(t_kv)[None, :] <= np.arange(t_q)[:, None] + (t_kv - t_q)
        s = np.where(visible, s, -np.inf)
    elif mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    if sinks is not None:
        column = np.broadcast_to(sinks.reshape(1, -1, 1, 1), s.shape[:-1] + (1,))
        s = np.concatenate([column, s], -1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    if sinks is not None:
        p = p[..., 1:]
    return p @ v


@pytest.mark.parametrize("shape", [(5,), (3, 8), (2, 3, 16)])
@pytest.mark.parametrize("with_weight", [False, True])
def test_rms_norm(shape, with_weight):
    x = normal(*shape)
    w = normal(shape[-1]) if with_weight else None
    got = mx.fast.rms_norm(mx.array(x), None if w is None else mx.array(w), 1e-5)
    np.testing.assert_allclose(np.array(got), np_rms_norm(x, w, 1e-5), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("affine", [(False, False), (True, False), (False, True), (True, True)])
def test_layer_norm(affine):
    x = normal(4, 3, 10)
    w = normal(10) if affine[0] else None
    b = normal(10) if affine[1] else None
    got = mx.fast.layer_norm(mx.array(x), None if w is None else mx.array(w),
                             None if b is None else mx.array(b), 1e-5)
    np.testing.assert_allclose(np.array(got), np_layer_norm(x, w, b, 1e-5), rtol=1e-4, atol=1e-5)


def test_norm_dtypes_follow_mlx():
    x16 = mx.array(normal(2, 8)).astype(mx.float16)
    assert mx.fast.rms_norm(x16, mx.ones(8), 1e-5).dtype == mx.float32
    assert mx.fast.rms_norm(x16, None, 1e-5).dtype == mx.float16
    assert mx.fast.layer_norm(mx.array(normal(2, 8)).astype(mx.bfloat16), None, None, 1e-5).dtype == mx.bfloat16
    y = mx.fast.rms_norm(x16, mx.ones(8, dtype=mx.float16), 1e-5)
    np.testing.assert_allclose(np.array(y.astype(mx.float32)),
                               np_rms_norm(np.array(x16.astype(mx.float32)), None, 1e-5), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize("dims", [8, 4])
def test_rope(traditional, dims):
    x = normal(2, 3, 5, 8)
    got = mx.fast.rope(mx.array(x), dims, traditional=traditional, base=10000.0, scale=0.5, offset=3)
    np.testing.assert_allclose(np.array(got), np_rope(x, dims, traditional, 10000.0, 0.5, 3),
                               rtol=1e-5, atol=1e-5)


def test_rope_freqs_and_array_offsets():
    x = normal(2, 3, 5, 8)
    f = np.array([1.0, 2.0, 5.0, 9.0], np.float32)
    got = mx.fast.rope(mx.array(x), 8, traditional=False, base=None, scale=1.0, offset=0, freqs=mx.array(f))
    np.testing.assert_allclose(np.array(got), np_rope(x, 8, False, None, 1.0, 0, f), rtol=1e-5, atol=1e-5)
    offsets = np.array([1, 4])
    got = mx.fast.rope(mx.array(x), 8, traditional=True, base=500.0, scale=1.0, offset=mx.array(offsets))
    np.testing.assert_allclose(np.array(got), np_rope(x, 8, True, 500.0, 1.0, offsets), rtol=1e-5, atol=1e-5)
    got = mx.fast.rope(mx.array(x), 8, traditional=False, base=500.0, scale=1.0, offset=mx.array(2))
    np.testing.assert_allclose(np.array(got), np_rope(x, 8, False, 500.0, 1.0, 2), rtol=1e-5, atol=1e-5)
    half = mx.fast.rope(mx.array(x).astype(mx.float16), 8, traditional=False, base=1e4, scale=1.0, offset=0)
    assert half.dtype == mx.float16


@pytest.mark.parametrize("heads", [(4, 4), (4, 2), (4, 1)])
@pytest.mark.parametrize("mask", [None, "causal", "bool", "additive"])
def test_attention(heads, mask):
    n_q, n_kv = heads
    q, k, v = normal(2, n_q, 3, 8), normal(2, n_kv, 5, 8), normal(2, n_kv, 5, 8)
    m = None
    if mask == "causal":
        m = "causal"
    elif mask == "bool":
        m = rng.random((3, 5)) > 0.3
        m[:, 0] = True
    elif mask == "additive":
        m = normal(2, 1, 3, 5)
    scale = 8 ** -0.5
    lz_mask = m if m is None or isinstance(m, str) else mx.array(m)
    got = mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v), scale=scale, mask=lz_mask)
    np.testing.assert_allclose(np.array(got), np_attention(q, k, v, scale, m), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype, tol", [("float32", 1e-5), ("float16", 4e-3), ("bfloat16", 3e-2)])
@pytest.mark.parametrize("queries, keys", [(1, 7), (4, 33), (8, 600), (9, 20)])
@pytest.mark.parametrize("mask", [None, "causal"])
def test_attention_over_a_cache_slice(dtype, tol, queries, keys, mask):
    # A decode step's shapes: a few queries per head, grouped heads, keys and values read
    # from the front of a longer cache (a strided view), in each float dtype.
    q = normal(1, 8, queries, 16)
    cache_k, cache_v = normal(1, 2, keys + 5, 16), normal(1, 2, keys + 5, 16)
    lz = [mx.array(t).astype(getattr(mx, dtype)) for t in (q, cache_k, cache_v)]
    lz_q, lz_k, lz_v = lz[0], lz[1][:, :, :keys], lz[2][:, :, :keys]
    got = mx.fast.scaled_dot_product_attention(lz_q, lz_k, lz_v, scale=0.25, mask=mask)
    assert got.dtype == getattr(mx, dtype) and got.shape == (1, 8, queries, 16)
    # The oracle sees the inputs as rounded to the dtype.
    exact = [np.array(t.astype(mx.float32)).astype(np.float64) for t in (lz_q, lz_k, lz_v)]
    want = np_attention(*exact, 0.25, mask)
    np.testing.assert_allclose(np.array(got.astype(mx.float32)), want, rtol=tol, atol=tol)


def test_attention_sinks_and_dtype():
    q, k, v = normal(1, 4, 3, 8), normal(1, 2, 6, 8), normal(1, 2, 6, 8)
    sinks = normal(4)
    got = mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v), scale=0.3,
                                               sinks=mx.array(sinks))
    np.testing.assert_allclose(np.array(got), np_attention(q, k, v, 0.3, None, sinks), rtol=1e-5, atol=1e-5)
    half = [mx.array(t).astype(mx.float16) for t in (q, k, v)]
    assert mx.fast.scaled_dot_product_attention(*half, scale=0.3).dtype == mx.float16


def test_attention_rows_that_see_no_key_average_the_values():
    # MLX 0.32.4 gives such a row (a left-padded prompt position) the mean of the values
    # under a boolean or causal mask, so it carries no NaN into later layers; an additive
    # -inf mask gives NaN in both.
    q, k, v = normal(2, 2, 3, 4), normal(2, 2, 5, 4), normal(2, 2, 5, 4)
    mask = np.ones((2, 1, 3, 5), bool)
    mask[0, :, 0, :] = False
    got = np.array(mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v), scale=0.5,
                                                        mask=mx.array(mask)))
    np.testing.assert_allclose(got[0, :, 0], np.broadcast_to(v[0].mean(axis=1), (2, 4)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[:, :, 1:], np_attention(q, k, v, 0.5, None)[:, :, 1:], rtol=1e-5, atol=1e-5)
    # More queries than keys: the first causal rows see nothing.
    got = np.array(mx.fast.scaled_dot_product_attention(mx.array(normal(1, 1, 4, 4)), mx.array(k[:1, :1, :2]),
                                                        mx.array(v[:1, :1, :2]), scale=0.5, mask="causal"))
    np.testing.assert_allclose(got[0, 0, :2], np.broadcast_to(v[0, 0, :2].mean(axis=0), (2, 4)), rtol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: mx.fast.rms_norm(mx.ones((2, 8)), mx.ones(7), 1e-5),
     "[rms_norm] (*weight) must have the same size as the last dimension of x but has 7 elements."),
    (lambda: mx.fast.rms_norm(mx.ones((2, 8)), mx.ones((8, 1)), 1e-5),
     "[rms_norm] (*weight) must have 1 dimension but has 2 dimensions."),
    (lambda: mx.fast.rope(mx.ones((5, 8)), 8, traditional=False, base=1e4, scale=1.0, offset=0),
     "[rope] Input must have at least 3 dimensions but got input with 2 dimensions."),
    (lambda: mx.fast.rope(mx.ones((1, 5, 8)), 7, traditional=False, base=1e4, scale=1.0, offset=0),
     "[rope] dims must be even but got 7."),
    (lambda: mx.fast.rope(mx.ones((1, 5, 8)), 8, traditional=False, base=None, scale=1.0, offset=0),
     "[rope] Neither base nor freqs has a value."),
    (lambda: mx.fast.scaled_dot_product_attention(mx.ones((2, 4, 3, 8)), mx.ones((2, 1, 5, 4)),
                                                  mx.ones((2, 1, 5, 4)), scale=1.0),
     "[scaled_dot_product_attention] query, keys expected to have matching last dimension; "
     "found query shape (2,4,3,8) for keys shape (2,1,5,4)."),
    (lambda: mx.fast.scaled_dot_product_attention(mx.ones((2, 3, 3, 8)), mx.ones((2, 2, 5, 8)),
                                                  mx.ones((2, 2, 5, 8)), scale=1.0),
     "[scaled_dot_product_attention] n_heads must be a multiple of n_kv_heads, found n_heads 3 "
     "for n_kv_heads 2."),
    (lambda: mx.fast.scaled_dot_product_attention(mx.ones((2, 4, 3, 8)), mx.ones((2, 4, 5, 8)),
                                                  mx.ones((2, 4, 5, 8)), scale=1.0, mask="foo"),
     "[scaled_dot_product_attention] invalid mask option 'foo'. Must be 'causal', or an array."),
    (lambda: mx.fast.scaled_dot_product_attention(mx.ones((4, 3, 8)), mx.ones((4, 5, 8)),
                                                  mx.ones((4, 5, 8)), scale=1.0),
     "[scaled_dot_product_attention] input with shape (4,3,8) expected to be rank 4"),
])
def test_errors_match_mlx(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == message


def finite_difference_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_gradients_match_finite_differences():
    x = rng.normal(size=(2, 4))
    w = rng.normal(size=4)
    q, k, v = rng.normal(size=(1, 2, 3, 4)), rng.normal(size=(1, 1, 3, 4)), rng.normal(size=(1, 1, 3, 4))

    def lz_norms(t):
        return mx.sum(mx.fast.rms_norm(t, mx.array(w), 1e-5) * mx.fast.layer_norm(t, None, mx.array(w), 1e-5) ** 2)

    def np_norms(t):
        return np.sum(np_rms_norm(t, w, 1e-5) * np_layer_norm(t, None, w, 1e-5) ** 2)

    got = mx.grad(lz_norms)(mx.array(x, dtype=mx.float64))
    np.testing.assert_allclose(np.array(got), finite_difference_grad(np_norms, x), rtol=1e-5, atol=1e-7)

    def lz_attention(t):
        out = mx.fast.scaled_dot_product_attention(t, mx.array(k), mx.array(v), scale=0.5, mask="causal")
        rotated = mx.fast.rope(out, 4, traditional=True, base=100.0, scale=1.0, offset=1)
        return mx.sum(rotated * rotated)

    def np_attention_loss(t):
        rotated = np_rope(np_attention(t, k, v, 0.5, "causal"), 4, True, 100.0, 1.0, 1)
        return np.sum(rotated * rotated)

    got = mx.grad(lz_attention)(mx.array(q, dtype=mx.float64))
    np.testing.assert_allclose(np.array(got), finite_difference_grad(np_attention_loss, q), rtol=1e-5, atol=1e-7)


def test_vmap_matches_a_loop():
    xs = normal(3, 2, 4, 6)
    w = normal(6)
    got = mx.vmap(lambda t: mx.fast.rms_norm(t, mx.array(w), 1e-5))(mx.array(xs))
    expected = np.stack([np_rms_norm(x, w, 1e-5) for x in xs])
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-5, atol=1e-6)
    got = mx.vmap(lambda t: mx.fast.rope(t, 6, traditional=False, base=1e4, scale=1.0, offset=2))(mx.array(xs))
    expected = np.stack([np_rope(x, 6, False, 1e4, 1.0, 2) for x in xs])
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-5, atol=1e-5)
