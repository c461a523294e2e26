"""Result dtypes (or exception types) of the newly bound families for every input dtype,
against real MLX (facts in mlx_result_dtypes.json, from tools/mlx_reference/op_dtypes.py,
which runs the same table, dtype_ops.py)."""

import json
from pathlib import Path

import pytest
from dtype_ops import ops

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_result_dtypes.json").read_text())
OPS = ops(mx)


def outcome(fn, dtype):
    a = mx.arange(6).reshape(2, 3).astype(getattr(mx, dtype))
    try:
        r = fn(a)
        mx.eval(r)
        return str(r.dtype).removeprefix("mlx.core.")
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__


# Where MLX refuses a dtype NumPy handles, lazulite computes (as NumPy does).
BEYOND_MLX = {("nan_to_num", "float64"): "float64", ("nan_to_num", "complex64"): "complex64"}
# Known gaps of the Rust core, reported to the lead; strict, so they fail once fixed.
CORE_GAPS = {}


@pytest.mark.parametrize(
    "op",
    [pytest.param(op, marks=pytest.mark.xfail(reason=CORE_GAPS[op], strict=True)) if op in CORE_GAPS
     else op for op in sorted(FACTS)],
)
def test_result_dtypes_match_mlx(op):
    expected = {d: BEYOND_MLX.get((op, d), fact) for d, fact in FACTS[op].items()}
    assert {d: outcome(OPS[op], d) for d in FACTS[op]} == expected
