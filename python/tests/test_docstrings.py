"""Every public function and class of `lazulite.core` and `lazulite.core.random` has a
docstring, and the docstrings of functions describe their parameters."""

import inspect

import lazulite.core as mx
import pytest


def public_callables(module):
    return [
        (name, getattr(module, name))
        for name in dir(module)
        if not name.startswith("_") and callable(getattr(module, name))
    ]


CALLABLES = [("core", n, f) for n, f in public_callables(mx)] + [
    ("core.random", n, f) for n, f in public_callables(mx.random)
]


@pytest.mark.parametrize(
    "module,name,obj", CALLABLES, ids=[f"{m}.{n}" for m, n, _ in CALLABLES]
)
def test_has_docstring(module, name, obj):
    assert (obj.__doc__ or "").strip(), f"lazulite.{module}.{name} has no docstring"


def test_every_method_of_array_has_docstring():
    undocumented = [
        name
        for name in dir(mx.array)
        if not name.startswith("_")
        and inspect.isroutine(getattr(mx.array, name))
        and not (getattr(mx.array, name).__doc__ or "").strip()
    ]
    assert undocumented == []


SAMPLE = [
    mx.abs,
    mx.add,
    mx.where,
    mx.sum,
    mx.var,
    mx.std,
    mx.argmax,
    mx.cumsum,
    mx.topk,
    mx.searchsorted,
    mx.reshape,
    mx.concatenate,
    mx.pad,
    mx.linspace,
    mx.eye,
    mx.isclose,
    mx.matmul,
    mx.tensordot,
    mx.take_along_axis,
    mx.slice_update,
    mx.meshgrid,
    mx.einsum,
    mx.random.uniform,
    mx.random.normal,
    mx.random.split,
]


def parameter_names(f):
    return [
        p.name
        for p in inspect.signature(f).parameters.values()
        if p.name != "stream"
    ]


@pytest.mark.parametrize("f", SAMPLE, ids=[f.__name__ for f in SAMPLE])
def test_docstring_describes_each_parameter(f):
    doc = f.__doc__
    lines = doc.strip().splitlines()
    assert lines[0].strip().endswith("."), "a one-line summary comes first"
    assert "Args:" in doc
    for name in parameter_names(f):
        assert f"    {name} (" in doc or f"    *{name} (" in doc, f"{f.__name__}: {name}"
    assert "Returns:" in doc


def test_docstrings_keep_signatures():
    assert mx.sum.__text_signature__ == "(a, /, axis=None, keepdims=..., *, stream=None)"
    assert str(inspect.signature(mx.random.uniform)).startswith("(low=None, high=None")
