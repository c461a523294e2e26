"""Writes python/tests/mlx_shape_errors.json: for each call in
python/tests/shape_error_cases.py (shapes that do not fit) the exception class real MLX
raises and its message. Run with a Python that has mlx:

    python tools/mlx_reference/shape_errors.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_shape_errors.json"

sys.path.insert(0, str(OUT.parent))
from shape_error_cases import cases  # noqa: E402 - the table lives with the tests that use it


def outcome(call):
    try:
        mx.eval(call())
    except Exception as e:  # noqa: BLE001 - the exception and its message are the fact
        return [type(e).__name__, str(e)]
    raise SystemExit(f"MLX accepted {call}: every case must raise")


facts = {name: outcome(call) for name, call in cases(mx).items()}
OUT.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
print(f"wrote {OUT}")
