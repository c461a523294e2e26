"""lazulite.optimizers (mirror of mlx.optimizers): each optimizer's updates over a few
steps against a NumPy re-implementation of its published rule (in the MLX variant),
state handling, schedules, and the training loop of MLX's guide page on lazy evaluation."""

import math

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn
import lazulite.optimizers as optim
from lazulite.utils import tree_flatten, tree_map

RNG = np.random.default_rng(1)
STEPS = 4


def np_of(a):
    return np.array(a)


def np_sgd(lr, momentum=0.0, weight_decay=0.0, dampening=0.0, nesterov=False):
    def step(w, g, state, t):
        g = g + weight_decay * w
        if momentum <= 0:
            return w - lr * g
        v = momentum * state.get("v", np.zeros_like(w)) + (1 - dampening) * g
        state["v"] = v
        return w - lr * (g + momentum * v if nesterov else v)

    return step


def np_adam(lr, betas=(0.9, 0.999), eps=1e-8, bias_correction=False, weight_decay=0.0):
    b1, b2 = betas

    def step(w, g, state, t):
        w = w * (1 - lr * weight_decay)
        m = b1 * state.get("m", np.zeros_like(w)) + (1 - b1) * g
        v = b2 * state.get("v", np.zeros_like(w)) + (1 - b2) * g * g
        state["m"], state["v"] = m, v
        if bias_correction:
            return w - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
        return w - lr * m / (np.sqrt(v) + eps)

    return step


def np_rmsprop(lr, alpha=0.99, eps=1e-8):
    def step(w, g, state, t):
        v = alpha * state.get("v", np.zeros_like(w)) + (1 - alpha) * g * g
        state["v"] = v
        return w - lr * g / (np.sqrt(v) + eps)

    return step


def np_adagrad(lr, eps=1e-8):
    def step(w, g, state, t):
        v = state.get("v", np.zeros_like(w)) + g * g
        state["v"] = v
        return w - lr * g / (np.sqrt(v) + eps)

    return step


def np_adadelta(lr, rho=0.9, eps=1e-6):
    def step(w, g, state, t):
        v = rho * state.get("v", np.zeros_like(w)) + (1 - rho) * g * g
        u = state.get("u", np.zeros_like(w))
        d = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        state["v"], state["u"] = v, rho * u + (1 - rho) * d * d
        return w - lr * d

    return step


