"""Writes python/tests/mlx_gguf/quantized.gguf (Q4_0, Q4_1 and Q8_0 tensors made by the
`gguf` package, llama.cpp's Python writer, from seeded values, next to a float32 one) and
python/tests/mlx_gguf/quantized_by_mlx.npz: what real MLX's `mx.load` gives for it (the
packed uint32 levels, `.scales` and `.biases` of each quantized tensor), and
python/tests/mlx_gguf/eight_dims.gguf, which MLX's `save_gguf` writes with tensors of 5
and 8 dimensions (more than llama.cpp's 4). Run with a
Python that has mlx, numpy and gguf:

    python tools/mlx_reference/gguf_quantized.py
"""

from pathlib import Path

import gguf
import mlx.core as mx
import numpy as np
from gguf import quants

OUT = Path(__file__).resolve().parents[2] / "python/tests/mlx_gguf"
KINDS = {"Q4_0": gguf.GGMLQuantizationType.Q4_0, "Q4_1": gguf.GGMLQuantizationType.Q4_1,
         "Q8_0": gguf.GGMLQuantizationType.Q8_0}
# GGUF names as llama.cpp writes them (MLX names the scales by dropping ".weight"), one
# short name, and a tensor of three dimensions.
TENSORS = [("blk.0.attn_q.weight", "Q4_0", (8, 64)), ("blk.0.ffn_up.weight", "Q4_1", (6, 96)),
           ("output.weight", "Q8_0", (4, 128)), ("q8", "Q8_0", (2, 32)),
           ("blk.1.experts.weight", "Q4_0", (2, 3, 64))]


def main():
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(20)
    writer = gguf.GGUFWriter(str(OUT / "quantized.gguf"), "llama")
    for name, kind, shape in TENSORS:
        data = rng.standard_normal(shape).astype(np.float32)
        writer.add_tensor(name, quants.quantize(data, KINDS[kind]), raw_dtype=KINDS[kind])
    writer.add_tensor("token_embd.weight", rng.standard_normal((4, 8)).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    loaded = mx.load(str(OUT / "quantized.gguf"))
    np.savez(OUT / "quantized_by_mlx.npz", **{k: np.array(v) for k, v in loaded.items()})
    mx.save_gguf(str(OUT / "eight_dims.gguf"), {
        "five": mx.arange(32, dtype=mx.float32).reshape(2, 2, 2, 2, 2),
        "eight": mx.arange(6, dtype=mx.int32).reshape(1, 1, 1, 1, 1, 2, 1, 3)})


if __name__ == "__main__":
    main()
