"""What a case is, how its arguments become arrays of a library, and how a call's outcome
is recorded. Imported both by the real-MLX child process and by the lazulite side, so it
needs only NumPy and the standard library.

A case names a function (``"sum"``, ``"linalg.norm"``, ``"array.__getitem__"``,
``"nn.gelu"``, ``"snippet.adam_step"``) and its arguments as specs. Specs are plain data:
``Arr`` (NumPy values, a dtype name and view steps that make the array strided), ``Dt``
(a dtype by name), ``Key`` (a PRNG key), ``Fn`` (a small function from snippets.py);
anything else (numbers, strings, tuples, slices, None) is passed as is.
"""

import hashlib
import pickle
from dataclasses import dataclass, field

import numpy as np

NP_OF = {
    "bool_": np.bool_, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
    "uint64": np.uint64, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "float32": np.float32,
    "float64": np.float64, "complex64": np.complex64, "bfloat16": np.float32,
}


@dataclass(frozen=True)
class Arr:
    """An array: ``base`` values cast to ``dtype``, then ``views`` applied in order:
    ("T",) transposes, ("slice", index) indexes, ("bcast", shape) broadcasts."""

    base: np.ndarray
    dtype: str
    views: tuple = ()

    def __repr__(self):
        return f"Arr({self.dtype}{list(self.base.shape)}{''.join(v[0] for v in self.views)})"


@dataclass(frozen=True)
class Dt:
    name: str


@dataclass(frozen=True)
class Key:
    value: int


@dataclass(frozen=True)
class Fn:
    """A function from snippets.py, given the library when built."""

    name: str


@dataclass
class Case:
    id: str
    fn: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    check: str = "value"  # value | loose | float32-math | shape | sorted-last | sign-free | partition
    ns: str = ""
    alone: bool = False  # MLX may write outside its buffers: run in a process of its own


class Lib:
    """The modules a case may use: ``core`` (mlx.core or lazulite.core), ``nn``,
    ``optimizers``, ``utils``."""

    def __init__(self, core, nn=None, optimizers=None, utils=None):
        self.core, self.nn, self.optimizers, self.utils = core, nn, optimizers, utils


def build(spec, lib):
    mx = lib.core
    if isinstance(spec, Arr):
        a = mx.array(spec.base.astype(NP_OF[spec.dtype]) if spec.dtype != "bfloat16" else spec.base)
        return with_views(a.astype(getattr(mx, spec.dtype)), spec.views, mx.broadcast_to)
    if isinstance(spec, Dt):
        return getattr(mx, spec.name)
    if isinstance(spec, Key):
        return mx.random.key(spec.value)
    if isinstance(spec, Fn):
        from . import snippets

        return getattr(snippets, spec.name)(lib)
    if isinstance(spec, list):
        return [build(s, lib) for s in spec]
    if isinstance(spec, tuple):
        return tuple(build(s, lib) for s in spec)
    if isinstance(spec, dict):
        return {k: build(v, lib) for k, v in spec.items()}
    return spec


def numpy_view(spec):
    """The values an ``Arr`` spec stands for, as NumPy computes them (float32 for
    bfloat16)."""
    return with_views(spec.base.astype(NP_OF[spec.dtype]), spec.views, np.broadcast_to)


def with_views(a, views, broadcast_to):
    """``a`` seen through an ``Arr`` spec's views, in order."""
    for view in views:
        if view[0] == "T":
            a = a.T
        elif view[0] == "slice":
            a = a[view[1]]
        elif view[0] == "bcast":
            a = broadcast_to(a, view[1])
    return a


def resolve(name, lib):
    """The callable a case names."""
    head, _, rest = name.partition(".")
    if head == "snippet":
        from . import snippets

        return lambda *a, **k: getattr(snippets, rest)(lib, *a, **k)
    if head == "array":
        return lambda self, *a, **k: getattr(self, rest)(*a, **k)
    if head in ("nn", "optimizers", "utils"):
        obj = getattr(lib, head)
        parts = rest.split(".")
    else:
        obj = lib.core
        parts = name.split(".")
    for part in parts:
        obj = getattr(obj, part)
    return obj


def dtype_name(d):
    return str(d).rsplit(".", 1)[-1]


def record(value, lib):
    """A picklable, library-free description of a call's result."""
    mx = lib.core
    if isinstance(value, mx.array):
        # Evaluated explicitly, as MLX programs do: an error MLX's kernel raises while the
        # result is only converted can be lost on its way back, depending on timing.
        mx.eval(value)
        name = dtype_name(value.dtype)
        v = value.astype(mx.float32) if name == "bfloat16" else value
        return ("array", name, tuple(value.shape), np.array(v))
    if isinstance(value, mx.Dtype):
        return ("dtype", dtype_name(value))
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return ("py", type(value).__name__, value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(record(v, lib) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, record(v, lib)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))))
    if isinstance(value, np.ndarray):
        return ("array", "numpy." + str(value.dtype), value.shape, value)
    return ("object", type(value).__name__, repr(value)[:200])


BUILTIN_BASES = ("AxisError", "IndexError", "ValueError", "TypeError", "RuntimeError",
                 "KeyError", "AttributeError", "NotImplementedError", "OverflowError",
                 "ZeroDivisionError", "FileNotFoundError", "OSError")


def evaluate(case, lib):
    """("ok", record) or ("raise", class name, message, names of builtin classes it is)."""
    try:
        fn = resolve(case.fn, lib)
    except AttributeError as e:
        return ("missing", str(e)[:300])
    try:
        args = build(case.args, lib)
        kwargs = build(case.kwargs, lib)
        out = fn(*args, **kwargs)
        return ("ok", record(out, lib))
    except Exception as e:  # noqa: BLE001 - the exception class is what is compared
        kinds = tuple(n for n in BUILTIN_BASES if any(c.__name__ == n for c in type(e).__mro__))
        return ("raise", type(e).__name__, str(e)[:300], kinds)


def digest(obj):
    return hashlib.sha256(pickle.dumps(obj, protocol=4)).hexdigest()[:20]
