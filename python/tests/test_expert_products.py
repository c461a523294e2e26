"""Products of matrices picked by index (`gather_mm`), as mixture-of-experts layers use
them: values against a NumPy loop, gradients against float64 finite differences, vmap
against a Python loop, and MLX's errors (expected types checked against MLX 0.32.4)."""

import numpy as np
import pytest

import lazulite.core as mx

RNG = np.random.default_rng(7)


def picked_products(a, b, lhs, rhs):
    """The oracle: NumPy matmul of the indexed matrices, one output position at a time."""
    a3 = a.reshape(-1, *a.shape[-2:])
    b3 = b.reshape(-1, *b.shape[-2:])
    lhs, rhs = np.broadcast_arrays(lhs, rhs)
    out = [a3[i] @ b3[j] for i, j in zip(lhs.ravel(), rhs.ravel())]
    return np.stack(out).reshape(*lhs.shape, a.shape[-2], b.shape[-1])


@pytest.mark.parametrize(
    "a_shape, b_shape, lhs, rhs",
    [
        ((3, 2, 4), (5, 4, 6), [0, 2], [4, 1]),
        ((2, 3, 1, 4), (4, 4, 6), [[5, 0], [1, 1]], [[3], [0]]),
        ((6, 1, 8), (3, 8, 5), None, [2, 0, 1, 1, 2, 0]),
        ((4, 2, 3), (3, 2), [3, 3, 0], None),
    ],
)
def test_values_match_a_numpy_loop(a_shape, b_shape, lhs, rhs):
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    got = mx.gather_mm(mx.array(a), mx.array(b), None if lhs is None else mx.array(lhs),
                       None if rhs is None else mx.array(rhs), sorted_indices=False)
    count = lambda x: int(np.prod(x.shape[:-2]))
    lhs_n = np.arange(count(a)).reshape(a.shape[:-2]) if lhs is None else np.array(lhs)
    rhs_n = np.arange(count(b)).reshape(b.shape[:-2]) if rhs is None else np.array(rhs)
    want = picked_products(a, b, lhs_n, rhs_n)
    assert got.shape == want.shape and got.dtype == mx.float32
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-5)


def test_half_precision_and_vectors():
    a = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    b = RNG.standard_normal((5, 4, 6)).astype(np.float32)
    rhs = mx.array([4, 0, 4])
    for dtype in (mx.float16, mx.bfloat16):
        got = mx.gather_mm(mx.array(a).astype(dtype), mx.array(b).astype(dtype), None, rhs)
        assert got.dtype == dtype
        want = picked_products(a, b, np.arange(3), np.array([4, 0, 4]))
        np.testing.assert_allclose(np.array(got.astype(mx.float32)), want, rtol=0.05, atol=0.1)
    # A 1-D left operand is a row vector whose dimension is removed, as in matmul.
    v = RNG.standard_normal(4).astype(np.float32)
    got = mx.gather_mm(mx.array(v), mx.array(b), None, mx.array([1, 3]))
    np.testing.assert_allclose(np.array(got), np.stack([v @ b[1], v @ b[3]]), rtol=1e-5, atol=1e-5)
    # Without indices it is matmul.
    np.testing.assert_allclose(np.array(mx.gather_mm(mx.array(a), mx.array(b[:3]))), a @ b[:3], rtol=1e-5)


def test_gradients_match_finite_differences():
    a = RNG.standard_normal((3, 2, 4))
    b = RNG.standard_normal((4, 4, 3))
    lhs, rhs = np.array([0, 2, 2, 1]), np.array([3, 0, 3, 3])
    w = RNG.standard_normal((4, 2, 3))

    def loss(a, b):
        return (mx.gather_mm(a, b, mx.array(lhs), mx.array(rhs)) * mx.array(w)).sum()

    ga, gb = mx.grad(loss, argnums=(0, 1))(mx.array(a, mx.float64), mx.array(b, mx.float64))

    def numeric(x, f):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[k] = 1e-6
            g[k] = (f(x + e) - f(x - e)) / 2e-6
        return g

    oracle = lambda a, b: float((picked_products(a, b, lhs, rhs) * w).sum())
    np.testing.assert_allclose(np.array(ga), numeric(a, lambda x: oracle(x, b)), atol=1e-6)
    np.testing.assert_allclose(np.array(gb), numeric(b, lambda x: oracle(a, x)), atol=1e-6)


