"""Writes python/tests/mlx_export/gpu_fast_ops.mlxfn, a function file holding the fused
primitives MLX records when it exports on a GPU (RMSNorm, LayerNorm, RoPE and
ScaledDotProductAttention, and the gradients RMSNormVJP and LayerNormVJP: what a file
exported on a Mac holds), and
gpu_fast_ops.npz, its inputs and what MLX's `mx.fast` functions compute from them
(saved as export_functions.py saves a call).

    /work/mlxvenv/bin/python tools/mlx_reference/gpu_fast_ops.py

MLX's CPU build computes the fast functions from ordinary operations, so it never records
these primitives. The tape is therefore written here, with each primitive given the
inputs and state layout mlx/fast.cpp and mlx/fast_primitives.h give it, and real MLX
imports it (reading every byte of the layout) and builds the graph it records. The
primitives are recorded on the CPU: MLX's CPU build cannot import a GPU stream, and
lazulite reads either.
"""

import struct
import tempfile
from pathlib import Path

import mlx.core as mx
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "python/tests/mlx_export"

# MLX's Dtype::Val numbers and sizes for the dtypes used here.
DTYPES = {np.dtype(np.bool_): (0, 1), np.dtype(np.int32): (7, 4), np.dtype(np.float32): (10, 4)}
CPU = 0


class Tape:
    """One function's tape in MLX's encoding: little-endian numbers, u64-prefixed
    vectors and strings."""

    def __init__(self):
        self.bytes = bytearray()
        self.entries = 0
        self.next_id = 1
        self.inputs = []

    def u64(self, v):
        self.bytes += struct.pack("<Q", v)

    def i32(self, v):
        self.bytes += struct.pack("<i", v)

    def f32(self, v):
        self.bytes += struct.pack("<f", v)

    def flag(self, v):
        self.bytes += struct.pack("<B", v)

    def text(self, s):
        self.u64(len(s))
        self.bytes += s.encode()

    def shape(self, shape):
        self.u64(len(shape))
        for d in shape:
            self.i32(d)

    def dtype(self, dtype):
        val, size = DTYPES[np.dtype(dtype)]
        self.i32(val)
        self.flag(size)

    def fresh(self):
        self.next_id += 1
        self.entries += 1
        return self.next_id

    def input(self, value):
        i = self.fresh()
        self.u64(i)
        self.flag(False)
        self.flag(False)
        self.inputs.append((i, value))
        return i, value.shape, value.dtype

    def constant(self, value):
        value = np.asarray(value)
        i = self.fresh()
        self.u64(i)
        self.flag(False)
        self.flag(True)
        self.shape(value.shape)
        self.dtype(value.dtype)
        self.bytes += value.astype(value.dtype.newbyteorder("<")).tobytes()
        return i, value.shape, value.dtype

    def primitive(self, name, inputs, state, shape, dtype):
        [out] = self.primitive_outputs(name, inputs, state, [(shape, dtype)])
        return out

    def primitive_outputs(self, name, inputs, state, outputs):
        """A primitive with one or several outputs, each given as (shape, dtype)."""
        ids = [self.fresh()]
        ids += [self.fresh_sibling() for _ in outputs[1:]]
        self.u64(ids[0])
        self.flag(True)
        self.u64(len(inputs))
        for x in inputs:
            self.u64(x[0])
        self.i32(0)  # stream index
        self.i32(CPU)  # device type
        self.i32(0)  # device index
        self.text(name)
        for kind, v in state:
            {"i": self.i32, "b": self.flag, "f": self.f32}[kind](v)
        if len(outputs) == 1:
            self.u64(0)  # no sibling outputs
            self.shape(outputs[0][0])
            self.dtype(outputs[0][1])
        else:
            self.u64(len(outputs) - 1)  # the siblings of the first output
            self.u64(len(ids))
            for i in ids:
                self.u64(i)
            self.u64(len(outputs))
            for shape, _ in outputs:
                self.shape(shape)
            self.u64(len(outputs))
            for _, dtype in outputs:
                self.dtype(dtype)
        return [(i, shape, dtype) for i, (shape, dtype) in zip(ids, outputs)]

    def fresh_sibling(self):
        """An id for a further output of a primitive (no tape entry of its own)."""
        self.next_id += 1
        return self.next_id


