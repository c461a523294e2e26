"""Small mlx-lm models with weights drawn by NumPy from a seed, and their greedy generation.

The same code runs on real MLX (tools/mlx_reference/greedy_generation.py writes the
fixture with it) and on lazulite through the lazulite-mlx package (test_mlx_lm_greedy.py),
so both libraries build identical models from a seed and the fixture needs no weights.
"""

import importlib

import numpy as np

# One small configuration per architecture; each has two layers or more, grouped-query
# attention where the architecture has it, and dimensions the group size 32 divides.
CONFIGS = {
    "llama": dict(model_type="llama", hidden_size=64, num_hidden_layers=2,
                  intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                  rms_norm_eps=1e-5, vocab_size=128),
    "qwen2": dict(model_type="qwen2", hidden_size=64, num_hidden_layers=2,
                  intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                  rms_norm_eps=1e-5, vocab_size=128),
    "qwen3": dict(model_type="qwen3", hidden_size=64, num_hidden_layers=2,
                  intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                  rms_norm_eps=1e-5, vocab_size=128, head_dim=32,
                  max_position_embeddings=512, tie_word_embeddings=False, rope_theta=1000),
    "phi3": dict(model_type="phi3", hidden_size=64, num_hidden_layers=2,
                 intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                 rms_norm_eps=1e-5, vocab_size=128),
    # A sliding window shorter than prompt plus generation: rotating caches are used.
    "gemma3_text": dict(model_type="gemma3_text", hidden_size=64, num_hidden_layers=4,
                        intermediate_size=128, num_attention_heads=4, head_dim=32,
                        rms_norm_eps=1e-4, num_key_value_heads=2, sliding_window=8,
                        sliding_window_pattern=2, vocab_size=128),
    "olmo2": dict(model_type="olmo2", hidden_size=64, attention_bias=False,
                  intermediate_size=128, num_attention_heads=4, num_hidden_layers=2,
                  num_key_value_heads=2, rms_norm_eps=1e-4, rope_theta=1000, vocab_size=128),
    "starcoder2": dict(model_type="starcoder2", hidden_size=64, num_hidden_layers=2,
                       intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                       vocab_size=128),
    "mixtral": dict(model_type="mixtral", vocab_size=128, hidden_size=64,
                    intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                    num_experts_per_tok=2, num_key_value_heads=2, num_local_experts=4),
}

PRECISIONS = ["float32", "bfloat16", "float16", "8-bit", "4-bit"]
PROMPT = [3, 17, 42, 99, 7, 64, 5, 120, 33, 8, 71, 2]
NEW_TOKENS = 8


def build(arch, precision, seed):
    """mlx-lm's model `arch` with weights drawn from `seed`, in `precision`."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx.utils import tree_flatten, tree_unflatten

    module = importlib.import_module(f"mlx_lm.models.{arch}")
    model = module.Model(module.ModelArgs.from_dict(CONFIGS[arch]))
    rng = np.random.default_rng(seed)
    weights = []
    for name, p in sorted(tree_flatten(model.parameters())):
        fan_in = p.shape[-1] if p.ndim > 1 else 1
        scale = 1.0 / np.sqrt(fan_in) if p.ndim > 1 else 0.2
        values = rng.normal(0.0, scale, size=p.shape)
        if p.ndim == 1 and "norm" in name and not arch.startswith("gemma"):
            values += 1.0  # norm weights scale around one (gemma adds the one itself)
        weights.append((name, mx.array(values.astype(np.float32))))
    model.update(tree_unflatten(weights))
    if precision in ("bfloat16", "float16"):
        dtype = getattr(mx, precision)
        model.update(tree_unflatten([(n, w.astype(dtype)) for n, w in weights]))
    elif precision.endswith("-bit"):
        nn.quantize(model, group_size=32, bits=int(precision.split("-")[0]))
    mx.eval(model.parameters())
    return model


def greedy(model):
    """Tokens of a greedy generation from PROMPT with mlx-lm's own loop and caches, and
    the log-probabilities (float32) of every step."""
    import mlx.core as mx
    from mlx_lm.generate import generate_step

    tokens, logprobs = [], []
    steps = generate_step(mx.array(PROMPT), model, max_tokens=NEW_TOKENS,
                          sampler=lambda lp: mx.argmax(lp, axis=-1))
    for token, lp in steps:
        tokens.append(int(token))
        logprobs.append(np.array(lp.astype(mx.float32)).reshape(-1))
    return tokens, np.stack(logprobs)
