"""Writes python/tests/mlx_einsum_path.json: for each call in
python/tests/einsum_path_cases.py, what real MLX's einsum_path returns (the path and the
report) or raises (the exception class and message). Run with a Python that has mlx:

    python tools/mlx_reference/einsum_path.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_einsum_path.json"

sys.path.insert(0, str(OUT.parent))
from einsum_path_cases import CASES  # noqa: E402 - the table lives with the tests that use it


def outcome(subscripts, shapes):
    # Broadcast scalars: only the shapes are read, so huge ones cost nothing.
    operands = [mx.broadcast_to(mx.array(1.0), s) for s in shapes]
    try:
        path, report = mx.einsum_path(subscripts, *operands)
        return {"path": [list(step) for step in path], "report": report}
    except Exception as e:  # noqa: BLE001 - the exception is the fact
        return {"raises": type(e).__name__, "message": str(e)}


facts = [{"subscripts": s, "shapes": [list(x) for x in shapes], **outcome(s, shapes)} for s, shapes in CASES]
OUT.write_text(json.dumps(facts, indent=1) + "\n")
print(f"wrote {OUT}")
