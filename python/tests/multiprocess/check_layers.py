"""Tensor- and data-parallel layers, run by every process of an ``mpirun`` job (see
``test_distributed.py``). The oracle is the same computation done whole, on one
process, with the unsharded layer or the full batch."""

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn
import lazulite.optimizers as optim
from lazulite.nn.layers.distributed import shard_inplace, shard_linear
from lazulite.utils import tree_flatten

WORLD = mx.distributed.init(strict=True)
RANK, SIZE = WORLD.rank(), WORLD.size()


def same_everywhere(seed):
    """Seed the global generator identically on every process."""
    mx.random.seed(seed)


@pytest.mark.parametrize("bias", [True, False])
def test_sharded_linear_pair_equals_the_unsharded_layers(bias):
    same_everywhere(1)
    first, second = nn.Linear(16, 8 * SIZE, bias=bias), nn.Linear(8 * SIZE, 12, bias=bias)
    x = mx.random.normal((5, 16))
    expected = second(nn.relu(first(x)))
    a = shard_linear(first, "all-to-sharded")
    b = shard_linear(second, "sharded-to-all")
    assert a.weight.shape == (8, 16) and b.weight.shape == (12, 8)
    out = b(nn.relu(a(x)))
    np.testing.assert_allclose(np.array(out), np.array(expected), rtol=1e-5, atol=1e-5)
    # The sharded output of the first layer is this process's slice of the full one.
    np.testing.assert_allclose(
        np.array(a(x)), np.array(first(x))[:, RANK * 8 : (RANK + 1) * 8], rtol=1e-5, atol=1e-6
    )


def test_sharded_pair_gradient_of_the_input_equals_the_unsharded_one():
    same_everywhere(2)
    first, second = nn.Linear(6, 4 * SIZE), nn.Linear(4 * SIZE, 3)
    x = mx.random.normal((2, 6))
    expected = mx.grad(lambda x: second(mx.tanh(first(x))).sum())(x)
    a, b = shard_linear(first, "all-to-sharded"), shard_linear(second, "sharded-to-all")
    got = mx.grad(lambda x: b(mx.tanh(a(x))).sum())(x)
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-5, atol=1e-6)


def test_fused_segments_are_sharded_per_segment():
    same_everywhere(3)
    qkv = nn.Linear(8, 3 * 2 * SIZE)
    x = mx.random.normal((4, 8))
    full = np.array(qkv(x))
    sharded = shard_linear(qkv, "all-to-sharded", segments=3)
    parts = np.split(full, 3, axis=-1)
    expected = np.concatenate([p[:, RANK * 2 : (RANK + 1) * 2] for p in parts], axis=-1)
    np.testing.assert_allclose(np.array(sharded(x)), expected, rtol=1e-5, atol=1e-6)


def test_quantized_sharded_layers_equal_the_quantized_layer():
    same_everywhere(4)
    first = nn.QuantizedLinear(64, 64 * SIZE, bits=8)
    second = nn.QuantizedLinear(64 * SIZE, 64, bits=8)
    x = mx.random.normal((3, 64))
    expected = second(first(x))
    out = shard_linear(second, "sharded-to-all")(shard_linear(first, "all-to-sharded")(x))
    np.testing.assert_allclose(np.array(out), np.array(expected), rtol=1e-4, atol=1e-4)


def test_shard_inplace_keeps_this_process_part():
    same_everywhere(5)
    layer = nn.Linear(4, 2 * SIZE)
    weight = np.array(layer.weight)
    shard_inplace(layer, "all-to-sharded")
    np.testing.assert_array_equal(np.array(layer.weight), weight[RANK * 2 : (RANK + 1) * 2])
    with pytest.raises(ValueError):
        shard_inplace(layer, "sideways")


def mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def loss_fn(model, x, y):
    return nn.losses.cross_entropy(model(x), y, reduction="mean")


def test_average_gradients_equals_the_full_batch_gradient():
    same_everywhere(6)
    model = mlp()
    x = mx.random.normal((8 * SIZE, 6))
    y = mx.random.randint(0, 3, (8 * SIZE,))
    full = nn.value_and_grad(model, lambda x, y: loss_fn(model, x, y))(x, y)[1]
    mine = slice(RANK * 8, (RANK + 1) * 8)
    local = nn.value_and_grad(model, lambda x, y: loss_fn(model, x, y))(x[mine], y[mine])[1]
    for size in [32 * 1024**2, 100, 0]:
        averaged = nn.average_gradients(local, all_reduce_size=size)
        for (path, got), (_, want) in zip(tree_flatten(averaged), tree_flatten(full)):
            np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6, err_msg=path)


def test_data_parallel_training_matches_one_process():
    same_everywhere(7)
    model, reference = mlp(), mlp()
    reference.update(model.parameters())
    optimizer, reference_optimizer = optim.SGD(0.1), optim.SGD(0.1)
    x = mx.random.normal((4 * SIZE, 6))
    y = mx.random.randint(0, 3, (4 * SIZE,))
    step = nn.value_and_grad(model, lambda x, y: loss_fn(model, x, y))
    reference_step = nn.value_and_grad(reference, lambda x, y: loss_fn(reference, x, y))
    mine = slice(RANK * 4, (RANK + 1) * 4)
    for _ in range(5):
        _, grads = step(x[mine], y[mine])
        optimizer.update(model, nn.average_gradients(grads))
        _, reference_grads = reference_step(x, y)
        reference_optimizer.update(reference, reference_grads)
        mx.eval(model.parameters(), reference.parameters())
    for (path, got), (_, want) in zip(tree_flatten(model.parameters()), tree_flatten(reference.parameters())):
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6, err_msg=path)


def test_fully_sharded_module_trains_like_the_whole_module():
    same_everywhere(8)
    # Every parameter's first axis must divide by the group size.
    model = nn.Sequential(nn.Linear(6, 4 * SIZE), nn.ReLU(), nn.Linear(4 * SIZE, 2 * SIZE))
    reference = nn.Sequential(nn.Linear(6, 4 * SIZE), nn.ReLU(), nn.Linear(4 * SIZE, 2 * SIZE))
    reference.update(model.parameters())
    sharded = nn.fully_shard(model)
    assert sharded.parameters()["module"]["layers"][0]["weight"].shape == (4, 6)
    x = mx.random.normal((3, 6))
    np.testing.assert_allclose(np.array(sharded(x)), np.array(reference(x)), rtol=1e-5, atol=1e-6)
    grads = nn.value_and_grad(sharded, lambda x: sharded(x).square().sum())(x)[1]
    full = nn.value_and_grad(reference, lambda x: reference(x).square().sum())(x)[1]
    got = grads["module"]["layers"][0]["weight"]
    want = np.array(full["layers"][0]["weight"])[RANK * 4 : (RANK + 1) * 4]
    # The shards' gradients are averaged over the group, as every process computed the loss.
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_sharded_uses_the_global_norm():
    grads = {"w": mx.full((3,), float(RANK + 1))}
    clipped, norm = nn.utils.clip_grad_norm_sharded(grads, 1.0)
    expected = np.sqrt(sum(3 * (r + 1) ** 2 for r in range(SIZE)))
    np.testing.assert_allclose(norm.item(), expected, rtol=1e-6)
    np.testing.assert_allclose(np.array(clipped["w"]), (RANK + 1) / (expected + 1e-6), rtol=1e-5)
