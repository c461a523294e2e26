"""Writes python/tests/mlx_export_callbacks.json: the events real MLX sends to a
callback given to `mx.export_function` for each case of
python/tests/export_callback_cases.py, and the exceptions it raises when the callback
is misused. Run with a Python that has mlx:

    /work/mlxvenv/bin/python tools/mlx_reference/export_callbacks.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_export_callbacks.json"

sys.path.insert(0, str(OUT.parent))
import export_callback_cases as cases  # noqa: E402 - the table lives with the tests that use it

if __name__ == "__main__":
    facts = {
        "mlx": mx.__version__,
        "events": {name: cases.recorded(mx, case) for name, case in cases.cases(mx).items()},
        "failures": {name: cases.outcome(call) for name, call in cases.failures(mx).items()},
    }
    OUT.write_text(json.dumps(facts, indent=1) + "\n")
    print(f"wrote {OUT}")
