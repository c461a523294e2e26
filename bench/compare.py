"""Side-by-side benchmark: lazulite (through `lazulite.core`), NumPy, JAX and MLX.

Times each workload with every library that is installed, in one run, interleaving the
libraries (one call of each per round, each round in a new order, repeated) so a noisy
machine slows them alike, and
prints the median milliseconds and the ratio lazulite / best peer (below 1: lazulite is
faster). A workload a library lacks (or whose lazulite function is not bound yet) shows
"n/a".

    bash bench/setup.sh                       # .venv-bench with the peers + release build
    .venv-bench/bin/python bench/compare.py   # all workloads
    .venv-bench/bin/python bench/compare.py softmax sum   # names containing a word
    .venv-bench/bin/python bench/compare.py --write       # and update docs/benchmarks.md

`--write` puts the figures into the "Latest" section of docs/benchmarks.md (the machine
line, each measured workload's row, the closing notes; rows of workloads not run stay as
they were) and redraws docs/images/benchmarks.svg from it with `bench/chart.py`.

lazulite and MLX run eagerly (record, then `eval`); JAX runs `jax.jit`-compiled functions
(compiled before timing) and waits with `block_until_ready`; NumPy runs eagerly.

NumPy's OpenBLAS threads spin for about 2^28 cycles (~75 ms) after each call, holding a
core that whatever runs next in the round then lacks: a float64 1024 x 1024 product by
lazulite took 45 ms right after NumPy's and 22 ms otherwise. The script lets them sleep
at once (`OPENBLAS_THREAD_TIMEOUT`, set before NumPy loads), which leaves NumPy's own
times unchanged (24 ms for that product either way).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # see the module docstring

import numpy as np  # noqa: E402

N = 10_000_000
SQUARE = 4096


def optional(name: str) -> Any:
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        return None


lz = optional("lazulite.core")
mx = optional("mlx.core")
jax = optional("jax")
jnp = optional("jax.numpy")
if jax is not None:
    jax.config.update("jax_enable_x64", True)


class Unsupported(Exception):
    """The library has no such function (or dtype)."""


def need(ns: Any, name: str) -> Callable:
    fn = getattr(ns, name, None)
    if fn is None:
        raise Unsupported(name)
    return fn


# --- libraries -----------------------------------------------------------------------
# A library turns NumPy inputs into its arrays (`put`), and a workload's function into a
# zero-argument callable that computes and waits for the result (`prepare`).


class Library:
    name = ""

    def put(self, x: np.ndarray, dtype: str) -> Any:
        raise NotImplementedError

    def prepare(self, fn: Callable, args: list) -> Callable[[], Any]:
        raise NotImplementedError


class NumPy(Library):
    name = "numpy"
    ns = np

    def put(self, x, dtype):
        if dtype == "bfloat16":
            raise Unsupported("bfloat16")
        return x.astype(dtype)

    def prepare(self, fn, args):
        return lambda: fn(np, *args)


class Jax(Library):
    name = "jax"

    def put(self, x, dtype):
        return jax.device_put(x.astype(np.float32)).astype(dtype).block_until_ready()

    def prepare(self, fn, args):
        compiled = jax.jit(lambda *a: fn(jnp, *a))
        jax.block_until_ready(compiled(*args))
        return lambda: jax.block_until_ready(compiled(*args))


class Eager(Library):
    """lazulite and MLX: the same API, recorded then evaluated."""

    def __init__(self, name: str, ns: Any):
        self.name, self.ns = name, ns

    def put(self, x, dtype):
        a = self.ns.array(x.astype(np.float32)).astype(need(self.ns, dtype))
        self.ns.eval(a)
        return a

    def prepare(self, fn, args):
        ns = self.ns

        def run():
            y = fn(ns, *args)
            ns.eval(y)
            return y

        return run


LIBRARIES: list[Library] = [Eager("lazulite", lz)] if lz is not None else []
LIBRARIES.append(NumPy())
if jax is not None:
    LIBRARIES.append(Jax())
if mx is not None:
    LIBRARIES.append(Eager("mlx", mx))


# --- workloads -----------------------------------------------------------------------
# A workload: name, inputs (NumPy arrays, dtype), and the function per API family:
# `numpy_fn(ns, *args)` for NumPy and jax.numpy, `mlx_fn(ns, *args)` for MLX and lazulite.
# `eager_only`: JAX runs it without jit (a per-op overhead measurement).
# `only`: the libraries that run it (the others show n/a), e.g. no NumPy for autodiff.
# `runner(lib, args)`: a library-specific zero-argument callable, for workloads that need
# set-up beyond a function of the inputs (the dataflow placeholders); None: the default.


class Workload:
    def __init__(
        self,
        name: str,
        inputs: Callable[[], list[np.ndarray]],
        numpy_fn: Callable,
        mlx_fn: Callable,
        dtype: str = "float32",
        runs: int = 7,
        eager_only: bool = False,
        only: tuple[str, ...] | None = None,
        runner: Callable[[Library, list], Callable[[], Any] | None] | None = None,
    ):
        self.name, self.inputs, self.dtype, self.runs = name, inputs, dtype, runs
        self.numpy_fn, self.mlx_fn, self.eager_only = numpy_fn, mlx_fn, eager_only
        self.only, self.runner = only, runner

    def fn_for(self, lib: Library) -> Callable:
        return self.mlx_fn if isinstance(lib, Eager) else self.numpy_fn


_cache: dict[tuple, np.ndarray] = {}


def uniform(shape: tuple, lo: float, hi: float, seed: int) -> np.ndarray:
    key = (shape, lo, hi, seed)
    if key not in _cache:
        rng = np.random.default_rng(seed)
        _cache[key] = rng.uniform(lo, hi, size=shape).astype(np.float32)
    return _cache[key]


def wide(n=N):
    return uniform((n,), -3.0, 3.0, 1)


def positive(n=N):
    return uniform((n,), 0.01, 10.0, 2)


def unit(n=N):
    return uniform((n,), -0.99, 0.99, 3)


def above_one(n=N):
    return uniform((n,), 1.0, 10.0, 9)


def square():
    return uniform((SQUARE, SQUARE), -3.0, 3.0, 4)


def same(name: str) -> Callable:
    """The function `name` of the namespace applied to the arguments."""
    return lambda ns, *a: need(ns, name)(*a)


def numpy_softmax(ns, x):
    if ns is not np:
        return jax.nn.softmax(x, axis=-1)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def numpy_logsumexp(ns, x):
    if ns is not np:
        return jax.nn.logsumexp(x, axis=-1)
    m = x.max(axis=-1, keepdims=True)
    return np.log(np.exp(x - m).sum(axis=-1)) + m[:, 0]


def chain(ns, x):
    return need(ns, "arctan")(
        need(ns, "round")(need(ns, "sinh")(need(ns, "abs")(
            need(ns, "cos")(-need(ns, "sin")(need(ns, "log")(x + x)))
        )))
    )


def chained_adds(ns, x):
    for _ in range(10_000):
        x = x + 1.0
    return x


# --- transforms and dataflow ---------------------------------------------------------
# `ns` is mlx.core or lazulite.core (the same API), or jax.numpy, whose transforms live in
# `jax`; JAX's workloads run under jax.jit like the others.

AUTODIFF = ("lazulite", "jax", "mlx")


def guide_vmap_inputs():
    # The guide's xs: uniform (4096, 100), ys: uniform (100, 4096).
    return [uniform((4096, 100), 0.0, 1.0, 7), uniform((100, 4096), 0.0, 1.0, 8)]


def naive_add(ns, xs, ys):
    return [xs[i] + ys[:, i] for i in range(xs.shape[1])]


def vmap_add(ns, xs, ys):
    vmap = jax.vmap if ns is jnp else ns.vmap
    return vmap(lambda x, y: x + y, in_axes=(1, 0))(xs, ys)


def grad_sum_sin(ns, x):
    grad = jax.grad if ns is jnp else ns.grad
    return grad(lambda x: ns.sum(ns.sin(x)))(x)


MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 256
MLP_LR = 0.1


def mlp_inputs():
    """W1, b1, W2, b2, W3, b3 (uniform, scaled by 1/sqrt(fan-in)), x, one-hot labels."""
    out = []
    for i, (fan_in, fan_out) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:])):
        bound = fan_in ** -0.5
        out += [uniform((fan_in, fan_out), -bound, bound, 20 + i),
                uniform((fan_out,), -bound, bound, 30 + i)]
    x = uniform((MLP_BATCH, MLP_SIZES[0]), 0.0, 1.0, 40)
    labels = np.random.default_rng(41).integers(0, MLP_SIZES[-1], MLP_BATCH)
    return out + [x, np.eye(MLP_SIZES[-1], dtype=np.float32)[labels]]


def mlp_step(ns, *args):
    """One SGD step: value_and_grad of the mean cross-entropy of a relu MLP, then
    params - lr * grads; returns the loss and the new parameters."""
    *params, x, onehot = args
    logsumexp = jax.nn.logsumexp if ns is jnp else ns.logsumexp
    value_and_grad = jax.value_and_grad if ns is jnp else ns.value_and_grad

    def loss(params, x, onehot):
        h = x
        for i in range(0, len(params) - 2, 2):
            h = ns.maximum(h @ params[i] + params[i + 1], 0.0)
        logits = h @ params[-2] + params[-1]
        return ns.mean(logsumexp(logits, axis=-1) - ns.sum(logits * onehot, axis=-1))

    value, grads = value_and_grad(loss)(params, x, onehot)
    return [value] + [p - MLP_LR * g for p, g in zip(params, grads)]


def owl_incremental(ns, a, b):
    """Owl's example: a |> sin |> cos |> abs |> log |> sum' |> mul_scalar a |> scalar_add b."""
    return b + a * ns.sum(ns.log(ns.abs(ns.cos(ns.sin(a)))))


class OwlGraph:
    """The Owl example over lazulite placeholders, recorded once and re-evaluated."""

    def __init__(self, a):
        self.value_a, self.a = a, lz.placeholder(a.shape, lz.float64)
        self.b, self.value_b = lz.placeholder((), lz.float64), 5.0
        self.c = owl_incremental(lz, self.a, self.b)
        self.a.assign(a)
        self.b.assign(self.value_b)
        lz.eval(self.c)

    def full(self):
        self.a.assign(self.value_a)  # a (re-)assigned: everything is recomputed
        lz.eval(self.c)
        return self.c

    def after_new_b(self):
        self.value_b = 11.0 - self.value_b  # 5 and 6 in turn, as Owl's 5., 6., 7.
        self.b.assign(self.value_b)
        lz.eval(self.c)
        return self.c


def owl_inputs():
    return [uniform((1000, 1000), 0.5, 3.0, 50).astype(np.float64), np.array(5.0)]


def owl_runner(step: str):
    def runner(lib: Library, args: list):
        if lib.name != "lazulite":
            if step == "full":
                return None  # the default: each peer computes the whole expression
            raise Unsupported("placeholders")  # no incremental re-evaluation
        return getattr(OwlGraph(args[0]), step)
    return runner


def conv_inputs():
    return [uniform((8, 64, 64, 64), -1, 1, 11), uniform((64, 3, 3, 64), -0.1, 0.1, 12)]


def jax_conv2d(ns, x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                        dimension_numbers=("NHWC", "OHWI", "NHWC"))


def conv2d_grads(ns, x, w):
    if ns is jnp:
        return jax.grad(lambda x, w: (jax_conv2d(ns, x, w) ** 2).sum(), argnums=(0, 1))(x, w)
    return need(ns, "grad")(lambda x, w: (ns.conv2d(x, w, padding=1) ** 2).sum(), argnums=(0, 1))(x, w)


# --- a sentence encoder ---------------------------------------------------------------
# all-MiniLM-L6-v2's shape with random weights, written with plain array operations as a
# user would: weights stored (out, in) and applied as x @ W.T, erf GELU, mean/variance
# layer norm, softmax attention over 12 heads.

ENCODER_LAYERS, ENCODER_HIDDEN, ENCODER_HEADS, ENCODER_FFN = 6, 384, 12, 1536
ENCODER_BATCH, ENCODER_TOKENS = 72, 128


def encoder_inputs():
    """x, then per layer: Wq, bq, Wk, bk, Wv, bv, Wo, bo, g1, b1, W1, c1, W2, c2, g2, b2."""
    rng = np.random.default_rng(50)
    h, f = ENCODER_HIDDEN, ENCODER_FFN
    shapes = [(h, h), (h,)] * 4 + [(h,), (h,), (f, h), (f,), (h, f), (h,), (h,), (h,)]
    out = [rng.normal(0.0, 1.0, (ENCODER_BATCH, ENCODER_TOKENS, h)).astype(np.float32)]
    for _ in range(ENCODER_LAYERS):
        for i, shape in enumerate(shapes):
            gain = i in (8, 14)  # layer-norm scales sit around one
            values = rng.normal(1.0 if gain else 0.0, 0.05 if len(shape) == 1 else 0.04, shape)
            out.append(values.astype(np.float32))
    return out


def encoder(ns, x, *params):
    """The encoder's forward pass; `ns` is NumPy, jax.numpy, mlx.core or lazulite.core."""
    if ns is np:
        from scipy.special import erf
        softmax = lambda s: (lambda e: e / e.sum(-1, keepdims=True))(  # noqa: E731
            np.exp(s - s.max(-1, keepdims=True)))
    elif ns is jnp:
        erf, softmax = jax.scipy.special.erf, lambda s: jax.nn.softmax(s, axis=-1)
    else:
        erf, softmax = ns.erf, lambda s: ns.softmax(s, axis=-1)

    def layer_norm(v, gain, shift):
        mean = ns.mean(v, axis=-1, keepdims=True)
        var = ns.mean(ns.square(v - mean), axis=-1, keepdims=True)
        return (v - mean) / ns.sqrt(var + 1e-12) * gain + shift

    b, t, h = x.shape
    heads, d = ENCODER_HEADS, h // ENCODER_HEADS

    def split_heads(v):
        return ns.transpose(v.reshape(b, t, heads, d), (0, 2, 1, 3))

    for i in range(0, len(params), 16):
        wq, bq, wk, bk, wv, bv, wo, bo, g1, s1, w1, c1, w2, c2, g2, s2 = params[i:i + 16]
        q, k, v = (split_heads(x @ w.T + bias) for w, bias in ((wq, bq), (wk, bk), (wv, bv)))
        scores = softmax((q @ ns.transpose(k, (0, 1, 3, 2))) * (1.0 / d ** 0.5))
        context = ns.transpose(scores @ v, (0, 2, 1, 3)).reshape(b, t, h)
        x = layer_norm(x + context @ wo.T + bo, g1, s1)
        inner = x @ w1.T + c1
        inner = 0.5 * inner * (1.0 + erf(inner * (1.0 / 2 ** 0.5)))
        x = layer_norm(x + inner @ w2.T + c2, g2, s2)
    return x