def np_adamax(lr, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas

    def step(w, g, state, t):
        m = b1 * state.get("m", np.zeros_like(w)) + (1 - b1) * g
        v = np.maximum(b2 * state.get("v", np.zeros_like(w)), np.abs(g))
        state["m"], state["v"] = m, v
        return w - lr * m / (v + eps)

    return step


def np_lion(lr, betas=(0.9, 0.99), weight_decay=0.0):
    b1, b2 = betas

    def step(w, g, state, t):
        m = state.get("m", np.zeros_like(w))
        c = b1 * m + (1 - b1) * g
        state["m"] = b2 * m + (1 - b2) * g
        return (1 - lr * weight_decay) * w - lr * np.sign(c)

    return step


CASES = [
    ("sgd", lambda: optim.SGD(0.1), np_sgd(0.1)),
    ("sgd_momentum", lambda: optim.SGD(0.1, momentum=0.9), np_sgd(0.1, 0.9)),
    ("sgd_full", lambda: optim.SGD(0.05, momentum=0.8, weight_decay=0.01, dampening=0.3),
     np_sgd(0.05, 0.8, 0.01, 0.3)),
    ("sgd_nesterov", lambda: optim.SGD(0.1, momentum=0.9, nesterov=True), np_sgd(0.1, 0.9, nesterov=True)),
    ("sgd_decay_only", lambda: optim.SGD(0.1, weight_decay=0.1), np_sgd(0.1, weight_decay=0.1)),
    ("adam", lambda: optim.Adam(0.01), np_adam(0.01)),
    ("adam_bias_correction", lambda: optim.Adam(0.01, betas=[0.8, 0.99], bias_correction=True),
     np_adam(0.01, (0.8, 0.99), bias_correction=True)),
    ("adamw", lambda: optim.AdamW(0.01), np_adam(0.01, weight_decay=0.01)),
    ("adamw_bias_correction", lambda: optim.AdamW(0.02, weight_decay=0.1, bias_correction=True),
     np_adam(0.02, bias_correction=True, weight_decay=0.1)),
    ("rmsprop", lambda: optim.RMSprop(0.01), np_rmsprop(0.01)),
    ("rmsprop_alpha", lambda: optim.RMSprop(0.02, alpha=0.5, eps=1e-4), np_rmsprop(0.02, 0.5, 1e-4)),
    ("adagrad", lambda: optim.Adagrad(0.1), np_adagrad(0.1)),
    ("adadelta", lambda: optim.AdaDelta(0.5, rho=0.8), np_adadelta(0.5, 0.8)),
    ("adamax", lambda: optim.Adamax(0.01), np_adamax(0.01)),
    ("lion", lambda: optim.Lion(0.01, weight_decay=0.1), np_lion(0.01, weight_decay=0.1)),
]


@pytest.mark.parametrize("name,make,reference", CASES, ids=[c[0] for c in CASES])
def test_updates_match_numpy_rule(name, make, reference):
    params = {"w": RNG.standard_normal((3, 2)), "layers": [{"b": RNG.standard_normal(4)}]}
    params = tree_map(lambda a: a.astype(np.float32), params)
    optimizer = make()
    current = tree_map(mx.array, params)
    expected = dict(tree_flatten(params))
    states = {k: {} for k in expected}
    for t in range(1, STEPS + 1):
        grads = tree_map(lambda a: RNG.standard_normal(a.shape).astype(np.float32), params)
        current = optimizer.apply_gradients(tree_map(mx.array, grads), current)
        for k, g in tree_flatten(grads):
            expected[k] = reference(expected[k].astype(np.float64), g.astype(np.float64), states[k], t)
        mx.eval(current, optimizer.state)
        for k, v in tree_flatten(current):
            np.testing.assert_allclose(np_of(v), expected[k], rtol=2e-5, atol=2e-6, err_msg=f"{k} step {t}")
            assert v.dtype == mx.float32
    assert optimizer.step.item() == STEPS and optimizer.step.dtype == mx.uint64


def test_state_tree_and_init():
    optimizer = optim.Adam(1e-3)
    params = {"a": mx.zeros((2,)), "b": [mx.ones((3,)), {"c": mx.ones((1,))}]}
    optimizer.init(params)
    state = optimizer.state
    assert sorted(state) == ["a", "b", "learning_rate", "step"]
    assert sorted(state["a"]) == ["m", "v"] and state["b"][0]["m"].shape == (3,)
    assert sorted(state["b"][1]["c"]) == ["m", "v"]
    assert optimizer.step.item() == 0
    np.testing.assert_allclose(optimizer.learning_rate.item(), 1e-3, rtol=1e-6)
    optimizer.learning_rate = 0.5
    assert optimizer.learning_rate.item() == 0.5
    # init again keeps the existing buffers and adds those of new parameters
    m = state["a"]["m"]
    optimizer.init({"a": mx.zeros((2,)), "d": mx.zeros((5,))})
    assert optimizer.state["a"]["m"] is m and optimizer.state["d"]["v"].shape == (5,)
    saved = optimizer.state
    fresh = optim.Adam(1e-3)
    fresh.state = saved  # e.g. restored from a checkpoint
    assert fresh.state is saved


def test_update_changes_the_model():
    model = nn.Linear(3, 2)
    w = np_of(model.weight)
    grads = {"weight": mx.ones((2, 3)), "bias": mx.ones((2,))}
    optim.SGD(learning_rate=0.5).update(model, grads)
    np.testing.assert_allclose(np_of(model.weight), w - 0.5, rtol=1e-6)


def test_constructor_errors():
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening."):
        optim.SGD(0.1, nesterov=True)
    with pytest.raises(ValueError, match=r"Adam beta2 should be in \[0, 1\), 1.0 was provided instead"):
        optim.Adam(0.1, betas=[0.9, 1.0])
    with pytest.raises(ValueError, match="Adam epsilon should be >=0"):
        optim.AdamW(0.1, eps=-1.0)
    with pytest.raises(ValueError, match="RMSprop alpha should be >=0"):
        optim.RMSprop(0.1, alpha=-0.5)
    with pytest.raises(ValueError, match="Adagrad epsilon should be >0"):
        optim.Adagrad(0.1, eps=0.0)
    with pytest.raises(ValueError, match="AdaDelta rho should be >=0"):
        optim.AdaDelta(0.1, rho=-1.0)
    with pytest.raises(ValueError, match=r"Lion beta1 should be in \[0, 1\)"):
        optim.Lion(0.1, betas=[1.5, 0.9])


def test_multi_optimizer_routes_gradients_by_path():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    before = {k: np_of(v) for k, v in tree_flatten(model.parameters())}
    sgd, adam = optim.SGD(0.5), optim.Adam(0.1)
    optimizer = optim.MultiOptimizer([sgd, adam], [lambda path, g: path.endswith("bias")])
    grads = tree_map(lambda p: mx.ones(p.shape), model.parameters())
    optimizer.update(model, grads)
    after = {k: np_of(v) for k, v in tree_flatten(model.parameters())}
    for k in before:
        # SGD moves biases by 0.5; the first Adam step moves by lr * m / sqrt(v) = 0.1 * 0.1 / sqrt(0.001)
        step = 0.5 if k.endswith("bias") else 0.1 * 0.1 / (math.sqrt(0.001) + 1e-8)
        # atol: the parameters are O(1), so a result near 0 carries their float32 rounding
        np.testing.assert_allclose(after[k], before[k] - step, rtol=1e-5, atol=1e-6, err_msg=k)
    assert sorted(k for k, _ in tree_flatten(sgd.state) if k.endswith(".v")) == ["layers.0.bias.v", "layers.1.bias.v"]
    assert [sorted(s) for s in (sgd.state, adam.state)] == [["layers", "learning_rate", "step"]] * 2
    assert optimizer.state["states"][1] is adam.state
    optimizer.learning_rate = 0.01
    assert sgd.learning_rate.item() == adam.learning_rate.item() == np.float32(0.01)
    with pytest.raises(ValueError, match="Given 0 filters but 1 needed."):
        optim.MultiOptimizer([sgd, adam])
    with pytest.raises(ValueError, match="Invalid state provided"):
        optimizer.state = {"states": [{}]}


def test_clip_grad_norm():
    grads = {"a": mx.array([3.0, 0.0]), "b": [mx.array([[4.0]])]}
    clipped, norm = optim.clip_grad_norm(grads, max_norm=1.0)
    np.testing.assert_allclose(norm.item(), 5.0, rtol=1e-6)
    np.testing.assert_allclose(np_of(clipped["a"]), [0.6, 0.0], rtol=1e-5)
    np.testing.assert_allclose(np_of(clipped["b"][0]), [[0.8]], rtol=1e-5)
    unchanged, _ = optim.clip_grad_norm(grads, max_norm=10.0)
    np.testing.assert_allclose(np_of(unchanged["a"]), [3.0, 0.0])
    half, _ = optim.clip_grad_norm({"h": mx.array([300.0, 400.0], mx.float16)}, max_norm=1.0)
    assert half["h"].dtype == mx.float16
    np.testing.assert_allclose(np_of(half["h"]).astype(np.float32), [0.6, 0.8], rtol=1e-3)
    with pytest.raises(ValueError, match="max_norm should be >=0"):
        optim.clip_grad_norm(grads, -1.0)


def schedule_values(schedule, steps):
    return [float(np_of(schedule(mx.array(s)))) for s in steps]


def test_schedules():
    steps = [0, 1, 5, 10, 15]
    np.testing.assert_allclose(schedule_values(optim.exponential_decay(0.1, 0.9), steps),
                               [0.1 * 0.9**s for s in steps], rtol=1e-5)
    np.testing.assert_allclose(schedule_values(optim.step_decay(0.1, 0.5, 4), steps),
                               [0.1 * 0.5 ** (s // 4) for s in steps], rtol=1e-5)
    cosine = [0.01 + 0.5 * (1 + math.cos(math.pi * min(s, 10) / 10)) * (0.1 - 0.01) for s in steps]
    np.testing.assert_allclose(schedule_values(optim.cosine_decay(0.1, 10, 0.01), steps), cosine, rtol=1e-5)
    np.testing.assert_allclose(schedule_values(optim.linear_schedule(0.0, 1.0, 10), steps),
                               [min(s, 10) / 10 for s in steps], rtol=1e-5, atol=1e-7)
    warmup = optim.join_schedules([optim.linear_schedule(0.0, 0.1, 5), optim.exponential_decay(0.1, 0.5)], [5])
    np.testing.assert_allclose(schedule_values(warmup, [0, 2, 5, 6, 8]), [0.0, 0.04, 0.1, 0.05, 0.0125],
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="step_size must be greater than 0, but got 0."):
        optim.step_decay(0.1, 0.5, 0)
    with pytest.raises(ValueError, match="decay_steps must be greater than 0"):
        optim.cosine_decay(0.1, 0)
    with pytest.raises(ValueError, match="steps must be greater than 0"):
        optim.linear_schedule(0.1, 0.0, 0)
    with pytest.raises(ValueError, match="Received 2 boundaries but expected 1."):
        optim.join_schedules([optim.exponential_decay(1, 1)] * 2, [1, 2])
    with pytest.raises(ValueError, match="Must provide at least 1 schedule to join."):
        optim.join_schedules([], [])


def test_scheduled_learning_rate_is_used_per_step():
    optimizer = optim.SGD(learning_rate=optim.exponential_decay(1.0, 0.5))
    w = {"w": mx.array([0.0])}
    rates = []
    for _ in range(3):
        before = np_of(w["w"])[0]
        w = optimizer.apply_gradients({"w": mx.array([1.0])}, w)
        rates.append(before - np_of(w["w"])[0])
    np.testing.assert_allclose(rates, [1.0, 0.5, 0.25], rtol=1e-6)
    assert optimizer.learning_rate.item() == 0.25


class Model(nn.Module):
    """The guide's ``Model``: a small MLP classifier."""

    def __init__(self, in_dims=2, hidden=16, classes=2):
        super().__init__()
        self.hidden = nn.Linear(in_dims, hidden)
        self.out = nn.Linear(hidden, classes)

    def __call__(self, x):
        return self.out(nn.relu(self.hidden(x)))


@pytest.mark.parametrize("make", [lambda: optim.SGD(0.5, momentum=0.9), lambda: optim.Adam(0.05),
                                  lambda: optim.AdamW(0.05, bias_correction=True)], ids=["sgd", "adam", "adamw"])
def test_guide_training_loop(make):
    mx.random.seed(3)
    points = RNG.standard_normal((256, 2)).astype(np.float32)
    labels = (points[:, 0] * points[:, 1] > 0).astype(np.int32)  # XOR quadrants: needs the hidden layer
    dataset = [(mx.array(points[i:i + 64]), mx.array(labels[i:i + 64])) for i in range(0, 256, 64)]

    model = Model()
    optimizer = make()

    def loss_fn(model, batch):
        x, y = batch
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    value_and_grad_fn = nn.value_and_grad(model, loss_fn)
    losses = []
    for _ in range(25):
        for batch in dataset:
            # Nothing has been evaluated yet
            loss, grad = value_and_grad_fn(model, batch)
            # Still nothing has been evaluated
            optimizer.update(model, grad)
            # Evaluate the loss and the new parameters
            mx.eval(loss, model.parameters())
            losses.append(loss.item())
    assert np.mean(losses[-4:]) < 0.5 * np.mean(losses[:4])
    accuracy = np.mean(np.argmax(np_of(model(mx.array(points))), -1) == labels)
    assert accuracy > 0.85
