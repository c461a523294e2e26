"""lazulite.nn (mirror of mlx.nn): the Module tree, layers and activations against NumPy
formulas, losses, initialisers, and nn.value_and_grad against float64 central
differences."""

import math

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn
from lazulite.utils import tree_flatten

RNG = np.random.default_rng(0)


def np_of(a):
    return np.array(a)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np_of(actual), expected, rtol=rtol, atol=atol)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(3, 4), nn.Linear(4, 2, bias=False)]
        self.extra = {"norm": nn.LayerNorm(2), "scale": mx.ones((2,))}
        self.name = "block"  # not an array/tree: an ordinary attribute
        self._hidden = mx.zeros((1,))  # a leading underscore hides it from parameters()

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.extra["norm"](x) * self.extra["scale"]


# ----------------------------------------------------------------- Module tree


def test_parameters_tree_and_attribute_storage():
    block = Block()
    params = block.parameters()
    assert sorted(params) == ["extra", "layers"]
    assert sorted(params["layers"][0]) == ["bias", "weight"] and sorted(params["layers"][1]) == ["weight"]
    assert sorted(params["extra"]) == ["norm", "scale"]
    flat = dict(tree_flatten(params))
    assert sorted(flat) == [
        "extra.norm.bias", "extra.norm.weight", "extra.scale",
        "layers.0.bias", "layers.0.weight", "layers.1.weight",
    ]
    assert flat["layers.0.weight"].shape == (4, 3) and flat["layers.0.bias"].shape == (4,)
    assert "name" not in block and block.name == "block" and "_hidden" in block
    assert block.layers[0] is block["layers"][0] and block.state is block
    with pytest.raises(AttributeError):
        block.missing
    block.name = mx.zeros((2,))  # becomes an entry, so a parameter
    assert "name" in block and "name" not in block.__dict__ and "name" in block.parameters()
    del block.name
    assert "name" not in block


def test_children_leaf_modules_and_named_modules():
    block = Block()
    children = block.children()
    assert isinstance(children["layers"][0], nn.Linear) and isinstance(children["extra"]["norm"], nn.LayerNorm)
    assert children["extra"]["scale"] == {}  # filtered-out dict entries stay as {}
    leaves = tree_flatten(block.leaf_modules(), is_leaf=nn.Module.is_module)
    assert sorted(k for k, _ in leaves) == ["extra.norm", "layers.0", "layers.1"]
    names = [k for k, _ in block.named_modules()]
    assert sorted(names) == ["", "extra.norm", "layers.0", "layers.1"]
    assert len(block.modules()) == 4 and block.modules()[0] is block
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert [k for k, _ in seq.named_modules()] == ["", "layers.2", "layers.1", "layers.0"]


def test_repr_matches_mlx():
    assert repr(nn.Linear(2, 3)) == "Linear(input_dims=2, output_dims=3, bias=True)"
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    assert repr(seq) == (
        "Sequential(\n  (layers.0): Linear(input_dims=2, output_dims=3, bias=True)\n  (layers.1): ReLU()\n)"
    )
    assert repr(nn.LayerNorm(3)) == "LayerNorm(3, eps=1e-05, affine=True)"
    assert repr(nn.RMSNorm(3)) == "RMSNorm(3, eps=1e-05)"
    assert repr(nn.Embedding(3, 4)) == "Embedding(3, 4)"
    assert repr(nn.GELU()) == "GELU()"


def test_update_replaces_given_leaves_only():
    block = Block()
    old_bias = block.layers[0].bias
    new_weight = mx.full((4, 3), 2.0)
    assert block.update({"layers": [{"weight": new_weight}]}) is block
    assert block.layers[0].weight is new_weight and block.layers[0].bias is old_bias
    block.update({"extra": {"scale": mx.array([3.0, 4.0])}})
    close(block.extra["scale"], [3.0, 4.0])
    with pytest.raises(ValueError, match='Module does not have parameter named "nope"'):
        block.update({"nope": mx.zeros(1)})
    with pytest.raises(ValueError, match="List index 2 is out of bounds for destination of length 2"):
        block.update({"layers": [{}, {}, {}]})
    with pytest.raises(ValueError, match="Received invalid type: int"):
        block.update({"extra": {"scale": 3}})
    block.update({"nope": mx.zeros(1), "layers": [{}, {}, {}]}, strict=False)
    assert "nope" not in block


def test_update_modules_and_apply():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    replacement = nn.Tanh()
    seq.update_modules({"layers": [{}, replacement]})
    assert seq.layers[1] is replacement
    with pytest.raises(ValueError, match='Module does not have sub-module named "x"'):
        seq.update_modules({"x": nn.ReLU()})
    seq.apply(lambda p: p.astype(mx.float16))
    assert all(v.dtype == mx.float16 for _, v in tree_flatten(seq.parameters()))
    seq.set_dtype(mx.float32)
    assert all(v.dtype == mx.float32 for _, v in tree_flatten(seq.parameters()))


def test_freeze_unfreeze_and_trainable_parameters():
    block = Block()
    all_names = {k for k, _ in tree_flatten(block.parameters())}
    block.freeze()
    assert tree_flatten(block.trainable_parameters()) == []
    assert {k for k, _ in tree_flatten(block.parameters())} == all_names
    block.unfreeze(keys="bias")
    assert {k for k, _ in tree_flatten(block.trainable_parameters())} == {"layers.0.bias", "extra.norm.bias"}
    block.unfreeze()
    block.freeze(keys=["weight"])
    trainable = {k for k, _ in tree_flatten(block.trainable_parameters())}
    assert trainable == all_names - {"layers.0.weight", "layers.1.weight", "extra.norm.weight"}
    block.unfreeze()
    block.layers[0].freeze(recurse=False)
    assert {k for k, _ in tree_flatten(block.trainable_parameters())} == all_names - {"layers.0.weight", "layers.0.bias"}
    with pytest.raises(KeyError, match="Module doesn't contain member nothing"):
        block.freeze(keys="nothing", strict=True)
    block.freeze(keys="nothing")  # not strict: ignored


