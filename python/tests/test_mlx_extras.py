"""mlx.utils.tree_merge, mlx.nn.init.orthogonal/sparse and the Adafactor and Muon
optimizers; the optimizers against NumPy implementations of the published update rules
(with MLX 0.32.4's defaults and conventions)."""

import math
from collections import namedtuple

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn
import lazulite.optimizers as optim
from lazulite.utils import tree_merge


def test_tree_merge():
    assert tree_merge({"a": 1, "b": {"c": 2}}, {"b": {"d": 3}, "e": [4]}) == {"a": 1, "b": {"c": 2, "d": 3}, "e": [4]}
    assert tree_merge([1, None, {}], [None, 2, {"x": 5}, 6]) == [1, 2, {"x": 5}, 6]
    assert tree_merge((1,), (None, 2)) == (1, 2)
    assert tree_merge({}, {}) == {} and tree_merge([], []) == []
    assert tree_merge([], {"a": 1}) == {"a": 1} and tree_merge(None, 3) == 3 and tree_merge(3, ()) == 3
    Pair = namedtuple("Pair", "x y")
    assert tree_merge(Pair(1, None), Pair(None, 2)) == Pair(1, 2)
    assert tree_merge({"w": 1}, {"w": 2}, lambda a, b: a + b) == {"w": 3}
    with pytest.raises(ValueError, match="no merge function was provided"):
        tree_merge({"w": 1}, {"w": 2})
    with pytest.raises(ValueError, match="Cannot merge list with dict"):
        tree_merge([], {})


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (6, 2)])
def test_orthogonal(shape):
    w = np.array(nn.init.orthogonal(gain=2.0)(mx.zeros(shape)), dtype=np.float64)
    assert w.shape == shape
    rows, cols = shape
    gram = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(shape)), atol=1e-4)
    assert nn.init.orthogonal(dtype=mx.float16)(mx.zeros(shape)).dtype == mx.float16
    with pytest.raises(ValueError, match="requires a 2D array but got a 3D array"):
        nn.init.orthogonal()(mx.zeros((2, 2, 2)))


@pytest.mark.parametrize("sparsity", [0.0, 0.25, 0.5, 1.0])
def test_sparse(sparsity):
    rows, cols = 6, 8
    w = np.array(nn.init.sparse(sparsity, mean=3.0, std=0.5)(mx.zeros((rows, cols))))
    zeros_per_row = (w == 0).sum(axis=1)
    assert (zeros_per_row == math.ceil(sparsity * cols)).all()
    if sparsity < 1:
        nonzero = w[w != 0]
        assert abs(nonzero.mean() - 3.0) < 0.5
    assert nn.init.sparse(0.5, dtype=mx.float16)(mx.zeros((2, 2))).dtype == mx.float16
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.sparse(0.5)(mx.zeros((4,)))


def numpy_adafactor(params, grads_per_step, lr=None, eps=(1e-30, 1e-3), clip=1.0, decay=-0.8,
                    beta_1=None, weight_decay=0.0, scale_parameter=True, relative_step=True, warmup_init=False):
    """Adafactor (Shazeer & Stern 2018, Algorithms 4 and 5) in float64 NumPy."""
    rms = lambda x: np.sqrt(np.mean(np.square(x)))
    state = {}
    for t, grads in enumerate(grads_per_step, start=1):
        for name, g in grads.items():
            w = params[name]
            s = state.setdefault(name, {})
            if relative_step:
                size = min(1e-6 * t if warmup_init else 1e-2, 1 / np.sqrt(t))
            else:
                size = lr
            if scale_parameter:
                size = max(eps[1], rms(w)) * size
            beta_2 = 1 - t**decay
            g2 = g * g + eps[0]
            if g.ndim >= 2:
                r = beta_2 * s.get("r", 0) + (1 - beta_2) * g2.mean(axis=-1)
                c = beta_2 * s.get("c", 0) + (1 - beta_2) * g2.mean(axis=-2)
                s["r"], s["c"] = r, c
                v = np.outer(r, c) / r.mean(axis=-1, keepdims=True)
            else:
                v = beta_2 * s.get("v", 0) + (1 - beta_2) * g2
                s["v"] = v
            u = g / np.sqrt(v)
            u = size * u / max(1.0, rms(u) / clip)
            if beta_1 is not None:
                u = beta_1 * s.get("m", 0) + (1 - beta_1) * u
                s["m"] = u
            params[name] = w * (1 - weight_decay * size) - u
    return params


