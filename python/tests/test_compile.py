"""mx.compile: same results as the plain function (NumPy is the oracle), traced once per
argument structure, captured state in and out as in MLX's documentation."""

import threading
from functools import partial

import numpy as np
import pytest

import lazulite.core as mx


def chain(x, y):
    a = mx.abs(mx.cos(-mx.sin(mx.log(x + x))))
    return mx.arctan(mx.round(mx.sinh(a))), mx.exp(a * y)


def chain_np(x, y):
    a = np.abs(np.cos(-np.sin(np.log(x + x))))
    return np.arctan(np.round(np.sinh(a))), np.exp(a * y)


@pytest.mark.parametrize("shape", [(), (7,), (3, 50_000), (300_001,)])
def test_compiled_chain_matches_numpy(shape):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 3.0, shape).astype(np.float32)
    y = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    out = mx.compile(chain)(mx.array(x), mx.array(y))
    for got, expected in zip(out, chain_np(x, y)):
        np.testing.assert_allclose(np.array(got), expected, rtol=1e-5, atol=1e-6)


def test_traces_once_per_structure_and_constants():
    calls = []

    @mx.compile
    def f(x, scale, opts):
        calls.append(1)
        return {"y": x * scale + opts["shift"], "z": [mx.exp(x)]}

    x = mx.array([1.0, 2.0])
    out = f(x, 2.0, {"shift": mx.array(1.0)})
    assert np.array(out["y"]).tolist() == [3.0, 5.0]
    np.testing.assert_allclose(np.array(out["z"][0]), np.exp([1.0, 2.0]), rtol=1e-6)
    f(mx.array([5.0, 6.0]), 2.0, {"shift": mx.array(0.0)})
    assert len(calls) == 1
    # A new constant, a new shape and a new dtype each trace again.
    assert np.array(f(x, 3.0, {"shift": mx.array(0.0)})["y"]).tolist() == [3.0, 6.0]
    f(mx.array([1.0, 2.0, 3.0]), 3.0, {"shift": mx.array(0.0)})
    f(x.astype(mx.float16), 3.0, {"shift": mx.array(0.0)})
    assert len(calls) == 4


def test_keyword_arguments():
    f = mx.compile(lambda x, *, power: mx.power(x, power))
    assert np.array(f(mx.array([2.0, 3.0]), power=mx.array(2.0))).tolist() == [4.0, 9.0]


def test_grad_of_compiled_and_compiled_grad():
    def loss(w, x):
        return mx.sum(mx.tanh(mx.sin(w) * x))

    w = mx.array([0.1, -0.4, 0.7])
    x = mx.array([1.0, 2.0, -1.5])
    expected = np.array(mx.grad(loss)(w, x))
    np.testing.assert_allclose(np.array(mx.grad(mx.compile(loss))(w, x)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.array(mx.compile(mx.grad(loss))(w, x)), expected, rtol=1e-6)
    wn, xn = np.array(w, dtype=np.float64), np.array(x, dtype=np.float64)
    analytic = (1 - np.tanh(np.sin(wn) * xn) ** 2) * np.cos(wn) * xn
    np.testing.assert_allclose(expected, analytic, rtol=1e-5)


def test_vmap_of_compiled_matches_loop():
    f = mx.compile(lambda a, b: mx.exp(a) * b + 1)
    xs = mx.array(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
    ys = mx.array(np.linspace(-1, 1, 4, dtype=np.float32))
    out = mx.vmap(f, in_axes=(0, None))(xs, ys)
    loop = np.stack([np.array(f(xs[i], ys)) for i in range(3)])
    np.testing.assert_allclose(np.array(out), loop, rtol=1e-6)


def test_state_outputs_example():
    # MLX's documentation: arrays appended to `outputs` state are updated after each call.
    state = []

    @partial(mx.compile, outputs=state)
    def fun(x, y):
        z = x + y
        state.append(z)
        return mx.exp(z)

    fun(mx.array(1.0), mx.array(2.0))
    assert len(state) == 1 and state[0].item() == 3.0
    fun(mx.array(4.0), mx.array(2.0))
    assert len(state) == 1 and state[0].item() == 6.0


def test_state_inputs_example():
    state = [mx.array(1.0)]

    @partial(mx.compile, inputs=state)
    def fun(x):
        return x + state[0]

    assert fun(mx.array(1.0)).item() == 2.0
    state[0] = mx.array(5.0)
    assert fun(mx.array(1.0)).item() == 6.0


def test_eval_inside_is_an_error_and_exceptions_pass_through():
    @mx.compile
    def branchy(x):
        return x if x.sum().item() > 0 else -x

    with pytest.raises(ValueError, match="compile"):
        branchy(mx.array([1.0]))

    @mx.compile
    def raises(x):
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        raises(mx.array([1.0]))


def test_disable_compile_runs_the_body():
    calls = []

    @mx.compile
    def f(x):
        calls.append(1)
        return x * 2

    mx.disable_compile()
    try:
        f(mx.array(1.0))
        f(mx.array(1.0))
    finally:
        mx.enable_compile()
    assert len(calls) == 2



def test_random_state_as_compiled_input_and_output_advances_the_key():
    @partial(mx.compile, inputs=mx.random.state, outputs=mx.random.state)
    def sample(logits):
        return mx.random.categorical(logits)

    mx.random.seed(7)
    logits = mx.arange(16, dtype=mx.float32)[None] / 4
    draws = [sample(logits).item() for _ in range(8)]
    # Real MLX 0.32.4, same calls: the draws, the key after them, and the next uniform.
    assert draws == [6, 15, 10, 11, 12, 6, 13, 12]
    assert mx.random.state[0].tolist() == [1083658926, 3631277925]
    assert mx.random.uniform().item() == pytest.approx(0.0633799135684967, abs=1e-7)

    # From another thread too; a seed there makes the draws repeat.
    results = {}

    def worker():
        results["tokens"] = {sample(logits).item() for _ in range(16)}
        mx.random.seed(1234)
        first = sample(logits).item()
        mx.random.seed(1234)
        results["repeat"] = (first, sample(logits).item())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert len(results["tokens"]) > 1 and results["repeat"][0] == results["repeat"][1]


def test_an_argument_nothing_else_holds_is_donated():
    # `x = f(x)`: the old x is held by nothing but the call, so its buffer takes the result
    # (MLX donates it too); the first call's arguments are not kept by the function.
    f = mx.compile(lambda a: a * 3 + 1)
    x = mx.arange(4_000_000, dtype=mx.float32)
    mx.eval(x)
    held = mx.get_active_memory()
    mx.reset_peak_memory()
    for _ in range(3):
        x = f(x)
        mx.eval(x)
    assert mx.get_peak_memory() - held < 1_000_000
    assert x[5].item() == ((5 * 3 + 1) * 3 + 1) * 3 + 1
    # An argument still held elsewhere keeps its values.
    y = mx.arange(4_000_000, dtype=mx.float32)
    z = f(y)
    mx.eval(z)
    assert y[5].item() == 5 and z[5].item() == 16
