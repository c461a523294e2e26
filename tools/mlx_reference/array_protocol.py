"""Writes python/tests/mlx_array_protocol.json: the members of real MLX's `mx.array`
and the outcome of each call of python/tests/array_protocol_cases.py (`mT`,
`bytes(a)`, `__getstate__`/`__setstate__`, `__div__`/`__rdiv__`, `del a[i]`, reflected
bitwise operators). Run with a Python that has mlx:

    /work/mlxvenv/bin/python tools/mlx_reference/array_protocol.py
"""

import json
import sys
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_array_protocol.json"

sys.path.insert(0, str(OUT.parent))
import array_protocol_cases as cases  # noqa: E402 - the table lives with the tests that use it

if __name__ == "__main__":
    facts = {
        "mlx": mx.__version__,
        "members": sorted(dir(mx.array)),
        "calls": {name: cases.outcome(call) for name, call in cases.calls(mx).items()},
    }
    OUT.write_text(json.dumps(facts, indent=1) + "\n")
    print(f"wrote {OUT}")
