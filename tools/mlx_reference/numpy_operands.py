"""Writes python/tests/mlx_numpy_operands.json: for each op of numpy_operand_cases.py, each
array dtype and each NumPy operand, the result dtype and values real MLX gives (or the
exception it raises). Run with a Python that has mlx:

    python tools/mlx_reference/numpy_operands.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_numpy_operands.json"

sys.path.insert(0, str(OUT.parent))
from numpy_operand_cases import ARRAY_DTYPES, NUMPY_OPERANDS, cases, outcome  # noqa: E402

facts = {
    case: {d: {n: outcome(mx, case, d, n) for n in NUMPY_OPERANDS} for d in ARRAY_DTYPES}
    for case in cases(mx)
}
OUT.write_text(json.dumps(facts, indent=1) + "\n")
print(f"wrote {OUT}")
