"""Writes python/tests/mlx_axis_errors.json: for each call in python/tests/axis_ops.py (an
axis out of range, one per op taking an axis) the exception class real MLX raises, or
"OK" where MLX accepts the call. Run with a Python that has mlx:

    python tools/mlx_reference/axis_errors.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_axis_errors.json"

sys.path.insert(0, str(OUT.parent))
from axis_ops import cases  # noqa: E402 - the table lives with the tests that use it


def outcome(call):
    try:
        mx.eval(call())
        return "OK"
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__


facts = {name: outcome(call) for name, call in cases(mx).items()}
OUT.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
print(f"wrote {OUT}")
