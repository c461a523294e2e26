"""`mx.fast.gated_delta_update` against a NumPy loop over the time steps in float64;
gradients against finite differences, vmap against a Python loop; result dtypes and
exception types as measured with mlx 0.32.4; and agreement with the ops version of the
recurrence in mlx-lm's model code."""

import numpy as np
import pytest

import lazulite.core as mx

rng = np.random.default_rng(11)


def normal(*shape):
    return rng.normal(size=shape).astype(np.float32)


def unit(*shape):
    return rng.uniform(0.1, 0.9, size=shape).astype(np.float32)


def f64(a):
    return mx.array(a, dtype=mx.float64)


def np_gated_delta(q, k, v, gamma, beta, state=None, mask=None):
    """The recurrence written out: decay, delta-rule write, read-out; a masked-out step
    keeps the state and outputs zeros."""
    q, k, v, gamma, beta = (np.asarray(t, np.float64) for t in (q, k, v, gamma, beta))
    b, steps, hk, dk = q.shape
    hv, dv = v.shape[2:]
    s = np.zeros((b, hv, dv, dk)) if state is None else np.array(state, np.float64)
    q, k = np.repeat(q, hv // hk, axis=2), np.repeat(k, hv // hk, axis=2)
    outs = []
    for t in range(steps):
        decay = gamma[:, t, :, None, None] if gamma.ndim == 3 else gamma[:, t, :, None, :]
        nxt = s * decay
        recalled = np.einsum("bhvk,bhk->bhv", nxt, k[:, t])
        delta = (v[:, t] - recalled) * beta[:, t, :, None]
        nxt = nxt + delta[..., None] * k[:, t, :, None, :]
        keep = np.ones(b, bool) if mask is None else np.asarray(mask)[:, t].astype(bool)
        s = np.where(keep[:, None, None, None], nxt, s)
        out = np.einsum("bhvk,bhk->bhv", s, q[:, t])
        outs.append(np.where(keep[:, None, None], out, 0.0))
    return np.stack(outs, axis=1), s


def inputs(b=2, steps=4, hk=2, dk=4, hv=4, dv=3, vector_gate=False):
    gamma = unit(b, steps, hv, dk) if vector_gate else unit(b, steps, hv)
    return [normal(b, steps, hk, dk) * 0.5, normal(b, steps, hk, dk) * 0.5, normal(b, steps, hv, dv),
            gamma, unit(b, steps, hv)]


@pytest.mark.parametrize("heads", [(2, 2), (2, 4), (1, 3)])
@pytest.mark.parametrize("vector_gate", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_values_match_a_numpy_loop(heads, vector_gate, with_state):
    hk, hv = heads
    args = inputs(hk=hk, hv=hv, vector_gate=vector_gate)
    state = normal(2, hv, 3, 4) if with_state else None
    out, final = mx.fast.gated_delta_update(*map(mx.array, args),
                                            initial_state=None if state is None else mx.array(state))
    want_out, want_state = np_gated_delta(*args, state)
    assert out.shape == (2, 4, hv, 3) and final.shape == (2, hv, 3, 4)
    assert out.dtype == mx.float32 and final.dtype == mx.float32
    np.testing.assert_allclose(np.array(out), want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.array(final), want_state, rtol=1e-5, atol=1e-5)


def test_mask_skips_steps():
    args = inputs()
    state = normal(2, 4, 3, 4)
    mask = np.array([[True, False, True, True], [False, False, True, False]])
    out, final = mx.fast.gated_delta_update(*map(mx.array, args), mx.array(state), mx.array(mask))
    want_out, want_state = np_gated_delta(*args, state, mask)
    np.testing.assert_allclose(np.array(out), want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.array(final), want_state, rtol=1e-5, atol=1e-5)
    assert not np.array(out)[0, 1].any()
    # A numeric mask is cast to bool, as MLX does.
    out2, _ = mx.fast.gated_delta_update(*map(mx.array, args), mx.array(state), mx.array(mask.astype(np.int32)))
    np.testing.assert_array_equal(np.array(out2), np.array(out))


def test_returns_a_list_and_takes_keywords():
    q, k, v, g, b = map(mx.array, inputs())
    result = mx.fast.gated_delta_update(q=q, k=k, v=v, gamma=g, beta=b, initial_state=None, mask=None, stream=None)
    assert isinstance(result, list) and len(result) == 2


@pytest.mark.parametrize("dtypes, out_dtype, state_dtype", [
    # (q, k, others), as mlx 0.32.4 gives them.
    (("float16", "float16", "float16"), "float16", "float32"),
    (("bfloat16", "bfloat16", "float32"), "bfloat16", "float32"),
    (("float16", "float32", "bfloat16"), "float32", "float32"),
    (("float16", "bfloat16", "float32"), "float32", "float32"),
    (("int32", "int32", "float32"), "float32", "float32"),
    (("bool_", "bool_", "float32"), "float32", "float32"),
    (("float64", "float32", "float32"), "float64", "float64"),
    (("float32", "float32", "float64"), "float32", "float32"),
    (("complex64", "float32", "float32"), "complex64", "complex64"),
])
def test_result_dtypes_follow_mlx(dtypes, out_dtype, state_dtype):
    dq, dk, rest = (getattr(mx, d) for d in dtypes)
    q, k, v, g, b = map(mx.array, inputs())
    out, final = mx.fast.gated_delta_update(q.astype(dq), k.astype(dk), v.astype(rest), g.astype(rest), b.astype(rest))
    assert (out.dtype, final.dtype) == (getattr(mx, out_dtype), getattr(mx, state_dtype))


def test_half_precision_rounds_inputs_then_computes_in_float32():
    args = inputs()
    halves = [a.astype(np.float16) for a in args]
    out, final = mx.fast.gated_delta_update(*(mx.array(h) for h in halves))
    want_out, want_state = np_gated_delta(*halves)
    np.testing.assert_array_equal(np.array(out), want_out.astype(np.float16))
    np.testing.assert_allclose(np.array(final), want_state, rtol=1e-5, atol=1e-6)
    # A float16 initial state is widened to float32; q and k decide the output dtype, to
    # which the other inputs are rounded.
    out, final = mx.fast.gated_delta_update(*(mx.array(h) for h in halves[:2]), *map(mx.array, args[2:]),
                                            initial_state=mx.zeros((2, 4, 3, 4), mx.float16))
    assert (out.dtype, final.dtype) == (mx.float16, mx.float32)
    np.testing.assert_allclose(np.array(final), np_gated_delta(*halves)[1], rtol=1e-5, atol=1e-6)


def test_float64_state_is_widened_from_float32():
    # The initial state goes through float32 even when the inputs are float64.
    args = [a.astype(np.float64) + 1e-9 for a in inputs()]
    state = rng.normal(size=(2, 4, 3, 4))
    out, final = mx.fast.gated_delta_update(*map(f64, args), initial_state=f64(state))
    want_out, want_state = np_gated_delta(*args, state.astype(np.float32))
    assert final.dtype == mx.float64
    np.testing.assert_allclose(np.array(out), want_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.array(final), want_state, rtol=1e-12, atol=1e-12)


def test_empty_batch_and_single_step():
    args = inputs(b=0)
    out, final = mx.fast.gated_delta_update(*map(mx.array, args))
    assert out.shape == (0, 4, 4, 3) and final.shape == (0, 4, 3, 4)
    args = inputs(steps=1)
    out, final = mx.fast.gated_delta_update(*map(mx.array, args))
    np.testing.assert_allclose(np.array(out), np_gated_delta(*args)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("change, error", [
    # The exception types of mlx 0.32.4, which raises them from the ops the inputs reach.
    (dict(q=lambda a: a[0]), IndexError),
    (dict(v=lambda a: a[0]), IndexError),
    (dict(k=lambda a: a[:, :2]), ValueError),
    (dict(v=lambda a: a[:, :2]), ValueError),
    (dict(gamma=lambda a: a[:, :, :2]), ValueError),
    (dict(beta=lambda a: a[..., :2]), ValueError),
    (dict(beta=lambda a: a[0, 0, 0]), IndexError),
    (dict(gamma=lambda a: mx.ones((2, 4, 4, 3))), ValueError),
    (dict(initial_state=lambda a: mx.zeros((2, 4, 3, 3))), ValueError),
    (dict(mask=lambda a: mx.ones(2, mx.bool_)), IndexError),
    (dict(q=lambda a: a[:, :0], k=lambda a: a[:, :0], v=lambda a: a[:, :0], gamma=lambda a: a[:, :0],
          beta=lambda a: a[:, :0]), ValueError),
    (dict(q=lambda a: a[:, :, :0], k=lambda a: a[:, :, :0]), ValueError),
])
def test_errors_have_mlx_types(change, error):
    names = ["q", "k", "v", "gamma", "beta"]
    kwargs = dict(zip(names, map(mx.array, inputs())))
    kwargs["initial_state"] = kwargs["mask"] = None
    for name, f in change.items():
        kwargs[name] = f(kwargs[name])
    with pytest.raises(error):
        out, state = mx.fast.gated_delta_update(**kwargs)
        mx.eval(out, state)


def test_no_time_steps_message():
    q, k, v, g, b = (mx.array(a[:, :0]) for a in inputs())
    with pytest.raises(ValueError, match=r"^\[stack\] No arrays provided for stacking$"):
        mx.fast.gated_delta_update(q, k, v, g, b)


def finite_difference_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("vector_gate", [False, True])
def test_gradients_match_finite_differences(vector_gate):
    args = [a.astype(np.float64) for a in inputs(b=1, steps=3, hk=1, dk=3, hv=2, dv=2, vector_gate=vector_gate)]
    mask = np.array([[True, False, True]])
    w_out, w_state = rng.normal(size=(1, 3, 2, 2)), rng.normal(size=(1, 2, 2, 3))

    def loss_np(*xs):
        out, state = np_gated_delta(*xs, mask=mask)
        return np.sum(out * w_out) + np.sum(state * w_state)

    def loss_lz(*xs):
        out, state = mx.fast.gated_delta_update(*xs, mask=mx.array(mask))
        return mx.sum(out * f64(w_out)) + mx.sum(state * f64(w_state))

    grads = mx.grad(loss_lz, argnums=(0, 1, 2, 3, 4))(*map(f64, args))
    for i, got in enumerate(grads):
        want = finite_difference_grad(lambda x: loss_np(*args[:i], x, *args[i + 1:]), args[i])
        np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-7, err_msg=f"argument {i}")


def test_gradient_with_respect_to_the_initial_state():
    args = [a.astype(np.float64) for a in inputs(b=1, steps=2, hk=1, dk=2, hv=1, dv=2)]
    state = rng.normal(size=(1, 1, 2, 2))

    def loss_lz(s):
        out, final = mx.fast.gated_delta_update(*map(f64, args), initial_state=s)
        return mx.sum(out * out) + mx.sum(final)

    def loss_np(s):
        out, final = np_gated_delta(*args, s)
        return np.sum(out * out) + np.sum(final)

    got = mx.grad(loss_lz)(mx.array(state.astype(np.float32)))
    assert got.dtype == mx.float32
    np.testing.assert_allclose(np.array(got), finite_difference_grad(loss_np, state), rtol=1e-4, atol=1e-5)


def test_vmap_matches_a_loop():
    # Batched over a leading axis of q and v (the others shared), and over the state.
    q, k, v, g, b = inputs()
    qs, vs, states = normal(3, *q.shape), normal(3, *v.shape), normal(3, 2, 4, 3, 4)

    def f(q_, v_, s_):
        return mx.fast.gated_delta_update(q_, mx.array(k), v_, mx.array(g), mx.array(b), initial_state=s_)

    outs, finals = mx.vmap(f)(mx.array(qs), mx.array(vs), mx.array(states))
    for i in range(3):
        want_out, want_state = np_gated_delta(qs[i], k, vs[i], g, b, states[i])
        np.testing.assert_allclose(np.array(outs[i]), want_out, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.array(finals[i]), want_state, rtol=1e-5, atol=1e-5)
    # Batched on a later axis of the mask.
    masks = rng.random((2, 4, 3)) > 0.4
    outs, finals = mx.vmap(lambda m: mx.fast.gated_delta_update(*map(mx.array, (q, k, v, g, b)), mask=m),
                           in_axes=2)(mx.array(masks))
    for i in range(3):
        want_out, want_state = np_gated_delta(q, k, v, g, b, mask=masks[..., i])
        np.testing.assert_allclose(np.array(outs[i]), want_out, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.array(finals[i]), want_state, rtol=1e-5, atol=1e-5)
    # Per-head gates batched (each example sees its own 3-D gamma), and every input
    # batched with per-feature gates.
    gs = unit(3, *g.shape)
    outs, _ = mx.vmap(lambda g_: mx.fast.gated_delta_update(*map(mx.array, (q, k, v)), g_, mx.array(b)))(mx.array(gs))
    for i in range(3):
        np.testing.assert_allclose(np.array(outs[i]), np_gated_delta(q, k, v, gs[i], b)[0], rtol=1e-5, atol=1e-5)
    xs = [np.stack([a, a * 0.9]) for a in inputs(vector_gate=True)]
    outs, finals = mx.vmap(mx.fast.gated_delta_update)(*map(mx.array, xs))
    for i in range(2):
        want_out, want_state = np_gated_delta(*(x[i] for x in xs))
        np.testing.assert_allclose(np.array(outs[i]), want_out, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.array(finals[i]), want_state, rtol=1e-5, atol=1e-5)


def test_compile_matches_eager():
    args = list(map(mx.array, inputs(vector_gate=True)))
    eager = mx.fast.gated_delta_update(*args)
    compiled = mx.compile(lambda *xs: mx.fast.gated_delta_update(*xs))(*args)
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6, atol=1e-6)


def test_agrees_with_mlx_lm_ops_recurrence():
    gated_delta = pytest.importorskip("mlx_lm.models.gated_delta")
    for vector_gate, use_mask in [(False, False), (True, False), (False, True)]:
        q, k, v, g, b = map(mx.array, inputs(vector_gate=vector_gate))
        state = mx.array(normal(2, 4, 3, 4))
        mask = mx.array(rng.random((2, 4)) > 0.3) if use_mask else None
        want = gated_delta.gated_delta_ops(q, k, v, g, b, state, mask)
        got = mx.fast.gated_delta_update(q, k, v, g, b, state, mask)
        # mlx-lm's loop leaves the output of a masked-out step as computed; the state agrees.
        if not use_mask:
            np.testing.assert_allclose(np.array(got[0]), np.array(want[0]), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.array(got[1]), np.array(want[1]), rtol=1e-5, atol=1e-5)
