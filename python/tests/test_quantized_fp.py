"""MLX's floating-point quantization modes (`mxfp4`, `mxfp8`, `nvfp4`) against real MLX's
values and messages, stored by tools/fixtures/quantize_fp.py: words and scales bit for bit,
dequantized values exactly, products within float tolerance, the `nn` layers, errors."""

import json
import pathlib

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn

FIXTURE = json.loads(
    (pathlib.Path(__file__).parents[2] / "crates/lazulite/tests/fixtures/quantize_fp.json").read_text()
)
DTYPES = ["float32", "float16", "bfloat16"]


def arr(v):
    data = [float(x) if isinstance(x, str) else x for x in v["data"]]
    if v["dtype"] in ("float16", "bfloat16"):
        return mx.array(np.array(data, np.float32).reshape(v["shape"])).astype(getattr(mx, v["dtype"]))
    return mx.array(np.array(data).reshape(v["shape"]).astype(v["dtype"]))


def values(a):
    return np.array(a.astype(mx.float32) if a.dtype in (mx.float16, mx.bfloat16) else a)


def expected(v):
    return np.array([float(x) if isinstance(x, str) else x for x in v["data"]]).reshape(v["shape"])


def case_id(c):
    return f"{c['mode']}-{c['w']['dtype']}-{'x'.join(map(str, c['w']['shape']))}" + (
        "-global" if "global_scale" in c else "")


@pytest.mark.parametrize("case", FIXTURE["quantize"], ids=case_id)
def test_quantize_bit_for_bit(case):
    w, mode = arr(case["w"]), case["mode"]
    global_scale = arr(case["global_scale"]) if "global_scale" in case else None
    out = mx.quantize(w, mode=mode, global_scale=global_scale)
    # MLX returns a list of two: no biases in these modes.
    assert isinstance(out, list) and len(out) == 2
    w_q, scales = out
    assert w_q.dtype == mx.uint32 and scales.dtype == mx.uint8
    np.testing.assert_array_equal(np.array(w_q), expected(case["w_q"]))
    np.testing.assert_array_equal(np.array(scales), expected(case["scales"]))
    back = mx.dequantize(w_q, scales, mode=mode, global_scale=global_scale)
    reference = case["dequantized_default"]
    assert back.dtype == getattr(mx, reference["dtype"])
    np.testing.assert_array_equal(values(back), expected(reference))
    for name in DTYPES if global_scale is None else []:
        back = mx.dequantize(w_q, scales, mode=mode, dtype=getattr(mx, name))
        assert back.dtype == getattr(mx, name)
        np.testing.assert_array_equal(values(back), expected(case[f"dequantized_{name}"]))


