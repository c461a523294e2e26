"""`mx.hadamard_transform` against real MLX's outputs (mlx_hadamard.json, written by
tools/mlx_reference/hadamard.py), against a NumPy Kronecker-product oracle for every
supported length kind, gradients (the transform is linear), vmap against a loop, dtypes
and errors as MLX 0.32.4."""

import json
from pathlib import Path

import numpy as np
import pytest

import lazulite.core as mx

HERE = Path(__file__).parent
MATRICES_FILE = HERE.parents[1] / "crates/lazulite/src/ops/hadamard_matrices.txt"
SMALL = {
    len(block.split()): np.array([[1.0 if c == "+" else -1.0 for c in row] for row in block.split()])
    for block in MATRICES_FILE.read_text().strip().split("\n\n")
}


def hadamard_matrix(n):
    """Kronecker product of the small matrix (m > 1) and Sylvester's matrix of 2^k."""
    m = next((m for m in (12, 20, 28) if n % m == 0 and ((n // m) & (n // m - 1)) == 0), 1)
    h = np.array([[1.0]])
    for _ in range(int(np.log2(n // m))):
        h = np.kron(h, np.array([[1.0, 1.0], [1.0, -1.0]]))
    return np.kron(SMALL[m], h) if m > 1 else h


@pytest.mark.parametrize("case", json.loads((HERE / "mlx_hadamard.json").read_text()), ids=lambda c: str(c["n"]))
def test_equals_real_mlx(case):
    got = mx.hadamard_transform(mx.array(case["input"]))
    np.testing.assert_allclose(np.array(got), np.array(case["output"]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 4, 64, 1024, 12, 48, 20, 80, 28, 112])
def test_matches_a_kronecker_oracle(n):
    x = np.random.default_rng(n).standard_normal((3, n))
    got = mx.hadamard_transform(mx.array(x, mx.float64), scale=0.5)
    np.testing.assert_allclose(np.array(got), 0.5 * x @ hadamard_matrix(n).T, rtol=1e-12, atol=1e-12)


def test_orthonormal_by_default_and_dtypes():
    x = mx.arange(8, dtype=mx.float32)
    y = mx.hadamard_transform(mx.hadamard_transform(x))
    np.testing.assert_allclose(np.array(y), np.arange(8), atol=1e-5)
    # MLX: floating dtypes kept, everything else computed in float32.
    for dtype, want in [(mx.float16, mx.float16), (mx.bfloat16, mx.bfloat16), (mx.float64, mx.float64),
                        (mx.int32, mx.float32), (mx.bool_, mx.float32), (mx.complex64, mx.float32)]:
        assert mx.hadamard_transform(mx.ones((4,), dtype)).dtype == want
    assert mx.hadamard_transform(mx.array(3.0), scale=2.0).item() == 6.0


def test_gradient_and_vmap():
    n = 24
    h = hadamard_matrix(n) / np.sqrt(n)
    w = np.random.default_rng(1).standard_normal(n)
    g = mx.grad(lambda x: (mx.hadamard_transform(x) * mx.array(w, mx.float64)).sum())(mx.zeros(n, mx.float64))
    np.testing.assert_allclose(np.array(g), h.T @ w, atol=1e-12)
    xs = np.random.default_rng(2).standard_normal((n, 5))
    got = mx.vmap(mx.hadamard_transform, in_axes=1)(mx.array(xs, mx.float64))
    np.testing.assert_allclose(np.array(got), np.stack([h @ xs[:, k] for k in range(5)]), atol=1e-12)


def test_errors_as_mlx():
    with pytest.raises(ValueError, match="Does not support empty arrays"):
        mx.hadamard_transform(mx.zeros((2, 0)))
    # MLX raises this ValueError when the result is evaluated (and computes a wrong result
    # for 36 and 72, where only part of the factorisation is checked); lazulite when called.
    for n in (3, 36, 24 * 3):
        with pytest.raises(ValueError, match=r"m\*2\^k"):
            mx.eval(mx.hadamard_transform(mx.ones((n,))))