def encoder_error() -> float:
    """Largest difference between lazulite's encoder output and a float64 NumPy run."""
    inputs = encoder_inputs()
    want = encoder(np, *[a.astype(np.float64) for a in inputs])
    got = encoder(lz, *[lz.array(a) for a in inputs])
    return float(np.abs(np.array(got) - want).max())


# --- an exported model: import it, or trace it again ---------------------------------
# The 6-layer encoder above at one sequence of 16 tokens, its weights captured as
# constants. "import + first call" reads the function file written once by
# `export_function` and runs it; "compile + first call" traces the function afresh with
# `compile` and runs it. Both include the forward pass itself (small at this size).

EXPORT_TOKENS = 16


def export_inputs():
    x, *params = encoder_inputs()
    return [x[:1, :EXPORT_TOKENS]] + params


def exported_model_runner(how: str):
    def runner(lib: Library, args: list):
        if lib.name not in ("lazulite", "mlx"):
            raise Unsupported("function files")
        ns = lib.ns
        x, params = args[0], args[1:]

        def model(x):
            return encoder(ns, x, *params)

        if how == "compile":
            traced = []  # kept alive: each call compiles a function never seen before

            def first_call():
                # A new Python function each time: compile caches traces by function.
                compiled = ns.compile(lambda x: model(x))
                traced.append(compiled)
                y = compiled(x)
                ns.eval(y)
                return y

            return first_call
        import tempfile

        folder = tempfile.mkdtemp(prefix="lazulite-bench-")
        path = os.path.join(folder, f"encoder-{lib.name}.mlxfn")
        ns.export_function(path, model, x)

        def import_and_call():
            (y,) = ns.import_function(path)(x)
            ns.eval(y)
            return y

        return import_and_call
    return runner


