"""mx.compile(fun, shapeless=True): one trace replayed at new input sizes, each node's
shape inferred again. Values are checked against the same function run eagerly; what
MLX 0.32.4 refuses in shapeless mode (measured with it) is refused here with its
exception type and message."""

import numpy as np
import pytest

import lazulite.core as mx

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return mx.array(RNG.standard_normal(shape).astype(dtype))


def counted(fun):
    """`fun` compiled shapelessly, and a list that grows by one per trace."""
    traces = []

    def traced(*args):
        traces.append(1)
        return fun(*args)

    return mx.compile(traced, shapeless=True), traces


def check(fun, *argsets, traces=1, rtol=1e-5, atol=1e-5):
    """Calls the shapeless compiled `fun` on each argument set, compares with eager."""
    compiled, count = counted(fun)
    for args in argsets:
        got, expected = compiled(*args), fun(*args)
        got = got if isinstance(got, (list, tuple)) else [got]
        expected = expected if isinstance(expected, (list, tuple)) else [expected]
        for g, e in zip(got, expected, strict=True):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(np.array(g), np.array(e), rtol=rtol, atol=atol)
    assert len(count) == traces


def test_elementwise_chain_traces_once_for_many_shapes():
    def f(x, y):
        a = mx.abs(mx.cos(-mx.sin(mx.log(x * x + 1.0))))
        return mx.arctan(mx.sinh(a)) * y - 0.5

    check(f, *[(rand(*s), rand(*s)) for s in [(2, 3), (5, 7), (1, 1), (300, 700), (0, 4)]])


def test_new_dimension_count_or_dtype_traces_again():
    compiled, traces = counted(lambda x: x * 2)
    compiled(rand(2, 3))
    compiled(rand(4, 5))
    assert len(traces) == 1
    compiled(rand(4, 5, 6))
    assert len(traces) == 2
    compiled(rand(4, 5, dtype=np.float16))
    assert len(traces) == 3
    compiled(rand(9, 9))
    assert len(traces) == 3


def test_broadcasting_between_inputs():
    check(
        lambda x, y, z: mx.where(x > 0, y, z) + x * y,
        (rand(2, 3), rand(3), rand(2, 1)),
        (rand(4, 5), rand(5), rand(4, 1)),
        (rand(4, 5), rand(1), rand(1, 5)),
    )


def test_operands_of_one_shape_are_not_broadcast_on_replay():
    # A shapeless trace broadcasts both operands of every binary op so that a replay at
    # other shapes can; a replay where they already match records no broadcast at all.
    compiled, traces = counted(lambda g, x: g * mx.sigmoid(g) * x)
    mx.eval(compiled(rand(1, 8), rand(1, 8)))
    for g, x in [(rand(1, 8), rand(1, 8)), (rand(2, 5), rand(2, 5)), (rand(3, 4), rand(1, 4))]:
        mx.start_profile()
        got = compiled(g, x)
        mx.eval(got)
        counts = {row["primitive"]: row["calls"] for row in mx.stop_profile()}
        gn, xn = np.array(g, dtype=np.float64), np.array(x, dtype=np.float64)
        np.testing.assert_allclose(np.array(got), gn / (1 + np.exp(-gn)) * xn, rtol=1e-5)
        assert got.shape == np.broadcast_shapes(g.shape, x.shape)
        broadcasts = counts.get("broadcast_axes", 0)
        assert broadcasts == (0 if g.shape == x.shape else 1)
    assert len(traces) == 1


def test_broadcast_against_a_captured_array():
    c = rand(3)
    compiled, _ = counted(lambda x: x + c)
    np.testing.assert_allclose(np.array(compiled(x := rand(6, 3))), np.array(x + c))
    with pytest.raises(ValueError, match=r"^\[broadcast_shapes\] Shapes \(4,5\) and \(3\) cannot"):
        compiled(rand(4, 5))


