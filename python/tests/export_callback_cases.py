"""Functions exported to a callback (`mx.export_function(callback, fun, ...)`) by both
MLX and lazulite, for the fixture tools/mlx_reference/export_callbacks.py writes and
python/tests/test_export_callback.py reads.

Each case is written once against a module `mx` (`mlx.core` or `lazulite.core`);
`recorded(mx, case)` gives the events of the export as plain JSON values that keep
every Python type of MLX's dicts: tuples and lists apart, `Dtype`s, ints and floats,
arrays with their dtypes and values, and the order of each dict's keys.
"""

import numpy as np


def _rng(seed):
    return np.random.default_rng(seed)


def cases(mx):
    """name -> (fun, positional example arrays, keyword example arrays, shapeless)."""
    r = _rng(7)
    w = mx.array(r.standard_normal((4, 3)).astype(np.float32))
    b = mx.array(r.standard_normal(3).astype(np.float32))
    k = mx.array(r.standard_normal((2, 3, 1)).astype(np.float32))
    out = {}

    def mlp(x):
        return mx.maximum(x @ w + b, 0.0) @ w.T

    out["mlp"] = (mlp, (mx.ones((2, 4)),), {}, False)
    # A captured array that is not computed yet is recorded as the operations that
    # compute it; equal scalars become one constant, equal operations one primitive.
    out["lazy_capture"] = (lambda x: x @ (w * 2.0) + mx.sin(mx.array(1.0)), (mx.ones((2, 4)),), {}, False)
    out["shared_scalars"] = (lambda x: mx.maximum(x, 0.0) + mx.minimum(x, 0.0) * 2, (mx.ones((2,)),), {}, False)
    out["common_subexpressions"] = (lambda x: (mx.exp(x) + mx.exp(x), mx.exp(x) * 3), (mx.ones((2,)),), {}, False)
    out["identity"] = (lambda x: x, (mx.ones((2,)),), {}, False)
    out["constant_output"] = (lambda x: (w, x), (mx.ones((2,)),), {}, False)
    out["stop_gradient"] = (lambda x: mx.stop_gradient(x) * x, (mx.ones((3,)),), {}, False)
    out["keywords"] = (lambda x, *, scale, bias: x * scale + bias, (mx.ones((2, 3)),),
                       {"scale": mx.array(3.0), "bias": mx.zeros((3,))}, False)
    out["only_keywords"] = (lambda **kw: kw["b"] - kw["a"], (), {"b": mx.array(1), "a": mx.array(2)}, False)
    out["promotion"] = (lambda x, y: (x + y, x * y), (mx.array(1), mx.array([1.5, 2.0])), {}, False)
    out["views"] = (lambda x: (x.reshape(3, 2).T, mx.expand_dims(x, 0).squeeze(0), x.flatten(), x[:, 1:3],
                               mx.broadcast_to(x[:1], (4, 3))), (mx.ones((2, 3)),), {}, False)
    out["reductions"] = (lambda x: (x.sum(0), x.max(axis=1, keepdims=True), mx.argmax(x, 1), mx.cumsum(x, 1),
                                    mx.logsumexp(x, axis=-1)), (mx.ones((2, 3)),), {}, False)
    out["softmax"] = (lambda x: mx.softmax(x, axis=-1), (mx.ones((2, 3)),), {}, False)
    out["take_rows"] = (lambda x, i: x[i], (mx.ones((4, 3)), mx.array([0, 2])), {}, False)
    out["where_and_compare"] = (lambda x: mx.where(x > 0, x, -x), (mx.ones((3,)),), {}, False)
    out["concatenate"] = (lambda x, y: mx.concatenate([x, y], 0), (mx.ones((2, 2)), mx.zeros((1, 2))), {}, False)
    out["casts"] = (lambda x: x.astype(mx.int32) + 1, (mx.ones((3,)),), {}, False)
    out["arange"] = (lambda x: x + mx.arange(3), (mx.ones((3,)),), {}, False)
    out["sort"] = (lambda x: (mx.sort(x), mx.argsort(x)), (mx.ones((4,)),), {}, False)
    out["conv"] = (lambda x: mx.conv1d(x, k, stride=1, padding=1), (mx.ones((1, 5, 1)),), {}, False)
    out["shapeless_mean"] = (lambda x: x.mean(-1), (mx.ones((2, 3)),), {}, True)
    out["shapeless_broadcast"] = (lambda x, y: x + y, (mx.ones((2, 3)), mx.ones((3,))), {}, True)
    out["shapeless_mlp"] = (mlp, (mx.ones((2, 4)),), {}, True)
    # Operations MLX records as one primitive of its own.
    x45 = mx.array(np.arange(20, dtype=np.float32).reshape(4, 5))
    slots = mx.array(np.array([[2, 0], [1, 3], [0, 0], [1, 1]], dtype=np.int32))
    column = mx.array(np.array([[1], [2], [0], [3]], dtype=np.int32))
    out["pad"] = (lambda x, v: (mx.pad(x, [(1, 2), (0, 1)]), mx.pad(x, 1, constant_values=3),
                                mx.pad(x, [(0, 0), (2, 0)], constant_values=v)),
                  (x45, mx.array(0.5)), {}, False)
    out["put_along_axis"] = (lambda x, u, row: (mx.put_along_axis(x, slots, u, axis=1),
                                                mx.put_along_axis(x, slots, mx.array(2.0), axis=1),
                                                mx.put_along_axis(x, column, row, axis=1)),
                             (x45, mx.ones((4, 2)), mx.ones((5,))), {}, False)
    out["dynamic_slices"] = (lambda x, s, u, v: (mx.slice(x, s, (0, 1), (2, 2)),
                                                 mx.slice(x, s[::-1], (1, 0), (3, 2)),
                                                 mx.slice_update(x, u, s, (0, 1)),
                                                 mx.slice_update(x, v, s[:1], (1,))),
                             (x45, mx.array([1, 2]), mx.ones((2, 2)), mx.ones((2,))), {}, False)
    out["hadamard"] = (lambda x: (mx.hadamard_transform(x.reshape(5, 4)),
                                  mx.hadamard_transform(x.reshape(5, 4).astype(mx.int32), scale=0.5)),
                       (x45,), {}, False)
    out["divmod"] = (lambda x, d: (*mx.divmod(x, d), *mx.divmod(x, 3)), (x45, mx.array(0.75)), {}, False)
    # Compositions recorded in MLX's own forms.
    x234 = mx.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    out["mean"] = (lambda x: (mx.mean(x, axis=1), mx.mean(x)), (x234,), {}, False)
    out["take_later_axis"] = (lambda x: (mx.take(x, mx.array([2, 0]), axis=1), mx.take(x, mx.array(1), axis=2)),
                              (x234,), {}, False)
    out["batched_matmul_2d"] = (lambda x: x @ mx.ones((4, 5)), (x234,), {}, False)
    out["topk"] = (lambda x: mx.topk(x, 2, axis=-1), (x234,), {}, False)
    out["full"] = (lambda x: (x + mx.zeros((4,)), x * mx.ones((3, 4), dtype=mx.int32), x + mx.full((4,), 2.5)),
                   (x234,), {}, False)
    out["constant_order"] = (lambda x: (x * 2.0 + 1.0) * mx.array([1.0, 2.0, 3.0, 4.0]), (x234,), {}, False)

    # Slices and slice updates record the start wrapped and clamped and the stop they were
    # given (a single element as one step past it).
    def slice_stops(x):
        y = x + 0
        y[1:100:2, ::-1] = 1.0
        return x[1:100], x[:, 1:-1], x[::-1, 5:0:-2], x[-1:, 2:3:5], x[0::-1], x[4:1, -100:], y

    out["slice_stops"] = (slice_stops, (mx.ones((5, 6)),), {}, False)
    return out


