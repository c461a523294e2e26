"""An axis out of range raises `mx.AxisError`, a subclass of both ValueError and
IndexError, so code written against MLX catches it whichever of the two MLX raises for
that op (facts in mlx_axis_errors.json, from tools/mlx_reference/axis_errors.py, which
runs the same table, axis_ops.py)."""

import builtins
import json
from pathlib import Path

import numpy as np
import pytest
from axis_ops import cases

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_axis_errors.json").read_text())
CASES = cases(mx)
# Where MLX accepts the call, lazulite checks the axis (MLX clamps or reads past the end).
BEYOND_MLX = {name for name, fact in FACTS.items() if fact == "OK"}


def test_the_table_and_the_facts_cover_the_same_calls():
    assert sorted(CASES) == sorted(FACTS)


def test_axis_error_is_both_value_and_index_error():
    assert issubclass(mx.AxisError, ValueError)
    assert issubclass(mx.AxisError, IndexError)
    assert mx.AxisError.__module__ == "lazulite.core"


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_axis_raises_axis_error(name):
    with pytest.raises(ValueError):
        mx.eval(CASES[name]())
    with pytest.raises(IndexError):
        mx.eval(CASES[name]())
    with pytest.raises(mx.AxisError):
        mx.eval(CASES[name]())


@pytest.mark.parametrize("name", sorted(set(FACTS) - BEYOND_MLX))
def test_bad_axis_is_catchable_as_what_mlx_raises(name):
    with pytest.raises(getattr(builtins, FACTS[name])):
        mx.eval(CASES[name]())


def test_message_names_the_op_and_the_axis():
    with pytest.raises(mx.AxisError, match=r"\[flip\] Axis 2 is out of bounds for array with 2"):
        mx.flip(mx.zeros((2, 3)), axis=2)


def test_numpy_and_lazulite_agree_on_which_axes_are_valid():
    a = np.zeros((2, 3))
    for axis in range(-4, 4):
        try:
            expected = np.sum(a, axis=axis).shape
        except np.exceptions.AxisError:
            expected = None
        try:
            got = mx.sum(mx.array(a), axis=axis).shape
        except mx.AxisError:
            got = None
        assert got == expected, axis


def test_axis_too_large_for_an_int_is_an_axis_error():
    # MLX refuses the argument type (TypeError); the value is an axis out of range.
    with pytest.raises(mx.AxisError):
        mx.sum(mx.zeros((2, 3)), axis=2**40)


def test_real_mlx_raises_what_the_facts_say():
    mlx = pytest.importorskip("mlx.core")
    if mlx is mx:  # the lazulite-mlx package is installed: `mlx.core` is lazulite
        pytest.skip("real MLX is not installed")
    for name, call in cases(mlx).items():
        try:
            mlx.eval(call())
            got = "OK"
        except Exception as e:  # noqa: BLE001 - the exception type is the fact
            got = type(e).__name__
        assert got == FACTS[name], name


@pytest.mark.parametrize("transform", ["compile", "grad", "vmap", "checkpoint"])
def test_axis_error_keeps_its_class_through_transforms(transform):
    a = mx.ones((2, 3))
    f = getattr(mx, transform)(lambda x: mx.sum(mx.sum(x, axis=2)))
    with pytest.raises(mx.AxisError):
        f(a)
