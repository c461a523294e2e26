"""Writes crates/lazulite/src/ops/hadamard_matrices.txt: the 12x12, 20x20 and 28x28
Hadamard matrices that MLX's `hadamard_transform` uses for lengths m * 2^k, m in
(12, 20, 28), read off real MLX (the transform of the identity, unscaled), one row of
'+'/'-' per line. Run with a Python that has mlx:

    python tools/mlx_reference/hadamard.py
"""

import json
from pathlib import Path

import mlx.core as mx
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "crates/lazulite/src/ops/hadamard_matrices.txt"

blocks = []
for m in (12, 20, 28):
    # Row i of the result is the transform of e_i: column i of the matrix.
    h = np.array(mx.hadamard_transform(mx.eye(m), scale=1.0)).T
    assert np.array_equal(np.abs(h), np.ones((m, m))) and np.array_equal(h @ h.T, m * np.eye(m))
    blocks.append("\n".join("".join("+" if v > 0 else "-" for v in row) for row in h))
OUT.write_text("\n\n".join(blocks) + "\n")
print(f"wrote {OUT}")

# Transforms of fixed inputs at lengths that use each matrix, for the tests.
FIXTURE = Path(__file__).resolve().parents[2] / "python/tests/mlx_hadamard.json"
rng = np.random.default_rng(12)
cases = []
for n in (2, 16, 12, 24, 20, 40, 28, 56):
    x = rng.standard_normal((2, n)).astype(np.float32)
    y = np.array(mx.hadamard_transform(mx.array(x)))
    cases.append({"n": n, "input": x.tolist(), "output": y.tolist()})
FIXTURE.write_text(json.dumps(cases))
print(f"wrote {FIXTURE}")
