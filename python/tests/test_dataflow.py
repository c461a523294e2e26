"""Owl-style dataflow from Python: placeholders, assign, re-evaluation, graph printing."""

import io

import pytest

import lazulite.core as mx


def test_placeholder_assign_and_recompute():
    x = mx.placeholder((2,), mx.float32)
    y = x * 2 + 1
    with pytest.raises(ValueError):
        mx.eval(y)
    x.assign(mx.array([1.0, 2.0]))
    assert y.tolist() == [3.0, 5.0]
    x.assign(mx.array([5.0, 6.0]))
    assert y.tolist() == [11.0, 13.0]
    x.assign(0.5)
    assert y.tolist() == [2.0, 2.0]


def test_assign_errors():
    x = mx.placeholder((2,))
    assert x.dtype == mx.float32
    with pytest.raises(ValueError, match="placeholder"):
        x.assign(mx.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="constant"):
        mx.array([1.0]).assign(2.0)


def test_trace_and_dot():
    x = mx.placeholder((2,))
    y = mx.sin(x)
    trace = mx.to_trace(y)
    assert "name:sin" in trace and "->" in trace
    dot = mx.to_dot(y)
    assert dot.startswith("digraph") and "n1 -> n2" in dot


def test_export_to_dot_to_path_and_file(tmp_path):
    a = mx.array([1.0, 2.0])
    b = mx.exp(a) + a
    path = tmp_path / "graph.dot"
    mx.export_to_dot(str(path), b)
    assert path.read_text().startswith("digraph")
    mx.export_to_dot(path, [b, {"other": a * 3}], extra=a)
    assert "digraph" in path.read_text()
    buffer = io.StringIO()
    mx.export_to_dot(buffer, b)
    assert buffer.getvalue().startswith("digraph")