def test_reductions():
    def f(x):
        return (
            x.sum(axis=-1),
            x.sum(),
            mx.mean(x, axis=0),
            mx.var(x, axis=-1, ddof=1),
            mx.std(x),
            x.max(axis=1, keepdims=True),
            mx.argmax(x, axis=-1),
            mx.logsumexp(x, axis=-1),
            mx.cumsum(x, axis=1),
            mx.sort(x, axis=-1),
        )

    check(f, (rand(2, 3),), (rand(4, 5),), (rand(17, 2),))


def test_reshape_with_inferred_dimension():
    check(
        lambda x: (x.reshape(-1), x.reshape(2, -1), mx.flatten(x, 0, 1)),
        (rand(2, 3),),
        (rand(4, 5),),
    )


def test_reshape_to_fixed_sizes_keeps_them():
    compiled, _ = counted(lambda x: x.reshape(6))
    assert compiled(rand(3, 2)).shape == (6,)
    with pytest.raises(ValueError, match=r"^\[reshape\] Cannot reshape array of size 20 into shape \(6\)\.$"):
        compiled(rand(4, 5))
    compiled, _ = counted(lambda x: x.reshape(2, -1))
    assert compiled(rand(2, 3)).shape == (2, 3)
    assert compiled(rand(4, 5)).shape == (2, 10)
    with pytest.raises(ValueError, match=r"^\[reshape\] Cannot reshape array of size 9 into shape \(2,4\)\.$"):
        compiled(rand(3, 3))


def test_expand_dims_squeeze_transpose_concatenate():
    check(
        lambda x, y: (
            mx.expand_dims(x, 0),
            x[None],
            mx.squeeze(y, 0),
            x.T,
            mx.swapaxes(x, 0, 1),
            mx.concatenate([x, x * 2], axis=0),
        ),
        (rand(2, 3), rand(1, 3)),
        (rand(4, 5), rand(1, 7)),
    )
    compiled, _ = counted(lambda x: mx.squeeze(x, 0))
    with pytest.raises(ValueError, match=r"^\[squeeze\] Cannot squeeze axis 0 with size 2"):
        compiled(rand(2, 5))


def test_slices_cannot_infer_their_shapes():
    for fun in [lambda x: x[1:], lambda x: x[:, :2], lambda x: mx.pad(x, 1)]:
        compiled, _ = counted(fun)
        with pytest.raises(ValueError, match=r"^\[Primitive::output_shapes\] \w+ cannot infer"):
            compiled(rand(4, 3))


def test_slice_update_with_an_update_of_the_new_size():
    def f(x, y):
        x[:, :2] = y
        return x

    check(f, (rand(2, 3), rand(2, 2)), (rand(4, 5), rand(4, 2)), (rand(7, 2), rand(7, 2)))


def test_matmul_with_varying_batch_and_middle_dimensions():
    check(
        lambda a, b: a @ b,
        (rand(2, 3), rand(3, 4)),
        (rand(5, 6), rand(6, 7)),
    )
    check(
        lambda a, b: a @ b,
        (rand(2, 2, 3), rand(3, 4)),
        (rand(3, 5, 3), rand(3, 4)),
        (rand(1, 8, 3), rand(3, 4)),
    )
    check(
        lambda a, b: a @ b,
        (rand(2, 2, 3), rand(1, 3, 4)),
        (rand(3, 5, 6), rand(1, 6, 2)),
        (rand(4, 5, 6), rand(4, 6, 2)),
    )
    check(lambda a, v: a @ v, (rand(2, 3), rand(3)), (rand(5, 6), rand(6)))


def test_softmax():
    check(
        lambda x: (mx.softmax(x, axis=-1), mx.softmax(x, axis=0)),
        (rand(2, 3),),
        (rand(8, 33),),
    )


def test_mlp():
    w1, b1, w2, b2 = rand(3, 16), rand(16), rand(16, 2), rand(2)

    def mlp(x):
        h = mx.maximum(x @ w1 + b1, 0.0)
        return mx.softmax(h @ w2 + b2, axis=-1)

    check(mlp, (rand(4, 3),), (rand(1, 3),), (rand(129, 3),))


