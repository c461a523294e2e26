"""Quantization (`mx.quantize`, `mx.dequantize`, `mx.quantized_matmul`) and the quantized
`nn` layers against real MLX's values, stored by tools/fixtures/quantize.py."""

import json
import pathlib

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn

FIXTURE = json.loads(
    (pathlib.Path(__file__).parents[2] / "crates/lazulite/tests/fixtures/quantize.json").read_text()
)


def arr(v):
    data = [float(x) if isinstance(x, str) else x for x in v["data"]]
    dtype = getattr(mx, v["dtype"])
    if v["dtype"] in ("float16", "bfloat16"):
        return mx.array(np.array(data, np.float32).reshape(v["shape"])).astype(dtype)
    return mx.array(np.array(data).reshape(v["shape"]).astype(v["dtype"]))


def values(a):
    return np.array(a.astype(mx.float32) if a.dtype in (mx.float16, mx.bfloat16) else a)


def expected(v):
    return np.array([float(x) if isinstance(x, str) else x for x in v["data"]]).reshape(v["shape"])


@pytest.mark.parametrize("case", FIXTURE["quantize"], ids=lambda c: f"{c['w']['dtype']}-gs{c['group_size']}-b{c['bits']}")
def test_quantize_bit_for_bit(case):
    w = arr(case["w"])
    w_q, scales, biases = mx.quantize(w, group_size=case["group_size"], bits=case["bits"])
    assert w_q.dtype == mx.uint32 and scales.dtype == w.dtype and biases.dtype == w.dtype
    np.testing.assert_array_equal(np.array(w_q), expected(case["w_q"]))
    np.testing.assert_array_equal(values(scales), expected(case["scales"]))
    np.testing.assert_array_equal(values(biases), expected(case["biases"]))
    back = mx.dequantize(w_q, scales, biases, case["group_size"], case["bits"])
    np.testing.assert_array_equal(values(back), expected(case["dequantized"]))