EXPORT_IMPORT = "exported 6-layer encoder, 16 tokens: import + first call"
EXPORT_COMPILE = "same encoder, 16 tokens: compile (trace) + first call"


def transform_workloads() -> list[Workload]:
    return [
        Workload("guide vmap: naive loop add 4096x100", guide_vmap_inputs, naive_add, naive_add,
                 runs=15, eager_only=True),
        Workload("guide vmap: vmap add 4096x100", guide_vmap_inputs, vmap_add, vmap_add,
                 runs=15, only=AUTODIFF),
        Workload("grad sum(sin(x)) 10M f32", lambda: [wide()], grad_sum_sin, grad_sum_sin,
                 only=AUTODIFF),
        Workload("MLP 784-512-512-10 value_and_grad+SGD b256", mlp_inputs, mlp_step, mlp_step,
                 runs=21, only=AUTODIFF),
        # MLX's CPU build needs about a minute a call here: left out to keep the run short.
        Workload("encoder 6x384, 72x128 tokens (MiniLM shape)", encoder_inputs, encoder,
                 encoder, runs=5, only=("lazulite", "numpy", "jax")),
        Workload(EXPORT_IMPORT, export_inputs, encoder, encoder, runs=7,
                 only=("lazulite", "mlx"), runner=exported_model_runner("import")),
        Workload(EXPORT_COMPILE, export_inputs, encoder, encoder, runs=7,
                 only=("lazulite", "mlx"), runner=exported_model_runner("compile")),
        Workload("owl incremental 1000^2 f64: full eval", owl_inputs, owl_incremental,
                 owl_incremental, dtype="float64", runs=15, runner=owl_runner("full")),
        Workload("owl incremental 1000^2 f64: after new b", owl_inputs, owl_incremental,
                 owl_incremental, dtype="float64", runs=15, runner=owl_runner("after_new_b")),
    ]


