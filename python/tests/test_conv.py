"""Convolutions: values against a direct NumPy loop over many parameter sets, dtypes,
MLX's errors (messages measured on mlx 0.32.4), gradients of both operands against
float64 finite differences, vmap against a loop, and the nn layers (repr, init,
a training step)."""

import itertools
import math

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn
import lazulite.optimizers as optim


def reference(x, w, stride, lo, hi, kdil, idil, groups, flip):
    """Direct loop over output positions and kernel taps, in float64."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, *spatial, cin = x.shape
    cout, *kernel, cig = w.shape
    nd = len(spatial)
    cog = cout // groups
    dil = [(l - 1) * d + 1 if l else 0 for l, d in zip(spatial, idil)]
    out_sp = [(dil[i] + lo[i] + hi[i] - ((kernel[i] - 1) * kdil[i] + 1)) // stride[i] + 1 for i in range(nd)]
    out = np.zeros([n, *out_sp, cout])
    for o in itertools.product(*[range(s) for s in out_sp]):
        for k in itertools.product(*[range(s) for s in kernel]):
            src = []
            for d in range(nd):
                kk = kernel[d] - 1 - k[d] if flip else k[d]
                q = o[d] * stride[d] + kk * kdil[d] - lo[d]
                if q < 0 or q >= dil[d] or q % idil[d]:
                    break
                src.append(q // idil[d])
            else:
                pixel = x[(slice(None), *src)]
                for g in range(groups):
                    ws = w[(slice(g * cog, (g + 1) * cog), *k)]
                    out[(slice(None), *o, slice(g * cog, (g + 1) * cog))] += pixel[:, g * cig : (g + 1) * cig] @ ws.T
    return out


def transpose_reference(x, w, stride, padding, dilation, output_padding, groups):
    """The transposed convolution as the scatter that defines it."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, *spatial, cin = x.shape
    cout, *kernel, cig = w.shape
    cog = cout // groups
    full = [(l - 1) * s + (k - 1) * d + 1 for l, s, k, d in zip(spatial, stride, kernel, dilation)]
    out = np.zeros([n, *[f + p for f, p in zip(full, output_padding)], cout])
    for i in itertools.product(*[range(s) for s in spatial]):
        for k in itertools.product(*[range(s) for s in kernel]):
            pos = tuple(i[d] * stride[d] + k[d] * dilation[d] for d in range(len(spatial)))
            for g in range(groups):
                xs = x[(slice(None), *i, slice(g * cig, (g + 1) * cig))]
                out[(slice(None), *pos, slice(g * cog, (g + 1) * cog))] += xs @ w[(slice(g * cog, (g + 1) * cog), *k)].T
    return out[(slice(None), *(slice(p, out.shape[d + 1] - p) for d, p in enumerate(padding)))]