def test_vmap_matches_a_loop():
    a = RNG.standard_normal((5, 3, 2, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 4, 3)).astype(np.float32)
    rhs = RNG.integers(0, 4, size=(5, 3))
    got = mx.vmap(lambda a, r: mx.gather_mm(a, mx.array(b), None, r))(mx.array(a), mx.array(rhs))
    want = np.stack([picked_products(a[k], b, np.arange(3), rhs[k]) for k in range(5)])
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-5)


def test_errors_as_mlx():
    a, b = mx.ones((3, 2, 4)), mx.ones((5, 4, 6))
    # Real MLX: ValueError for each of these.
    with pytest.raises(ValueError, match=r"^\[gather_mm\] Got indices with invalid dtype. Indices must be integral.$"):
        mx.gather_mm(a, b, mx.array([0.0]), None)
    with pytest.raises(ValueError, match="Last dimension of first input"):
        mx.gather_mm(a, a, mx.array([0]), None)
    with pytest.raises(ValueError, match="Got 0 dimension input"):
        mx.gather_mm(mx.array(1.0), b, mx.array([0]), None)
    with pytest.raises(ValueError, match="real floating point"):
        mx.gather_mm(mx.ones((3, 2, 4), mx.int32), mx.ones((5, 4, 6), mx.int32), mx.array([0]), None)
    with pytest.raises(ValueError):
        mx.gather_mm(a, b, mx.array([0, 1, 2]), mx.array([0, 1]))
    # MLX reads outside the stack; lazulite raises when the product is evaluated.
    with pytest.raises(IndexError, match="out of bounds"):
        mx.eval(mx.gather_mm(a, b, mx.array([0]), mx.array([5])))


@pytest.mark.parametrize("transpose, bits, group_size", [(True, 4, 64), (False, 8, 32), (True, 2, 128)])
def test_quantized_products_match_a_numpy_loop(transpose, bits, group_size):
    experts, n, k = 3, 64, 128
    shape = (experts, n, k) if transpose else (experts, k, n)
    w, scales, biases = mx.quantize(mx.array(RNG.standard_normal(shape).astype(np.float32)), group_size, bits)
    dense = np.array(mx.dequantize(w, scales, biases, group_size, bits))
    x = RNG.standard_normal((5, 2, k)).astype(np.float32)
    rhs = np.array([2, 0, 0, 1, 2])
    got = mx.gather_qmm(mx.array(x), w, scales, biases, rhs_indices=mx.array(rhs), transpose=transpose,
                        group_size=group_size, bits=bits, sorted_indices=True)
    matrices = dense.swapaxes(-1, -2) if transpose else dense
    want = picked_products(x.astype(np.float64), matrices.astype(np.float64), np.arange(5), rhs)
    assert got.shape == (5, 2, n)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-4, atol=1e-4)
    # Gradients reach x; a quantized weight has none.
    g = mx.grad(lambda x: mx.gather_qmm(x, w, scales, biases, rhs_indices=mx.array(rhs), transpose=transpose,
                                        group_size=group_size, bits=bits).sum())(mx.array(x))
    want_g = np.stack([matrices[r].sum(axis=-1) for r in rhs])[:, None, :].repeat(2, axis=1)
    np.testing.assert_allclose(np.array(g), want_g, rtol=1e-4, atol=1e-4)
    # Affine scales and biases given for a floating-point mode: MLX's message.
    with pytest.raises(ValueError, match=r"\[gather_qmm\] Scale type must be uint8 but received type float32"):
        mx.gather_qmm(mx.array(x), w, scales, biases, rhs_indices=mx.array(rhs), mode="mxfp4")


def test_mlx_lm_quantized_experts_equal_their_dequantized_weights():
    # mlx-lm's mixture-of-experts MLP, quantized by nn.quantize (gather_qmm), against the
    # same layer holding the dequantized weights (gather_mm).
    import mlx.nn as nn
    from mlx_lm.models.switch_layers import SwitchGLU

    mx.random.seed(3)
    quantized = SwitchGLU(64, 32, num_experts=4)
    dense = SwitchGLU(64, 32, num_experts=4)
    nn.quantize(quantized, group_size=32, bits=8)
    for name in ("gate_proj", "up_proj", "down_proj"):
        q = getattr(quantized, name)
        getattr(dense, name).weight = mx.dequantize(q.weight, q.scales, q.biases, 32, 8)
    x = mx.random.normal((2, 3, 64))
    indices = mx.array(RNG.integers(0, 4, size=(2, 3, 2)))
    got, want = quantized(x, indices), dense(x, indices)
    assert got.shape == (2, 3, 2, 64)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-4, atol=1e-5)
