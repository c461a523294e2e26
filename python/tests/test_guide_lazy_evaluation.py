"""The examples of MLX's guide page on lazy evaluation that run without mlx.nn (`mx` =
lazulite.core), with small stand-ins for the functions the text leaves undefined.
The Model / load_weights and training-loop examples use `lazulite.nn` and are in
test_nn.py."""

import numpy as np

import lazulite.core as mx
from conftest import needs_core_rules


def test_only_compute_what_you_use():
    calls = []

    def fun1(x):
        return x + 1

    def expensive_fun(a):
        calls.append("recorded")
        return mx.matmul(a, a.T)

    def fun(x):
        a = fun1(x)
        b = expensive_fun(a)
        return a, b

    x = mx.ones((64, 64))
    memory_before = mx.get_active_memory()
    y, _ = fun(x)
    # The graph of expensive_fun is built (the Python ran) but its 16 KiB product is not.
    assert calls == ["recorded"] and mx.get_active_memory() - memory_before < 64 * 64 * 4
    assert y.sum().item() == 2 * 64 * 64


def test_when_to_evaluate_loop():
    a = mx.array([1.0])
    b = mx.array([1.0])
    for _ in range(100):
        a = a + b
        mx.eval(a)
        b = b * 2
        mx.eval(b)
    assert a.item() == 2.0**100
    mx.eval(a)
    mx.eval(a, b)  # evaluating again is a no-op


@needs_core_rules
def test_value_and_grad_loop_with_eval():
    def loss(params, batch):
        return mx.mean(mx.square(params["w"] * batch - 1.0))

    value_and_grad_fn = mx.value_and_grad(loss)
    params = {"w": mx.array(0.0)}
    dataset = [mx.array([1.0, 2.0]), mx.array([0.5, 1.5])]
    losses = []
    for batch in dataset:
        value, grad = value_and_grad_fn(params, batch)
        params = {"w": params["w"] - 0.1 * grad["w"]}
        mx.eval(value, params)
        losses.append(value.item())
    assert losses[0] == 1.0 and losses[1] < losses[0]


@needs_core_rules
def test_scalar_control_flow_evaluates_and_works_under_grad():
    def first_layer(x):
        return x * 2, x.sum()

    def fun(x):
        h, y = first_layer(x)
        if y > 0:  # An evaluation is done here!
            z = mx.sin(h)
        else:
            z = mx.cos(h)
        return z

    x = mx.array([0.5, 0.25])
    assert fun(x).tolist() == mx.sin(x * 2).tolist()
    assert fun(-x).tolist() == mx.cos(-x * 2).tolist()
    g = mx.grad(lambda t: fun(t).sum())(x)
    assert mx.allclose(g, 2 * mx.cos(x * 2)).item()


def test_async_eval_computes_like_eval():
    x = mx.array([1.0, 2.0])
    y = {"a": [mx.exp(x)], "b": (x * 3, "not an array")}
    mx.async_eval(y)
    np.testing.assert_allclose(np.array(y["a"][0]), np.exp([1.0, 2.0]), rtol=1e-6)
    assert np.array(y["b"][0]).tolist() == [3.0, 6.0]
