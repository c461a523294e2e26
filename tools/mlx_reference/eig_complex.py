"""Writes python/tests/mlx_eig_complex.json: `mx.linalg.eig` and `mx.linalg.eigvals` of
real MLX 0.32.4 (LAPACK `cgeev` on the CPU stream, single precision) on complex64
matrices, and `zgeev` (double precision) of the LAPACK that MLX ships, called as MLX calls
`cgeev`: on the row-major buffer, that is on the transpose, eigenvalues and left
eigenvectors. lazulite decomposes complex64 input in double precision, so `zgeev` is the
oracle for its eigenvalue order and eigenvector phases; MLX's own results differ from it by
single-precision rounding (which can reorder the eigenvalues). Complex numbers are stored
as [re, im] pairs. Run with a Python that has mlx (and its mlx-cpu libraries):

    python tools/mlx_reference/eig_complex.py
"""

import ctypes
import json
from pathlib import Path

import mlx.core as mx
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "python/tests/mlx_eig_complex.json"
rng = np.random.default_rng(2024)


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def hermitian(n):
    m = cplx(n, n)
    return m + m.conj().T


def non_normal(n):
    # Upper triangular plus a small lower part: far from normal, eigenvalues well apart.
    return np.triu(cplx(n, n)) + np.diag(np.arange(n) * 2.0) + 0.1 * np.tril(cplx(n, n), -1)


def graded(n):
    # Rows and columns scaled over six orders of magnitude: balancing matters.
    d = 10.0 ** np.linspace(-3, 3, n)
    return d[:, None] * cplx(n, n) / d[None, :]


CASES = {
    "random 4x4": cplx(4, 4),
    "random 6x6": cplx(6, 6),
    "batched 2x3x3": cplx(2, 3, 3),
    "one by one": cplx(1, 1),
    "hermitian 4x4": hermitian(4),
    "non-normal 5x5": non_normal(5),
    "graded 5x5": graded(5),
    "real rotation": np.array([[0.0, -1.0], [1.0, 0.0]]) + 0j,
    "real 4x4": rng.standard_normal((4, 4)) + 0j,
    "block triangular": np.block([[cplx(2, 2), cplx(2, 2)], [np.zeros((2, 2)), cplx(2, 2)]]),
}


# The LAPACK that libmlx links, from the mlx-cpu wheel (reference LAPACK 3.10).
LAPACK = ctypes.CDLL(str(next(Path(mx.__file__).parents[1].glob("mlx_cpu.libs/liblapack*"))))


def zgeev_on_transpose(a):
    """Eigenvalues and left eigenvectors (columns) of the transpose of `a`, in float64."""
    n = a.shape[-1]
    buffer = np.asfortranarray(a.T.astype(np.complex128))
    w = np.zeros(n, np.complex128)
    vl = np.zeros((n, n), np.complex128, order="F")
    vr = np.zeros(1, np.complex128)
    lwork = 4 * n * n + 64
    work = np.zeros(lwork, np.complex128)
    rwork = np.zeros(2 * n)
    i = ctypes.c_int
    info = i(0)
    ptr = lambda x: x.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    LAPACK.zgeev_(b"V", b"N", ctypes.byref(i(n)), ptr(buffer), ctypes.byref(i(n)), ptr(w), ptr(vl),
                  ctypes.byref(i(n)), ptr(vr), ctypes.byref(i(1)), ptr(work), ctypes.byref(i(lwork)),
                  ptr(rwork), ctypes.byref(info))
    assert info.value == 0
    return w, vl


def pairs(x):
    x = np.asarray(x)
    return np.stack([x.real, x.imag], axis=-1).tolist()


cases = []
for name, a in CASES.items():
    a = a.astype(np.complex64)
    w, v = mx.linalg.eig(mx.array(a), stream=mx.cpu)
    values = mx.linalg.eigvals(mx.array(a), stream=mx.cpu)
    flat = a.reshape(-1, *a.shape[-2:])
    double = [zgeev_on_transpose(m) for m in flat]
    w64 = np.stack([d[0] for d in double]).reshape(a.shape[:-1])
    vl64 = np.stack([d[1] for d in double]).reshape(a.shape)
    cases.append({"name": name, "a": pairs(a), "w": pairs(w), "v": pairs(v), "eigvals": pairs(values),
                  "zgeev_w": pairs(w64), "zgeev_vl": pairs(vl64)})
OUT.write_text(json.dumps(cases))
print(f"wrote {OUT}")