def workloads() -> list[Workload]:
    out = []
    for n in (512, 1024, 2048):
        for dtype in ("float32", "float16", "bfloat16", "float64"):
            runs = 3 if n == 2048 else 5
            if dtype == "float16" and n == 2048:
                runs = 1  # NumPy's float16 matmul takes seconds
            out.append(Workload(
                f"matmul {dtype} {n}",
                lambda n=n: [uniform((n, n), -1, 1, 5), uniform((n, n), -1, 1, 6)],
                lambda ns, a, b: ns.matmul(a, b),
                lambda ns, a, b: need(ns, "matmul")(a, b),
                dtype=dtype, runs=runs,
            ))
    unary = [
        ("abs", wide), ("negative", wide), ("square", wide), ("sqrt", positive),
        ("rsqrt", positive), ("exp", wide), ("expm1", wide), ("log", positive),
        ("log1p", positive), ("log2", positive), ("log10", positive), ("sin", wide),
        ("cos", wide), ("tan", wide), ("arcsin", unit), ("arccos", unit),
        ("arctan", wide), ("sinh", wide), ("cosh", wide), ("tanh", wide),
        ("arcsinh", wide), ("arccosh", above_one), ("arctanh", unit), ("sigmoid", wide),
        ("erf", wide), ("erfinv", unit), ("floor", wide), ("ceil", wide), ("round", wide),
        ("trunc", wide), ("sign", wide), ("reciprocal", positive),
    ]
    numpy_unary = {
        "rsqrt": lambda ns, x: 1 / ns.sqrt(x),
        "sigmoid": lambda ns, x: 1 / (1 + ns.exp(-x)),
        "erf": lambda ns, x: jax.scipy.special.erf(x) if ns is not np else need(ns, "erf")(x),
        "erfinv": lambda ns, x: (jax.scipy.special.erfinv(x) if ns is not np
                                 else need(ns, "erfinv")(x)),
        "reciprocal": lambda ns, x: 1 / x,
    }
    for name, data in unary:
        out.append(Workload(
            f"{name} 10M f32", lambda data=data: [data()],
            numpy_unary.get(name, same(name)), same(name),
        ))
    for name in ("add", "multiply", "divide", "maximum"):
        out.append(Workload(f"{name} 10M f32", lambda: [wide(), positive()], same(name), same(name)))
    out += [
        Workload("add 4096^2 + row", lambda: [square(), wide(SQUARE).reshape(1, SQUARE)],
                 same("add"), same("add")),
        Workload("multiply 4096^2 * column", lambda: [square(), positive(SQUARE).reshape(SQUARE, 1)],
                 same("multiply"), same("multiply")),
        Workload("add scalar 10M f32", lambda: [wide()],
                 lambda ns, x: x + 1.0, lambda ns, x: x + 1.0),
        Workload("astype 10M f32->f16", lambda: [wide()],
                 lambda ns, x: x.astype(ns.float16), lambda ns, x: x.astype(ns.float16)),
    ]
    for red in ("sum", "max", "argmax"):
        out.append(Workload(f"{red} 10M", lambda: [wide()],
                            lambda ns, x, r=red: need(ns, r)(x),
                            lambda ns, x, r=red: need(ns, r)(x)))
        for axis in (0, 1):
            out.append(Workload(f"{red} 4096^2 axis {axis}", lambda: [square()],
                                lambda ns, x, r=red, a=axis: need(ns, r)(x, axis=a),
                                lambda ns, x, r=red, a=axis: need(ns, r)(x, axis=a)))
    out += [
        Workload("softmax rows 4096^2", lambda: [square()], numpy_softmax,
                 lambda ns, x: need(ns, "softmax")(x, axis=-1)),
        Workload("logsumexp rows 4096^2", lambda: [square()], numpy_logsumexp,
                 lambda ns, x: need(ns, "logsumexp")(x, axis=-1)),
        Workload("chain 10M f32", lambda: [positive()], chain, chain),
        Workload("transpose + add 4096^2", lambda: [square()],
                 lambda ns, x: x.T + x, lambda ns, x: x.T + x),
        Workload("cumsum 10M", lambda: [wide()],
                 lambda ns, x: ns.cumsum(x), lambda ns, x: need(ns, "cumsum")(x)),
        Workload("sort 1M", lambda: [wide(1_000_000)],
                 lambda ns, x: ns.sort(x), lambda ns, x: need(ns, "sort")(x)),
        Workload("10000 chained scalar adds", lambda: [np.array(1.0, np.float32)],
                 chained_adds, chained_adds, runs=15, eager_only=True),
    ]
    out += [
        Workload("conv2d 8x64x64x64 -> 64, 3x3 pad 1", conv_inputs, jax_conv2d,
                 lambda ns, x, w: need(ns, "conv2d")(x, w, padding=1), runs=5,
                 only=("lazulite", "jax", "mlx")),
        Workload("conv2d grad (x, w) 8x64x64x64 -> 64, 3x3", conv_inputs, conv2d_grads,
                 conv2d_grads, runs=3, only=("lazulite", "jax", "mlx")),
    ]
    fft_length = 1 << 20
    for op in ("fft", "rfft"):
        out += [
            Workload(f"{op} 2^20 f32", lambda: [wide(fft_length)],
                     lambda ns, x, op=op: getattr(ns.fft, op)(x),
                     lambda ns, x, op=op: getattr(ns.fft, op)(x)),
            Workload(f"{op} 1024x1024 f32 last axis",
                     lambda: [wide(fft_length).reshape(1024, 1024)],
                     lambda ns, x, op=op: getattr(ns.fft, op)(x),
                     lambda ns, x, op=op: getattr(ns.fft, op)(x)),
        ]
    return out + transform_workloads()


