"""mlx-lm's tensor parallelism (``model.shard()``) on lazulite, run by every process of
an ``mpirun`` job (``mlx`` is lazulite through the lazulite-mlx package): the sharded
model's logits equal the whole model's."""

import mlx.core as mx
import numpy as np
from mlx_lm.models import llama

WORLD = mx.distributed.init(strict=True)


def test_sharded_llama_equals_the_whole_model():
    mx.random.seed(0)
    args = llama.ModelArgs(
        model_type="llama",
        hidden_size=64,
        num_hidden_layers=2,
        intermediate_size=32 * WORLD.size(),
        num_attention_heads=2 * WORLD.size(),
        num_key_value_heads=WORLD.size(),
        rms_norm_eps=1e-5,
        vocab_size=97,
    )
    model = llama.Model(args)
    tokens = mx.array([[3, 14, 15, 92, 65, 35]])
    expected = np.array(model(tokens))
    model.shard()
    assert model.model.layers[0].mlp.gate_proj.weight.shape[0] == 32
    got = np.array(model(tokens))
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3)
