"""A NumPy array next to an array in a binary op or `where` takes the array's dtype, as
in MLX (facts in mlx_numpy_operands.json, from tools/mlx_reference/numpy_operands.py,
which runs the same table, numpy_operand_cases.py)."""

import json
import math
from pathlib import Path

import pytest
from numpy_operand_cases import ARRAY_DTYPES, NUMPY_OPERANDS, cases, outcome

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_numpy_operands.json").read_text())


def same(got, fact):
    """Equal exception names, or equal dtypes and values within float32 rounding (complex
    powers differ from MLX's in the last bit; NaN matches NaN)."""
    if isinstance(fact, str) or isinstance(got, str):
        return got == fact
    close = lambda x, y: (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-6)  # noqa: E731
    pairs = [(x, y) for g, f in zip(got[1], fact[1]) for x, y in zip(g, f)]
    return got[0] == fact[0] and len(got[1]) == len(fact[1]) and all(close(x, y) for x, y in pairs)


@pytest.mark.parametrize("case", sorted(cases(mx)))
def test_numpy_operands_convert_as_in_mlx(case):
    for dtype in ARRAY_DTYPES:
        for operand in NUMPY_OPERANDS:
            got, fact = outcome(mx, case, dtype, operand), FACTS[case][dtype][operand]
            assert same(got, fact), (dtype, operand, got, fact)