def write_file(path, tape, outputs):
    head = Tape()
    head.text("0.32.4")
    head.i32(1)  # one function
    head.flag(False)  # not shapeless
    head.text("")  # metadata
    head.u64(0)  # no keyword names
    head.u64(len(tape.inputs))
    for i, _ in tape.inputs:
        head.u64(i)
    head.u64(len(tape.inputs))
    for _, v in tape.inputs:
        head.shape(v.shape)
        head.dtype(v.dtype)
    head.u64(len(outputs))
    for o in outputs:
        head.u64(o[0])
    head.u64(tape.entries)
    path.write_bytes(bytes(head.bytes + tape.bytes))


def main():
    r = np.random.default_rng(7)
    f32 = lambda *shape: r.standard_normal(shape).astype(np.float32)  # noqa: E731
    b, h, t, d = 2, 2, 4, 8
    hq, hkv, tq, tk, e = 4, 2, 3, 5, 8
    values = {
        "x": f32(b, h, t, d),
        "w": f32(d),
        "bias": f32(d),
        "q": f32(b, hq, tq, e),
        "k": f32(b, hkv, tk, e),
        "v": f32(b, hkv, tk, e),
        # Masks as MLX passes them to the primitive: broadcast to (B, Hq, Tq, Tk).
        "additive": np.broadcast_to(f32(tq, tk), (b, hq, tq, tk)).copy(),
        "boolean": np.broadcast_to(f32(tq, tk) > -0.3, (b, hq, tq, tk)).copy(),
        "sinks": f32(hq),
        "freqs": np.array([1.0, 4.0, 16.0], np.float32),
        "offsets": np.array([1, 5], np.int32),
        "g": f32(b, h, t, d),
    }

    tape = Tape()
    x, w, bias, q, k, v, additive, boolean, sinks, freqs, offsets, g = (
        tape.input(a) for a in values.values()
    )
    one, zero = tape.constant(np.float32(1)), tape.constant(np.float32(0))
    three, two = tape.constant(np.int32(3)), tape.constant(np.int32(2))

    def norm(name, eps, inputs):
        return tape.primitive(name, inputs, [("f", eps)], x[1], np.float32)

    def rope(inputs, dims, traditional, base, scale, forward):
        state = [("i", dims), ("b", traditional), ("f", base), ("f", scale), ("b", forward)]
        return tape.primitive("RoPE", inputs, state, x[1], np.float32)

    def attention(inputs, causal, has_sinks):
        # scale, do_causal, has_sinks, output_logsumexp, force_fused
        state = [("f", 0.4), ("b", causal), ("b", has_sinks), ("b", False), ("b", False)]
        return tape.primitive(
            "ScaledDotProductAttention", inputs, state, (b, hq, tq, e), np.float32
        )

    def norm_vjp(name, eps, inputs):
        # The cotangents of the norm's inputs, from the inputs and the output's cotangent.
        shapes = [(i[1], np.float32) for i in inputs]
        return tape.primitive_outputs(name, [*inputs, g], [("f", eps)], shapes)

    outputs = [
        norm("RMSNorm", 1e-5, [x, w]),
        norm("RMSNorm", 1e-3, [x, one]),
        norm("LayerNorm", 1e-5, [x, w, bias]),
        norm("LayerNorm", 1e-4, [x, one, zero]),
        rope([x, three], d, False, 10000.0, 1.0, True),
        rope([x, offsets, freqs], d - 2, True, 10000.0, 0.5, True),
        rope([x, two], d, False, 500.0, 1.0, False),
        attention([q, k, v], False, False),
        attention([q, k, v], True, False),
        attention([q, k, v, additive], False, False),
        attention([q, k, v, boolean, sinks], False, True),
        # The gradients MLX records on a GPU: RMSNormVJP and LayerNormVJP.
        *norm_vjp("RMSNormVJP", 1e-5, [x, w]),
        *norm_vjp("RMSNormVJP", 1e-3, [x, one]),
        *norm_vjp("LayerNormVJP", 1e-5, [x, w, bias]),
        *norm_vjp("LayerNormVJP", 1e-4, [x, one, zero]),
    ]

    a = {name: mx.array(value) for name, value in values.items()}
    fast = mx.fast
    mask2 = lambda m: m[0, 0]  # noqa: E731 - the mask before MLX broadcast it

    def forward(y):
        return fast.rope(y, d, traditional=False, base=500.0, scale=1.0, offset=2)

    inverse = mx.vjp(forward, [a["x"]], [a["x"]])[1][0]

    def grads(f, *primals):
        return mx.vjp(f, list(primals), [a["g"]])[1]

    no_weight = mx.array(0, mx.float32)  # MLX's zero cotangent of a scalar stand-in
    norm_grads = [
        *grads(lambda y, w: fast.rms_norm(y, w, 1e-5), a["x"], a["w"]),
        *grads(lambda y: fast.rms_norm(y, None, 1e-3), a["x"]),
        no_weight,
        *grads(lambda y, w, b: fast.layer_norm(y, w, b, 1e-5), a["x"], a["w"], a["bias"]),
        *grads(lambda y: fast.layer_norm(y, None, None, 1e-4), a["x"]),
        no_weight,
        no_weight,
    ]
    expected = [
        fast.rms_norm(a["x"], a["w"], 1e-5),
        fast.rms_norm(a["x"], None, 1e-3),
        fast.layer_norm(a["x"], a["w"], a["bias"], 1e-5),
        fast.layer_norm(a["x"], None, None, 1e-4),
        fast.rope(a["x"], d, traditional=False, base=10000.0, scale=1.0, offset=3),
        fast.rope(a["x"], d - 2, traditional=True, base=None, scale=0.5,
                  offset=a["offsets"], freqs=a["freqs"]),
        inverse,
        fast.scaled_dot_product_attention(a["q"], a["k"], a["v"], scale=0.4),
        fast.scaled_dot_product_attention(a["q"], a["k"], a["v"], scale=0.4, mask="causal"),
        fast.scaled_dot_product_attention(a["q"], a["k"], a["v"], scale=0.4,
                                          mask=mask2(a["additive"])),
        fast.scaled_dot_product_attention(a["q"], a["k"], a["v"], scale=0.4,
                                          mask=mask2(a["boolean"]), sinks=a["sinks"]),
        *norm_grads,
    ]

    path = OUT / "gpu_fast_ops.mlxfn"
    write_file(path, tape, outputs)
    # MLX reads the whole file back and builds the graph it records.
    imported = mx.import_function(str(path))(*a.values())
    with tempfile.TemporaryDirectory() as folder:
        dot = Path(folder) / "graph.dot"
        mx.export_to_dot(str(dot), *imported)
        graph = dot.read_text()
    for name in ("RMSNorm", "LayerNorm", "RoPE", "ScaledDotProductAttention", "RMSNormVJP",
                 "LayerNormVJP"):
        assert f'label ="{name}"' in graph, name
    # Saved as export_functions.py saves a call.
    saved = {f"call0_arg{i}": value for i, value in enumerate(values.values())}
    saved |= {f"call0_out{j}": np.array(y) for j, y in enumerate(expected)}
    np.savez(OUT / "gpu_fast_ops.npz", **saved)
    print(f"wrote {path} and {OUT / 'gpu_fast_ops.npz'}")


if __name__ == "__main__":
    main()
