"""Members of `mx.array` as real MLX 0.32.4 has them (python/tests/mlx_array_protocol.json,
written by tools/mlx_reference/array_protocol.py): `mT`, `bytes(a)`, the pickle state,
`__div__`/`__rdiv__`, `del a[i]` and the reflected bitwise operators give MLX's results
and exceptions; values are also checked against NumPy."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import array_protocol_cases as cases
import lazulite.core as mx

MLX = json.loads((Path(__file__).parent / "mlx_array_protocol.json").read_text())
CALLS = cases.calls(mx)

# Members lazulite's array has and MLX's lacks, each kept because it only adds to what an
# MLX program can do (docs/differences.md):
EXTRA_MEMBERS = {
    # Dataflow placeholders take new values.
    "assign",
    # `x @ a` for an operand Python tries the right side for (one that converts to an
    # array but whose own `@` gives up); MLX raises TypeError.
    "__rmatmul__",
    # Slot wrappers CPython lists for the binary operators and item assignment; they
    # decline (`1 & a` is a TypeError) or raise MLX's AttributeError (`del a[0]`).
    "__rand__", "__ror__", "__rxor__", "__rlshift__", "__rrshift__", "__delitem__",
}


def test_members_are_mlx_members():
    ours = set(dir(mx.array))
    assert set(MLX["members"]) - ours == set()
    assert ours - set(MLX["members"]) == EXTRA_MEMBERS


def test_every_call_has_an_mlx_outcome():
    assert set(MLX["calls"]) == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_outcome_is_mlx_outcome(name):
    got = cases.outcome(CALLS[name])
    assert got == MLX["calls"][name]


@pytest.mark.parametrize("name", sorted(cases.arrays(mx)))
def test_bytes_are_numpy_row_major_bytes(name):
    a = cases.arrays(mx)[name]
    if a.dtype == mx.bfloat16:
        expected = np.array(a.view(mx.uint16)).tobytes()
    else:
        expected = np.ascontiguousarray(np.array(a)).tobytes()
    assert bytes(a) == expected


@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (1, 1), (2, 0, 5)])
def test_matrix_transpose_is_numpy_swapaxes(shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(np.array(mx.array(x).mT), np.swapaxes(x, -1, -2))


def test_division_by_name_is_true_division():
    x = np.array([1, 2, 4], np.int32)
    np.testing.assert_allclose(np.array(mx.array(x).__div__(3)), x / 3, rtol=1e-6)
    np.testing.assert_allclose(np.array(mx.array(x).__rdiv__(3)), 3 / x, rtol=1e-6)


def test_state_restores_into_any_array():
    # MLX restores a state only into the uninitialised array its unpickling makes;
    # lazulite's arrays take one whatever they hold, the object keeping its identity.
    a = mx.array([[1.0, 2.0]], mx.bfloat16)
    b = mx.zeros((3,))
    b.__setstate__(a.__getstate__())
    assert b.dtype == mx.bfloat16 and b.tolist() == [[1.0, 2.0]]
    assert pickle.loads(pickle.dumps(b)).tolist() == [[1.0, 2.0]]
