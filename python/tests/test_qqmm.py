"""Products with quantized inputs (`qqmm`, `gather_qqmm`, `nn.QQLinear`).

Oracles: real MLX's values stored by tools/fixtures/qqmm.py (its CPU build computes one
row times a packed weight: the rounding of `x` bit for bit, products, the layer, error
messages), and for everything MLX's CPU build refuses (several rows, float weights,
gradients, gather) a NumPy model of the same rounding, checked against MLX's values here.
"""

import json
import pathlib

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn

FIXTURE = json.loads(
    (pathlib.Path(__file__).parents[2] / "crates/lazulite/tests/fixtures/qqmm.json").read_text()
)
MODES = ["nvfp4", "mxfp8", "mxfp4"]
GROUP = {"nvfp4": 16, "mxfp8": 32, "mxfp4": 32}


def arr(v):
    data = np.array([float(x) if isinstance(x, str) else x for x in v["data"]]).reshape(v["shape"])
    if v["dtype"] in ("float16", "bfloat16"):
        return mx.array(data.astype(np.float32)).astype(getattr(mx, v["dtype"]))
    return mx.array(data.astype(v["dtype"]))


def values(a):
    return np.array(a.astype(mx.float32) if a.dtype in (mx.float16, mx.bfloat16) else a)


def expected(v):
    return np.array([float(x) if isinstance(x, str) else x for x in v["data"]]).reshape(v["shape"])


# ---------------------------------------------------------------- a NumPy model of the rounding
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e4m3(v):
    """Rounds float32 values to E4M3 (nearest, ties to even; saturating at 448)."""
    v = np.asarray(v, np.float64)
    a = np.minimum(np.abs(v), 448.0)
    exponent = np.floor(np.log2(np.maximum(a, 2.0**-6)))
    step = 2.0 ** (exponent - 3)
    return np.sign(v) * np.round(a / step) * step  # np.round: ties to even


def e2m1(q):
    """Rounds to the nearest E2M1 value, ties to the one with the even code."""
    a = np.minimum(np.abs(q), 6.0)
    lower = np.searchsorted(E2M1, a, side="right") - 1
    upper = np.minimum(lower + 1, 7)
    dl, du = a - E2M1[lower], E2M1[upper] - a
    pick = np.where(dl < du, lower, np.where(du < dl, upper, np.where(lower % 2 == 0, lower, upper)))
    return np.sign(q) * E2M1[pick]


def rounded(x, mode):
    """The rounding of `x` (float64 values of a float32 array) along its last axis."""
    g = GROUP[mode]
    groups = np.asarray(x, np.float32).reshape(-1, g).astype(np.float64)
    top = 448.0 if mode == "mxfp8" else 6.0
    raw = (np.abs(groups).max(axis=1, keepdims=True) / top).astype(np.float32).astype(np.float64)
    if mode == "nvfp4":
        scale = e4m3(raw)
    else:
        with np.errstate(divide="ignore"):
            scale = np.where(raw > 0, 2.0 ** np.ceil(np.log2(np.where(raw > 0, raw, 1.0))), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(scale > 0, groups / np.where(scale > 0, scale, 1.0), 0.0)
    element = e4m3(q) if mode == "mxfp8" else e2m1(q)
    return (scale * element).reshape(np.shape(x))


@pytest.mark.parametrize("case", FIXTURE["rounding"], ids=lambda c: f"{c['mode']}-{c['x']['dtype']}")
def test_rounding_of_x_is_mlx_bit_for_bit(case):
    x, mode = arr(case["x"]), case["mode"]
    eye_q, eye_s = mx.quantize(case["c"] * mx.eye(x.shape[1], dtype=x.dtype), mode=mode)
    out = mx.qqmm(x, eye_q, eye_s, mode=mode)
    assert out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_array_equal(values(out), expected(case["mlx"]))


@pytest.mark.parametrize("case", [c for c in FIXTURE["rounding"] if c["x"]["dtype"] == "float32"],
                         ids=lambda c: c["mode"])
def test_numpy_model_of_the_rounding_matches_mlx(case):
    # The model the multi-row and gradient tests below use as their oracle.
    x = expected(case["x"])
    np.testing.assert_array_equal(case["c"] * rounded(x, case["mode"]), expected(case["mlx"]))


@pytest.mark.parametrize("case", FIXTURE["products"], ids=lambda c: f"{c['mode']}-{c['x']['dtype']}-{len(c['x']['shape'])}d")
def test_product_with_packed_weight_matches_mlx(case):
    x, mode = arr(case["x"]), case["mode"]
    out = mx.qqmm(x, arr(case["w_q"]), arr(case["scales"]), mode=mode)
    ref = expected(case["mlx"])
    assert out.dtype == x.dtype and out.shape == x.shape[:-1] + (ref.shape[-1],)
    # MLX's CPU kernel sums in the input's dtype; lazulite sums in float32.
    tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}[case["x"]["dtype"]]
    first = values(out).reshape(-1, ref.shape[-1])[0]
    np.testing.assert_allclose(first, ref.reshape(-1), rtol=tol, atol=tol * np.abs(ref).max())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("packed", [False, True])
