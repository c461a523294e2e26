"""Shapes that do not fit raise what MLX raises, with MLX's message word for word (facts in
mlx_shape_errors.json, from tools/mlx_reference/shape_errors.py, which runs the same
table, shape_error_cases.py)."""

import builtins
import json
from pathlib import Path

import pytest
from shape_error_cases import cases

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_shape_errors.json").read_text())
CASES = cases(mx)


def test_the_table_and_the_facts_cover_the_same_calls():
    assert sorted(CASES) == sorted(FACTS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_error_is_mlx_type_and_message(name):
    kind, message = FACTS[name]
    with pytest.raises(getattr(builtins, kind)) as raised:
        mx.eval(CASES[name]())
    assert str(raised.value) == message


def test_real_mlx_raises_what_the_facts_say():
    mlx = pytest.importorskip("mlx.core")
    if mlx is mx:  # the lazulite-mlx package is installed: `mlx.core` is lazulite
        pytest.skip("real MLX is not installed")
    for name, call in cases(mlx).items():
        with pytest.raises(Exception) as raised:
            mlx.eval(call())
        assert [type(raised.value).__name__, str(raised.value)] == FACTS[name], name
