"""Python protocols against real MLX (facts in mlx_protocols.json, written by
tools/mlx_reference/protocols.py from the table in protocol_cases.py) and NumPy values:
in-place operators keep the object and raise where MLX raises, arrays build from lists
holding arrays and from ml_dtypes' bfloat16, copies, weak references, finfo/iinfo,
the array API namespace and its inspection object."""

import copy
import json
import operator
import weakref
from pathlib import Path

import numpy as np
import pytest
from protocol_cases import (FINFO_DTYPES, IINFO_DTYPES, inplace_cases, isdtype_cases,
                            keyword_cases, nested_cases)

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_protocols.json").read_text())
INPLACE = inplace_cases(mx)
NESTED = nested_cases(mx)
# `a @= b` and `a @ b` also take NumPy arrays (MLX refuses every right operand that is not
# an mlx array); no case in the table is one.
NUMPY_OPS = {"+=": operator.add, "-=": operator.sub, "*=": operator.mul, "/=": operator.truediv,
             "//=": operator.floordiv, "%=": operator.mod, "**=": operator.pow,
             "&=": operator.and_, "|=": operator.or_, "^=": operator.xor,
             "<<=": operator.lshift, ">>=": operator.rshift, "@=": operator.matmul}


def name(dtype):
    return str(dtype).removeprefix("mlx.core.")


def as_numpy(a):
    return np.array(a.astype(mx.float32) if a.dtype == mx.bfloat16 else a)


@pytest.mark.parametrize("case", sorted(INPLACE))
def test_inplace_operator_as_mlx(case):
    expected = FACTS["inplace"][case]
    try:
        before, after, right = INPLACE[case]()
        mx.eval(after)
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        assert type(e).__name__ == expected, e
        return
    assert after is before, "the in-place operator made a new object"
    assert name(after.dtype) == expected
    # Values against NumPy, computed in the result dtype.
    dtype, op = case.split(" ")[:2]
    left = as_numpy(mx.array([[3, 4], [5, 6]] if op == "@=" else [3, 4], getattr(mx, dtype)))
    result = name(after.dtype)
    if result in ("bfloat16", "bool") or (op == "**=" and result != "float32"):
        return
    np_dtype = np.dtype(result)
    r = np.array(right) if not isinstance(right, mx.array) else as_numpy(right)
    # MLX's floor division of complex numbers divides without flooring (NumPy refuses it).
    numpy_op = operator.truediv if op == "//=" and result == "complex64" else NUMPY_OPS[op]
    want = numpy_op(left.astype(np_dtype), r.astype(np_dtype))
    np.testing.assert_allclose(as_numpy(after), want, rtol=1e-3 if result == "float16" else 1e-6)


def test_inplace_operator_rebinds_every_reference():
    x = mx.array([1.0, 2.0])
    y = x
    ident = id(x)
    x += 1
    x *= mx.array([2.0, 3.0])
    x @= mx.eye(2)
    assert id(x) == ident and y is x
    assert y.tolist() == [4.0, 9.0]


def test_inplace_true_division_refuses_integer_arrays():
    x = mx.array([1, 2])
    with pytest.raises(ValueError, match="In place division cannot cast to non-floating point type."):
        x /= 2
    assert x.dtype == mx.int32 and x.tolist() == [1, 2]


@pytest.mark.parametrize("case", sorted(NESTED))
def test_array_from_list_holding_arrays_as_mlx(case):
    expected = FACTS["nested"][case]
    try:
        a = NESTED[case]()
    except Exception as e:  # noqa: BLE001 - the exception type is the fact
        assert type(e).__name__ == expected, e
        return
    assert isinstance(expected, dict), f"MLX raises {expected}"
    assert name(a.dtype) == expected["dtype"] and list(a.shape) == expected["shape"]
    np.testing.assert_array_equal(np.array(a.astype(mx.float32)), np.array(expected["values"], np.float32))


def test_array_from_list_holding_numpy_arrays():
    # MLX refuses NumPy arrays inside lists; lazulite takes them as it takes mx arrays.
    a = mx.array([np.array([1, 2], np.int8), [3, 4]])
    assert a.dtype == mx.int32 and a.tolist() == [[1, 2], [3, 4]]


BFLOAT16 = FACTS.get("bfloat16_numpy", {})


# Each case: the NumPy data (a function of the bfloat16 matrix) and how the array is made.
BFLOAT16_CASES = {
    "whole": (lambda b: b, lambda v: mx.array(v)),
    "strided": (lambda b: b[:, ::2], lambda v: mx.array(v)),
    "transposed": (lambda b: b.T, lambda v: mx.array(v)),
    "scalar": (lambda b: b[0, 0], lambda v: mx.array(v)),
    "as_float32": (lambda b: b, lambda v: mx.array(v, dtype=mx.float32)),
    "in_list": (lambda b: b, lambda v: mx.array([v[0], v[1]])),
}


def test_bfloat16_facts_cover_the_cases():
    if not BFLOAT16:
        pytest.skip("the facts were written without ml_dtypes")
    assert sorted(BFLOAT16) == sorted(BFLOAT16_CASES)