def test_defaults_are_group_64_bits_4():
    w = mx.random.normal((4, 128))
    w_q, scales, biases = mx.quantize(w)
    assert w_q.shape == (4, 16) and scales.shape == (4, 2) and biases.shape == (4, 2)
    x = mx.random.normal((3, 128))
    out = mx.quantized_matmul(x, w_q, scales, biases)
    dense = mx.dequantize(w_q, scales, biases)
    np.testing.assert_allclose(np.array(out), np.array(x @ dense.T), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("i", range(len(FIXTURE["quantized_matmul"])))
def test_quantized_matmul(i):
    case = FIXTURE["quantized_matmul"][i]
    x = arr(case["x"])
    out = mx.quantized_matmul(
        x, arr(case["w_q"]), arr(case["scales"]), arr(case["biases"]),
        transpose=case["transpose"], group_size=case["group_size"], bits=case["bits"],
    )
    assert out.dtype == getattr(mx, case["expected"]["dtype"])
    # The reference multiplies MLX's dequantized matrix, rounded to the half type; the
    # kernel uses unrounded float32 values, a difference accumulated over K = 256.
    rtol, atol = {mx.float32: (1e-5, 1e-4), mx.float16: (1e-2, 0.1)}.get(x.dtype, (3e-2, 0.8))
    np.testing.assert_allclose(values(out), expected(case["expected"]), rtol=rtol, atol=atol)
    np.testing.assert_allclose(values(out), expected(case["mlx"]), rtol=10 * rtol, atol=10 * atol)


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
@pytest.mark.parametrize("rows", [1, 3, 8, 9, 70])
def test_bfloat16_products_match_dequantized(bits, group_size, rows):
    # Decode-sized (up to 8 rows) and prefill-sized products of bfloat16 activations,
    # checked against float64 NumPy on the dequantized matrix; the result is bfloat16, so
    # its rounding bounds the difference.
    rng = np.random.default_rng(bits * 1000 + group_size + rows)
    for k in (256, 768):
        w = mx.array(rng.normal(size=(40, k)).astype(np.float32)).astype(mx.bfloat16)
        w_q, scales, biases = mx.quantize(w, group_size=group_size, bits=bits)
        x = mx.array(rng.normal(size=(rows, k)).astype(np.float32)).astype(mx.bfloat16)
        out = mx.quantized_matmul(x, w_q, scales, biases, group_size=group_size, bits=bits)
        assert out.dtype == mx.bfloat16 and out.shape == (rows, 40)
        assert_matches_dequantized(out, x, w_q, scales, biases, bits, group_size)


def assert_matches_dequantized(out, x, w_q, scales, biases, bits, group_size):
    # Against float64 NumPy on the dequantized matrix; a bfloat16 result's rounding bounds
    # the difference. Products of many rows on matrix tiles (AMX) multiply the weights
    # rounded to bfloat16 (as MLX's GPU kernels for such products do): they match the
    # float64 product of the rounded matrix instead, as closely.
    words = np.array(w_q).astype(np.uint64)
    shifts = np.arange(32 // bits, dtype=np.uint64) * np.uint64(bits)
    levels = ((words[..., None] >> shifts) & np.uint64((1 << bits) - 1)).reshape(w_q.shape[0], -1)
    per_group = lambda a: np.repeat(values(a).astype(np.float32), group_size, axis=1)
    dense = per_group(scales) * levels.astype(np.float32) + per_group(biases)
    rows = values(x).astype(np.float64).reshape(-1, dense.shape[1])

    def close_to(matrix):
        want = (rows @ matrix.T).reshape(out.shape)
        size = (np.abs(rows) @ np.abs(matrix).T).reshape(out.shape)
        return np.all(np.abs(values(out) - want) < 2**-8 * np.abs(want) + 1e-5 * size + 1e-6)

    assert close_to(dense.astype(np.float64)) or close_to(bfloat16_rounded(dense))


def bfloat16_rounded(a):
    # float32 values rounded to the nearest bfloat16 (ties to even), as float64.
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def test_products_queued_together_match_dequantized():
    # A decode step's products of one row, queued by async_eval, run together in one
    # parallel job (sharing the layout of a common x): each must equal the same product
    # evaluated alone, bit for bit, and the float64 product of its dequantized matrix.
    rng = np.random.default_rng(7)
    def bf16(*shape):
        return mx.array(rng.normal(size=shape).astype(np.float32)).astype(mx.bfloat16)
    shapes = [(1024, 1024, 4, 64), (256, 1024, 4, 64), (256, 1024, 8, 32), (100, 1024, 2, 128),
              (24, 512, 4, 64), (512, 512, 8, 128), (40, 1024, 4, 64), (40, 1024, 4, 64)]
    weights = [(mx.quantize(bf16(n, k), group_size=g, bits=b), b, g) for n, k, b, g in shapes]
    x, y, x3 = bf16(1, 1, 1024), bf16(1, 512), bf16(3, 1024)
    def record():
        h, h_short = x * 1, y * 1  # computed before the products, so they are ready together
        inputs = [h, h, h, h, h_short, h_short, x3, h.astype(mx.float32)]
        outs = [mx.quantized_matmul(a, *wq, group_size=g, bits=b) for a, (wq, b, g) in zip(inputs, weights)]
        return inputs, outs
    _, alone = record()
    for out in alone:
        mx.eval(out)
    inputs, together = record()
    mx.eval(inputs)
    mx.async_eval(together)
    mx.eval(together)
    for a, got, want, (wq, b, g) in zip(inputs, together, alone, weights):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(values(got), values(want))
        assert_matches_dequantized(got, a, *wq, b, g)


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_float32_products_at_any_magnitude_match_dequantized(bits):
    # The decode kernels scale each row of x by a power of two of their choosing: rows from
    # subnormal to near the float32 limit, and one whose values span 70 orders of
    # magnitude, against float64 NumPy on the dequantized matrix.
    rng = np.random.default_rng(bits)
    k = 512
    w = mx.array(rng.normal(size=(24, k)).astype(np.float32))
    w_q, scales, biases = mx.quantize(w, group_size=64, bits=bits)
    words = np.array(w_q).astype(np.uint64)
    shifts = np.arange(32 // bits, dtype=np.uint64) * np.uint64(bits)
    levels = ((words[..., None] >> shifts) & np.uint64((1 << bits) - 1)).reshape(24, k)
    per_group = lambda a: np.repeat(np.array(a).astype(np.float64), 64, axis=1)
    dense = per_group(scales) * levels + per_group(biases)
    base = rng.normal(size=(6, k))
    mixed = base[5] * 10.0 ** rng.uniform(-40, 30, size=k)
    x = np.stack([base[0] * 1e-42, base[1] * 1e-30, base[2], base[3] * 1e30, base[4] * 1e36, mixed])
    x = x.astype(np.float32)
    for rows in (x[:1], x[1:2], x[3:4], x[4:5], x[5:6], x[:4], x):
        out = np.array(mx.quantized_matmul(mx.array(rows), w_q, scales, biases, bits=bits))
        want = rows.astype(np.float64) @ dense.T
        size = np.abs(rows).astype(np.float64) @ np.abs(dense).T
        np.testing.assert_array_less(np.abs(out - want), 1e-5 * size + 1e-44)


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
def test_bfloat16_products_at_any_magnitude_match_dequantized(bits, group_size):
    # bfloat16 rows of x from subnormal to near the float32 limit (where a group's sum, or
    # a multiple of a value, passes it while the product does not), and one spanning 70
    # orders of magnitude, against float64 NumPy on the dequantized matrix.
    rng = np.random.default_rng(bits * 100 + group_size)
    k = 512
    w = mx.array(rng.uniform(0.4, 0.9, size=(24, k)).astype(np.float32)).astype(mx.bfloat16)
    w_q, scales, biases = mx.quantize(w, group_size=group_size, bits=bits)
    words = np.array(w_q).astype(np.uint64)
    shifts = np.arange(32 // bits, dtype=np.uint64) * np.uint64(bits)
    levels = ((words[..., None] >> shifts) & np.uint64((1 << bits) - 1)).reshape(24, k)
    per_group = lambda a: np.repeat(values(a).astype(np.float64), group_size, axis=1)
    dense = per_group(scales) * levels + per_group(biases)
    base = rng.normal(size=(6, k))
    near_limit = rng.uniform(1.1e37, 1.2e37, size=k) * (np.arange(k) < 32)
    mixed = base[5] * 10.0 ** rng.uniform(-40, 30, size=k)
    x = np.stack([base[0] * 1e-39, base[1] * 1e-30, base[2], base[3] * 1e36, near_limit, mixed])
    x = values(mx.array(x.astype(np.float32)).astype(mx.bfloat16)).astype(np.float64)
    for rows in (x[:1], x[1:2], x[3:4], x[4:5], x[5:6], x[:4], x):
        out = values(mx.quantized_matmul(mx.array(rows.astype(np.float32)).astype(mx.bfloat16), w_q, scales, biases,
                                         group_size=group_size, bits=bits))
        want = rows @ dense.T
        size = np.abs(rows) @ np.abs(dense).T
        assert (np.abs(want) < np.finfo(np.float32).max).all()
        # The result's own rounding to bfloat16 (2^-133 apart below the normal range).
        np.testing.assert_array_less(np.abs(out - want), 2**-8 * np.abs(want) + 1e-5 * size + 2**-133)


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_float32_products_of_large_weights_match_dequantized(bits):
    # Weights near 1e30: results near 1e32, which the kernels' scaled sums must not pass
    # on the way.
    rng = np.random.default_rng(10 + bits)
    w = mx.array((rng.normal(size=(16, 1024)) * 1e30).astype(np.float32))
    w_q, scales, biases = mx.quantize(w, group_size=128, bits=bits)
    dense = np.array(mx.dequantize(w_q, scales, biases, group_size=128, bits=bits)).astype(np.float64)
    x = rng.normal(size=(3, 1024)).astype(np.float32)
    out = np.array(mx.quantized_matmul(mx.array(x), w_q, scales, biases, group_size=128, bits=bits))
    size = np.abs(x).astype(np.float64) @ np.abs(dense).T
    assert np.isfinite(out).all()
    np.testing.assert_array_less(np.abs(out - x.astype(np.float64) @ dense.T), 1e-5 * size)


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("group_size", [32, 64, 128])
@pytest.mark.parametrize("rows", [1, 3, 16])
def test_float32_products_near_the_float32_limit_match_dequantized(bits, group_size, rows):
    # The sum of the first group's `x` passes the float32 limit, where the product, whose
    # weights lie in [0.4, 0.9), does not: a kernel that sums a group's `x` in float32 for
    # its bias gets infinities or NaN.
    rng = np.random.default_rng(bits * 1000 + group_size + rows)
    w = mx.array(rng.uniform(0.4, 0.9, size=(8, 256)).astype(np.float32))
    w_q, scales, biases = mx.quantize(w, group_size=group_size, bits=bits)
    dense = np.array(mx.dequantize(w_q, scales, biases, group_size=group_size, bits=bits))
    x = rng.uniform(1.1e37, 1.2e37, size=(rows, 256)).astype(np.float32)
    x[:, 32:] = 0.0
    out = np.array(mx.quantized_matmul(mx.array(x), w_q, scales, biases, group_size=group_size, bits=bits))
    reference = x.astype(np.float64) @ dense.astype(np.float64).T
    assert (x.astype(np.float64).sum(axis=1) > np.finfo(np.float32).max).all()
    assert (np.abs(reference) < np.finfo(np.float32).max).all()
    np.testing.assert_allclose(out, reference, rtol=1e-5)


def test_dequantize_dtype():
    case = FIXTURE["dequantize_dtype"]
    args = arr(case["w_q"]), arr(case["scales"]), arr(case["biases"])
    for name in ["float16", "bfloat16"]:
        out = mx.dequantize(*args, dtype=getattr(mx, name))
        assert out.dtype == getattr(mx, name)
        np.testing.assert_array_equal(values(out), expected(case[name]))


def test_errors_match_mlx():
    w = mx.zeros((4, 64))
    with pytest.raises(ValueError, match=r"\[quantize\] The requested group size 16"):
        mx.quantize(w, group_size=16)
    with pytest.raises(ValueError, match="number of bits 7 is not supported"):
        mx.quantize(w, bits=7)
    with pytest.raises(ValueError, match="divisible by the quantization group size 64"):
        mx.quantize(mx.zeros((4, 60)))
    with pytest.raises(ValueError, match=r"Invalid quantization mode 'foo'"):
        mx.quantize(w, mode="foo")
    with pytest.raises(ValueError, match=r"\[quantize\] mxfp4 quantization requires group size 32 but got 64"):
        mx.quantize(w, group_size=64, mode="mxfp4")
    w_q, s, b = mx.quantize(w)
    with pytest.raises(ValueError, match="Biases must be provided"):
        mx.dequantize(w_q, s)
    with pytest.raises(ValueError, match="Biases must be provided"):
        mx.quantized_matmul(mx.ones((2, 64)), w_q, s)
    with pytest.raises(ValueError, match="should be given as a uint32"):
        mx.dequantize(s, s, b)
    with pytest.raises(ValueError, match="does not match the expanded quantized matrix"):
        mx.quantized_matmul(mx.ones((2, 32)), w_q, s, b)


def test_grad_and_vmap():
    w = mx.random.normal((8, 64))
    w_q, s, b = mx.quantize(w)
    dense = mx.dequantize(w_q, s, b)
    x = mx.random.normal((3, 64))
    g = mx.grad(lambda x: mx.quantized_matmul(x, w_q, s, b).sum())(x)
    np.testing.assert_allclose(np.array(g), np.array(mx.broadcast_to(dense.sum(0), (3, 64))), rtol=1e-4, atol=1e-4)
    gs = mx.grad(lambda s: mx.quantized_matmul(x, w_q, s, b).sum())(s)
    assert gs.shape == s.shape
    # The packed words are integers: lazulite gives them a zero gradient (MLX raises).
    gw = mx.grad(lambda w: mx.quantized_matmul(x, w, s, b).sum())(w_q)
    assert not np.array(gw).any()
    xs = mx.random.normal((5, 3, 64))
    out = mx.vmap(lambda x: mx.quantized_matmul(x, w_q, s, b))(xs)
    np.testing.assert_allclose(np.array(out), np.array(xs @ dense.T), rtol=1e-4, atol=1e-4)


def test_quantized_linear_matches_mlx():
    f = FIXTURE["nn"]
    linear = nn.Linear(128, 24)
    linear.weight = arr(f["linear_weight"])
    linear.bias = arr(f["linear_bias"])
    ql = linear.to_quantized(group_size=64, bits=4)
    assert isinstance(ql, nn.QuantizedLinear)
    np.testing.assert_array_equal(np.array(ql.weight), expected(f["qlinear_weight"]))
    np.testing.assert_array_equal(np.array(ql.scales), expected(f["qlinear_scales"]))
    np.testing.assert_array_equal(np.array(ql.biases), expected(f["qlinear_biases"]))
    np.testing.assert_allclose(np.array(ql(arr(f["x"]))), expected(f["qlinear_out"]), rtol=1e-5, atol=1e-5)
    assert ql.trainable_parameters() == {"bias": ql.bias} or "weight" not in ql.trainable_parameters()
    assert "group_size=64, bits=4, mode=affine" in repr(ql)


def test_quantized_embedding_matches_mlx():
    f = FIXTURE["nn"]
    emb = nn.Embedding(10, 64)
    emb.weight = arr(f["embedding_weight"])
    qe = nn.QuantizedEmbedding.from_embedding(emb, group_size=32, bits=8)
    ids = arr(f["ids"])
    np.testing.assert_array_equal(np.array(qe(ids)), expected(f["qembedding_out"]))
    np.testing.assert_allclose(
        np.array(qe.as_linear(arr(f["as_linear_x"]))), expected(f["qembedding_as_linear"]),
        rtol=1e-5, atol=1e-5,
    )


def test_nn_quantize_walks_the_model():
    model = nn.Sequential(nn.Embedding(10, 64), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32))
    nn.quantize(model, group_size=32, bits=8)
    kinds = [type(m).__name__ for m in model.layers]
    assert kinds == ["QuantizedEmbedding", "QuantizedLinear", "ReLU", "QuantizedLinear"]
    assert model.layers[1].bits == 8 and model.layers[1].group_size == 32
    model = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 32))
    nn.quantize(model, class_predicate=lambda path, m: path.endswith("1"))
    assert [type(m).__name__ for m in model.layers] == ["Linear", "QuantizedLinear"]
    assert model.layers[1].bits == 4 and model.layers[1].group_size == 64
    out = model(mx.ones((2, 64)))
    assert out.shape == (2, 32)
