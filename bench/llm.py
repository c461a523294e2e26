"""Language-model inference with mlx-lm's own model code and generate loop: lazulite and MLX.

A llama-family model of about 0.2B parameters (12 layers, hidden 1024, 16 heads with 4 key/value
heads, MLP 2816, vocabulary 32000, untied output layer) with random weights, in float32,
bfloat16, and 8-bit and 4-bit affine quantization (group 64, from bfloat16). For each
precision it prints:

- decode tokens/s through `mlx_lm.generate.generate_step` (the loop mlx-lm's `generate`
  runs), against the weight-read limit: a decode step reads every weight but the embedding
  table once, so tokens/s cannot exceed (bytes lazulite sums per second) / (bytes read).
  lazulite's decode is timed in windows of 16 tokens, each between sums over an array of
  the weights' size, and each window is set against the sums next to it: the memory of a
  shared machine changes speed within a second. The figures are medians over the windows;
- prefill tokens/s for a 128-token prompt, against the matmul limit: the prompt costs
  2 x parameters x tokens flops, done at most at the rate lazulite multiplies float32
  matrices of the model's shapes.

Each library runs in its own process (the benchmark venv holds the real MLX, so lazulite's
process makes `mlx` name lazulite by hand; users install the `lazulite-mlx` package instead);
of lazulite's two runs the one nearer its limit is kept, MLX runs once (its CPU build takes
minutes here).

    bash bench/setup.sh
    .venv-bench/bin/python bench/llm.py              # every precision
    .venv-bench/bin/python bench/llm.py 4-bit        # precisions containing a word
    .venv-bench/bin/python bench/llm.py --split 4-bit   # a decode step: record vs evaluate,
                                                        # and its kernel profile
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

CONFIG = {
    "model_type": "llama",
    "hidden_size": 1024,
    "num_hidden_layers": 12,
    "intermediate_size": 2816,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "rms_norm_eps": 1e-5,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "rope_theta": 10000.0,
}
PRECISIONS = ["float32", "bfloat16", "8-bit", "4-bit"]
PROMPT = 128
DECODE_PROMPT = 16
ROUNDS = 2
# lazulite's decode is timed in windows of tokens, each between two sums over the weights.
WINDOWS = 8
WINDOW_TOKENS = 16


def alias_mlx_to_lazulite() -> None:
    """Makes `import mlx...` give lazulite's modules (what the lazulite-mlx shim does)."""
    import importlib
    import pkgutil

    import lazulite

    for info in pkgutil.walk_packages(lazulite.__path__, "lazulite."):
        importlib.import_module(info.name)
    for name, module in list(sys.modules.items()):
        if name == "lazulite" or name.startswith("lazulite."):
            sys.modules["mlx" + name[len("lazulite") :]] = module


def build(mx, nn, precision: str):
    from mlx_lm.models import llama

    mx.random.seed(0)
    model = llama.Model(llama.ModelArgs.from_dict(CONFIG))
    if precision != "float32":
        model.set_dtype(mx.bfloat16)
    if precision.endswith("-bit"):
        nn.quantize(model, group_size=64, bits=int(precision.split("-")[0]))
    mx.eval(model.parameters())
    return model


def weight_bytes(model) -> tuple[int, int]:
    """Bytes of all parameters, and of those a decode step reads (all but the embedding)."""
    from mlx.utils import tree_flatten

    total = read = 0
    for name, p in tree_flatten(model.parameters()):
        total += p.nbytes
        if not name.startswith("model.embed_tokens"):
            read += p.nbytes
    return total, read


