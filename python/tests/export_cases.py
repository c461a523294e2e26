"""Functions exported to MLX's function files by both MLX and lazulite, for the export
fixtures (tools/mlx_reference/export_functions.py) and python/tests/test_export.py.

Each case is written once against a module `mx` (`mlx.core` or `lazulite.core`) and
`np`; `cases(mx)` returns, per case, the function, the example inputs it is exported
at (one or more signatures) and the different inputs it is then run on.
"""

import numpy as np

# Cases exported with `shapeless=True`: they are run on inputs of other sizes than their
# examples.
SHAPELESS = {"shapeless_mlp", "shapeless_attention", "shapeless_grad_mlp", "shapeless_vmap_grad"}

# Cases MLX cannot export (it has no file form for a `custom_function`): only lazulite
# exports them, and real MLX runs lazulite's file.
LAZULITE_ONLY = {"custom_vjp"}


def _rng(seed):
    return np.random.default_rng(seed)


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def cases(mx):
    """name -> (fun, [(example_args, example_kwargs)], [(run_args, run_kwargs)])."""
    a = lambda x: mx.array(x)  # noqa: E731
    out = {}

    # A two-layer perceptron with captured weights.
    r = _rng(1)
    w1, b1 = a(_f32(r, 16, 8) * 0.3), a(_f32(r, 16))
    w2, b2 = a(_f32(r, 4, 16) * 0.3), a(_f32(r, 4))

    def mlp(x):
        h = mx.maximum(x @ w1.T + b1, 0.0)
        h = mx.addmm(b2, h, w2.T, alpha=1.0, beta=1.0)
        return mx.softmax(h, axis=-1)

    out["mlp"] = (mlp, [((a(_f32(r, 3, 8)),), {})], [((a(_f32(r, 3, 8)),), {})])

    # Smooth activations. lazulite has softplus as one op, which its export writes as
    # the LogAddExp MLX's nn.softplus records.
    softplus = getattr(mx, "softplus", lambda x: mx.logaddexp(x, 0))

    def activations(x):
        return softplus(x) * mx.sigmoid(x) - softplus(-x)

    r = _rng(14)
    out["activations"] = (activations, [((a(_f32(r, 2, 5) * 30),), {})], [((a(_f32(r, 2, 5) * 30),), {})])

    # A transformer block: RMS norm, attention with rotary embeddings and a causal mask
    # (mx.fast), layer norm and a GELU feed-forward.
    r = _rng(2)
    d, heads = 16, 2
    wq, wk, wv, wo = (a(_f32(r, d, d) * 0.25) for _ in range(4))
    g1, g2, beta2 = a(1 + 0.1 * _f32(r, d)), a(1 + 0.1 * _f32(r, d)), a(0.1 * _f32(r, d))
    f1, f2 = a(_f32(r, 2 * d, d) * 0.25), a(_f32(r, d, 2 * d) * 0.25)

    def block(x):
        b, t, _ = x.shape
        h = mx.fast.rms_norm(x, g1, 1e-5)

        def split(y):
            return y.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)

        q, k, v = split(h @ wq.T), split(h @ wk.T), split(h @ wv.T)
        q = mx.fast.rope(q, d // heads, traditional=False, base=10000.0, scale=1.0, offset=0)
        k = mx.fast.rope(k, d // heads, traditional=False, base=10000.0, scale=1.0, offset=0)
        o = mx.fast.scaled_dot_product_attention(q, k, v, scale=(d // heads) ** -0.5, mask="causal")
        x = x + o.transpose(0, 2, 1, 3).reshape(b, t, d) @ wo.T
        h = mx.fast.layer_norm(x, g2, beta2, 1e-5)
        u = h @ f1.T
        u = u * 0.5 * (1 + mx.erf(u / np.sqrt(2.0).astype(np.float32)))
        return x + u @ f2.T

    out["transformer_block"] = (
        block,
        [((a(_f32(r, 1, 5, d)),), {})],
        [((a(_f32(r, 1, 5, d)),), {})],
    )

    # Keyword inputs (appended after the positional ones in key order), constants used
    # twice, and a mix of shape, indexing, reduction and comparison ops.
    r = _rng(3)
    table = a(np.arange(12, dtype=np.float32).reshape(3, 4))
    idx = a(np.array([2, 0], dtype=np.int32))

    def mixed(x, *, shift, scale):
        y = (x - shift) * scale + table
        z = mx.concatenate([y[::-1, 1:4:2], mx.take(y, idx, axis=1)], axis=1)
        z = mx.where(z > 2.0, z, -z) + mx.cumsum(z, axis=0)
        s = mx.logsumexp(z, axis=0, keepdims=True) + mx.sum(z, axis=(0, 1))
        m = mx.argmax(z, axis=1).astype(mx.float32)
        u = y.at[idx].add(1.0)[:, :2]
        v = mx.sort(mx.expand_dims(m, 1) * 0.5 + mx.squeeze(s), axis=-1)
        return z, v, mx.max(u, axis=0) + mx.sqrt(mx.abs(table[:2, 0])).sum()

    ex = (a(_f32(r, 3, 4)),), {"shift": a(_f32(r, 4)), "scale": a(np.float32(2.0))}
    run = (a(_f32(r, 3, 4)),), {"shift": a(_f32(r, 4)), "scale": a(np.float32(-1.5))}
    out["kwargs_and_constants"] = (mixed, [ex], [run])

    # Integer and boolean ops: bitwise, shifts, comparisons, logical, floor division.
    r = _rng(4)

    def ints(i, j):
        k = (i & j) | (i ^ 3)
        k = (k << 1) >> 1
        both = mx.logical_and(i > 2, mx.logical_not(j == 5))
        return mx.where(both, k // 2, i % 3), mx.sum(both, axis=0), mx.minimum(i, j)

    ri = lambda: a(r.integers(0, 9, (2, 5)).astype(np.int32))  # noqa: E731
    out["integers"] = (ints, [((ri(), ri()), {})], [((ri(), ri()), {})])

    # A 4-bit quantized linear layer.
    r = _rng(5)
    wq4, sc, bi = mx.quantize(a(_f32(r, 8, 64)), group_size=32, bits=4)

    def qlinear(x):
        return mx.quantized_matmul(x, wq4, sc, bi, transpose=True, group_size=32, bits=4)

    out["quantized_linear"] = (qlinear, [((a(_f32(r, 2, 64)),), {})], [((a(_f32(r, 2, 64)),), {})])

    # A small convolution.
    r = _rng(6)
    kern = a(_f32(r, 3, 3, 3, 2) * 0.5)

    def conv(x):
        return mx.tanh(mx.conv2d(x, kern, stride=1, padding=1))

    out["conv2d"] = (conv, [((a(_f32(r, 1, 5, 5, 2)),), {})], [((a(_f32(r, 1, 5, 5, 2)),), {})])

    # One function exported at several signatures into one file.
    r = _rng(7)

    def poly(*xs):
        total = xs[0]
        for x in xs[1:]:
            total = total * x + 1
        return (total,)

    out["signatures"] = (
        poly,
        [((a(_f32(r, 2)),), {}), ((a(_f32(r, 2)), a(_f32(r, 2))), {}), ((a(_f32(r, 3, 2)),), {})],
        [((a(_f32(r, 2)), a(_f32(r, 2))), {}), ((a(_f32(r, 3, 2)),), {})],
    )

    # Shapeless: a perceptron run on batches of other sizes.
    r = _rng(8)
    v1, c1 = a(_f32(r, 8, 16) * 0.3), a(_f32(r, 16))
    v2 = a(_f32(r, 16, 3) * 0.3)

    def shapeless_mlp(x):
        h = mx.maximum(x @ v1 + c1, 0.0)
        h = h - mx.mean(h, axis=-1, keepdims=True)
        return mx.softmax(h @ v2, axis=-1), mx.sum(h, axis=0)

    out["shapeless_mlp"] = (
        shapeless_mlp,
        [((a(_f32(r, 3, 8)),), {})],
        [((a(_f32(r, 5, 8)),), {}), ((a(_f32(r, 2, 8)),), {})],
    )

    # Shapeless: an attention block run on sequences of other lengths (the sequence axis
    # is inferred by its reshapes, the batch size is fixed).
    r = _rng(9)
    dim, nh = 8, 2
    u_q, u_k, u_v = (a(_f32(r, dim, dim) * 0.3) for _ in range(3))

    def shapeless_attention(x, bias):
        def split(y):
            return y.reshape(2, -1, nh, dim // nh).transpose(0, 2, 1, 3)

        q, k, v = split(x @ u_q), split(x @ u_k), split(x @ u_v)
        s = (q @ k.swapaxes(-1, -2)) * (dim // nh) ** -0.5
        o = (mx.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(2, -1, dim)
        y = o + x + bias
        mu = mx.mean(y, axis=-1, keepdims=True)
        return (y - mu) * mx.rsqrt(mx.var(y, axis=-1, keepdims=True) + 1e-5)

    out["shapeless_attention"] = (
        shapeless_attention,
        [((a(_f32(r, 2, 4, dim)), a(_f32(r, dim))), {})],
        [((a(_f32(r, 2, 7, dim)), a(_f32(r, dim))), {}), ((a(_f32(r, 2, 1, dim)), a(_f32(r, dim))), {})],
    )
    # Constant padding and a strided view of the input.
    r = _rng(10)

    def pad_and_stride(x, fill):
        y = mx.pad(x, [(1, 2), (0, 1)], constant_values=fill)
        z = mx.as_strided(x, (3, 3), (5, 1), 1)
        return y * 2, z + 1

    out["pad_and_stride"] = (
        pad_and_stride,
        [((a(_f32(r, 4, 5)), a(np.float32(0.5))), {})],
        [((a(_f32(r, 4, 5)), a(np.float32(-2.0))), {})],
    )

    # Writes along an axis and windows at start positions given as arrays.
    r = _rng(11)
    slots = a(np.array([[2, 0], [1, 3], [0, 0]], dtype=np.int32))

    def windows(x, start, update):
        placed = mx.put_along_axis(x, slots, update, axis=1)
        window = mx.slice(x, start, (0, 1), (2, 2))
        written = mx.slice_update(x, update[:2] * 10, start, (0, 1))
        return placed, window, written

    ri2 = lambda lo, hi: a(r.integers(lo, hi, (2,)).astype(np.int32))  # noqa: E731
    out["windows"] = (
        windows,
        [((a(_f32(r, 3, 4)), ri2(0, 2), a(_f32(r, 3, 2))), {})],
        [((a(_f32(r, 3, 4)), ri2(0, 2), a(_f32(r, 3, 2))), {})],
    )

    # Fourier transforms: complex, real, inverse, several axes; complex magnitudes.
    r = _rng(12)

    def spectra(x):
        c = mx.fft.fft(x.astype(mx.complex64))
        h = mx.fft.rfft(x, axis=0)
        back = mx.fft.irfft(h, n=x.shape[0], axis=0)
        two = mx.fft.ifft2(c)
        return mx.real(c), mx.imag(h), back, mx.real(two), mx.fft.rfft(x, norm="ortho"), mx.abs(h)

    out["spectra"] = (spectra, [((a(_f32(r, 6, 8)),), {})], [((a(_f32(r, 6, 8)),), {})])

    # Linear algebra (MLX runs it on the CPU): sign-free results of each factorization.
    r = _rng(13)

    def spd(m):
        return m @ m.T + 4 * mx.eye(m.shape[0])

    def factorizations(m):
        s = spd(m)
        q, rr = mx.linalg.qr(m, stream=mx.cpu)
        return (
            mx.linalg.inv(s, stream=mx.cpu),
            mx.linalg.cholesky(s, stream=mx.cpu),
            mx.linalg.cholesky(s, upper=True, stream=mx.cpu),
            mx.linalg.tri_inv(mx.tril(s), stream=mx.cpu),
            mx.linalg.svd(m, compute_uv=False, stream=mx.cpu),
            mx.linalg.eigvalsh(s, stream=mx.cpu),
            mx.abs(q),
            mx.abs(rr),
        )

    out["factorizations"] = (
        factorizations,
        [((a(_f32(r, 4, 4)),), {})],
        [((a(_f32(r, 4, 4)),), {})],
    )

    # Sorted search, the Walsh-Hadamard transform, quotient and remainder together.
    r = _rng(14)
    edges = a(np.array([-1.0, -0.25, 0.0, 0.5, 2.0], dtype=np.float32))

    def searches(x, d):
        q, m = mx.divmod(x, d)
        return (
            mx.searchsorted(edges, x),
            mx.searchsorted(edges, x, side="right"),
            mx.hadamard_transform(x, scale=0.5),
            q,
            m,
        )

    out["searches"] = (
        searches,
        [((a(_f32(r, 3, 8)), a(np.float32(0.75))), {})],
        [((a(_f32(r, 3, 8)), a(np.float32(-1.25))), {})],
    )

    # Mixture-of-experts products (dense and 4-bit), a block-masked product, an
    # assignment through a boolean mask and an explicit dependency.
    r = _rng(15)
    experts = a(_f32(r, 3, 8, 16) * 0.3)
    packed, scales, biases = mx.quantize(a(_f32(r, 3, 16, 64) * 0.3), group_size=32, bits=4)
    lhs_mask = a(np.array([[True, False]]))
    rhs_mask = a(np.array([[True], [True]]))
    picks = a(np.array([True, False, True, True, False, False, True, False, True, False]))

    def moe(x, wide, route, m1, m2, target, v):
        dense = mx.gather_mm(x, experts, None, route)
        quantized = mx.gather_qmm(wide, packed, scales, biases, None, route, transpose=True,
                                  group_size=32, bits=4)
        masked = mx.block_masked_mm(m1, m2, 32, None, lhs_mask, rhs_mask)
        z = target + 0
        z[picks] = v
        [waited] = mx.depends([dense * 2], [quantized])
        return dense, quantized, masked, z, waited

    def moe_inputs(r):
        route = a(r.integers(0, 3, size=4).astype(np.uint32))
        return ((a(_f32(r, 4, 1, 8)), a(_f32(r, 4, 1, 64)), route, a(_f32(r, 32, 64)),
                 a(_f32(r, 64, 32)), a(_f32(r, 10)), a(_f32(r, 5))), {})

    out["experts"] = (moe, [moe_inputs(r)], [moe_inputs(r)])

    # Updates of windows picked by an index array and a slice (MLX records a scatter whose
    # slices span part of the sliced axis), negative indices included.
    r = _rng(16)
    rows = a(np.array([2, -1, 0], dtype=np.int32))

    def window_updates(x, v, w):
        y = x + 0
        y[rows[:2], 1:3] = w
        return x.at[rows, 1:4].add(v), x.at[rows[1:], :2].maximum(v[:2, :2]), y

    out["window_updates"] = (
        window_updates,
        [((a(_f32(r, 4, 5)), a(_f32(r, 3, 3)), a(_f32(r, 2, 2))), {})],
        [((a(_f32(r, 4, 5)), a(_f32(r, 3, 3)), a(_f32(r, 2, 2))), {})],
    )
    # The loss of a small perceptron and its gradients with respect to the weights
    # (value_and_grad over a list of parameters): the backward pass is written as ordinary
    # primitives, the labels' gather as a scatter.
    r = _rng(17)

    def mlp_loss(params, x, labels):
        w1, b1, w2, b2 = params
        h = mx.maximum(x @ w1 + b1, 0.0)
        logits = h @ w2 + b2
        picked = mx.take_along_axis(logits, labels[:, None], axis=-1).squeeze(-1)
        return mx.mean(mx.logsumexp(logits, axis=-1) - picked)

    def grad_mlp(w1, b1, w2, b2, x, labels):
        loss, grads = mx.value_and_grad(mlp_loss)([w1, b1, w2, b2], x, labels)
        return (loss, *grads)

    def mlp_inputs(r):
        labels = a(r.integers(0, 3, size=5).astype(np.int32))
        return ((a(_f32(r, 4, 6) * 0.5), a(_f32(r, 6) * 0.1), a(_f32(r, 6, 3) * 0.5),
                 a(_f32(r, 3) * 0.1), a(_f32(r, 5, 4)), labels), {})

    out["grad_mlp"] = (grad_mlp, [mlp_inputs(r)], [mlp_inputs(r)])

    # Shapeless: the same loss and gradients, exported at one batch size and run at others
    # (the backward pass broadcasts against its inputs, the mean scales by their count).
    r = _rng(20)
    weights = (a(_f32(r, 4, 6) * 0.5), a(_f32(r, 6) * 0.1), a(_f32(r, 6, 3) * 0.5), a(_f32(r, 3) * 0.1))

    def batch_inputs(r, n):
        labels = a(r.integers(0, 3, size=n).astype(np.int32))
        return ((*weights, a(_f32(r, n, 4)), labels), {})

    out["shapeless_grad_mlp"] = (
        grad_mlp,
        [batch_inputs(r, 5)],
        [batch_inputs(r, 3), batch_inputs(r, 9), batch_inputs(r, 5)],
    )

    # Per-example gradients: vmap of grad, with a term whose gradient is stopped.
    r = _rng(18)

    def example_loss(w, x, y):
        fit = mx.square(mx.tanh(x @ w) - y).sum()
        return fit + 0.1 * (mx.stop_gradient(w) * w).sum()

    def vmap_grad(w, xs, ys):
        return mx.vmap(mx.grad(example_loss), in_axes=(None, 0, 0))(w, xs, ys)

    def per_example_inputs(r):
        return ((a(_f32(r, 3, 2)), a(_f32(r, 4, 3)), a(_f32(r, 4, 2))), {})

    out["vmap_grad"] = (vmap_grad, [per_example_inputs(r)], [per_example_inputs(r)])

    # Shapeless: the per-example gradients, run on batches of other sizes.
    r = _rng(21)
    w_shared = a(_f32(r, 3, 2))

    def examples(r, n):
        return ((w_shared, a(_f32(r, n, 3)), a(_f32(r, n, 2))), {})

    out["shapeless_vmap_grad"] = (vmap_grad, [examples(r, 4)], [examples(r, 6), examples(r, 2)])

    # Forward and reverse mode together: jvp and vjp of a function of two inputs, and a
    # Hessian-vector product (jvp of grad).
    r = _rng(19)

    def pair(p, q):
        return mx.sin(p) * mx.exp(q), mx.cumsum(p * q)

    def jvp_vjp(p, q, tp, tq, c):
        _, tangents = mx.jvp(pair, [p, q], [tp, tq])
        _, cotangents = mx.vjp(pair, [p, q], [c, c])
        energy = lambda z: (mx.sin(z) * z * z).sum()  # noqa: E731
        _, hvp = mx.jvp(mx.grad(energy), [p], [tp])
        return (*tangents, *cotangents, *hvp)

    def pair_inputs(r):
        return (tuple(a(_f32(r, 5)) for _ in range(5)), {})

    out["jvp_vjp"] = (jvp_vjp, [pair_inputs(r)], [pair_inputs(r)])
    # A custom gradient (mx.custom_function with a vjp rule), differentiated: the file
    # holds the function's computation and the rule's.
    r = _rng(20)

    @mx.custom_function
    def clipped_exp(x):
        return mx.exp(x)

    @clipped_exp.vjp
    def clipped_exp_vjp(primals, cotangent, output):
        return mx.clip(cotangent * output, -1.0, 1.0)

    def custom_vjp(x, y):
        value, g = mx.value_and_grad(lambda z: (clipped_exp(z) * y).sum())(x)
        return value, g, clipped_exp(y)

    out["custom_vjp"] = (
        custom_vjp,
        [((a(_f32(r, 6)), a(_f32(r, 6))), {})],
        [((a(_f32(r, 6)), a(_f32(r, 6))), {})],
    )
    # A compiled function called inside, and differentiated: its fused steps are written
    # as the primitives they run.
    r = _rng(21)
    gelu = mx.compile(lambda x: 0.5 * x * (1 + mx.tanh(0.7978846 * (x + 0.044715 * x * x * x))))

    def compiled(x):
        return gelu(x) * 2, mx.grad(lambda z: gelu(z).sum())(x)

    out["compiled"] = (compiled, [((a(_f32(r, 3, 4)),), {})], [((a(_f32(r, 3, 4)),), {})])
    return out
