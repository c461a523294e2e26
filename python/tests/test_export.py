"""export_function, import_function and exporter against real MLX 0.32.4: MLX's files
(python/tests/mlx_export/, written by tools/mlx_reference/export_functions.py) run here
with MLX's outputs, lazulite's own exports round-trip, and the files lazulite writes were
run by real MLX (their outputs are committed next to them)."""

from pathlib import Path

import numpy as np
import pytest

import lazulite.core as mx
from export_cases import LAZULITE_ONLY, SHAPELESS, cases

FIXTURES = Path(__file__).parent / "mlx_export"
RNG = np.random.default_rng(11)
CASES = cases(mx)


def saved_calls(npz):
    with np.load(npz) as saved:
        data = dict(saved)
    calls = sorted({k.split("_")[0] for k in data})
    out = []
    for c in calls:
        args = [data[f"{c}_arg{i}"] for i in range(len([k for k in data if k.startswith(f"{c}_arg")]))]
        kwargs = {k[len(f"{c}_kw_"):]: v for k, v in data.items() if k.startswith(f"{c}_kw_")}
        outs = [data[f"{c}_out{j}"] for j in range(len([k for k in data if k.startswith(f"{c}_out")]))]
        out.append(([mx.array(a) for a in args], {k: mx.array(v) for k, v in kwargs.items()}, outs))
    return out


def assert_outputs(got, expected, context):
    assert len(got) == len(expected), context
    for j, (g, e) in enumerate(zip(got, expected)):
        g = np.array(g)
        assert g.shape == e.shape and g.dtype == e.dtype, (context, j, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4, err_msg=f"{context} output {j}")


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


@pytest.mark.parametrize("name", sorted(set(CASES) - LAZULITE_ONLY))
def test_mlx_file_runs_with_mlx_outputs(name):
    f = mx.import_function(str(FIXTURES / f"{name}.mlxfn"))
    for args, kwargs, expected in saved_calls(FIXTURES / f"{name}.npz"):
        got = f(*args, **kwargs)
        assert isinstance(got, tuple)
        assert_outputs(got, expected, name)


