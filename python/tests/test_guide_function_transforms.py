"""Every example of MLX's guide page on function transforms, as written (`mx` = lazulite.core);
the vmap timing example checks results, not speed."""

import timeit

import numpy as np

import lazulite.core as mx
from conftest import needs_core_rules


def test_grad_of_sin():
    dfdx = mx.grad(mx.sin)
    assert repr(dfdx(mx.array(mx.pi))) == "array(-1, dtype=float32)"
    assert repr(mx.cos(mx.array(mx.pi))) == "array(-1, dtype=float32)"


def test_second_derivative():
    d2fdx2 = mx.grad(mx.grad(mx.sin))
    assert repr(d2fdx2(mx.array(mx.pi / 2))) == "array(-1, dtype=float32)"
    assert repr(mx.sin(mx.array(mx.pi / 2))) == "array(1, dtype=float32)"


def loss_fn(w, x, y):
    return mx.mean(mx.square(w * x - y))


w = mx.array(1.0)
x = mx.array([0.5, -0.5])
y = mx.array([1.5, -1.5])


@needs_core_rules
def test_grad_with_argnums(capsys):
    grad_fn = mx.grad(loss_fn)
    dloss_dw = grad_fn(w, x, y)
    print(dloss_dw)
    grad_fn = mx.grad(loss_fn, argnums=1)
    dloss_dx = grad_fn(w, x, y)
    print(dloss_dx)
    assert capsys.readouterr().out == (
        "array(-1, dtype=float32)\narray([-1, 1], dtype=float32)\n"
    )


@needs_core_rules
def test_value_and_grad(capsys):
    loss_and_grad_fn = mx.value_and_grad(loss_fn)
    loss, dloss_dw = loss_and_grad_fn(w, x, y)
    print(loss)
    print(dloss_dw)
    assert capsys.readouterr().out == "array(1, dtype=float32)\narray(-1, dtype=float32)\n"


@needs_core_rules
def test_gradient_of_a_parameter_dict(capsys):
    def loss_fn(params, x, y):
        w, b = params["weight"], params["bias"]
        h = w * x + b
        return mx.mean(mx.square(h - y))

    params = {"weight": mx.array(1.0), "bias": mx.array(0.0)}
    grad_fn = mx.grad(loss_fn)
    grads = grad_fn(params, x, y)
    print(grads)
    assert capsys.readouterr().out == (
        "{'weight': array(-1, dtype=float32), 'bias': array(0, dtype=float32)}\n"
    )


def test_vmap_add():
    xs = mx.random.uniform(shape=(4096, 100))
    ys = mx.random.uniform(shape=(100, 4096))

    def naive_add(xs, ys):
        return [xs[i] + ys[:, i] for i in range(xs.shape[1])]

    vmap_add = mx.vmap(lambda x, y: x + y, in_axes=(1, 0))
    timeit.timeit(lambda: mx.eval(naive_add(xs, ys)), number=1)
    timeit.timeit(lambda: mx.eval(vmap_add(xs, ys)), number=1)
    expected = np.array(xs).T + np.array(ys)
    np.testing.assert_array_equal(np.array(vmap_add(xs, ys)), expected)
    naive = np.array(xs)[:100] + np.array(ys)[:, :100].T
    np.testing.assert_array_equal(np.array(mx.stack(naive_add(xs, ys))), naive)