def test_train_and_eval_modes():
    block = Block()
    assert block.training and all(m.training for m in block.modules())
    assert block.eval() is block
    assert not block.training and not any(m.training for m in block.modules())
    block.train()
    assert all(m.training for m in block.modules())


def test_load_weights_from_list_and_strict_checks():
    model = nn.Linear(2, 3)
    weights = [("weight", mx.ones((3, 2))), ("bias", mx.zeros((3,)))]
    assert model.load_weights(weights) is model
    close(model.weight, np.ones((3, 2)))
    with pytest.raises(ValueError, match="Received 1 parameters not in model: \nextra."):
        model.load_weights(weights + [("extra", mx.ones(1))])
    with pytest.raises(ValueError, match="Missing 1 parameters: \nbias."):
        model.load_weights(weights[:1])
    with pytest.raises(ValueError, match=r"Expected shape \(3, 2\) but received shape \(2, 3\) for parameter weight"):
        model.load_weights([("weight", mx.ones((2, 3))), ("bias", mx.zeros((3,)))])
    model.load_weights([("bias", mx.full((3,), 5.0))], strict=False)
    close(model.bias, [5.0, 5.0, 5.0])


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_save_and_load_weights_round_trip(tmp_path, suffix):
    model = Block()
    path = str(tmp_path / f"weights{suffix}")
    model.save_weights(path)
    other = Block()
    other.load_weights(path)
    for (k, a), (k2, b) in zip(tree_flatten(model.parameters()), tree_flatten(other.parameters())):
        assert k == k2
        close(b, np_of(a))
    fp16 = Block()
    fp16.set_dtype(mx.float16)
    fp16_path = str(tmp_path / f"weights_fp16{suffix}")
    fp16.save_weights(fp16_path)
    lazy = Block()  # the seed: model = Model(); model.load_weights("weights_fp16.safetensors")
    lazy.load_weights(fp16_path)
    assert lazy.layers[0].weight.dtype == mx.float16


def test_save_weights_rejects_unknown_extension(tmp_path):
    with pytest.raises(ValueError, match="Unsupported file extension"):
        nn.Linear(1, 1).save_weights(str(tmp_path / "w.bin"))


# ----------------------------------------------------------------- layers


def test_linear_forward_and_init_range():
    layer = nn.Linear(5, 3)
    w, b = np_of(layer.weight), np_of(layer.bias)
    assert w.shape == (3, 5) and b.shape == (3,) and layer.weight.dtype == mx.float32
    assert np.all(np.abs(w) <= 1 / math.sqrt(5)) and np.all(np.abs(b) <= 1 / math.sqrt(5))
    x = randn(2, 4, 5)
    close(layer(mx.array(x)), x @ w.T + b)
    no_bias = nn.Linear(5, 3, bias=False)
    assert "bias" not in no_bias
    close(no_bias(mx.array(x)), x @ np_of(no_bias.weight).T)
    big = np_of(nn.Linear(100, 400).weight)  # spread over the whole range
    assert big.min() < -0.09 and big.max() > 0.09


def test_bilinear_and_identity():
    layer = nn.Bilinear(2, 3, 4)
    assert layer.weight.shape == (4, 3, 2)
    x1, x2 = randn(5, 2), randn(5, 3)
    w = np_of(layer.weight)
    expected = np.einsum("bi,oji,bj->bo", x1, w, x2) + np_of(layer.bias)
    close(layer(mx.array(x1), mx.array(x2)), expected, rtol=1e-4, atol=1e-5)
    x = mx.array(x1)
    assert nn.Identity(1, 2, a=3)(x) is x


def test_embedding_lookup_and_as_linear():
    emb = nn.Embedding(10, 4)
    table = np_of(emb.weight)
    assert table.shape == (10, 4) and 0.2 < table.std() < 0.9
    idx = np.array([[1, 2], [9, 0]])
    close(emb(mx.array(idx)), table[idx])
    x = randn(3, 4)
    close(emb.as_linear(mx.array(x)), x @ table.T)
    _, grads = nn.value_and_grad(emb, lambda i: emb(i).sum())(mx.array(idx))
    counts = np.bincount(idx.ravel(), minlength=10)[:, None] * np.ones((1, 4))
    close(grads["weight"], counts)


def np_layer_norm(x, w=None, b=None, eps=1e-5):
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def test_layer_norm_variants():
    x = randn(2, 3, 6) * 3 + 1
    ln = nn.LayerNorm(6)
    ln.update({"weight": mx.array(randn(6)), "bias": mx.array(randn(6))})
    close(ln(mx.array(x)), np_layer_norm(x, np_of(ln.weight), np_of(ln.bias)), atol=1e-5)
    no_bias = nn.LayerNorm(6, bias=False, eps=1e-3)
    assert sorted(no_bias.parameters()) == ["weight"]
    close(no_bias(mx.array(x)), np_layer_norm(x, eps=1e-3), atol=1e-5)
    plain = nn.LayerNorm(6, affine=False)
    assert plain.parameters() == {}
    close(plain(mx.array(x)), np_layer_norm(x), atol=1e-5)


def np_normalise(x, axes, eps=1e-5):
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


def test_instance_and_group_norm():
    x = randn(2, 3, 4, 6) * 2 + 1
    close(nn.InstanceNorm(6)(mx.array(x)), np_normalise(x, (1, 2)), atol=1e-5)
    inorm = nn.InstanceNorm(6, affine=True)
    assert sorted(inorm.parameters()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="InstanceNorm expects inputs with at least 3 dimensions"):
        inorm(mx.zeros((2, 6)))
    # MLX groups channel c into group c % num_groups; PyTorch uses contiguous groups
    strided = np_normalise(x.reshape(2, -1, 3), 1).reshape(x.shape)
    close(nn.GroupNorm(3, 6)(mx.array(x)), strided, atol=1e-5)
    contiguous = np_normalise(x.reshape(2, 12, 3, 2), (1, 3)).reshape(x.shape)
    gnorm = nn.GroupNorm(3, 6, pytorch_compatible=True)
    gnorm.weight = mx.array(randn(6))
    close(gnorm(mx.array(x)), contiguous * np_of(gnorm.weight), atol=1e-5)
    assert repr(gnorm) == "GroupNorm(3, 6, eps=1e-05, affine=True, pytorch_compatible=True)"
    with pytest.raises(ValueError, match=r"The number of features \(6\) must be evenly divisible by the number of groups \(4\)"):
        nn.GroupNorm(4, 6)


