"""einsum_path against real MLX 0.32.4 (facts in mlx_einsum_path.json, written by
tools/mlx_reference/einsum_path.py from the table in einsum_path_cases.py): the same
path, the same report text, the same exception class and message. einsum contracts in
the order of that path; its values are checked against NumPy on the same table."""

import builtins
import json
from pathlib import Path

import numpy as np
import pytest
from einsum_path_cases import CASES

import lazulite.core as mx

FACTS = json.loads((Path(__file__).parent / "mlx_einsum_path.json").read_text())


def operands(shapes):
    return [mx.broadcast_to(mx.array(1.0), s) for s in shapes]


def test_the_table_and_the_facts_cover_the_same_calls():
    assert [(f["subscripts"], [tuple(s) for s in f["shapes"]]) for f in FACTS] == [
        (s, [tuple(x) for x in shapes]) for s, shapes in CASES
    ]


@pytest.mark.parametrize("fact", FACTS, ids=[f"{i}:{f['subscripts']}" for i, f in enumerate(FACTS)])
def test_einsum_path_matches_mlx(fact):
    args = operands(fact["shapes"])
    if "raises" in fact:
        with pytest.raises(getattr(builtins, fact["raises"])) as info:
            mx.einsum_path(fact["subscripts"], *args)
        assert type(info.value).__name__ == fact["raises"]
        assert str(info.value) == fact["message"]
        return
    path, report = mx.einsum_path(fact["subscripts"], *args)
    assert isinstance(path, list) and all(isinstance(step, tuple) for step in path)
    assert [list(step) for step in path] == fact["path"]
    assert report == fact["report"]


def small(fact):
    return "raises" not in fact and all(np.prod(s) < 10_000 for s in fact["shapes"])


@pytest.mark.parametrize("fact", [f for f in FACTS if small(f)], ids=lambda f: f["subscripts"])
def test_einsum_in_path_order_matches_numpy(fact):
    rng = np.random.default_rng(7)
    xs = [rng.normal(size=s).astype(np.float32) for s in fact["shapes"]]
    expected = np.einsum(fact["subscripts"].replace(" ", ""), *[x.astype(np.float64) for x in xs])
    got = mx.einsum(fact["subscripts"], *[mx.array(x) for x in xs])
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-4, atol=1e-4)


def test_einsum_raises_what_einsum_path_raises_under_its_own_name():
    a = mx.zeros((2, 3))
    with pytest.raises(ValueError, match=r"^\[einsum\] Dimensions of repeated subscripts do not have the same size \(2 != 3\)\.$"):
        mx.einsum("ii", a)
    with pytest.raises(ValueError, match=r"^\[einsum_path\] Dimensions of repeated"):
        mx.einsum_path("ii", a)


def test_an_output_letter_no_input_has_is_an_error():
    # MLX returns a path for it (and its einsum fails later with an unrelated message).
    with pytest.raises(ValueError, match="Output subscript 'k' does not appear"):
        mx.einsum_path("ij->k", mx.zeros((2, 3)))


def test_huge_sizes_count_exactly_where_64_bits_would_wrap():
    n = 2**20
    a = mx.broadcast_to(mx.array(1.0), (n, n))
    path, report = mx.einsum_path("ij,jk,kl", a, a, a)
    # Naive: n^4 elements, times 2 (three terms) + 1 (j and k are summed). Each of the
    # two steps: n^3 elements, times 1 + 1. MLX's 64-bit counts wrap to 0 here.
    assert f"      Naive FLOP count:  {n**4 * 3}\n" in report
    assert f"  Optimized FLOP count:  {n**3 * 4}\n" in report
    assert path == [(0, 1), (0, 1)]


def test_counts_saturate_beyond_128_bits():
    a = mx.broadcast_to(mx.array(True), (2**29, 2**30))
    _, report = mx.einsum_path("ab,cd,ef->", a, a, a)
    assert f"Naive FLOP count:  {2**128 - 1}\n" in report


def test_operands_must_be_arrays():
    with pytest.raises((TypeError, ValueError)):
        mx.einsum_path("ij", "not an array")