def run(optimizer, params, grads_per_step):
    state = {k: mx.array(v.astype(np.float32)) for k, v in params.items()}
    for grads in grads_per_step:
        state = optimizer.apply_gradients({k: mx.array(v.astype(np.float32)) for k, v in grads.items()}, state)
    return {k: np.array(v) for k, v in state.items()}


def problem(seed=0, steps=4):
    rng = np.random.default_rng(seed)
    params = {"w": rng.standard_normal((4, 3)), "b": rng.standard_normal(5)}
    grads = [{k: rng.standard_normal(v.shape) for k, v in params.items()} for _ in range(steps)]
    return params, grads


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"beta_1": 0.9, "weight_decay": 0.1},
        {"relative_step": False, "learning_rate": 0.05, "scale_parameter": False},
        {"warmup_init": True, "clip_threshold": 0.5},
    ],
)
def test_adafactor_matches_numpy(options):
    params, grads = problem()
    ours = run(optim.Adafactor(**options), params, grads)
    options = dict(options)
    lr = options.pop("learning_rate", None)
    clip = options.pop("clip_threshold", 1.0)
    expected = numpy_adafactor(dict(params), grads, lr=lr, clip=clip, **options)
    for k in params:
        np.testing.assert_allclose(ours[k], expected[k], rtol=2e-4, atol=1e-6)


def test_adafactor_state_shapes():
    opt = optim.Adafactor(beta_1=0.9)
    opt.init({"w": mx.zeros((2, 3, 4)), "b": mx.zeros((4,))})
    assert opt.state["w"]["exp_avg_sq_row"].shape == (2, 3)
    assert opt.state["w"]["exp_avg_sq_col"].shape == (2, 4)
    assert opt.state["b"]["exp_avg_sq"].shape == (4,) and opt.state["b"]["exp_avg"].shape == (4,)


def newton_schulz(x, steps):
    a, b, c = 3.4445, -4.7750, 2.0315
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    x = x / (np.linalg.norm(x) + 1e-7)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def numpy_muon(params, grads_per_step, lr, momentum=0.95, weight_decay=0.01, nesterov=True, ns_steps=5):
    velocity = {}
    for grads in grads_per_step:
        for name, g in grads.items():
            w = params[name]
            g = g + weight_decay * w
            v = momentum * velocity.get(name, 0) + (1 - momentum) * g
            velocity[name] = v
            u = (1 - momentum) * g + momentum * v if nesterov else v
            step = lr
            if u.ndim >= 2:
                u = newton_schulz(u.reshape(u.shape[0], -1), ns_steps).reshape(u.shape)
                step = lr * max(1, u.shape[-2] / u.shape[-1]) ** 0.5
            params[name] = w - step * u
    return params


@pytest.mark.parametrize("options", [{}, {"nesterov": False, "weight_decay": 0.0, "ns_steps": 3}])
def test_muon_matches_numpy(options):
    params, grads = problem(seed=1, steps=3)
    rng = np.random.default_rng(2)
    params["conv"] = rng.standard_normal((3, 2, 2, 2))
    for g in grads:
        g["conv"] = rng.standard_normal((3, 2, 2, 2))
    ours = run(optim.Muon(learning_rate=0.02, **options), params, grads)
    expected = numpy_muon(dict(params), grads, 0.02, **options)
    for k in params:
        np.testing.assert_allclose(ours[k], expected[k], rtol=1e-3, atol=1e-5)


def test_muon_orthogonalises_a_matrix_update():
    rng = np.random.default_rng(3)
    g = rng.standard_normal((8, 4))
    opt = optim.Muon(learning_rate=1.0, momentum=0.0, weight_decay=0.0, nesterov=False, ns_steps=10)
    update = -np.array(opt.apply_gradients({"w": mx.array(g.astype(np.float32))}, {"w": mx.zeros((8, 4))})["w"])
    singular = np.linalg.svd(update / math.sqrt(2), compute_uv=False)
    assert np.all(np.abs(singular - 1) < 0.35)
