"""mx.custom_function and mx.checkpoint: the examples of MLX's documentation, with the
argument forms MLX passes to the rules (checked against mlx 0.32.4), and analytic
derivatives as the oracle."""

import math

import numpy as np
import pytest

import lazulite.core as mx


def make_f():
    @mx.custom_function
    def f(x, y):
        return mx.sin(x) * y

    return f


def test_custom_vjp_is_used_and_gets_tuples():
    f = make_f()
    seen = {}

    @f.vjp
    def f_vjp(primals, cotangent, output):
        seen["types"] = (type(primals), type(cotangent), type(output))
        x, y = primals
        # Scaled by 10, to tell the custom rule from the default one.
        return 10 * cotangent * mx.cos(x) * y, cotangent * mx.sin(x)

    assert isinstance(f_vjp, mx.custom_function)
    x, y = mx.array(0.5), mx.array(2.0)
    assert f(x, y).item() == pytest.approx(math.sin(0.5) * 2.0, rel=1e-6)
    dx, dy = mx.grad(f, argnums=(0, 1))(x, y)
    assert dx.item() == pytest.approx(10 * math.cos(0.5) * 2.0, rel=1e-6)
    assert dy.item() == pytest.approx(math.sin(0.5), rel=1e-6)
    assert seen["types"] == (tuple, mx.array, mx.array)


def test_one_argument_rules_get_the_argument_itself():
    @mx.custom_function
    def g(x):
        return x * 3

    @g.vjp
    def g_vjp(p, c, o):
        assert isinstance(p, mx.array) and isinstance(c, mx.array) and isinstance(o, mx.array)
        return c * 10

    @g.jvp
    def g_jvp(p, t):
        assert isinstance(p, mx.array) and isinstance(t, mx.array)
        return t * 7

    @g.vmap
    def g_vmap(inputs, axes):
        assert axes == 0
        return inputs * 5, axes

    x = mx.array(1.0)
    assert mx.grad(g)(x).item() == 10.0
    _, tangents = mx.jvp(g, [x], [mx.array(1.0)])
    assert tangents[0].item() == 7.0
    assert np.array(mx.vmap(g)(mx.array([1.0, 2.0]))).tolist() == [5.0, 10.0]
    assert g(x).item() == 3.0


def test_custom_jvp_and_vmap_docs_example():
    f = make_f()

    @f.jvp
    def f_jvp(primals, tangents):
        x, y = primals
        dx, dy = tangents
        return dx * mx.cos(x) * y + dy * mx.sin(x)

    @f.vmap
    def f_vmap(inputs, axes):
        x, y = inputs
        ax, ay = axes
        if ay != ax and ax is not None:
            y = y.swapaxes(ay, ax)
        return mx.sin(x) * y, (ax or ay)

    x, y = mx.array(0.3), mx.array(-1.5)
    _, (t,) = mx.jvp(f, [x, y], [mx.array(1.0), mx.array(2.0)])
    assert t.item() == pytest.approx(math.cos(0.3) * -1.5 + 2 * math.sin(0.3), rel=1e-6)
    xs = mx.array(np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3))
    ys = mx.array(np.linspace(1, 2, 6, dtype=np.float32).reshape(3, 2))
    out = mx.vmap(f, in_axes=(0, 1))(xs, ys)
    loop = np.stack([np.sin(np.array(xs)[i]) * np.array(ys)[:, i] for i in range(2)])
    # The documented rule returns `ax or ay`, which is 1 when ax is 0: the result is read
    # with its batch on axis 1 and comes out transposed (mlx 0.32.4 gives the same).
    np.testing.assert_allclose(np.array(out), loop.T, rtol=1e-6)


def test_captured_arrays_are_constants_docs_example():
    def g(x, y):
        @mx.custom_function
        def f(x):
            return x * y

        @f.vjp
        def f_vjp(x, dx, fx):
            raise ValueError("Abort!")

        return f(x)

    x, y = mx.array(2.0), mx.array(3.0)
    assert g(x, y).item() == 6.0
    with pytest.raises(ValueError, match="Abort!"):
        mx.grad(g)(x, y)
    assert mx.grad(g, argnums=1)(x, y).item() == 0.0


def test_trees_and_missing_rules_fall_back():
    @mx.custom_function
    def tree(d):
        return {"a": d["u"] * d["v"]}

    @tree.vjp
    def tree_vjp(p, c, o):
        assert set(p) == {"u", "v"} and set(c) == {"a"} and set(o) == {"a"}
        return ({"u": c["a"], "v": c["a"]},)

    x, y = mx.array(2.0), mx.array(5.0)
    grads = mx.grad(lambda d: tree(d)["a"])({"u": x, "v": y})
    assert grads["u"].item() == 1.0 and grads["v"].item() == 1.0

    plain = mx.custom_function(lambda x: mx.exp(x) * 2)
    assert mx.grad(plain)(mx.array(0.0)).item() == pytest.approx(2.0)
    _, (t,) = mx.jvp(plain, [mx.array(0.0)], [mx.array(3.0)])
    assert t.item() == pytest.approx(6.0)


def test_wrong_number_of_cotangents_is_an_error():
    f = make_f()

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return (cotangent,)

    with pytest.raises(ValueError, match="custom vjp"):
        mx.grad(f)(mx.array(1.0), mx.array(2.0))


def test_checkpoint_gives_the_same_gradients():
    def block(w, x):
        return mx.tanh(x @ w) @ w.T

    rng = np.random.default_rng(1)
    w = mx.array(rng.normal(size=(4, 4)).astype(np.float32))
    x = mx.array(rng.normal(size=(3, 4)).astype(np.float32))

    plain = mx.grad(lambda w: mx.sum(block(w, x) ** 2))(w)
    checkpointed = mx.grad(lambda w: mx.sum(mx.checkpoint(block)(w, x) ** 2))(w)
    np.testing.assert_allclose(np.array(checkpointed), np.array(plain), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(mx.checkpoint(block)(w, x)), np.array(block(w, x)))
