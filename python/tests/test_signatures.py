"""Parameter names, kinds and defaults of the bound functions equal MLX's (facts in
mlx_signatures.json, written by tools/mlx_reference/signatures.py from real MLX).
Names and kinds come from the live functions; defaults from the generated stubs (pyo3
shows non-None defaults as `...`), which test_stubs keeps in sync with the bindings."""

import ast
import inspect
import json
from pathlib import Path

import pytest

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_signatures.json").read_text())

# MLX defaults lazulite spells `None` (same meaning: the documented default applies).
NONE_STANDS_FOR = {"float32", "bfloat16", "int32", "[]", "0", "1", "0.5", "2", "None"}


STUBS = ast.parse((Path(__file__).parents[2] / "python" / "lazulite" / "core.pyi").read_text())


def stub_functions(body):
    return {node.name: node for node in body if isinstance(node, ast.FunctionDef)}


STUB = {
    "functions": stub_functions(STUBS.body),
    "methods": stub_functions(next(n for n in STUBS.body if isinstance(n, ast.ClassDef) and n.name == "array").body),
    "random": stub_functions(next(n for n in STUBS.body if isinstance(n, ast.ClassDef) and n.name == "random").body),
    "linalg": stub_functions(next(n for n in STUBS.body if isinstance(n, ast.ClassDef) and n.name == "linalg").body),
}


def mlx_params(line):
    """(name, kind, default text) of each parameter of an MLX signature line."""
    return params_of(ast.parse(f"def {line.split(' -> ')[0]}: pass").body[0])


def params_of(function):
    args = function.args
    out = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(positional, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append((a.arg, kind, None if d is None else ast.unparse(d)))
    if args.vararg:
        out.append((args.vararg.arg, "VAR_POSITIONAL", None))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append((a.arg, "KEYWORD_ONLY", None if d is None else ast.unparse(d)))
    if args.kwarg:
        out.append((args.kwarg.arg, "VAR_KEYWORD", None))
    return out


def our_params(fn, group, name, is_method=False):
    """Names and kinds of the live function, defaults from its stub."""
    params = list(inspect.signature(fn).parameters.values())
    stub = params_of(STUB[group][name])
    if is_method:
        params = [p for p in params if p.name != "self"]
        stub = stub[1:]
    assert [p.name for p in params] == [n for n, _, _ in stub], "stub out of date"
    return [(p.name, p.kind.name, d) for p, (_, _, d) in zip(params, stub)]


def same(ours, theirs):
    assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in theirs]
    for (name, _, mine), (_, _, mlx) in zip(ours, theirs):
        if mine == mlx or (mine is not None and mlx is not None and float_equal(mine, mlx)):
            continue
        assert mine == "None" and mlx in NONE_STANDS_FOR, (name, mine, mlx)


def float_equal(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return a.strip("'\"") == b.strip("'\"")


# Bound by hand with MLX's behaviour but a different Python signature shape (save_gguf:
# MLX documents `metadata` without a default but accepts None; lazulite defaults to it).
HAND_BOUND = {"grad", "value_and_grad", "vmap", "export_to_dot", "vjp", "jvp", "save_gguf"}


# MLX documents these signatures wrongly: real MLX 0.32.4 takes `roll`'s `shift` and `axis`
# as keywords (`mx.roll(a, 1, axis=0)`; facts in mlx_protocols.json, "keywords"), so
# lazulite binds what MLX does.
AS_MLX_BEHAVES = {
    "roll": "roll(a: array, /, shift: int | tuple[int], axis: None | int | tuple[int] = None, *, "
            "stream: StreamOrDevice = None) -> array",
}


@pytest.mark.parametrize("name", sorted(set(FACTS["functions"]) - HAND_BOUND))
def test_function_signature(name):
    line = AS_MLX_BEHAVES.get(name, FACTS["functions"][name])
    same(our_params(getattr(mx, name), "functions", name), mlx_params(line))


@pytest.mark.parametrize("name", sorted(FACTS["random"]))
def test_random_signature(name):
    same(our_params(getattr(mx.random, name), "random", name), mlx_params(FACTS["random"][name]))


@pytest.mark.parametrize("name", sorted(FACTS["linalg"]))
def test_linalg_signature(name):
    same(our_params(getattr(mx.linalg, name), "linalg", name), mlx_params(FACTS["linalg"][name]))


@pytest.mark.parametrize("name", sorted(FACTS["methods"]))
def test_method_signature(name):
    ours = our_params(getattr(mx.array, name), "methods", name, is_method=True)
    same(ours, mlx_params(FACTS["methods"][name])[1:])


@pytest.mark.parametrize("name", sorted(HAND_BOUND))
def test_transform_parameter_names(name):
    ours = [(n, k) for n, k, _ in our_params(getattr(mx, name), "functions", name)]
    theirs = [(n, k) for n, k, _ in mlx_params(FACTS["functions"][name])]
    assert ours == theirs