def attention(x, wq, wk, wv, wo, heads=2):
    batch, dim = x.shape[0], x.shape[-1]

    def split(t):
        return t.reshape(batch, -1, heads, dim // heads).transpose(0, 2, 1, 3)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = (q @ k.swapaxes(-1, -2)) * (dim // heads) ** -0.5
    out = mx.softmax(scores, axis=-1) @ v
    out = out.transpose(0, 2, 1, 3).reshape(batch, -1, dim)
    return mx.fast.layer_norm(out @ wo + x, None, None, 1e-5)


def test_attention_block_with_varying_sequence_length():
    weights = [rand(8, 8) for _ in range(4)]
    check(attention, *[(rand(2, n, 8), *weights) for n in [3, 7, 1, 64]], atol=1e-4)


def test_attention_batch_size_is_fixed_by_its_reshape():
    # The batch size is read from x.shape while tracing: MLX keeps it in the reshape.
    weights = [rand(8, 8) for _ in range(4)]
    compiled, _ = counted(attention)
    compiled(rand(2, 3, 8), *weights)
    with pytest.raises(ValueError, match=r"^\[reshape\] Cannot reshape array of size"):
        compiled(rand(3, 7, 8), *weights)


def test_fast_norms_and_attention():
    check(
        lambda x, w: (mx.fast.rms_norm(x, w, 1e-5), mx.fast.layer_norm(x, w, None, 1e-5)),
        (rand(2, 3), rand(3)),
        (rand(4, 5), rand(5)),
    )
    check(
        lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5),
        *[(rand(1, 2, n, 4), rand(1, 2, n, 4), rand(1, 2, n, 4)) for n in [3, 6]],
    )


def test_gradient_of_a_shapeless_compiled_function():
    def loss(w, x):
        return mx.mean((x @ w).sum(axis=-1) ** 2)

    grad = mx.grad(mx.compile(loss, shapeless=True))
    w = rand(3, 2)
    for n in [4, 9]:
        x = rand(n, 3)
        np.testing.assert_allclose(
            np.array(grad(w, x)), np.array(mx.grad(loss)(w, x)), rtol=1e-5, atol=1e-5
        )


def test_state_and_constants_with_shapeless():
    total = [mx.array(0.0)]

    def accumulate(x, scale):
        total[0] = total[0] + x.sum() * scale
        return total[0]

    compiled = mx.compile(accumulate, inputs=total, outputs=total, shapeless=True)
    compiled(mx.ones((2, 3)), 2.0)
    compiled(mx.ones((4, 5)), 2.0)
    assert total[0].item() == 52.0


def test_gradient_and_vmap_through_fused_chains_at_new_sizes():
    def chain(x):
        return mx.sum(mx.exp(mx.sin(x) * 2.0 + 1.0) * x)

    compiled = mx.compile(chain, shapeless=True)
    for shape in [(3,), (11,), (40,)]:
        x = rand(*shape)
        np.testing.assert_allclose(
            np.array(mx.grad(compiled)(x)), np.array(mx.grad(chain)(x)), rtol=1e-5
        )
    per_row = mx.compile(lambda x: mx.tanh(mx.cos(x) * 3.0), shapeless=True)
    for rows in [2, 6]:
        x = rand(rows, 4)
        np.testing.assert_allclose(
            np.array(mx.vmap(per_row)(x)), np.array(mx.tanh(mx.cos(x) * 3.0)), rtol=1e-6
        )


def test_arrays_shaped_like_an_input_and_gathers():
    table = rand(10, 4)

    def f(x, ids):
        return mx.zeros_like(x) + mx.ones_like(x) * 2 + mx.full_like(x, 3.0), mx.take(table, ids, axis=0)

    ids = [mx.array(RNG.integers(0, 10, n).astype(np.int32)) for n in [3, 8]]
    check(f, (rand(2, 3), ids[0]), (rand(4, 5), ids[1]))