def test_fused_primitives_from_a_gpu_run_with_mlx_outputs():
    # RMSNorm, LayerNorm, RoPE (both directions) and ScaledDotProductAttention (causal,
    # additive and boolean masks, sinks, grouped heads) as MLX records them on a GPU,
    # written by tools/mlx_reference/gpu_fast_ops.py; the outputs are mx.fast's.
    f = mx.import_function(str(FIXTURES / "gpu_fast_ops.mlxfn"))
    [(args, kwargs, expected)] = saved_calls(FIXTURES / "gpu_fast_ops.npz")
    assert_outputs(f(*args, **kwargs), expected, "gpu_fast_ops")


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_on_new_inputs(name, tmp_path):
    fun, examples, runs = CASES[name]
    path = str(tmp_path / f"{name}.mlxfn")
    with mx.exporter(path, fun, shapeless=name in SHAPELESS) as exporter:
        for args, kwargs in examples:
            exporter(*args, **kwargs)
    f = mx.import_function(path)
    for args, kwargs in runs:
        expected = [np.array(y) for y in as_tuple(fun(*args, **kwargs))]
        assert_outputs(f(*args, **kwargs), expected, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_lazulite_files_ran_in_mlx(name, tmp_path):
    # Real MLX imported lazulite's committed file and computed these outputs from it: they
    # must be what the function computes here.
    _, _, runs = CASES[name]
    saved = saved_calls(FIXTURES / "lazulite" / f"{name}.npz")
    assert len(saved) == len(runs)
    fun = CASES[name][0]
    for args, kwargs, from_mlx in saved:
        expected = [np.array(y) for y in as_tuple(fun(*args, **kwargs))]
        assert_outputs([mx.array(v) for v in from_mlx], expected, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_lazulite_writes_the_files_mlx_ran(name, tmp_path):
    # Byte for byte the files real MLX ran above; when an op's composition changes on
    # purpose, rerun the `lazulite` and `check` steps of
    # tools/mlx_reference/export_functions.py.
    fun, examples, _ = CASES[name]
    path = tmp_path / f"{name}.mlxfn"
    with mx.exporter(str(path), fun, shapeless=name in SHAPELESS) as exporter:
        for args, kwargs in examples:
            exporter(*args, **kwargs)
    assert path.read_bytes() == (FIXTURES / "lazulite" / f"{name}.mlxfn").read_bytes()


def test_call_forms_metadata_and_errors(tmp_path):
    path = str(tmp_path / "f.mlxfn")
    x = mx.array([1.0, 2.0])
    mx.export_function(path, lambda x, y: x * y, x, y=x, metadata='{"a": 1}')
    f, metadata = mx.import_function(path, return_metadata=True)
    assert metadata == '{"a": 1}'
    for out in (f(x, y=x + 1), f((x,), {"y": x + 1}), f([x], {"y": x + 1})):
        assert isinstance(out, tuple) and out[0].tolist() == [2.0, 6.0]
    with pytest.raises(ValueError, match="No imported function found"):
        f(x, x)
    with pytest.raises(ValueError, match="Inputs can either be"):
        f(x, 3)
    with pytest.raises(ValueError, match="Outputs can be either"):
        mx.export_function(path, lambda x: "no", x)
    with pytest.raises(ValueError, match="Inputs can either be"):
        mx.export_function(path, lambda x: x, 3)
    with pytest.raises(ValueError, match="bitwise_invert"):
        mx.export_function(path, lambda x: mx.bitwise_invert(x), mx.array([1]))
    with pytest.raises(RuntimeError):
        mx.import_function(str(tmp_path / "missing.mlxfn"))

    exporter = mx.exporter(path, lambda *xs: sum(xs[1:], xs[0]))
    exporter(x)
    with pytest.raises(RuntimeError, match="twice with the same signature"):
        exporter(x + 1)
    exporter(x, x)
    exporter.close()
    with pytest.raises(RuntimeError, match="after exporting is closed"):
        exporter(x, x, x)
    g = mx.import_function(path)
    assert g(x, x)[0].tolist() == [2.0, 4.0]
    assert g(x)[0].tolist() == [1.0, 2.0]


def test_imported_functions_transform(tmp_path):
    path = str(tmp_path / "f.mlxfn")
    mx.export_function(path, lambda x: mx.sin(x) * x, mx.array([0.5, 1.0]))
    f = mx.import_function(path)
    x = mx.array([0.3, 0.7])
    g = mx.grad(lambda x: f(x)[0].sum())(x)
    expected = np.cos(np.array(x)) * np.array(x) + np.sin(np.array(x))
    np.testing.assert_allclose(np.array(g), expected, rtol=1e-6)
    batched = mx.vmap(lambda r: f(r)[0])(mx.array([[0.3, 0.7], [1.0, 2.0]]))
    np.testing.assert_allclose(np.array(batched)[1], np.sin([1.0, 2.0]) * [1.0, 2.0], rtol=1e-6)


def test_shapeless_exports(tmp_path):
    # What MLX 0.32.4 does with the same calls: one trace per dimension count, traces
    # chosen by dimension count and dtype, slices refused on every call.
    path = str(tmp_path / "double.mlxfn")
    exporter = mx.exporter(path, lambda x: x * 2 + x.sum(axis=-1, keepdims=True), shapeless=True)
    exporter(mx.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="twice with the same signature"):
        exporter(mx.zeros((4, 5)))
    exporter(mx.zeros((4,)))
    exporter.close()
    f = mx.import_function(path)
    for shape in [(7,), (1, 9), (5, 2)]:
        x = mx.array(RNG.standard_normal(shape).astype(np.float32))
        (y,) = f(x)
        np.testing.assert_allclose(np.array(y), np.array(x * 2 + x.sum(axis=-1, keepdims=True)), rtol=1e-6)
    with pytest.raises(ValueError, match="No imported function found"):
        f(mx.ones((1, 9, 2)))
    with pytest.raises(ValueError, match="No imported function found"):
        f(mx.ones((7,), dtype=mx.int32))

    sliced = str(tmp_path / "sliced.mlxfn")
    mx.export_function(sliced, lambda x: x[1:], mx.zeros((4, 3)), shapeless=True)
    g = mx.import_function(sliced)
    for shape in [(4, 3), (6, 3)]:
        with pytest.raises(ValueError, match=r"^\[Primitive::output_shapes\] Slice cannot infer output shapes\.$"):
            g(mx.ones(shape))


def test_shapeless_export_composes_with_shapeless_compile(tmp_path):
    path = str(tmp_path / "rows.mlxfn")
    mx.export_function(path, lambda x: mx.softmax(x, axis=-1).reshape(-1), mx.zeros((2, 3)), shapeless=True)
    f = mx.import_function(path)
    traces = []

    def g(x):
        traces.append(1)
        return f(x)[0] * 2

    compiled = mx.compile(g, shapeless=True)
    for shape in [(2, 3), (5, 4), (1, 8)]:
        x = mx.array(RNG.standard_normal(shape).astype(np.float32))
        np.testing.assert_allclose(
            np.array(compiled(x)), np.array(mx.softmax(x, axis=-1).reshape(-1) * 2), rtol=1e-6
        )
    assert len(traces) == 1


def test_shapeless_exports_of_gradients(tmp_path):
    # A training step's loss and gradients (cross-entropy against integer labels),
    # exported at one batch size and imported at others: the same values as eagerly.
    r = np.random.default_rng(5)
    params = [mx.array(r.standard_normal(s).astype(np.float32) * 0.5) for s in [(5, 6), (6,), (6, 3), (3,)]]

    def loss(params, x, labels):
        w1, b1, w2, b2 = params
        logits = mx.maximum(x @ w1 + b1, 0.0) @ w2 + b2
        picked = mx.take_along_axis(logits, labels[:, None], axis=-1).squeeze(-1)
        return mx.mean(mx.logsumexp(logits, axis=-1) - picked)

    def step(x, labels):
        value, grads = mx.value_and_grad(loss)(params, x, labels)
        return (value, *grads)

    def batch(n):
        return mx.array(r.standard_normal((n, 5)).astype(np.float32)), mx.array(r.integers(0, 3, n).astype(np.int32))

    path = str(tmp_path / "step.mlxfn")
    mx.export_function(path, step, *batch(4), shapeless=True)
    f = mx.import_function(path)
    for n in [4, 7, 16]:
        args = batch(n)
        assert_outputs(f(*args), [np.array(y) for y in step(*args)], f"batch {n}")

    # The derivative of a reshape with -1 is held at the example's sizes (as MLX holds it).
    reshaped = str(tmp_path / "reshaped.mlxfn")
    mx.export_function(reshaped, mx.grad(lambda x: (x.reshape(-1) ** 2).sum()), mx.zeros((4, 3)), shapeless=True)
    g = mx.import_function(reshaped)
    x = mx.array(r.standard_normal((4, 3)).astype(np.float32))
    np.testing.assert_allclose(np.array(g(x)[0]), 2 * np.array(x), rtol=1e-6)
    with pytest.raises(ValueError, match=r"^\[reshape\] Cannot reshape array of size 21"):
        g(mx.ones((7, 3)))