def failures(mx):
    """name -> a call that raises in MLX: export_function with a callback misused."""
    f = lambda x: x * 2  # noqa: E731
    x = mx.ones((2,))

    def raising(event):
        if event["type"] == "primitive":
            raise KeyError("stop")

    return {
        "metadata_with_callback": lambda: mx.export_function(lambda e: None, f, x, metadata="m"),
        "neither_file_nor_callable": lambda: mx.export_function(3, f, x),
        "callback_raises": lambda: mx.export_function(raising, f, x),
        "callback_takes_two_arguments": lambda: mx.export_function(lambda e, extra: None, f, x),
        "exporter_takes_no_callback": lambda: mx.exporter(lambda e: None, f),
    }


def plain(mx, v):
    """`v` as JSON values that keep its Python types."""
    if isinstance(v, dict):
        return {"dict": [[k, plain(mx, x)] for k, x in v.items()]}
    if isinstance(v, tuple):
        return {"tuple": [plain(mx, x) for x in v]}
    if isinstance(v, list):
        return [plain(mx, x) for x in v]
    if isinstance(v, mx.array):
        return {"array": np.array(v).tolist(), "dtype": str(v.dtype), "shape": list(v.shape)}
    if isinstance(v, mx.Dtype):
        return {"Dtype": str(v)}
    if isinstance(v, bool) or v is None:
        return v
    return {type(v).__name__: v}


def recorded(mx, case):
    """The events of exporting `case` to a callback, as plain values."""
    fun, args, kwargs, shapeless = case
    events = []
    mx.export_function(lambda e: events.append(plain(mx, e)), fun, *args, shapeless=shapeless, **kwargs)
    return events


def outcome(call):
    """The name of the exception `call` raises, or "returned"."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        return type(e).__name__
    return "returned"
