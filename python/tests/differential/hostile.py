"""Calls every public function with the arguments a careless or hostile caller passes:
sizes past 2^31 and 2^63, NaN and infinities, wrong types, empty and huge broadcast arrays,
odd dtypes. Each call must return or raise an ordinary exception; none may take the
interpreter down, raise a Rust panic, hang, or change its input arrays when it fails.

The calls are made from the differential cases (one or two valid calls per function):
each argument and keyword in turn is replaced by each hostile value, and each function is
also called with hostile values alone and in pairs. They run in child processes
(hostile_child.py) whose address space is capped, so an allocation sized by a user's
number that is not fallible aborts the child and is reported as a crash.
"""

import math
import random
from dataclasses import replace

import numpy as np

from .cases import CASES
from .spec import Arr, Case, Dt


class Odd:
    """A value built in the child (objects that cannot be pickled or are lazily huge)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Odd({self.name})"

    def __eq__(self, other):
        return isinstance(other, Odd) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _arr(values, dtype, views=()):
    return Arr(np.asarray(values), dtype, views)


HOSTILE = {
    # Sizes, counts and axes.
    "zero": 0,
    "minus_one": -1,
    "two_31": 2**31,
    "minus_two_31_less_one": -(2**31) - 1,
    "two_32_plus_one": 2**32 + 1,
    "two_63": 2**63,
    "minus_two_63_less_one": -(2**63) - 1,
    "two_64": 2**64,
    "ten_40": 10**40,
    # Floats.
    "nan": math.nan,
    "inf": math.inf,
    "minus_inf": -math.inf,
    "minus_zero": -0.0,
    "float_max": 1.7976931348623157e308,
    "denormal": 5e-324,
    "complex_nan_inf": complex(math.nan, math.inf),
    "true": True,
    # Wrong types.
    "none": None,
    "empty_string": "",
    "dtype_name": "float32",
    "nul_string": "\x00",
    "bytes": b"\xff\x00",
    "object": Odd("object"),
    "function": Odd("function"),
    "ellipsis": Ellipsis,
    "zero_step_slice": slice(None, None, 0),
    "empty_dict": {},
    # Sequences and shapes.
    "empty_list": [],
    "nested_empty": [[]],
    "ragged": [1, [2, 3]],
    "mixed": [1.5, "a"],
    "list_of_none": [None],
    "shape_two_31": (2**31,),
    "shape_minus_one": (-1,),
    "shape_zero": (0,),
    "shape_overflowing": (2**40, 2**40),
    "shape_of_40_dims": (1,) * 40,
    "shape_two_63": (2**63, 1),
    # Arrays.
    "empty_array": _arr(np.zeros((0,), np.float32), "float32"),
    "empty_matrix": _arr(np.zeros((0, 3), np.float32), "float32"),
    "nan_scalar": _arr(np.float32(np.nan), "float32"),
    "int64_extremes": _arr(np.array([2**62, -(2**63), 2**63 - 1], np.int64), "int64"),
    "uint64_max": _arr(np.array([2**64 - 1, 0], np.uint64), "uint64"),
    "int_matrix": _arr(np.arange(6, dtype=np.int32).reshape(2, 3), "int32"),
    "bool_array": _arr(np.array([True, False, True]), "bool_"),
    "complex_array": _arr(np.array([1 + 2j, np.nan + 0j], np.complex64), "complex64"),
    "bfloat16_array": _arr(np.array([1.5, -np.inf], np.float32), "bfloat16"),
    "float16_big": _arr(np.array([65504.0, -65504.0], np.float16), "float16"),
    "twenty_dims": _arr(np.ones((1,) * 20, np.float32), "float32"),
    # Dtypes.
    "complex_dtype": Dt("complex64"),
    "bool_dtype": Dt("bool_"),
    "uint64_dtype": Dt("uint64"),
    "bfloat16_dtype": Dt("bfloat16"),
    "dtype_category": Odd("dtype_category"),
}

# State-changing functions whose hostile calls would change how the rest of a batch runs
# (or write to the terminal); what they accept is covered by their own tests.
LEFT_OUT = {"set_default_device", "set_default_stream", "set_printoptions", "disable_compile",
            "enable_compile", "clear_cache", "set_cache_limit", "set_memory_limit",
            "set_wired_limit", "reset_peak_memory", "random.seed", "distributed.init"}

PAIRS_PER_FUNCTION = 40


def _bases():
    """Up to two valid calls per function: its first case, and its case with the most
    keywords."""
    by_fn = {}
    for case in CASES:
        if case.fn.startswith("snippet.") or case.fn in LEFT_OUT:
            continue
        by_fn.setdefault(case.fn, []).append(case)
    bases = {}
    for fn, cases in sorted(by_fn.items()):
        chosen = [cases[0]]
        most = max(cases, key=lambda c: (len(c.kwargs), len(c.args)))
        if most is not cases[0]:
            chosen.append(most)
        bases[fn] = chosen
    return bases


def cases():
    """The hostile calls, in a fixed order."""
    rng = random.Random(20261125)
    names = sorted(HOSTILE)
    out = []
    for fn, bases in _bases().items():
        # A method's first argument is the array it is called on: replaced by a Python
        # value, the call would be that value's own method.
        method = fn.startswith("array.")
        for b, base in enumerate(bases):
            for i in range(int(method), len(base.args)):
                for name in names:
                    args = base.args[:i] + (HOSTILE[name],) + base.args[i + 1:]
                    out.append(replace(base, id=f"{fn}/base{b}/arg{i}={name}", args=args))
            for key in sorted(base.kwargs):
                for name in names:
                    kwargs = dict(base.kwargs, **{key: HOSTILE[name]})
                    out.append(replace(base, id=f"{fn}/base{b}/{key}={name}", kwargs=kwargs))
        for name in names:
            args = (bases[0].args[0], HOSTILE[name]) if method else (HOSTILE[name],)
            out.append(Case(f"{fn}/alone={name}", fn, args))
        for _ in range(PAIRS_PER_FUNCTION):
            a, b = rng.choice(names), rng.choice(names)
            args = (HOSTILE[a], HOSTILE[b])
            out.append(Case(f"{fn}/pair={a},{b}", fn, (bases[0].args[0], *args) if method else args))
    return out