# --- running -------------------------------------------------------------------------


def prepare(lib: Library, w: Workload) -> Callable[[], Any] | None:
    try:
        if w.only is not None and lib.name not in w.only:
            raise Unsupported(lib.name)
        args = [lib.put(x, w.dtype) for x in w.inputs()]
        fn = w.fn_for(lib)
        run = w.runner(lib, args) if w.runner is not None else None
        if run is None and w.eager_only and isinstance(lib, Jax):
            run = lambda: jax.block_until_ready(fn(jnp, *args))  # noqa: E731
        if run is None:
            run = lib.prepare(fn, args)
        run()  # warm-up (and a check that the function exists)
        return run
    except (Unsupported, AttributeError, TypeError, NotImplementedError) as e:
        if os.environ.get("BENCH_VERBOSE"):
            print(f"  {lib.name} {w.name}: n/a ({type(e).__name__}: {e})", file=sys.stderr)
        return None


def measure(w: Workload) -> dict[str, float | None]:
    runs = {lib.name: prepare(lib, w) for lib in LIBRARIES}
    times: dict[str, list[float]] = {name: [] for name, run in runs.items() if run}
    order = [(name, run) for name, run in runs.items() if run is not None]
    shuffle = random.Random(0).shuffle
    for _ in range(w.runs):
        # Each round in a new order, so that every library follows every other alike. What
        # ran just before matters on a virtual machine: right after MLX's long
        # single-threaded calls, the two threads of the next call often ran one after the
        # other. Rotating a fixed order would keep each library's predecessor.
        shuffle(order)
        for name, run in order:
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {lib.name: statistics.median(times[lib.name]) if lib.name in times else None
            for lib in LIBRARIES}