def test_batch_norm_training_and_running_stats():
    bn = nn.BatchNorm(3, momentum=0.2)
    assert sorted(bn.parameters()) == ["bias", "running_mean", "running_var", "weight"]
    assert sorted(bn.trainable_parameters()) == ["bias", "weight"]
    bn.unfreeze()
    assert sorted(bn.trainable_parameters()) == ["bias", "weight"]
    x = randn(8, 5, 3) * 2 + 1
    close(bn(mx.array(x)), np_normalise(x, (0, 1)), atol=1e-5)
    close(bn.running_mean, 0.2 * x.mean((0, 1)), atol=1e-6)
    close(bn.running_var, 0.8 + 0.2 * x.var((0, 1), ddof=1), atol=1e-5)
    bn.eval()
    running_mean, running_var = np_of(bn.running_mean), np_of(bn.running_var)
    close(bn(mx.array(x)), (x - running_mean) / np.sqrt(running_var + 1e-5), atol=1e-5)
    close(bn.running_mean, running_mean)  # not updated in evaluation mode
    with pytest.raises(ValueError, match="Expected input tensor to have 2, 3 or 4 dimensions, but got 1"):
        bn(mx.zeros((3,)))
    with pytest.raises(ValueError, match="BatchNorm training requires more than one value per channel."):
        nn.BatchNorm(3)(mx.zeros((1, 3)))
    plain = nn.BatchNorm(3, affine=False, track_running_stats=False)
    assert plain.parameters() == {}
    close(plain(mx.array(x)), np_normalise(x, (0, 1)), atol=1e-5)


def test_rms_norm():
    x = randn(4, 5)
    norm = nn.RMSNorm(5, eps=1e-6)
    norm.weight = mx.array(randn(5))
    expected = x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * np_of(norm.weight)
    close(norm(mx.array(x)), expected, atol=1e-5)


def test_dropout_train_and_eval():
    drop = nn.Dropout(0.25)
    assert repr(drop) == "Dropout(p=0.25)"
    x = mx.ones((200, 100))
    y = np_of(drop(x))
    kept = y != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    drop.eval()
    assert drop(x) is x
    assert nn.Dropout(0.0)(x) is x
    for p in [-0.1, 1.0]:
        with pytest.raises(ValueError, match=r"The dropout probability .* is not in \[0, 1\)"):
            nn.Dropout(p)


@pytest.mark.parametrize("cls,shape", [(nn.Dropout2d, (8, 5, 6, 40)), (nn.Dropout3d, (8, 3, 4, 5, 40))])
def test_channel_dropout(cls, shape):
    drop = cls(0.5)
    y = np_of(drop(mx.ones(shape)))
    spatial = tuple(range(1, len(shape) - 1))
    per_channel = y.reshape(shape[0], -1, shape[-1])
    # each (sample, channel) is all zeros or all 2
    assert np.all(per_channel.min(1) == per_channel.max(1)) and set(np.unique(y)) <= {0.0, 2.0}
    assert 0.35 < (y.mean(spatial) > 0).mean() < 0.65
    unbatched = np_of(drop(mx.ones(shape[1:])))
    assert unbatched.reshape(-1, shape[-1]).std(0).max() == 0
    with pytest.raises(ValueError, match="Received input with 2 dimensions. Expected"):
        drop(mx.ones((2, 3)))
    drop.eval()
    x = mx.ones(shape)
    assert drop(x) is x


def test_sequential_chains_layers():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2), lambda t: t * 2)
    x = randn(5, 3)
    w1, b1 = np_of(seq.layers[0].weight), np_of(seq.layers[0].bias)
    w2, b2 = np_of(seq.layers[2].weight), np_of(seq.layers[2].bias)
    expected = 2 * (np.maximum(x @ w1.T + b1, 0) @ w2.T + b2)
    close(seq(mx.array(x)), expected, atol=1e-5)


def np_erf(x):
    return np.vectorize(math.erf)(x)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softplus(x):
    return np.logaddexp(x, 0)


def np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * (np.exp(x) - 1))


