"""Writes python/tests/mlx_result_dtypes.json: for each op bound in the reduction, scan,
sort, shape, ternary and linalg families and each input dtype, the result dtype real MLX
gives (or the exception it raises). Run with a Python that has mlx:

    python tools/mlx_reference/op_dtypes.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_result_dtypes.json"

DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64", "complex64"]

sys.path.insert(0, str(OUT.parent))
from dtype_ops import ops  # noqa: E402 - the table lives with the tests that use it

OPS = ops(mx)


def outcome(op, dtype):
    a = mx.arange(6).reshape(2, 3).astype(getattr(mx, dtype))
    try:
        r = OPS[op](a)
        mx.eval(r)
        return str(r.dtype).removeprefix("mlx.core.")
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__


facts = {op: {d: outcome(op, d) for d in DTYPES} for op in OPS}
OUT.write_text(json.dumps(facts, indent=1) + "\n")
print(f"wrote {OUT}")