def describe_machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = [f"numpy {np.__version__}"]
    if jax is not None:
        versions.append(f"jax {jax.__version__}")
    if mx is not None:
        versions.append(f"mlx {getattr(mx, '__version__', '?')}")
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, " + ", ".join(versions)


DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
LATEST = "## Latest"


def note_kind(line: str) -> str:
    """What a closing note reports (`# dataflow: ...` -> `# dataflow`), to replace it."""
    return line.split(":", 1)[0]


def write_latest(text: str, machine: list[str], header: str, rows: list[str], notes: list[str]) -> str:
    """`text` (docs/benchmarks.md) with the figures of its "Latest" section updated.

    The section holds, after its prose, the machine lines, the table and closing notes,
    as this script prints them (with `#` escaped as `\\#` for Markdown). The machine lines
    are replaced; each row replaces the row of its workload or is appended; each note
    replaces the note of its kind or is appended. The heading and the prose are kept.
    """
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(LATEST)), None)
    if start is None:
        raise ValueError(f"no section starting with {LATEST!r}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tables = [i for i in range(start, end) if lines[i].startswith("| workload |")]
    if not tables:
        raise ValueError("the Latest section has no table")
    h = tables[0]
    if lines[h] != header:
        raise ValueError(f"the Latest table's columns are {lines[h]!r}, this run's {header!r}: "
                         "run with the same libraries installed")
    first_row = h + 2
    last_row = first_row
    while last_row < end and lines[last_row].startswith("|"):
        last_row += 1
    notes_end = last_row
    while notes_end < end and lines[notes_end].startswith("\\# "):
        notes_end += 1
    # The machine lines: the `\#` lines above the table and the blank line after them
    # (none yet: the new ones go just above the table).
    machine_start = h - 1 if not lines[h - 1].strip() else h
    while lines[machine_start - 1].startswith("\\# "):
        machine_start -= 1
    if not lines[machine_start].startswith("\\# "):
        machine_start = h

    def escaped(line: str) -> str:
        return "\\" + line

    table = lines[first_row:last_row]
    by_workload = {row.split("|")[1].strip(): k for k, row in enumerate(table)}
    for row in rows:
        k = by_workload.get(row.split("|")[1].strip())
        if k is None:
            table.append(row)
        else:
            table[k] = row
    old_notes = lines[last_row:notes_end]
    for note in map(escaped, notes):
        kinds = [note_kind(n) for n in old_notes]
        if note_kind(note) in kinds:
            old_notes[kinds.index(note_kind(note))] = note
        else:
            old_notes.append(note)
    block = [escaped(m) for m in machine] + ["", header, lines[h + 1]] + table + old_notes
    return "\n".join(lines[:machine_start] + block + lines[notes_end:])


def redraw_chart() -> None:
    """docs/images/benchmarks.svg from the updated table (bench/chart.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import chart

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is missing: pip install matplotlib==3.11.2, then run bench/chart.py",
              file=sys.stderr)
        sys.exit(1)
    rows = chart.read_table(chart.TABLE.read_text())
    chart.draw(chart.speedups(rows, chart.SELECTION), chart.OUT)
    print(f"# wrote {chart.OUT.relative_to(chart.ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("filters", nargs="*", help="run the workloads whose names contain one of these")
    parser.add_argument("--write", action="store_true",
                        help='put the figures into docs/benchmarks.md ("Latest") and redraw its chart')
    args = parser.parse_args()
    filters = args.filters
    names = [lib.name for lib in LIBRARIES]
    machine = [f"# {describe_machine()}", "# median ms; ratio = lazulite / fastest peer (< 1: lazulite faster)"]
    print("\n".join(machine))
    header = "| workload | " + " | ".join(names) + " | ratio |"
    print(header)
    print("|" + "---|" * (len(names) + 2))
    rows: list[str] = []
    notes: list[str] = []

    def note(line: str) -> None:
        print(line)
        notes.append(line)

    ours_by_name: dict[str, float] = {}
    all_results: dict[str, dict[str, float | None]] = {}
    for w in workloads():
        if filters and not any(f in w.name for f in filters):
            continue
        result = measure(w)
        all_results[w.name] = result
        cells = [f"{result[n]:.3f}" if result[n] is not None else "n/a" for n in names]
        peers = [t for n, t in result.items() if n != "lazulite" and t is not None]
        ours = result.get("lazulite")
        ratio = f"{ours / min(peers):.2f}" if ours is not None and peers else "n/a"
        rows.append(f"| {w.name} | " + " | ".join(cells) + f" | {ratio} |")
        print(rows[-1], flush=True)
        if ours is not None:
            ours_by_name[w.name] = ours
    if "encoder 6x384, 72x128 tokens (MiniLM shape)" in ours_by_name:
        note(f"# encoder: lazulite vs a float64 NumPy run, largest difference "
             f"{encoder_error():.1e} (target 1e-4)")
    for lib in names:
        imported, traced = (all_results.get(name, {}).get(lib)
                            for name in (EXPORT_IMPORT, EXPORT_COMPILE))
        if imported is not None and traced is not None:
            note(f"# exported encoder, {lib}: import + first call {imported:.3f} ms, "
                 f"compile + first call {traced:.3f} ms: import/compile = "
                 f"{imported / traced:.2f}")
    full, again = (ours_by_name.get(f"owl incremental 1000^2 f64: {step}")
                   for step in ("full eval", "after new b"))
    if full is not None and again is not None:
        note(f"# dataflow: lazulite full evaluation {full:.3f} ms, re-evaluation after "
             f"assign(b) {again:.3f} ms: {full / again:.1f}x faster (target 20x)")
    if args.write:
        try:
            DOC.write_text(write_latest(DOC.read_text(), machine, header, rows, notes))
        except ValueError as e:
            sys.exit(f"--write: {e}; {DOC.name} is unchanged")
        print(f"# wrote {len(rows)} rows into {DOC.relative_to(DOC.parents[1])} (Latest): "
              "update its heading and prose to match")
        redraw_chart()


if __name__ == "__main__":
    main()
