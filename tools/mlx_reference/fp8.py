"""Writes python/tests/mlx_fp8.json: real MLX's E4M3 encoding (`to_fp8`) of a spread of
float32 values (every E4M3 value, the midpoints between neighbours, both signs, random
magnitudes across the range and beyond, specials) and its decoding (`from_fp8`) of all
256 bytes. Run with a Python that has mlx:

    python tools/mlx_reference/fp8.py
"""

import json
from pathlib import Path

import mlx.core as mx
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "python/tests/mlx_fp8.json"

decoded = np.array(mx.from_fp8(mx.arange(256).astype(mx.uint8), dtype=mx.float32))
finite = np.unique(np.abs(decoded[np.isfinite(decoded)]))
midpoints = (finite[1:] + finite[:-1]) / 2
rng = np.random.default_rng(8)
spread = np.exp(rng.uniform(np.log(1e-5), np.log(1e4), 2000))
values = np.concatenate([finite, midpoints, spread, [np.inf, np.nan, 1e30, 3e-45]]).astype(np.float32)
values = np.concatenate([values, -values])
encoded = np.array(mx.to_fp8(mx.array(values)))
OUT.write_text(json.dumps({
    "decoded": [None if np.isnan(v) else float(v) for v in decoded],
    # NaN as a string that keeps its sign (MLX encodes the sign bit of NaN too).
    "inputs": [("-nan" if np.signbit(v) else "nan") if np.isnan(v) else float(v) for v in values],
    "encoded": encoded.tolist(),
}))
print(f"wrote {OUT}")
