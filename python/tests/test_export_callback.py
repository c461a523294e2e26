"""Exporting to a callback: `mx.export_function(callback, fun, ...)` sends the callback
the same dicts, in the same order, with the same keys and value types, as MLX 0.32.4
(python/tests/mlx_export_callbacks.json, written by
tools/mlx_reference/export_callbacks.py with real MLX)."""

import json
from pathlib import Path

import pytest

import export_callback_cases as cases
import lazulite.core as mx

MLX = json.loads((Path(__file__).parent / "mlx_export_callbacks.json").read_text())
CASES = cases.cases(mx)


def test_every_case_has_mlx_events():
    assert set(MLX["events"]) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_events_are_mlx_events(name):
    events = cases.recorded(mx, CASES[name])
    expected = MLX["events"][name]
    for i, (got, want) in enumerate(zip(events, expected)):
        assert got == want, f"event {i}"
    assert len(events) == len(expected)


@pytest.mark.parametrize("name", sorted(MLX["failures"]))
def test_misuse_raises_as_mlx(name):
    assert cases.outcome(cases.failures(mx)[name]) == MLX["failures"][name]


def test_callback_exception_reaches_the_caller_unchanged():
    class Stop(Exception):
        pass

    def callback(event):
        raise Stop(event["type"])

    with pytest.raises(Stop, match="inputs"):
        mx.export_function(callback, lambda x: x + 1, mx.ones((2,)))


def test_file_written_without_constant_folding_runs(tmp_path):
    # A captured array not computed yet is recorded as its operations, as in MLX, and the
    # file still computes the same values.
    w = mx.ones((2, 2)) * 3
    path = tmp_path / "lazy.mlxfn"
    mx.export_function(str(path), lambda x: x @ w.T, mx.ones((1, 2)))
    (y,) = mx.import_function(str(path))(mx.array([[1.0, 2.0]]))
    assert y.tolist() == [[9.0, 9.0]]