def test_several_rows_against_the_numpy_model(mode, packed):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 64)).astype(np.float32)
    w = rng.standard_normal((40, 64)).astype(np.float32)
    if packed:
        w_q, s = mx.quantize(mx.array(w), mode=mode)
        out = mx.qqmm(mx.array(x), w_q, s, mode=mode)
        w_hat = np.array(mx.dequantize(w_q, s, mode=mode, dtype=mx.float32), np.float64)
    else:
        out = mx.qqmm(mx.array(x), mx.array(w), mode=mode)
        w_hat = rounded(w, mode)
    assert out.shape == (2, 3, 40) and out.dtype == mx.float32
    np.testing.assert_allclose(np.array(out), rounded(x, mode) @ w_hat.T, rtol=1e-5, atol=1e-4)


def test_vector_input_and_default_mode():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(32).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    out = mx.qqmm(mx.array(x), mx.array(w))  # nvfp4 by default
    assert out.shape == (8,)
    np.testing.assert_allclose(np.array(out), rounded(x, "nvfp4") @ rounded(w, "nvfp4").T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nvfp4", "mxfp8"])
def test_gradients_follow_mlx_rule(mode):
    # MLX's rule: the derivative passes through the rounding, and the backward products are
    # quantized products: dx = qqmm(g, w^T), dw = qqmm(g^T, x^T).
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    w = rng.standard_normal((32, 64)).astype(np.float32)
    g = rng.standard_normal((32, 32)).astype(np.float32)

    def loss(x, w):
        return (mx.qqmm(x, w, mode=mode) * mx.array(g)).sum()

    dx, dw = mx.grad(loss, argnums=(0, 1))(mx.array(x), mx.array(w))
    np.testing.assert_allclose(np.array(dx), rounded(g, mode) @ rounded(w.T, mode).T, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.array(dw), rounded(g.T, mode) @ rounded(x.T, mode).T, rtol=1e-5, atol=1e-4)


def test_packed_weight_gets_no_gradient_and_x_does():
    rng = np.random.default_rng(4)
    x = mx.array(rng.standard_normal((32, 64)).astype(np.float32))
    w_q, s = mx.quantize(mx.array(rng.standard_normal((32, 64)).astype(np.float32)), mode="mxfp8")
    dx, dw = mx.grad(lambda x, w: mx.qqmm(x, w, s, mode="mxfp8").sum(), argnums=(0, 1))(x, w_q)
    dense = np.array(mx.dequantize(w_q, s, mode="mxfp8", dtype=mx.float32), np.float64)
    np.testing.assert_allclose(np.array(dx), rounded(np.ones((32, 32)), "mxfp8") @ rounded(dense.T, "mxfp8").T,
                               rtol=1e-5, atol=1e-4)
    assert not np.array(dw).any()


def test_vmap_matches_a_loop():
    rng = np.random.default_rng(5)
    xs = mx.array(rng.standard_normal((3, 4, 32)).astype(np.float32))
    ws = mx.array(rng.standard_normal((3, 8, 32)).astype(np.float32))
    out = mx.vmap(lambda x, w: mx.qqmm(x, w, mode="mxfp8"))(xs, ws)
    loop = mx.stack([mx.qqmm(xs[i], ws[i], mode="mxfp8") for i in range(3)])
    np.testing.assert_array_equal(np.array(out), np.array(loop))


@pytest.mark.parametrize("packed", [False, True])
def test_gather_qqmm_picks_like_gather_mm(packed):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 2, 32)).astype(np.float32)
    experts = rng.standard_normal((3, 8, 32)).astype(np.float32)
    lhs, rhs = np.array([0, 1, 1, 4]), np.array([2, 0, 1, 2])
    if packed:
        w_q, s = mx.quantize(mx.array(experts), mode="nvfp4")
        out = mx.gather_qqmm(mx.array(x), w_q, s, mx.array(lhs), mx.array(rhs), sorted_indices=False)
        w_hat = np.array(mx.dequantize(w_q, s, mode="nvfp4", dtype=mx.float32), np.float64)
    else:
        out = mx.gather_qqmm(mx.array(x), mx.array(experts), lhs_indices=mx.array(lhs), rhs_indices=mx.array(rhs))
        w_hat = rounded(experts, "nvfp4")
    ref = rounded(x, "nvfp4")[lhs] @ np.swapaxes(w_hat[rhs], -1, -2)
    assert out.shape == (4, 2, 8)
    np.testing.assert_allclose(np.array(out), ref, rtol=1e-5, atol=1e-4)


