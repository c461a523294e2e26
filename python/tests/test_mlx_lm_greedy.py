"""Greedy generation with mlx-lm's own model code and generate loop on lazulite (through
the lazulite-mlx package) gives real MLX's tokens, and log-probabilities close to MLX's,
for each architecture in float32, bfloat16, float16, 8-bit and 4-bit weights.

mlx_lm_greedy.json was written by tools/mlx_reference/greedy_generation.py with real MLX
0.32.4; both libraries build the models from the same seeds (mlx_lm_greedy.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

from mlx_lm_greedy import build, greedy

FIXTURE = json.loads((Path(__file__).parent / "mlx_lm_greedy.json").read_text())

# Half-precision models give half-precision log-probabilities, rounded in an order that
# differs between the libraries: they agree to two units in the last place.
RELATIVE = {"float16": 2 * 2.0**-10, "bfloat16": 2 * 2.0**-7}


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: f"{c['arch']}-{c['precision']}")
def test_greedy_generation_matches_mlx(case):
    tokens, logprobs = greedy(build(case["arch"], case["precision"], case["seed"]))
    assert tokens == case["tokens"]
    got = logprobs[FIXTURE["saved_steps"]]
    np.testing.assert_allclose(got, np.array(case["logprobs"]), atol=2e-3,
                               rtol=RELATIVE.get(case["precision"], 0.0))