def test_scatters_replay_at_new_sizes():
    # MLX 0.32.4 refuses: "[Primitive::output_shapes] Scatter Sum cannot infer output
    # shapes." lazulite's scatter keeps the destination's shape, which the derivative of
    # a gather (an embedding lookup here) needs at new numbers of indices.
    table = rand(10, 4)

    def f(ids, x):
        return mx.grad(lambda t: (mx.take(t, ids, axis=0) * x).sum())(table)

    ids = [mx.array(RNG.integers(0, 10, n).astype(np.int32)) for n in [3, 8]]
    check(f, (ids[0], rand(3, 4)), (ids[1], rand(8, 4)))


def test_compiled_functions_inside_a_shapeless_one():
    inner = mx.compile(lambda x: mx.softmax(x, axis=-1).reshape(-1))
    check(lambda x: inner(x) * 2, (rand(2, 3),), (rand(4, 5),))


def _mlp_loss(params, x, labels):
    w1, b1, w2, b2 = params
    h = mx.maximum(x @ w1 + b1, 0.0)
    logits = h @ w2 + b2
    picked = mx.take_along_axis(logits, labels[:, None], axis=-1).squeeze(-1)
    return mx.mean(mx.logsumexp(logits, axis=-1) - picked)


def _mlp_params():
    return [rand(5, 6) * 0.5, rand(6) * 0.1, rand(6, 3) * 0.5, rand(3) * 0.1]


def _batch(n):
    return rand(n, 5), mx.array(RNG.integers(0, 3, n).astype(np.int32))


def test_value_and_grad_of_a_classifier_at_new_batch_sizes():
    params = _mlp_params()

    def step(x, labels):
        loss, grads = mx.value_and_grad(_mlp_loss)(params, x, labels)
        return (loss, *grads)

    check(step, *[_batch(n) for n in [4, 7, 16, 1]])


def test_per_example_gradients_jvp_and_vjp_at_new_batch_sizes():
    params = _mlp_params()

    def per_example(x, labels):
        one = lambda xi, yi: mx.grad(_mlp_loss)(params, xi[None], yi[None])  # noqa: E731
        return mx.vmap(one)(x, labels)

    def forward_and_reverse(x, labels):
        directions = [mx.sin(p) for p in params]
        _, (tangent,) = mx.jvp(lambda *p: _mlp_loss(list(p), x, labels), params, directions)
        logits = lambda *p: mx.maximum(x @ p[0] + p[1], 0.0) @ p[2] + p[3]  # noqa: E731
        _, pulled = mx.vjp(logits, params, [mx.cos(logits(*params))])
        return (tangent, *pulled)

    check(per_example, *[_batch(n) for n in [4, 7, 16]])
    check(forward_and_reverse, *[_batch(n) for n in [4, 7, 16]])


def test_vmap_of_grad_with_a_stopped_term():
    # MLX 0.32.4 raises "[reshape] Cannot reshape array of size 1 into shape (1,2)." on
    # every call of this shapeless compiled function; lazulite replays it.
    def example_loss(w, x, y):
        return mx.square(mx.tanh(x @ w) - y).sum() + 0.1 * (mx.stop_gradient(w) * w).sum()

    w = rand(3, 2)

    def per_example(xs, ys):
        return mx.vmap(mx.grad(example_loss), in_axes=(None, 0, 0))(w, xs, ys)

    check(per_example, (rand(4, 3), rand(4, 2)), (rand(6, 3), rand(6, 2)), (rand(1, 3), rand(1, 2)))


def test_gradients_through_inferred_reshapes():
    def loss(x, w):
        column = (x * w.sum()).reshape(-1, 1)
        return (column**2).sum() + mx.tanh(x @ w).flatten().sum()

    def loss_and_grads(x, w):
        value, grads = mx.value_and_grad(loss, argnums=(0, 1))(x, w)
        return (value, *grads)

    check(loss_and_grads, (rand(4, 3), rand(3, 3)), (rand(9, 3), rand(3, 3)))