def test_nvfp4_global_scales_divide_the_scales():
    # With global scales g, a group's scale is stored as E4M3(s * 2688 / g) and read back
    # times g / 2688: the rounding of a tiny tensor keeps its precision.
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2, 32)) * 1e-4).astype(np.float32)
    w = (rng.standard_normal((4, 32)) * 1e-4).astype(np.float32)
    gx, gw = mx.array(float(np.abs(x).max())), mx.array(float(np.abs(w).max()))
    out = mx.qqmm(mx.array(x), mx.array(w), global_scale_x=gx, global_scale_w=gw)

    def model(a, g):
        groups = a.reshape(-1, 16).astype(np.float64)
        raw = (np.abs(groups).max(axis=1, keepdims=True) / 6.0).astype(np.float32)
        scale = e4m3(raw * np.float32(2688.0 / g)) * np.float32(g / 2688.0)
        return (scale * e2m1(groups / scale)).reshape(a.shape)

    ref = model(x, np.abs(x).max()) @ model(w, np.abs(w).max()).T
    np.testing.assert_allclose(np.array(out), ref, rtol=1e-4, atol=1e-12)
    assert np.abs(np.array(out) - x @ w.T).max() < 0.2 * np.abs(x @ w.T).max()


def test_quantized_layer_matches_mlx():
    ref = FIXTURE["nn"]
    layer = nn.QQLinear(128, 16, mode="mxfp8")
    assert layer.training and layer.weight.dtype == mx.float32
    layer.weight = arr(ref["weight"])
    layer.eval()
    assert repr(layer) == ref["repr"]
    np.testing.assert_array_equal(np.array(layer.weight), expected(ref["weight_q"]))
    np.testing.assert_array_equal(np.array(layer.scales), expected(ref["scales"]))
    np.testing.assert_allclose(np.array(layer(arr(ref["x"]))), expected(ref["out"]), rtol=1e-5, atol=1e-5)
    layer.train()
    assert sorted(layer.parameters().keys()) == ref["train_keys"]
    np.testing.assert_array_equal(values(layer.weight), expected(ref["weight_back"]))


def test_linear_to_quantized_with_quantized_input():
    linear = nn.Linear(64, 8, bias=False)
    layer = linear.to_quantized(mode="nvfp4", quantize_input=True)
    assert isinstance(layer, nn.QQLinear) and layer.training
    x = mx.random.normal((3, 64))
    np.testing.assert_allclose(
        np.array(layer(x)),
        rounded(np.array(x), "nvfp4") @ rounded(np.array(linear.weight), "nvfp4").T,
        rtol=1e-5, atol=1e-5,
    )
    model = nn.Sequential(nn.Linear(64, 32, bias=False), nn.Linear(32, 8, bias=False))
    nn.quantize(model, mode="mxfp8", quantize_input=True)
    assert all(isinstance(m, nn.QQLinear) for m in model.layers)


@pytest.mark.parametrize("case", FIXTURE["errors"], ids=lambda c: c["call"])
def test_errors_match_mlx(case):
    K = 128  # noqa: F841 - used by the recorded expressions
    inputs = FIXTURE["error_inputs"]
    w, x = arr(inputs["w"]), arr(inputs["x"])  # noqa: F841
    w_q, s = mx.quantize(w, mode="mxfp8")  # noqa: F841
    wn, sn = mx.quantize(w, mode="nvfp4")  # noqa: F841
    exception = {"ValueError": ValueError, "NotImplementedError": NotImplementedError}[case["raises"]]
    with pytest.raises(exception) as info:
        mx.eval(eval(case["call"]))
    assert str(info.value) == case["message"]


def test_affine_inputs_are_refused():
    # MLX's CPU kernel reads affine weights as floating-point codes (its result is garbage).
    w_q, s, b = mx.quantize(mx.ones((8, 64)))
    with pytest.raises(ValueError, match="floating-point modes"):
        mx.qqmm(mx.ones((1, 64)), w_q, s, mode="affine")