@pytest.mark.parametrize("case", sorted(BFLOAT16_CASES))
def test_array_from_ml_dtypes_bfloat16(case):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    b = np.array([[1.5, 2.25, -3.0], [0.1, 1e30, -0.0]], dtype=ml_dtypes.bfloat16)
    data, build = BFLOAT16_CASES[case]
    a = build(data(b))
    expected = BFLOAT16.get(case)
    if case == "in_list":
        # MLX refuses NumPy arrays inside lists; lazulite takes them.
        assert expected in (None, "ValueError")
        assert a.dtype == mx.bfloat16 and a.shape == (2, 3)
    elif expected is not None:
        assert name(a.dtype) == expected["dtype"] and list(a.shape) == expected["shape"]
        np.testing.assert_array_equal(np.array(a.astype(mx.float32)),
                                      np.array(expected["values"], np.float32))
    # NumPy's values for the same data, bit for bit.
    np.testing.assert_array_equal(np.array(a.astype(mx.float32)), data(b).astype(np.float32))


def test_copies_and_deepcopies_are_new_objects_with_independent_data():
    x = mx.array([1.0, 2.0, 3.0])
    shallow, deep = copy.copy(x), copy.deepcopy(x)
    assert shallow is not x and deep is not x
    x[0] = 9.0
    x += 1
    assert shallow.tolist() == [1.0, 2.0, 3.0] and deep.tolist() == [1.0, 2.0, 3.0]
    tree = {"w": [x, x]}
    copied = copy.deepcopy(tree)
    assert copied["w"][0] is copied["w"][1]  # the memo keeps shared leaves shared
    assert copied["w"][0] is not x and copied["w"][0].tolist() == x.tolist()


def test_weak_reference_survives_inplace_operators():
    x = mx.ones(2)
    ref = weakref.ref(x)
    x += 1
    assert ref() is x
    del x
    assert ref() is None


@pytest.mark.parametrize("dtype", FINFO_DTYPES)
def test_finfo_as_mlx(dtype):
    f, want = mx.finfo(getattr(mx, dtype)), FACTS["finfo"][dtype]
    got = {"bits": f.bits, "dtype": name(f.dtype), "eps": f.eps, "max": f.max, "min": f.min,
           "smallest_normal": f.smallest_normal, "repr": repr(f), "str": str(f)}
    assert got == want
    if dtype not in ("bfloat16", "complex64"):
        info = np.finfo(getattr(np, dtype))
        assert (f.eps, f.max, f.min, f.smallest_normal) == (
            float(info.eps), float(info.max), float(info.min), float(info.smallest_normal))


@pytest.mark.parametrize("dtype", IINFO_DTYPES)
def test_iinfo_as_mlx(dtype):
    f, want = mx.iinfo(getattr(mx, dtype)), FACTS["iinfo"][dtype]
    got = {"dtype": name(f.dtype), "max": f.max, "min": f.min, "repr": repr(f), "str": str(f)}
    assert got == want
    info = np.iinfo(getattr(np, dtype))
    assert (f.min, f.max) == (int(info.min), int(info.max))


def test_array_namespace_info_as_mlx():
    want = FACTS["namespace_info"]
    info = mx.__array_namespace_info__()
    assert info.capabilities() == want["capabilities"]
    assert str(info.default_device()) == want["default_device"]
    assert [str(d) for d in info.devices()] == want["devices"]
    assert {k: name(d) for k, d in info.default_dtypes().items()} == want["default_dtypes"]
    kinds = {str(k): k for k in [None, "bool", "signed integer", "unsigned integer", "integral",
                                 "real floating", "complex floating", "numeric",
                                 ("bool", "complex floating")]}
    assert sorted(kinds) == sorted(want["dtypes"])
    for text, kind in kinds.items():
        assert {n: name(d) for n, d in info.dtypes(kind=kind).items()} == want["dtypes"][text]
    with pytest.raises(ValueError, match="Unsupported dtype kind"):
        info.dtypes(kind="foo")
    with pytest.raises(TypeError, match="Expected a mlx Device"):
        info.dtypes(device="cpu")
    assert info.dtypes(device=mx.default_device()) == info.dtypes()


def test_array_namespace():
    a = mx.ones(2)
    assert a.__array_namespace__() is mx and a.__array_namespace__(None) is mx
    # MLX refuses any explicit version; lazulite takes the published ones.
    assert a.__array_namespace__("2023.12") is mx
    with pytest.raises(ValueError, match="Unsupported array API version"):
        a.__array_namespace__(api_version="1999.01")
    for kind in ("bool", "integral", "numeric", "real floating"):
        for dtype in mx.__array_namespace_info__().dtypes(kind=kind).values():
            assert mx.isdtype(dtype, kind)


@pytest.mark.parametrize("case", sorted(keyword_cases(mx)))
def test_keywords_accepted_where_mlx_accepts_them(case):
    expected = FACTS["keywords"][case]
    try:
        a = keyword_cases(mx)[case]()
    except TypeError:
        assert expected == "TypeError"
        return
    assert isinstance(expected, dict), f"MLX raises {expected}"
    assert name(a.dtype) == expected["dtype"] and list(a.shape) == expected["shape"]
    np.testing.assert_array_equal(np.array(a.astype(mx.float32)), np.array(expected["values"], np.float32))


def test_isdtype_as_mlx():
    got = {}
    for case, call in isdtype_cases(mx).items():
        try:
            got[case] = call()
        except Exception as e:  # noqa: BLE001 - the exception type is the fact
            got[case] = type(e).__name__
    assert got == FACTS["isdtype"]