def random_cases(count, seed=0):
    """Valid conv_general parameter sets: 1-3 spatial axes, odd sizes, strides,
    asymmetric and negative padding, both dilations, groups (1-D/2-D), flip."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        nd = int(rng.integers(1, 4))
        groups = int(rng.choice([1, 2, 3])) if nd < 3 else 1
        cig, cog = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        n = int(rng.choice([1, 2, 3]))
        spatial = [int(rng.integers(1, 8 if nd < 3 else 5)) for _ in range(nd)]
        kernel = [int(rng.integers(1, 4)) for _ in range(nd)]
        stride = [int(rng.integers(1, 4)) for _ in range(nd)]
        lo = [int(rng.integers(-1, 3)) for _ in range(nd)]
        hi = [int(rng.integers(-1, 3)) for _ in range(nd)]
        kdil = [int(rng.integers(1, 3)) for _ in range(nd)]
        idil = [int(rng.integers(1, 3)) for _ in range(nd)]
        flip = bool(rng.integers(0, 2))
        # Cropped (negative padding) input, then the dilated kernel must fit.
        cropped = [s + min(a, 0) + min(b, 0) for s, a, b in zip(spatial, lo, hi)]
        span = [
            ((c - 1) * d + 1 if c > 0 else 0) + max(a, 0) + max(b, 0)
            for c, d, a, b in zip(cropped, idil, lo, hi)
        ]
        if any(c < 0 for c in cropped) or any(s < (k - 1) * d + 1 for s, k, d in zip(span, kernel, kdil)):
            continue
        x = rng.uniform(-1, 1, (n, *spatial, cig * groups))
        w = rng.uniform(-1, 1, (cog * groups, *kernel, cig))
        cases.append((x, w, stride, lo, hi, kdil, idil, groups, flip))
    return cases


def expected_of(x, w, stride, lo, hi, kdil, idil, groups, flip):
    # Negative padding crops the input first, as in MLX.
    crop = tuple(slice(max(-a, 0), s - max(-b, 0)) for s, a, b in zip(x.shape[1:-1], lo, hi))
    x = x[(slice(None), *crop)]
    lo, hi = [max(a, 0) for a in lo], [max(b, 0) for b in hi]
    return reference(x, w, stride, lo, hi, kdil, idil, groups, flip)


@pytest.mark.parametrize("case", random_cases(60), ids=lambda c: "")
def test_conv_general_matches_the_direct_loop(case):
    x, w, stride, lo, hi, kdil, idil, groups, flip = case
    expected = expected_of(*case)
    for dtype, tol in [(mx.float32, 1e-5), (mx.float64, 1e-12)]:
        got = mx.conv_general(
            mx.array(x, dtype), mx.array(w, dtype), stride, (lo, hi), kdil, idil, groups, flip
        )
        assert got.dtype == dtype
        np.testing.assert_allclose(np.array(got), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype, tol", [(mx.float16, 2e-2), (mx.bfloat16, 8e-2)])
def test_half_precision(dtype, tol):
    for case in random_cases(8, seed=1):
        x, w, *params = case
        xh, wh = mx.array(x, dtype), mx.array(w, dtype)
        got = mx.conv_general(xh, wh, params[0], (params[1], params[2]), *params[3:])
        assert got.dtype == dtype
        exact = expected_of(np.array(xh.astype(mx.float64)), np.array(wh.astype(mx.float64)), *params)
        np.testing.assert_allclose(np.array(got.astype(mx.float64)), exact, rtol=tol, atol=tol)


def test_conv1d_2d_3d_and_promotion():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (2, 7, 6, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 3, 2, 2)).astype(np.float32)
    got = mx.conv2d(mx.array(x), mx.array(w), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    want = reference(x, w, [2, 1], [1, 0], [1, 0], [1, 2], [1, 1], 2, False)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-5)
    got = mx.conv2d(mx.array(x), mx.array(w), 2, 1, 1, 2)
    np.testing.assert_allclose(np.array(got), reference(x, w, [2, 2], [1, 1], [1, 1], [1, 1], [1, 1], 2, False), rtol=1e-5, atol=1e-5)
    x1, w1 = x[:, :, 0, :], w[:, :, 0, :]
    got = mx.conv1d(mx.array(x1), mx.array(w1), stride=2, padding=2, dilation=2, groups=2)
    np.testing.assert_allclose(np.array(got), reference(x1, w1, [2], [2], [2], [2], [1], 2, False), rtol=1e-5, atol=1e-5)
    x3 = rng.uniform(-1, 1, (1, 4, 5, 3, 2)).astype(np.float32)
    w3 = rng.uniform(-1, 1, (3, 2, 2, 2, 2)).astype(np.float32)
    got = mx.conv3d(mx.array(x3), mx.array(w3), stride=(1, 2, 1), padding=1)
    np.testing.assert_allclose(np.array(got), reference(x3, w3, [1, 2, 1], [1] * 3, [1] * 3, [1] * 3, [1] * 3, 1, False), rtol=1e-5, atol=1e-5)
    # Result dtypes follow promotion; integer weights are fine, integer inputs are not.
    xf = mx.ones((1, 5, 5, 4))
    assert mx.conv2d(xf, mx.ones((6, 3, 3, 4), mx.int32)).dtype == mx.float32
    assert mx.conv2d(xf.astype(mx.float16), mx.ones((6, 3, 3, 4))).dtype == mx.float32
    assert mx.conv2d(xf.astype(mx.bfloat16), mx.ones((6, 3, 3, 4), mx.float16)).dtype == mx.float32
    assert mx.conv1d(mx.ones((1, 5, 4), mx.float64), mx.ones((6, 3, 4))).dtype == mx.float64
    # Views: transposed and reversed operands.
    xt = mx.array(np.ascontiguousarray(x.transpose(0, 2, 1, 3))).transpose(0, 2, 1, 3)
    got = mx.conv2d(xt, mx.array(w)[:, ::-1, :, :][:, ::-1, :, :], padding=1, groups=2)
    np.testing.assert_allclose(np.array(got), reference(x, w, [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], 2, False), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, output_padding, groups",
    [
        ((2, 5, 3), (4, 3, 3), [2], [1], [1], [1], 1),
        ((1, 4, 4), (6, 3, 2), [1], [0], [2], [0], 2),
        ((2, 4, 3, 2), (3, 3, 3, 2), [2, 2], [1, 0], [1, 1], [1, 0], 1),
        ((1, 3, 4, 4), (4, 2, 3, 2), [1, 3], [0, 1], [2, 1], [0, 2], 2),
        ((1, 3, 2, 3, 2), (2, 2, 2, 2, 2), [2, 1, 2], [0, 0, 1], [1, 1, 1], [1, 0, 0], 1),
    ],
)
def test_conv_transpose_matches_the_scatter(x_shape, w_shape, stride, padding, dilation, output_padding, groups):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    nd = len(x_shape) - 2
    op = {1: mx.conv_transpose1d, 2: mx.conv_transpose2d, 3: mx.conv_transpose3d}[nd]
    pack = (lambda v: v[0]) if nd == 1 else tuple
    got = op(mx.array(x), mx.array(w), pack(stride), pack(padding), pack(dilation), pack(output_padding), groups)
    want = transpose_reference(x, w, stride, padding, dilation, output_padding, groups)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-5)


def test_shapes_of_edge_cases():
    x, w = mx.ones((1, 5, 5, 4)), mx.ones((6, 3, 3, 4))
    assert mx.conv2d(x, w, padding=-1).shape == (1, 1, 1, 6)
    assert mx.conv_general(x, w, padding=([-1, 0], [0, 1])).shape == (1, 2, 4, 6)
    assert mx.conv_general(x, w, padding=([1], [1, 2])).shape == (1, 5, 6, 6)
    assert mx.conv_general(x, w, padding=(1, 2)).shape == (1, 5, 7, 6)
    assert mx.conv_general(x, w, stride=[]).shape == (1, 3, 3, 6)
    assert mx.conv_general(x, w, input_dilation=2).shape == (1, 7, 7, 6)
    assert mx.conv1d(x, w).shape == (1, 3, 3, 6)
    assert mx.conv2d(x, w, stride=[1, 2]).shape == (1, 3, 2, 6)
    assert mx.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1).shape == (1, 10, 10, 6)
    assert mx.conv_transpose2d(x, w, stride=2, output_padding=2).shape == (1, 13, 13, 6)
    assert mx.conv_transpose2d(x, mx.ones((6, 3, 3, 2)), groups=2).shape == (1, 7, 7, 6)
    assert mx.conv2d(mx.ones((0, 5, 5, 4)), w).shape == (0, 3, 3, 6)
    assert mx.conv2d(x, mx.ones((0, 3, 3, 4))).shape == (1, 3, 3, 0)
    assert np.array(mx.conv2d(mx.ones((1, 5, 5, 0)), mx.ones((6, 3, 3, 0)))).tolist() == np.zeros((1, 3, 3, 6)).tolist()
    assert np.array(mx.conv2d(mx.ones((1, 0, 5, 4)), w, padding=2)).sum() == 0


MESSAGES = [
    (lambda x, w: mx.conv2d(x, mx.ones((6, 3, 3, 3))), "[conv] Expect the input channels in the input and weight array to match but got shapes - input: (1,5,5,4) and weight: (6,3,3,3)"),
    (lambda x, w: mx.conv2d(x, w, groups=3), "[conv] The input channels must be divisible by the number of groups. Got input with shape (1,5,5,4) and 3 groups."),
    (lambda x, w: mx.conv2d(x, mx.ones((5, 3, 3, 2)), groups=2), "[conv] If groups > 1, the output channels must be divisible by the number of groups. Got 5 output channels and 2 groups."),
    (lambda x, w: mx.conv2d(x, w, groups=2), "Given groups=2 and weights of shape (6,3,3,4), expected to have 8 input channels but got 4 input channels instead."),
    (lambda x, w: mx.conv2d(x, w, stride=0), "[conv] Stride sizes must be positive. Got strides (0,0)."),
    (lambda x, w: mx.conv2d(x, w, dilation=-1), "[conv] Kernel dilation sizes must be positive. Got kernel dilation (-1,-1)."),
    (lambda x, w: mx.conv_general(x, w, input_dilation=0), "[conv] Input dilation sizes must be positive. Got input dilation (0,0)."),
    (lambda x, w: mx.conv2d(x, mx.ones((6, 7, 7, 4))), "[conv] Spatial dimensions of input after padding cannot be smaller than weight spatial dimensions. Got error at axis 1 for input with shape (1,5,5,4), padding low (0,0), padding high (0,0), and weight of shape (6,7,7,4)."),
    (lambda x, w: mx.conv2d(x, w, padding=-3), "[conv] Spatial dimensions of input after padding cannot be smaller than weight spatial dimensions. Got error at axis 1 for input with shape (1,0,0,4), padding low (0,0), padding high (0,0), and weight of shape (6,3,3,4)."),
    (lambda x, w: mx.conv_transpose2d(x, w, padding=5), "[conv] Spatial dimensions of input after padding cannot be smaller than weight spatial dimensions. Got error at axis 1 for input with shape (1,0,0,4), padding low (0,0), padding high (0,0), and weight of shape (6,3,3,4)."),
    (lambda x, w: mx.conv2d(mx.ones((5, 5, 4)), w), "[conv] Invalid weight array with 4 dimensions for 1D convolution. Expected an array with 3 dimensions following the format [C_out, ..., C_in]."),
    (lambda x, w: mx.conv2d(x, mx.ones((6, 3, 4))), "[conv] Invalid weight array with 3 dimensions for 2D convolution. Expected an array with 4 dimensions following the format [C_out, ..., C_in]."),
    (lambda x, w: mx.conv2d(x, mx.array(1.0)), "[conv] Invalid weight array with 0 dimensions for 2D convolution. Expected an array with 4 dimensions following the format [C_out, ..., C_in]."),
    (lambda x, w: mx.conv_general(mx.ones((2, 3)), mx.ones((2, 3))), "[conv] Only works for inputs with 1-3 spatial dimensions. The inputs must be in the format [N, ..., C_in]"),
    (lambda x, w: mx.conv2d(x.astype(mx.int32), w), "[conv] Invalid input array with type int32. Convolution currently only supports floating point types"),
    (lambda x, w: mx.conv2d(x.astype(mx.complex64), w), "[conv] Invalid input array with type complex64. Convolution currently only supports floating point types"),
    (lambda x, w: mx.conv2d(x.astype(mx.bool_), w), "[conv] Invalid input array with type bool. Convolution currently only supports floating point types"),
    (lambda x, w: mx.conv3d(mx.ones((1, 4, 4, 4, 4)), mx.ones((2, 1, 1, 1, 2)), groups=2), "[conv] Can only handle groups != 1 in 1D or 2D convolutions."),
    (lambda x, w: mx.conv_transpose3d(mx.ones((1, 5, 5, 5, 4)), mx.ones((6, 3, 3, 3, 2)), groups=2), "[conv] Can only handle groups != 1 in 1D or 2D convolutions."),
    (lambda x, w: mx.conv_general(x, w, stride=[1, 1, 1]), "[conv] Invalid strides (1,1,1) for 2D convolution."),
    (lambda x, w: mx.conv_general(x, w, padding=([1, 1, 1], [1, 1])), "[conv] Invalid padding (1,1,1) | (1,1) for 2D convolution."),
    (lambda x, w: mx.conv_general(x, w, kernel_dilation=[1, 1, 1]), "[conv] Invalid kernel dilation (1,1,1) for 2D convolution."),
    (lambda x, w: mx.conv_general(x, w, input_dilation=[1, 1, 1]), "[conv] Invalid input dilation (1,1,1) for 2D convolution."),
    # MLX crashes on these (division by zero, an invalid gemm, a read past the input).
    (lambda x, w: mx.conv2d(x, w, groups=0), "[conv] The number of groups must be positive. Got 0 groups."),
    (lambda x, w: mx.conv2d(x, mx.ones((6, 0, 3, 4))), "[conv] Weight spatial dimensions must be positive. Got error at axis 1 for weight of shape (6,0,3,4)."),
    (lambda x, w: mx.conv1d(mx.ones((1, 5, 1)), mx.ones((1, 6, 1)), stride=2), "[conv] Spatial dimensions of input after padding cannot be smaller than weight spatial dimensions. Got error at axis 1 for input with shape (1,5,1), padding low (0), padding high (0), and weight of shape (1,6,1)."),
]


@pytest.mark.parametrize("call, message", MESSAGES)
def test_errors_are_mlx_value_errors_and_inputs_stay_intact(call, message):
    x, w = mx.ones((1, 5, 5, 4)), mx.ones((6, 3, 3, 4))
    with pytest.raises(ValueError) as info:
        mx.eval(call(x, w))
    assert str(info.value) == message
    assert np.array(x).tolist() == np.ones((1, 5, 5, 4)).tolist()
    assert np.array(w).tolist() == np.ones((6, 3, 3, 4)).tolist()


def test_bad_argument_types_are_type_errors():
    x, w = mx.ones((1, 5, 5, 4)), mx.ones((6, 3, 3, 4))
    with pytest.raises(TypeError):
        mx.conv2d(x, w, stride=(1, 1, 1))
    with pytest.raises(TypeError):
        mx.conv1d(mx.ones((1, 5, 4)), mx.ones((6, 3, 4)), stride=1.5)
    with pytest.raises(TypeError):
        mx.conv_general(x, w, padding=([1, 1], [1, 1], [1, 1]))


GRAD_CASES = [
    dict(stride=[2, 1], padding=([1, 0], [0, 2]), kernel_dilation=[1, 2], input_dilation=1, groups=1, flip=False),
    dict(stride=1, padding=1, kernel_dilation=1, input_dilation=[2, 1], groups=2, flip=True),
    dict(stride=[1, 3], padding=([-1, 0], [0, 0]), kernel_dilation=1, input_dilation=1, groups=2, flip=False),
]


@pytest.mark.parametrize("params", GRAD_CASES)
def test_gradients_match_finite_differences(params):
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (2, 5, 6, 4))
    w = rng.uniform(-1, 1, (4, 2, 3, 4 // params["groups"]))
    f64 = lambda a: mx.array(a, mx.float64)  # noqa: E731
    v = rng.uniform(-1, 1, mx.conv_general(f64(x), f64(w), **params).shape)

    def loss(x, w):
        return (mx.conv_general(x, w, **params) * f64(v)).sum()

    gx, gw = mx.grad(loss, argnums=(0, 1))(f64(x), f64(w))
    eps = 1e-6
    for value, g, index in [(x, gx, 0), (w, gw, 1)]:
        direction = rng.uniform(-1, 1, value.shape)
        args = [f64(x), f64(w)]
        args[index] = f64(value + eps * direction)
        plus = loss(*args).item()
        args[index] = f64(value - eps * direction)
        minus = loss(*args).item()
        fd = (plus - minus) / (2 * eps)
        assert abs(float((np.array(g) * direction).sum()) - fd) < 1e-6 * (1 + abs(fd))


def test_vmap_matches_a_loop():
    rng = np.random.default_rng(5)
    xs = mx.array(rng.uniform(-1, 1, (3, 2, 6, 4)), mx.float64)
    ws = mx.array(rng.uniform(-1, 1, (3, 4, 3, 2)), mx.float64)
    f = lambda x, w: mx.conv1d(x, w, stride=2, padding=1, groups=2)
    for in_axes, pick in [((0, 0), lambda i: (xs[i], ws[i])), ((0, None), lambda i: (xs[i], ws[0])), ((None, 0), lambda i: (xs[0], ws[i]))]:
        got = mx.vmap(f, in_axes=in_axes)(xs if in_axes[0] is not None else xs[0], ws if in_axes[1] is not None else ws[0])
        want = np.stack([np.array(f(*pick(i))) for i in range(3)])
        np.testing.assert_allclose(np.array(got), want, rtol=1e-12, atol=1e-12)


def test_layers_repr_parameters_and_init():
    reprs = [
        (nn.Conv1d(4, 8, 3), "Conv1d(4, 8, kernel_size=3, stride=1, padding=0, dilation=1, groups=1, bias=True)", {"weight": (8, 3, 4), "bias": (8,)}),
        (nn.Conv1d(4, 8, 3, stride=2, padding=1, bias=False), "Conv1d(4, 8, kernel_size=3, stride=2, padding=1, dilation=1, groups=1, bias=False)", {"weight": (8, 3, 4)}),
        (nn.Conv2d(4, 8, 3), "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=(0, 0), dilation=1, groups=1, bias=True)", {"weight": (8, 3, 3, 4), "bias": (8,)}),
        (nn.Conv2d(4, 8, (3, 2), groups=2), "Conv2d(4, 8, kernel_size=(3, 2), stride=(1, 1), padding=(0, 0), dilation=1, groups=2, bias=True)", {"weight": (8, 3, 2, 2), "bias": (8,)}),
        (nn.Conv3d(4, 8, 3, stride=2, padding=1, bias=False), "Conv3d(4, 8, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), dilation=1, bias=False)", {"weight": (8, 3, 3, 3, 4)}),
        (nn.ConvTranspose1d(4, 8, 3), "ConvTranspose1d(4, 8, kernel_size=3, stride=1, padding=0, dilation=1, output_padding=0, bias=True)", {"weight": (8, 3, 4), "bias": (8,)}),
        (nn.ConvTranspose2d(4, 8, 3, output_padding=1), "ConvTranspose2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=(0, 0), dilation=1, output_padding=(1, 1), bias=True)", {"weight": (8, 3, 3, 4), "bias": (8,)}),
        (nn.ConvTranspose3d(4, 8, 3, stride=2, padding=1, bias=False), "ConvTranspose3d(4, 8, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), dilation=1, output_padding=(0, 0, 0), bias=False)", {"weight": (8, 3, 3, 3, 4)}),
    ]
    for layer, text, shapes in reprs:
        assert repr(layer) == text
        params = layer.parameters()
        assert {k: tuple(v.shape) for k, v in params.items()} == shapes
        fan_in = math.prod(layer.weight.shape[1:])
        bound = math.sqrt(1 / fan_in)
        assert np.abs(np.array(layer.weight)).max() <= bound
        if "bias" in params:
            assert not np.array(layer.bias).any()
    with pytest.raises(ValueError, match="divisible by the number of groups"):
        nn.Conv2d(5, 8, 3, groups=2)
    y = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)(mx.ones((2, 5, 5, 4)))
    assert y.shape == (2, 10, 10, 6)
    assert nn.Conv3d(2, 3, 2)(mx.ones((1, 3, 3, 3, 2))).shape == (1, 2, 2, 2, 3)


def test_conv2d_training_step():
    mx.random.seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 3, stride=2))
    rng = np.random.default_rng(6)
    x = mx.array(rng.uniform(-1, 1, (4, 9, 9, 3)).astype(np.float32))
    target = mx.array(rng.uniform(-1, 1, (4, 4, 4, 2)).astype(np.float32))

    def loss_fn(model, x, target):
        return ((model(x) - target) ** 2).mean()

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    loss, grads = loss_and_grad(model, x, target)
    # The weight gradient of the last layer against finite differences (float32, so loose).
    w = model.layers[2].weight
    direction = mx.array(rng.uniform(-1, 1, w.shape).astype(np.float32))
    eps = 1e-2
    model.layers[2].weight = w + eps * direction
    plus = loss_fn(model, x, target).item()
    model.layers[2].weight = w - eps * direction
    minus = loss_fn(model, x, target).item()
    model.layers[2].weight = w
    fd = (plus - minus) / (2 * eps)
    analytic = (grads["layers"][2]["weight"] * direction).sum().item()
    assert abs(analytic - fd) < 1e-3 * (1 + abs(fd))
    optimizer = optim.SGD(learning_rate=0.1)
    losses = [loss.item()]
    for _ in range(5):
        loss, grads = loss_and_grad(model, x, target)
        optimizer.update(model, grads)
        mx.eval(model.parameters())
        losses.append(loss_fn(model, x, target).item())
    assert losses[-1] < losses[0]