def best_seconds(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def decode_tokens_per_second(mx, model, tokens: int) -> float:
    from mlx_lm.generate import generate_step

    prompt = mx.random.randint(0, CONFIG["vocab_size"], (DECODE_PROMPT,))
    start = None
    for i, (token, _) in enumerate(generate_step(prompt, model, max_tokens=tokens)):
        if i == 0:
            start = time.perf_counter()  # the first token ends the prefill
    return (tokens - 1) / (time.perf_counter() - start)


def read_rate(mx, data) -> float:
    """Bytes a second lazulite sums over `data`: the median of three sums, after one that
    is not counted (the first sum after a decode window runs slow)."""
    mx.eval(mx.sum(data))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        mx.eval(mx.sum(data))
        times.append(time.perf_counter() - start)
    return data.nbytes / statistics.median(times)


def decode_against_limit(mx, model, read: int) -> dict:
    """Decode tokens/s through mlx-lm's generate loop and the weight-read limit, taken in
    turns: `WINDOWS` windows of `WINDOW_TOKENS` tokens, each between two sums over `read`
    bytes, whose mean rate is that window's limit. Medians over the windows.

    The memory of a shared machine changes speed by up to twice within a second, in bursts
    of a few hundred milliseconds: the best of a few sums catches a burst that a decode of
    many tokens cannot ride, so the limit is read next to each window instead. The burst
    rate (the best of five sums) is returned too, as `burst`."""
    from mlx_lm.generate import generate_step

    data = mx.random.uniform(shape=(read // 4,))
    mx.eval(data)
    prompt = mx.random.randint(0, CONFIG["vocab_size"], (DECODE_PROMPT,))
    steps = generate_step(prompt, model, max_tokens=WINDOWS * WINDOW_TOKENS + 8)
    for _ in range(4):  # the prompt, and a few tokens of warming up
        next(steps)
    mx.synchronize()
    before = read_rate(mx, data)
    rates, limits, ratios = [], [], []
    for _ in range(WINDOWS):
        start = time.perf_counter()
        for _ in range(WINDOW_TOKENS):
            next(steps)
        # The window's first token was computed before it began; its last one's successor
        # is still computing and belongs to no window.
        rate = (WINDOW_TOKENS - 1) / (time.perf_counter() - start)
        mx.synchronize()
        after = read_rate(mx, data)
        limit = (before + after) / 2 / read
        rates.append(rate)
        limits.append(limit)
        ratios.append(rate / limit)
        before = after
    median = statistics.median
    burst = read / best_seconds(lambda: mx.eval(mx.sum(data)), 5)
    return {
        "decode": median(rates),
        "limit": median(limits),
        "ratio": median(ratios),
        "bandwidth": median(limits) * read,
        "burst": burst,
    }


def decode_step_split(mx, model, steps: int = 200) -> dict:
    """Median milliseconds a decode step spends recording (the model's Python code and the
    ops it calls) and evaluating, timed apart: the model called on one token with its KV
    cache, as mlx-lm's step does, then evaluated with the cache."""
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    mx.eval(model(mx.random.randint(0, CONFIG["vocab_size"], (1, DECODE_PROMPT)), cache=cache))
    token = mx.array([[5]])
    recording, evaluating = [], []
    for i in range(steps + 5):
        start = time.perf_counter()
        logits = model(token, cache=cache)
        recorded = time.perf_counter()
        mx.eval(logits, [c.state for c in cache])
        if i >= 5:  # after warming up
            recording.append(recorded - start)
            evaluating.append(time.perf_counter() - recorded)
    median = lambda v: sorted(v)[len(v) // 2] * 1e3  # noqa: E731
    return {"record_ms": median(recording), "eval_ms": median(evaluating)}


def prefill_tokens_per_second(mx, model) -> float:
    from mlx_lm.models.cache import make_prompt_cache

    prompt = mx.random.randint(0, CONFIG["vocab_size"], (1, PROMPT))

    def run():
        mx.eval(model(prompt, cache=make_prompt_cache(model)))

    return PROMPT / best_seconds(run, 3)


def matmul_parameters() -> int:
    """Parameters that take part in a token's matrix products (all but the embedding)."""
    c = CONFIG
    h, f = c["hidden_size"], c["intermediate_size"]
    kv = h // c["num_attention_heads"] * c["num_key_value_heads"]
    return c["num_hidden_layers"] * (2 * h * h + 2 * h * kv + 3 * h * f) + c["vocab_size"] * h


def prefill_limit(mx) -> dict:
    """Prefill tokens/s the machine allows, as lazulite measures it: the rate it multiplies
    float32 matrices of the model's shapes."""
    h, f = CONFIG["hidden_size"], CONFIG["intermediate_size"]
    pairs = [((PROMPT, h), (h, h)), ((PROMPT, h), (h, f)), ((PROMPT, f), (f, h))]
    operands = [(mx.random.normal(a), mx.random.normal(b)) for a, b in pairs]
    mx.eval(operands)
    flops = sum(2 * a[0] * a[1] * b[1] for a, b in pairs)
    rate = flops / best_seconds(lambda: mx.eval([a @ b for a, b in operands]), 5)
    return {"gflops": rate / 1e9, "prefill": rate / (2 * matmul_parameters())}


def child(library: str, precisions: list[str]) -> None:
    if library == "lazulite":
        alias_mlx_to_lazulite()
    import mlx.core as mx
    import mlx.nn as nn

    results = {}
    for precision in precisions:
        model = build(mx, nn, precision)
        total, read = weight_bytes(model)
        row = {"total": total, "read": read}
        if library == "lazulite":
            row["decode_limit"] = decode_against_limit(mx, model, read)
            row["decode"] = row["decode_limit"]["decode"]
            row["prefill_limit"] = prefill_limit(mx)
        else:
            row["decode"] = decode_tokens_per_second(mx, model, 16)
        row["prefill"] = prefill_tokens_per_second(mx, model)
        results[precision] = row
    print(json.dumps(results))


def run_child(library: str, precisions: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", library, *precisions],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def decode_kernel_profile(mx, model, steps: int = 100) -> list[dict]:
    """lazulite's kernel profile (`start_profile` / `stop_profile`) of `steps` decode
    steps, after a prompt and a few steps of warming up."""
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    mx.eval(model(mx.random.randint(0, CONFIG["vocab_size"], (1, DECODE_PROMPT)), cache=cache))
    token = mx.array([[5]])
    for i in range(steps + 5):
        if i == 5:
            mx.start_profile()
        mx.eval(model(token, cache=cache), [c.state for c in cache])
    return mx.stop_profile()


def split(precisions: list[str]) -> None:
    alias_mlx_to_lazulite()
    import mlx.core as mx
    import mlx.nn as nn

    steps = 100
    for precision in precisions:
        model = build(mx, nn, precision)
        times = decode_step_split(mx, model)
        print(f"{precision}: a decode step records in {times['record_ms']:.2f} ms "
              f"and evaluates in {times['eval_ms']:.2f} ms (medians of 200)")
        rows = decode_kernel_profile(mx, model, steps)
        by_primitive: dict[str, float] = {}
        for row in rows:
            by_primitive[row["primitive"]] = by_primitive.get(row["primitive"], 0.0) + row["seconds"]
        total = sum(by_primitive.values())
        print(f"  kernels: {total / steps * 1e3:.2f} ms a step; by primitive, ms a step:")
        for name, seconds in sorted(by_primitive.items(), key=lambda kv: -kv[1])[:6]:
            print(f"    {name:18s} {seconds / steps * 1e3:7.3f}")
        print("  the costliest kernels (calls a step, µs a call, outputs):")
        for row in rows[:5]:
            shapes = ", ".join(f"{list(shape)} {dtype}" for shape, dtype in row["outputs"])
            print(f"    {row['primitive']:18s} {row['calls'] / steps:5.1f} "
                  f"{row['seconds'] / row['calls'] * 1e6:8.1f}  {shapes}")


def chosen(words: list[str]) -> list[str]:
    """The precisions containing one of `words` (all without words); exits on a word that
    names none, or on an option this script does not have."""
    for word in words:
        if word.startswith("-") or not any(word in p for p in PRECISIONS):
            sys.exit(__doc__.split("\n\n")[-1] + f"\nprecisions: {', '.join(PRECISIONS)}")
    return [p for p in PRECISIONS if not words or any(w in p for w in words)]


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], chosen(sys.argv[3:]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--split":
        split(chosen(sys.argv[2:]))
        return
    precisions = chosen(sys.argv[1:])
    best: dict[str, dict] = {"lazulite": {}, "mlx": {}}
    # MLX's CPU build takes minutes per precision: one run of it, best of ROUNDS of ours.
    for library in ["lazulite"] * ROUNDS + ["mlx"]:
        for precision, row in run_child(library, precisions).items():
            kept = best[library].setdefault(precision, row)
            # The round whose decode came nearer its limit, with its own limit.
            if "decode_limit" in row and row["decode_limit"]["ratio"] > kept["decode_limit"]["ratio"]:
                kept["decode"], kept["decode_limit"] = row["decode"], row["decode_limit"]
            kept["prefill"] = max(kept["prefill"], row["prefill"])
    print(table(best))


def table(best: dict) -> str:
    """The figures as a Markdown table: tokens/s, the limit, and the ratios."""
    rows = [
        "| weights | MB read per token | decode tok/s lazulite | MLX | limit | lazulite/limit "
        "| lazulite/MLX | prefill tok/s lazulite | MLX | limit | lazulite/limit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for precision, ours in best["lazulite"].items():
        theirs, decode, prefill = best["mlx"][precision], ours["decode_limit"], ours["prefill_limit"]
        rows.append(
            f"| {precision} | {ours['read'] / 1e6:.0f} "
            f"| {ours['decode']:.1f} | {theirs['decode']:.1f} | {decode['limit']:.0f} "
            f"| {decode['ratio']:.2f} | {ours['decode'] / theirs['decode']:.1f}x "
            f"| {ours['prefill']:.0f} | {theirs['prefill']:.0f} | {prefill['prefill']:.0f} "
            f"| {ours['prefill'] / prefill['prefill']:.2f} |"
        )
    limits = [r["decode_limit"] for r in best["lazulite"].values()]
    low = min(d["bandwidth"] for d in limits) / 1e9
    high = max(d["bandwidth"] for d in limits) / 1e9
    burst = max(d["burst"] for d in limits) / 1e9
    gflops = max(r["prefill_limit"]["gflops"] for r in best["lazulite"].values())
    rows.append("")
    rows.append(
        f"Decode: medians of {WINDOWS} windows of {WINDOW_TOKENS} tokens, each against the rate "
        f"lazulite sums an array of the weights' size right before and after it "
        f"({low:.1f}-{high:.1f} GB/s; the best of five sums, a burst of the shared "
        f"machine's memory, read {burst:.1f}). Prefill limit: {gflops:.0f} GFLOP/s "
        f"multiplying float32 matrices of the model's shapes."
    )
    return "\n".join(rows)


if __name__ == "__main__":
    main()