def test_defaults_per_mode():
    w = mx.random.normal((2, 64))
    for mode, (group_size, bits) in {"mxfp4": (32, 4), "mxfp8": (32, 8), "nvfp4": (16, 4)}.items():
        w_q, scales = mx.quantize(w, mode=mode)
        assert w_q.shape == (2, 64 * bits // 32) and scales.shape == (2, 64 // group_size)
        same = mx.quantize(w, group_size, bits, mode=mode)
        assert mx.array_equal(same[0], w_q) and mx.array_equal(same[1], scales)
        assert mx.dequantize(w_q, scales, mode=mode).dtype == mx.bfloat16


@pytest.mark.parametrize("i", range(len(FIXTURE["quantized_matmul"])))
def test_quantized_matmul(i):
    case = FIXTURE["quantized_matmul"][i]
    x = arr(case["x"])
    out = mx.quantized_matmul(x, arr(case["w_q"]), arr(case["scales"]), transpose=case["transpose"],
                              mode=case["mode"])
    assert out.dtype == x.dtype == getattr(mx, case["mlx"]["dtype"])
    reference = expected(case["expected"])
    if x.dtype == mx.float32:
        np.testing.assert_allclose(values(out), reference, rtol=1e-5, atol=1e-3)
        # MLX's kernel sums in another order: agreement relative to the largest output.
        scale = np.abs(reference).max()
        np.testing.assert_allclose(values(out), expected(case["mlx"]), rtol=1e-5, atol=1e-5 * scale)
    else:
        # lazulite accumulates in float32; MLX's bfloat16 kernel sums in bfloat16, hence
        # its looser agreement with the float64 reference.
        scale = np.abs(reference).max()
        np.testing.assert_allclose(values(out), reference, rtol=1e-2, atol=1e-2 * scale)
        np.testing.assert_allclose(values(out), expected(case["mlx"]), rtol=0.05, atol=0.05 * scale)


@pytest.mark.parametrize("case", FIXTURE["gather_qmm"], ids=lambda c: c["mode"])
def test_gather_qmm(case):
    out = mx.gather_qmm(arr(case["x"]), arr(case["w_q"]), arr(case["scales"]),
                        rhs_indices=arr(case["rhs"]), mode=case["mode"])
    assert out.shape == tuple(case["mlx"]["shape"])
    np.testing.assert_allclose(np.array(out), expected(case["mlx"]), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("mode", ["mxfp4", "mxfp8", "nvfp4"])
def test_nn_layers_match_mlx(mode):
    f = FIXTURE["nn"]
    ref = f["modes"][mode]
    linear = nn.Linear(128, 24)
    linear.weight, linear.bias = arr(f["linear_weight"]), arr(f["linear_bias"])
    ql = linear.to_quantized(mode=mode)
    assert isinstance(ql, nn.QuantizedLinear) and ql.get("biases") is None
    assert repr(ql) == ref["repr"]
    np.testing.assert_array_equal(np.array(ql.weight), expected(ref["weight"]))
    np.testing.assert_array_equal(np.array(ql.scales), expected(ref["scales"]))
    np.testing.assert_allclose(np.array(ql(arr(f["x"]))), expected(ref["out"]), rtol=1e-5, atol=1e-4)
    assert "weight" not in ql.trainable_parameters()

    emb = nn.Embedding(10, 64)
    emb.weight = arr(f["embedding_weight"])
    qe = emb.to_quantized(mode=mode)
    assert repr(qe) == ref["embedding_repr"]
    out = qe(arr(f["ids"]))
    assert out.dtype == mx.bfloat16
    np.testing.assert_array_equal(values(out), expected(ref["embedding_out"]))
    np.testing.assert_allclose(np.array(qe.as_linear(arr(f["as_linear_x"]))), expected(ref["as_linear"]),
                               rtol=1e-5, atol=1e-4)


def test_nn_quantize_with_a_mode():
    model = nn.Sequential(nn.Embedding(10, 64), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32))
    nn.quantize(model, mode="mxfp8")
    kinds = [type(m).__name__ for m in model.layers]
    assert kinds == ["QuantizedEmbedding", "QuantizedLinear", "ReLU", "QuantizedLinear"]
    assert model.layers[1].group_size == 32 and model.layers[1].bits == 8
    assert model(mx.array([[1, 2]])).shape == (1, 2, 32)
    model = nn.Sequential(nn.Linear(64, 64))
    nn.quantize(model, class_predicate=lambda _, m: {"mode": "nvfp4"} if isinstance(m, nn.Linear) else False)
    assert model.layers[0].mode == "nvfp4" and model.layers[0].scales.shape == (64, 4)


# lazulite checks the group size and bits of the products against their mode; MLX's
# products skip that check and pick the format the numbers imply.
STRICTER = {"mx.gather_qmm(x, w_q, s, rhs_indices=mx.array([0]), mode='nvfp4', group_size=32)":
            "nvfp4 quantization requires group size 16 but got 32"}
# Integer inputs (the uint8 scales) get a zero gradient in lazulite, as the packed words
# do in affine mode; MLX raises.
ZERO_GRADIENT = [call["call"] for call in FIXTURE["errors"] if call["call"].startswith("mx.grad(")]


@pytest.mark.parametrize("case", FIXTURE["errors"], ids=lambda c: c["call"])
def test_errors_match_mlx(case):
    w, x = arr(FIXTURE["error_inputs"]["w"]), arr(FIXTURE["error_inputs"]["x"])
    w_q, s = mx.quantize(w, mode="mxfp4")
    wn, sn = mx.quantize(w, mode="nvfp4")
    wa, sa, ba = mx.quantize(w)
    scope = {"mx": mx, "nn": nn, "w": w, "x": x, "w_q": w_q, "s": s, "wn": wn, "sn": sn,
             "wa": wa, "sa": sa, "ba": ba}
    if case["call"] in ZERO_GRADIENT:
        assert case["message"].startswith("[QuantizedMatmul::vjp] no gradient wrt scales")
        assert not np.array(eval(case["call"], scope)).any()
        return
    if case["call"] in STRICTER:
        assert case["raises"] is None
        with pytest.raises(ValueError, match=STRICTER[case["call"]]):
            eval(case["call"], scope)
        return
    with pytest.raises(getattr(__builtins__, case["raises"], None) or Exception) as info:
        mx.eval(eval(case["call"], scope))
    assert type(info.value).__name__ == case["raises"] or isinstance(info.value, ValueError)
    assert str(info.value) == case["message"]


def test_gradients_and_vmap():
    w = mx.random.normal((8, 64))
    x = mx.random.normal((3, 64))
    for mode in ["mxfp4", "mxfp8", "nvfp4"]:
        w_q, s = mx.quantize(w, mode=mode)
        dense = mx.dequantize(w_q, s, mode=mode, dtype=mx.float32)
        g = mx.grad(lambda x: mx.quantized_matmul(x, w_q, s, mode=mode).sum())(x)
        np.testing.assert_allclose(np.array(g), np.array(mx.broadcast_to(dense.sum(0), (3, 64))),
                                   rtol=1e-5, atol=1e-5)
        # x @ W (transpose=False) through its vjp: the cotangent times W^T.
        wt_q, st = mx.quantize(mx.random.normal((64, 64)), mode=mode)
        dense_t = mx.dequantize(wt_q, st, mode=mode, dtype=mx.float32)
        cot = mx.random.normal((3, 64))
        _, (vjp,) = mx.vjp(lambda x: mx.quantized_matmul(x, wt_q, st, transpose=False, mode=mode), [x], [cot])
        np.testing.assert_allclose(np.array(vjp), np.array(cot @ dense_t.T), rtol=1e-4, atol=1e-4)
        _, (tangent,) = mx.jvp(lambda x: mx.quantized_matmul(x, w_q, s, mode=mode), [x], [cot])
        np.testing.assert_allclose(np.array(tangent), np.array(cot @ dense.T), rtol=1e-4, atol=1e-4)
        xs = mx.random.normal((5, 3, 64))
        out = mx.vmap(lambda x: mx.quantized_matmul(x, w_q, s, mode=mode))(xs)
        np.testing.assert_allclose(np.array(out), np.array(xs @ dense.T), rtol=1e-4, atol=1e-4)
        # Batched packed matrices: a loop is the oracle.
        ws = mx.random.normal((4, 8, 64))
        qs, ss = mx.quantize(ws, mode=mode)
        batched = mx.vmap(lambda q, s: mx.quantized_matmul(x, q, s, mode=mode))(qs, ss)
        loop = mx.stack([mx.quantized_matmul(x, qs[i], ss[i], mode=mode) for i in range(4)])
        np.testing.assert_allclose(np.array(batched), np.array(loop), rtol=1e-6, atol=1e-6)
        deq = mx.vmap(lambda q, s: mx.dequantize(q, s, mode=mode))(qs, ss)
        assert mx.array_equal(deq, mx.dequantize(qs, ss, mode=mode))


def test_global_scale_gradient():
    w = mx.random.normal((4, 32))
    g = mx.array(3.0)
    w_q, s = mx.quantize(w, mode="nvfp4", global_scale=g)
    unit = mx.dequantize(w_q, s, mode="nvfp4", global_scale=mx.array(1.0))
    grad = mx.grad(lambda g: mx.dequantize(w_q, s, mode="nvfp4", global_scale=g).sum())(g)
    np.testing.assert_allclose(float(grad), float(unit.sum()), rtol=1e-5)
    assert mx.grad(lambda w: mx.dequantize(*mx.quantize(w, mode="mxfp4"), mode="mxfp4",
                                           dtype=mx.float32).sum())(w).shape == w.shape


def test_float64_is_quantized_in_float64():
    w = mx.random.normal((4, 64))
    for mode in ["mxfp4", "mxfp8", "nvfp4"]:
        q32 = mx.quantize(w, mode=mode)
        q64 = mx.quantize(w.astype(mx.float64), mode=mode)
        assert mx.array_equal(q32[0], q64[0]) and mx.array_equal(q32[1], q64[1])
        out = mx.quantized_matmul(mx.ones((2, 64), mx.float64), *q64, mode=mode)
        assert out.dtype == mx.float64