ACTIVATIONS = [
    ("relu", nn.relu, nn.ReLU, lambda x: np.maximum(x, 0)),
    ("relu6", nn.relu6, nn.ReLU6, lambda x: np.clip(x, 0, 6)),
    ("relu2", nn.relu2, nn.ReLU2, lambda x: np.maximum(x, 0) ** 2),
    ("sigmoid", nn.sigmoid, nn.Sigmoid, np_sigmoid),
    ("tanh", nn.tanh, nn.Tanh, np.tanh),
    ("silu", nn.silu, nn.SiLU, lambda x: x * np_sigmoid(x)),
    ("gelu", nn.gelu, nn.GELU, lambda x: x * (1 + np_erf(x / np.sqrt(2))) / 2),
    ("softplus", nn.softplus, nn.Softplus, np_softplus),
    ("softsign", nn.softsign, nn.Softsign, lambda x: x / (1 + np.abs(x))),
    ("log_sigmoid", nn.log_sigmoid, nn.LogSigmoid, lambda x: -np_softplus(-x)),
    ("mish", nn.mish, nn.Mish, lambda x: x * np.tanh(np_softplus(x))),
    ("hardswish", nn.hardswish, nn.Hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("selu", nn.selu, nn.SELU, lambda x: 1.0507 * np_elu(x, 1.67326)),
    ("elu", nn.elu, nn.ELU, np_elu),
    ("celu", nn.celu, nn.CELU, lambda x: np.maximum(x, 0) + np.minimum(0, np.exp(x) - 1)),
    ("leaky_relu", nn.leaky_relu, nn.LeakyReLU, lambda x: np.where(x > 0, x, 0.01 * x)),
    ("softmax", nn.softmax, nn.Softmax, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    ("log_softmax", nn.log_softmax, nn.LogSoftmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    ("softmin", nn.softmin, nn.Softmin, lambda x: np.exp(-x) / np.exp(-x).sum(-1, keepdims=True)),
    ("hard_tanh", nn.hard_tanh, nn.HardTanh, lambda x: np.clip(x, -1, 1)),
    ("hard_shrink", nn.hard_shrink, nn.HardShrink, lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    ("softshrink", nn.softshrink, nn.Softshrink, lambda x: np.where(np.abs(x) > 0.5, x - np.sign(x) * 0.5, 0)),
    ("step", nn.step, nn.Step, lambda x: (x >= 0).astype(np.int32)),
]


@pytest.mark.parametrize("name,fn,module,expected", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_function_and_module(name, fn, module, expected):
    x = np.concatenate([randn(3, 7) * 3, np.array([[0.0, -1.0, 1.0, -8.0, 8.0, 0.5, -0.5]], np.float32)])
    want = expected(x.astype(np.float64))
    close(fn(mx.array(x)), want, rtol=1e-5, atol=1e-6)
    close(module()(mx.array(x)), want, rtol=1e-5, atol=1e-6)


def test_gelu_approximations_glu_prelu():
    x = randn(4, 6) * 2
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    close(nn.gelu_approx(mx.array(x)), tanh_form, atol=1e-5)
    close(nn.GELU(approx="tanh")(mx.array(x)), tanh_form, atol=1e-5)
    close(nn.GELU(approx="precise")(mx.array(x)), tanh_form, atol=1e-5)
    close(nn.GELU(approx="fast")(mx.array(x)), x * np_sigmoid(1.702 * x), atol=1e-5)
    with pytest.raises(ValueError, match="The approximation should be in"):
        nn.GELU(approx="bad")
    a, b = x[:, :3], x[:, 3:]
    close(nn.glu(mx.array(x)), a * np_sigmoid(b), atol=1e-6)
    close(nn.GLU()(mx.array(x)), a * np_sigmoid(b), atol=1e-6)
    prelu = nn.PReLU()
    assert prelu.weight.shape == (1,)
    close(prelu(mx.array(x)), np.where(x > 0, x, 0.25 * x), atol=1e-6)


def np_attention(q, k, v, mask, heads):
    def split(t):
        b, n, d = t.shape
        return t.reshape(b, n, heads, d // heads).transpose(0, 2, 1, 3)

    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = weights @ v
    b, h, n, d = out.shape
    return out.transpose(0, 2, 1, 3).reshape(b, n, h * d)


def test_multi_head_attention_vs_numpy():
    attn = nn.MultiHeadAttention(8, 2)
    assert sorted(attn.parameters()) == ["key_proj", "out_proj", "query_proj", "value_proj"]
    assert "bias" not in attn.query_proj
    x, mem = randn(2, 5, 8), randn(2, 3, 8)
    w = {k: np_of(attn[k].weight) for k in ["query_proj", "key_proj", "value_proj", "out_proj"]}
    mask = np_of(nn.MultiHeadAttention.create_additive_causal_mask(5))
    assert mask[0, 0] == 0 and mask[0, 1] == np.finfo(np.float32).min and mask[1, 0] == 0
    for keys, m in [(mem, None), (x, mask)]:
        out = attn(mx.array(x), mx.array(keys), mx.array(keys), mask=None if m is None else mx.array(m))
        expected = np_attention(x @ w["query_proj"].T, keys @ w["key_proj"].T, keys @ w["value_proj"].T, m, 2)
        close(out, expected @ w["out_proj"].T, rtol=1e-4, atol=1e-5)
    bool_mask = np.tril(np.ones((5, 5), bool))
    close(attn(mx.array(x), mx.array(x), mx.array(x), mask=mx.array(bool_mask)),
          np_of(attn(mx.array(x), mx.array(x), mx.array(x), mask=mx.array(mask))), atol=1e-5)
    with pytest.raises(ValueError, match=r"divisible by the number of heads \(8 % 3\) != 0"):
        nn.MultiHeadAttention(8, 3)


@pytest.mark.parametrize("norm_first", [True, False])
def test_transformer_encoder_layer_vs_numpy(norm_first):
    layer = nn.TransformerEncoderLayer(8, 2, mlp_dims=12, norm_first=norm_first)
    p = {k: np_of(v) for k, v in tree_flatten(layer.parameters())}
    x = randn(2, 4, 8)
    mask = np_of(nn.MultiHeadAttention.create_additive_causal_mask(4))

    def attention(q):
        out = np_attention(q @ p["attention.query_proj.weight"].T, q @ p["attention.key_proj.weight"].T,
                           q @ p["attention.value_proj.weight"].T, mask, 2)
        return out @ p["attention.out_proj.weight"].T

    def mlp(h):
        h = np.maximum(h @ p["linear1.weight"].T + p["linear1.bias"], 0)
        return h @ p["linear2.weight"].T + p["linear2.bias"]

    def ln(h, name):
        return np_layer_norm(h, p[f"{name}.weight"], p[f"{name}.bias"])

    if norm_first:
        h = x + attention(ln(x, "ln1"))
        expected = h + mlp(ln(h, "ln2"))
    else:
        h = ln(x + attention(x), "ln1")
        expected = ln(h + mlp(h), "ln2")
    close(layer(mx.array(x), mx.array(mask)), expected, rtol=1e-4, atol=1e-5)


def test_transformer_structure():
    model = nn.Transformer(dims=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=2, mlp_dims=16)
    names = [k for k, _ in tree_flatten(model.parameters())]
    assert "encoder.layers.0.attention.query_proj.weight" in names and "decoder.ln.bias" in names
    assert "decoder.layers.1.cross_attention.out_proj.weight" in names and len(model.decoder.layers) == 2
    src, tgt = mx.array(randn(2, 5, 8)), mx.array(randn(2, 3, 8))
    out = model(src, tgt, None, nn.MultiHeadAttention.create_additive_causal_mask(3), None)
    assert out.shape == (2, 3, 8)


def np_recurrent(kind, p, x, hidden, size):
    outputs, cells = [], []
    cell = np.zeros_like(hidden)
    if kind == "RNN":
        xs = x @ p["Wxh"].T + p["bias"]
    else:
        xs = x @ p["Wx"].T + p["b" if kind == "GRU" else "bias"]
    for t in range(x.shape[-2]):
        if kind == "RNN":
            hidden = np.tanh(xs[..., t, :] + hidden @ p["Whh"].T)
        elif kind == "GRU":
            hp = hidden @ p["Wh"].T
            r = np_sigmoid(xs[..., t, :size] + hp[..., :size])
            z = np_sigmoid(xs[..., t, size:2 * size] + hp[..., size:2 * size])
            n = np.tanh(xs[..., t, 2 * size:] + r * (hp[..., 2 * size:] + p["bhn"]))
            hidden = (1 - z) * n + z * hidden
        else:
            i, f, g, o = np.split(xs[..., t, :] + hidden @ p["Wh"].T, 4, axis=-1)
            cell = np_sigmoid(f) * cell + np_sigmoid(i) * np.tanh(g)
            hidden = np_sigmoid(o) * np.tanh(cell)
            cells.append(cell)
        outputs.append(hidden)
    return np.stack(outputs, -2), (np.stack(cells, -2) if cells else None)


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_recurrent_layers_vs_numpy(kind):
    layer = getattr(nn, kind)(3, 4)
    p = {k: np_of(v) for k, v in tree_flatten(layer.parameters())}
    assert all(np.all(np.abs(v) <= 0.5) for v in p.values())  # U(-1/sqrt(4), 1/sqrt(4))
    x = randn(2, 5, 3)
    for h in [None, randn(2, 4)]:
        out = layer(mx.array(x), None if h is None else mx.array(h))
        expected, cells = np_recurrent(kind, p, x, np.zeros((2, 4), np.float32) if h is None else h, 4)
        if kind == "LSTM":
            out, out_cells = out
            close(out_cells, cells, atol=1e-5)
        close(out, expected, atol=1e-5)
    no_bias = getattr(nn, kind)(3, 4, bias=False)
    assert all("W" in k for k, _ in tree_flatten(no_bias.parameters()))


def np_pool(x, reduce, kernel, stride, padding, pad_value):
    dims = len(kernel)
    x = np.pad(x, [(0, 0)] + [(p, p) for p in padding] + [(0, 0)], constant_values=pad_value)
    out_shape = [(s - k) // st + 1 for s, k, st in zip(x.shape[1:-1], kernel, stride)]
    out = np.empty((x.shape[0], *out_shape, x.shape[-1]), x.dtype)
    for index in np.ndindex(*out_shape):
        window = tuple(slice(i * st, i * st + k) for i, k, st in zip(index, kernel, stride))
        out[(slice(None), *index)] = reduce(x[(slice(None), *window)], axis=tuple(range(1, dims + 1)))
    return out


@pytest.mark.parametrize("dims,shape", [(1, (2, 9, 3)), (2, (2, 7, 6, 3)), (3, (1, 5, 4, 6, 2))])
@pytest.mark.parametrize("kind", ["Max", "Avg"])
def test_pooling_vs_numpy(dims, shape, kind):
    x = randn(*shape)
    reduce, pad_value = (np.max, -np.inf) if kind == "Max" else (np.mean, 0.0)
    cls = getattr(nn, f"{kind}Pool{dims}d")
    for kernel, stride, padding in [(2, None, 0), (3, 2, 1), ((3,) * dims, 1, 0)]:
        pool = cls(kernel, stride, padding)
        k = [kernel] * dims if isinstance(kernel, int) else list(kernel)
        st = k if stride is None else [stride] * dims
        close(pool(mx.array(x)), np_pool(x, reduce, k, st, [padding] * dims, pad_value), atol=1e-6)
    assert repr(cls(2)) == f"{kind}Pool{dims}d(kernel_size={(2,) * dims}, stride={(2,) * dims}, padding={(0,) * dims})"
    with pytest.raises(ValueError, match="'kernel_size' must be positive"):
        cls(0)
    with pytest.raises(ValueError, match="'padding' must be non-negative"):
        cls(2, padding=-1)
    with pytest.raises(ValueError, match=f"'stride' must be an integer or a tuple containing {dims} integer"):
        cls(2, stride=(1,) * (dims + 1))


def np_source_positions(n, scale, align_corners):
    m = int(scale * n)
    if align_corners:
        return np.arange(m) * ((n - 1) / max(m - 1, 1))
    return np.arange(m) / scale - ((m - 1) / scale - n + 1) / 2


def np_resample_1d(x, scale, align_corners, kernel, radius, antialias):
    """Interpolate axis 1 of ``x`` with ``kernel`` (|distance| -> weight) over taps within
    ``radius`` (widened by 1/scale and renormalised over in-range taps when antialiasing),
    borders clamped."""
    n = x.shape[1]
    positions = np_source_positions(n, scale, align_corners)
    widening = 1 / scale if antialias and scale < 1 else 1.0
    out = np.zeros((x.shape[0], len(positions), x.shape[2]))
    for j, p in enumerate(positions):
        if not antialias and kernel is None:  # linear: clip then interpolate
            p = min(max(p, 0), n - 1)
            lo = int(np.floor(p))
            hi = int(np.ceil(p))
            out[:, j] = x[:, lo] * (1 - (p - lo)) + x[:, hi] * (p - lo)
            continue
        base = np.floor(p)
        offsets = range(-int(np.ceil(radius * widening)), int(np.ceil(radius * widening)) + 1)
        weights = [(int(np.clip(base + k, 0, n - 1)), kernel(abs(p - (base + k)) / widening),
                    0 <= base + k < n) for k in offsets]
        if antialias:
            weights = [(i, w if inside else 0.0) for i, w, inside in weights]
            total = sum(w for _, w in weights) or 1.0
            weights = [(i, w / total) for i, w in weights]
        else:
            weights = [(i, w) for i, w, _ in weights]
        out[:, j] = sum(w * x[:, i] for i, w in weights)
    return out


def keys_kernel(a):
    def kernel(t):
        if t <= 1:
            return ((a + 2) * t - (a + 3)) * t * t + 1
        if t < 2:
            return (((t - 5) * t + 8) * t - 4) * a
        return 0.0

    return kernel


def test_upsample_nearest_integer_scale():
    x = randn(2, 3, 4, 5)
    up = nn.Upsample(scale_factor=(2, 3))
    assert repr(up) == "Upsample(scale_factor=(2.0, 3.0), mode='nearest', align_corners=False)"
    close(up(mx.array(x)), np.repeat(np.repeat(x, 2, axis=1), 3, axis=2))
    with pytest.raises(ValueError, match="One scale per spatial dimension is required"):
        nn.Upsample((2, 2, 2))(mx.array(x))
    with pytest.raises(ValueError, match="at least 3D but 2D was provided"):
        up(mx.zeros((2, 3)))
    with pytest.raises(ValueError, match="unsupported upsampling algorithm: area"):
        nn.Upsample(2, mode="area")
    with pytest.raises(ValueError, match="Antialiasing is not supported for nearest"):
        nn.Upsample(2, antialias=True)
    with pytest.raises(ValueError, match="antialias=True with align_corners=True is not supported"):
        nn.Upsample(2, mode="linear", align_corners=True, antialias=True)


@pytest.mark.parametrize("mode,align_corners,antialias", [
    ("linear", False, False), ("linear", True, False), ("linear", False, True),
    ("cubic", False, False), ("cubic", True, False), ("cubic", False, True), ("nearest", False, False),
])
@pytest.mark.parametrize("scale", [2.5, 0.5])
def test_upsample_interpolation_vs_numpy(mode, align_corners, antialias, scale):
    x = randn(2, 6, 3)
    got = nn.Upsample(scale, mode, align_corners, antialias)(mx.array(x))
    if mode == "nearest":
        m = int(scale * 6)
        source = np.round((np.arange(m) + 0.5) * 6 / m - 0.5) if m > 6 else np.arange(m) * 6 / m
        expected = x[:, source.astype(int)]
    elif mode == "linear":
        triangle = (lambda t: max(1 - t, 0.0)) if antialias else None
        expected = np_resample_1d(x, scale, align_corners, triangle, 1.0, antialias)
    else:
        expected = np_resample_1d(x, scale, align_corners, keys_kernel(-0.5 if antialias else -0.75), 2.0, antialias)
    close(got, expected, atol=1e-5)
    # 2-D inputs interpolate each axis in turn (the kernels are separable)
    x2 = randn(1, 5, 4, 2)
    up2 = nn.Upsample((scale, 2.0), mode, align_corners, antialias)(mx.array(x2))
    first = nn.Upsample((scale, 1.0), mode, align_corners, antialias)(mx.array(x2))
    both = nn.Upsample((1.0, 2.0), mode, align_corners, antialias)(first)
    close(up2, np_of(both), atol=1e-5)


def np_rope(x, dims, traditional, base, scale, offset):
    positions = (np.arange(x.shape[-2]) + offset) * scale
    angles = positions[:, None] * base ** (-np.arange(0, dims, 2) / dims)[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    out = x.astype(np.float64).copy()
    first, second = (slice(0, dims, 2), slice(1, dims, 2)) if traditional else (slice(0, dims // 2), slice(dims // 2, dims))
    x1, x2 = x[..., first], x[..., second]
    out[..., first] = x1 * cos - x2 * sin
    out[..., second] = x1 * sin + x2 * cos
    return out


@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize("dims,offset", [(8, 0), (4, 3)])
def test_rope(traditional, dims, offset):
    x = randn(2, 5, 8)
    rope = nn.RoPE(dims, traditional=traditional, base=100, scale=0.5)
    assert repr(rope) == f"RoPE({dims}, traditional={traditional})"
    close(rope(mx.array(x), offset=offset), np_rope(x, dims, traditional, 100, 0.5, offset), atol=1e-5)


def test_sinusoidal_positional_encoding_and_alibi():
    positions = np.arange(6, dtype=np.float32)
    enc = nn.SinusoidalPositionalEncoding(8)
    assert enc.parameters() == {}
    sigmas = np.exp(np.linspace(0.0, np.log(1e-4), 4))
    y = positions[:, None] * sigmas
    close(enc(mx.array(positions)), np.concatenate([np.sin(y), np.cos(y)], -1) * 0.5, atol=1e-5)
    turns = nn.SinusoidalPositionalEncoding(2, cos_first=True, full_turns=True, scale=1)
    y = positions[:, None] * 2 * np.pi
    close(turns(mx.array(positions)), np.concatenate([np.cos(y), np.sin(y)], -1), atol=1e-5)
    with pytest.raises(ValueError, match="dims must be positive and even but got 3"):
        nn.SinusoidalPositionalEncoding(3)
    scores = randn(1, 4, 3, 5)
    slopes = 2.0 ** (-2.0 * np.arange(1, 5))  # 4 heads: 2^(-8/4 * h)
    distance = -np.abs(np.arange(2, 5)[:, None] - np.arange(5)[None, :])
    close(nn.ALiBi()(mx.array(scores), offset=2), scores + slopes[:, None, None] * distance, atol=1e-6)
    # 6 heads: the 4-head slopes, then every other 8-head slope (2^-1, 2^-3)
    close(nn.ALiBi.create_alibi_slope(6)[:, 0, 0], [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3], atol=1e-7)


# ----------------------------------------------------------------- losses


def np_log_softmax(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def test_cross_entropy_indices_probs_smoothing_weights():
    logits = randn(4, 5) * 2
    targets = np.array([0, 4, 2, 2])
    logp = np_log_softmax(logits.astype(np.float64))
    per_example = -logp[np.arange(4), targets]
    loss = nn.losses.cross_entropy(mx.array(logits), mx.array(targets))
    assert loss.shape == (4,)
    close(loss, per_example, atol=1e-5)
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(targets), reduction="mean"), per_example.mean(), atol=1e-5)
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(targets), reduction="sum"), per_example.sum(), atol=1e-5)
    probs = np.eye(5, dtype=np.float32)[targets] * 0.7 + 0.06
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(probs)), -(probs * logp).sum(-1), atol=1e-5)
    smoothed = -(0.9 * logp[np.arange(4), targets] + 0.1 * logp.mean(-1))
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(targets), label_smoothing=0.1), smoothed, atol=1e-5)
    weights = randn(4)
    close(nn.losses.cross_entropy(mx.array(logits), mx.array(targets), weights=mx.array(weights)),
          per_example * weights, atol=1e-5)
    # class axis first
    close(nn.losses.cross_entropy(mx.array(logits.T), mx.array(targets), axis=0), per_example, atol=1e-5)
    with pytest.raises(ValueError, match=r"Label smoothing must be in \[0, 1\), got 1.0"):
        nn.losses.cross_entropy(mx.array(logits), mx.array(targets), label_smoothing=1.0)
    with pytest.raises(ValueError, match=r"Targets shape \(3,\) does not match logits shape \(4, 5\)"):
        nn.losses.cross_entropy(mx.array(logits), mx.array(targets[:3]))
    with pytest.raises(ValueError, match="Invalid reduction"):
        nn.losses.cross_entropy(mx.array(logits), mx.array(targets), reduction="avg")
    with pytest.raises(ValueError, match="Weights with shape"):
        nn.losses.cross_entropy(mx.array(logits), mx.array(targets), weights=mx.ones((3,)))


def test_binary_cross_entropy():
    logits = randn(6)
    targets = (RNG.random(6) > 0.5).astype(np.float32)
    p = np_sigmoid(logits.astype(np.float64))
    per = -(targets * np.log(p) + (1 - targets) * np.log(1 - p))
    close(nn.losses.binary_cross_entropy(mx.array(logits), mx.array(targets)), per.mean(), atol=1e-5)
    close(nn.losses.binary_cross_entropy(mx.array(p.astype(np.float32)), mx.array(targets), with_logits=False,
                                         reduction="none"), per, atol=1e-5)
    clipped = nn.losses.binary_cross_entropy(mx.array([0.0, 1.0]), mx.array([1.0, 0.0]), with_logits=False,
                                             reduction="none")
    close(clipped, [100.0, 100.0])
    w = randn(6)
    close(nn.losses.binary_cross_entropy(mx.array(logits), mx.array(targets), weights=mx.array(w), reduction="sum"),
          (per * w).sum(), atol=1e-5)
    with pytest.raises(ValueError, match="Inputs shape"):
        nn.losses.binary_cross_entropy(mx.array(logits), mx.array(targets[:2]))


def test_regression_losses_and_nll():
    pred, target = randn(3, 4), randn(3, 4)
    d = pred - target
    close(nn.losses.mse_loss(mx.array(pred), mx.array(target)), (d**2).mean())
    close(nn.losses.mse_loss(mx.array(pred), mx.array(target), reduction="none"), d**2)
    close(nn.losses.l1_loss(mx.array(pred), mx.array(target), reduction="sum"), np.abs(d).sum(), rtol=1e-5)
    huber = np.where(np.abs(d) < 1.0, 0.5 * d**2, np.abs(d) - 0.5)
    close(nn.losses.smooth_l1_loss(mx.array(pred), mx.array(target)), huber.mean())
    with pytest.raises(ValueError, match=r"Predictions shape \(3, 4\) does not match targets shape \(4,\)"):
        nn.losses.mse_loss(mx.array(pred), mx.array(target[0]))
    logp = np_log_softmax(randn(3, 4))
    labels = np.array([3, 0, 1])
    close(nn.losses.nll_loss(mx.array(logp), mx.array(labels)), -logp[np.arange(3), labels])
    q = np_log_softmax(randn(3, 4))
    close(nn.losses.kl_div_loss(mx.array(logp), mx.array(q)), (np.exp(q) * (q - logp)).sum(-1), atol=1e-6)


def test_other_losses():
    a, b, c = randn(3, 4), randn(3, 4), randn(3, 4)
    e = a - b
    close(nn.losses.huber_loss(mx.array(a), mx.array(b), delta=0.5),
          np.where(np.abs(e) <= 0.5, 0.5 * e**2, 0.5 * (np.abs(e) - 0.25)), atol=1e-6)
    close(nn.losses.log_cosh_loss(mx.array(a), mx.array(b), reduction="mean"), np.log(np.cosh(e)).mean(), atol=1e-6)
    signs = np.sign(randn(3, 4))
    close(nn.losses.hinge_loss(mx.array(a), mx.array(signs)), np.maximum(1 - a * signs, 0))
    close(nn.losses.margin_ranking_loss(mx.array(a), mx.array(b), mx.array(signs), margin=0.1),
          np.maximum(0, -signs * e + 0.1), atol=1e-6)
    with pytest.raises(ValueError, match="The shapes of the arguments do not match"):
        nn.losses.margin_ranking_loss(mx.array(a), mx.array(b), mx.array(signs[0]))
    cosine = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    close(nn.losses.cosine_similarity_loss(mx.array(a), mx.array(b)), cosine, atol=1e-6)
    dist = lambda x, y: np.sqrt(((x - y) ** 2).sum(-1) + 1e-6)  # noqa: E731
    close(nn.losses.triplet_loss(mx.array(a), mx.array(b), mx.array(c)),
          np.maximum(dist(a, b) - dist(a, c) + 1.0, 0), atol=1e-5)
    var = np.abs(c) + 0.1
    nll = 0.5 * (np.log(var) + (b - a) ** 2 / var) + 0.5 * np.log(2 * np.pi)
    close(nn.losses.gaussian_nll_loss(mx.array(a), mx.array(b), mx.array(var), full=True), nll.mean(), atol=1e-5)
    with pytest.raises(ValueError, match="does not match vars shape"):
        nn.losses.gaussian_nll_loss(mx.array(a), mx.array(b), mx.array(var[0]))


# ----------------------------------------------------------------- init


def test_initialisers():
    a = mx.zeros((64, 32))
    assert np.all(np_of(nn.init.constant(0.5)(a)) == 0.5)
    assert nn.init.constant(1, dtype=mx.float16)(a).dtype == mx.float16
    u = np_of(nn.init.uniform(-2.0, -1.0)(a))
    assert u.shape == (64, 32) and u.min() >= -2 and u.max() < -1
    n = np_of(nn.init.normal(3.0, 0.5)(a))
    assert abs(n.mean() - 3.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    close(nn.init.identity()(mx.zeros((3, 3))), np.eye(3))
    with pytest.raises(ValueError, match="square matrix"):
        nn.init.identity()(a)
    limit = math.sqrt(6 / (64 + 32))
    g = np_of(nn.init.glorot_uniform()(a))
    assert g.max() <= limit and g.min() >= -limit and g.max() > 0.9 * limit
    assert abs(np_of(nn.init.glorot_normal()(a, gain=2.0)).std() - 2 * math.sqrt(2 / 96)) < 0.02
    assert abs(np_of(nn.init.he_normal()(a)).std() - 1 / math.sqrt(32)) < 0.02
    assert abs(np_of(nn.init.he_normal()(a, mode="fan_out")).std() - 1 / math.sqrt(64)) < 0.02
    h = np_of(nn.init.he_uniform()(mx.zeros((8, 3, 4))))  # fan_in = 4 * 3
    assert h.max() <= math.sqrt(3 / 12)
    with pytest.raises(ValueError, match="requires at least 2 dimensional input"):
        nn.init.glorot_uniform()(mx.zeros((3,)))
    with pytest.raises(ValueError, match="Invalid mode"):
        nn.init.he_uniform()(a, mode="fan")


# ----------------------------------------------------------------- value_and_grad


class MLP(nn.Module):
    def __init__(self, sizes, activation=nn.tanh):
        super().__init__()
        self.layers = [nn.Linear(i, o) for i, o in zip(sizes[:-1], sizes[1:])]
        self.activation = activation

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)


def np_mlp_loss(flat, x, y):
    """The MLP + cross-entropy loss in float64 NumPy over a flat {path: array} dict."""
    h = x
    n = len({k.split(".")[1] for k in flat})
    for i in range(n):
        h = h @ flat[f"layers.{i}.weight"].T + flat[f"layers.{i}.bias"]
        if i < n - 1:
            h = np.tanh(h)
    logp = np_log_softmax(h)
    return -logp[np.arange(len(y)), y].mean()


def central_differences(fn, flat, eps=1e-6):
    grads = {}
    for key, value in flat.items():
        g = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            up = {k: v.copy() for k, v in flat.items()}
            down = {k: v.copy() for k, v in flat.items()}
            up[key][i] += eps
            down[key][i] -= eps
            g[i] = (fn(up) - fn(down)) / (2 * eps)
        grads[key] = g
    return grads


def test_value_and_grad_matches_finite_differences():
    model = MLP([3, 5, 4])
    x, y = randn(6, 3), np.array([0, 1, 2, 3, 0, 1])

    def loss_fn(model, x, y):
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    loss, grads = loss_and_grad(model, mx.array(x), mx.array(y))
    flat = {k: np_of(v).astype(np.float64) for k, v in tree_flatten(model.parameters())}
    close(loss, np_mlp_loss(flat, x.astype(np.float64), y), rtol=1e-5)
    expected = central_differences(lambda p: np_mlp_loss(p, x.astype(np.float64), y), flat)
    got = dict(tree_flatten(grads))
    assert sorted(got) == sorted(expected)
    for k in expected:
        np.testing.assert_allclose(np_of(got[k]), expected[k], rtol=1e-3, atol=1e-5, err_msg=k)
    # the model's parameters are plain arrays again after the call
    close(model.layers[0].weight, flat["layers.0.weight"])


def test_value_and_grad_skips_frozen_parameters():
    model = MLP([2, 3, 1], activation=nn.relu)
    model.layers[0].freeze(keys="bias")
    model.layers[1].freeze()

    def loss_fn(x):
        return mx.sum(model(x) ** 2)

    _, grads = nn.value_and_grad(model, loss_fn)(mx.array(randn(4, 2)))
    assert [k for k, _ in tree_flatten(grads)] == ["layers.0.weight"]


def test_checkpointed_layers_give_the_same_values_and_gradients():
    mx.random.seed(3)
    plain = nn.TransformerEncoder(2, 8, 2, mlp_dims=16)
    saving = nn.TransformerEncoder(2, 8, 2, mlp_dims=16, checkpoint=True)
    saving.update(plain.parameters())
    x = mx.random.normal((2, 5, 8))
    mask = nn.MultiHeadAttention.create_additive_causal_mask(5)

    def loss_and_grads(model):
        return nn.value_and_grad(model, lambda x: (model(x, mask) ** 2).sum())(x)

    (value, grads), (saved_value, saved_grads) = loss_and_grads(plain), loss_and_grads(saving)
    assert value.item() == saved_value.item()
    flat, saved_flat = tree_flatten(grads), tree_flatten(saved_grads)
    assert [k for k, _ in flat] == [k for k, _ in saved_flat] and len(flat) > 10
    for (_, g), (_, s) in zip(flat, saved_flat):
        np.testing.assert_allclose(np.array(s), np.array(g), rtol=1e-5, atol=1e-6)

    # A function of the module's parameters and of its inputs: both get gradients.
    layer = nn.Linear(3, 2)
    fn = nn.utils.checkpoint(layer, lambda x: mx.tanh(layer(x)).sum())
    x = mx.random.normal((4, 3))
    dx = mx.grad(fn)(x)
    expected = mx.grad(lambda x: mx.tanh(layer(x)).sum())(x)
    np.testing.assert_allclose(np.array(dx), np.array(expected), rtol=1e-6)
    _, dparams = nn.value_and_grad(layer, fn)(x)
    _, expected_params = nn.value_and_grad(layer, lambda x: mx.tanh(layer(x)).sum())(x)
    for (_, g), (_, e) in zip(tree_flatten(dparams), tree_flatten(expected_params)):
        np.testing.assert_allclose(np.array(g), np.array(e), rtol=1e-6)
