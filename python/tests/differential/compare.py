"""Compares the outcome of a case on real MLX with its outcome on lazulite.

`difference(case, mlx, ours)` returns None when they agree, else (kind, detail), kind one
of: missing (lazulite lacks the function), raises-only-mlx, raises-only-lazulite,
exception-class, structure, dtype, shape, value, mlx-crash.
"""

import numpy as np

# Relative tolerance by dtype; "loose" checks (products, decompositions, transforms over
# several ops) allow more.
RTOL = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-5, "complex64": 1e-5, "float64": 1e-12}
LOOSE = {"float16": 2e-2, "bfloat16": 5e-2, "float32": 2e-4, "complex64": 2e-4, "float64": 1e-9}


def exception_matches(mlx_class, mlx_kinds, our_class, our_kinds):
    if mlx_class == our_class:
        return True
    # lazulite's AxisError is both a ValueError and an IndexError.
    if our_class == "AxisError" and mlx_class in ("ValueError", "IndexError"):
        return True
    return False


def difference(case, mlx, ours):
    if mlx[0] == "crash":
        return ("mlx-crash", mlx[1])
    if ours[0] == "missing":
        return ("missing", ours[1])
    if mlx[0] == "raise" and ours[0] == "raise":
        if exception_matches(mlx[1], mlx[3], ours[1], ours[3]):
            return None
        return ("exception-class", f"MLX {mlx[1]}: {mlx[2][:120]} | lazulite {ours[1]}: {ours[2][:120]}")
    if mlx[0] == "raise":
        return ("raises-only-mlx", f"MLX {mlx[1]}: {mlx[2][:160]}")
    if ours[0] == "raise":
        return ("raises-only-lazulite", f"lazulite {ours[1]}: {ours[2][:160]}")
    return compare_records(mlx[1], ours[1], case.check, "")


def compare_records(m, o, check, path):
    if m[0] != o[0]:
        return ("structure", f"{path}: MLX gives {m[0]}, lazulite {o[0]}")
    kind = m[0]
    if kind == "array":
        return compare_arrays(m, o, check, path)
    if kind in ("list", "tuple"):
        if len(m[1]) != len(o[1]):
            return ("structure", f"{path}: {len(m[1])} items from MLX, {len(o[1])} from lazulite")
        for i, (a, b) in enumerate(zip(m[1], o[1])):
            d = compare_records(a, b, check, f"{path}[{i}]")
            if d:
                return d
        return None
    if kind == "dict":
        if [k for k, _ in m[1]] != [k for k, _ in o[1]]:
            return ("structure", f"{path}: keys {[k for k, _ in m[1]]} vs {[k for k, _ in o[1]]}")
        for (k, a), (_, b) in zip(m[1], o[1]):
            d = compare_records(a, b, check, f"{path}[{k!r}]")
            if d:
                return d
        return None
    if kind == "py":
        if m[1] != o[1]:
            return ("structure", f"{path}: MLX gives {m[1]} {m[2]!r}, lazulite {o[1]} {o[2]!r}")
        if m[1] == "float" and check in ("loose", "value"):
            if np.isclose(m[2], o[2], rtol=LOOSE["float32"] if check == "loose" else 1e-6, equal_nan=True):
                return None
        if m[2] != o[2] and check != "shape":
            return ("value", f"{path}: MLX {m[2]!r}, lazulite {o[2]!r}")
        return None
    if kind == "dtype":
        return None if m[1] == o[1] else ("dtype", f"{path}: MLX {m[1]}, lazulite {o[1]}")
    if kind == "object":
        if m[1] != o[1]:
            return ("structure", f"{path}: MLX gives a {m[1]}, lazulite a {o[1]}")
        if check != "shape" and m[2] != o[2]:
            return ("value", f"{path}: MLX {m[2][:80]!r}, lazulite {o[2][:80]!r}")
        return None
    return None


def compare_arrays(m, o, check, path):
    _, mdt, mshape, mv = m
    _, odt, oshape, ov = o
    if mdt != odt:
        return ("dtype", f"{path}: MLX {mdt}, lazulite {odt}")
    if tuple(mshape) != tuple(oshape):
        return ("shape", f"{path}: MLX {tuple(mshape)}, lazulite {tuple(oshape)}")
    if check == "shape":
        return None
    mv, ov = np.asarray(mv), np.asarray(ov)
    if check == "sorted-last" and mv.ndim:
        key = (lambda v: np.sort_complex(v.reshape(-1, v.shape[-1]))) if np.iscomplexobj(mv) else (lambda v: np.sort(v, axis=-1))
        mv, ov = key(mv), key(ov)
    if check == "partition":
        return None  # shape and dtype only: any valid partition is right; values checked by the test of the ops
    if check == "sign-free" and mv.ndim >= 1 and mv.dtype.kind in "fc":
        mv, ov = np.abs(mv), np.abs(ov)
    if mv.dtype.kind in "fc":
        tol = (LOOSE if check in ("loose", "sign-free", "sorted-last") else RTOL).get(mdt, 1e-5)
        if check == "float32-math":
            tol = LOOSE["float32"]
        finite = np.isfinite(mv)
        scale = max(1.0, float(np.max(np.abs(mv[finite])))) if finite.any() else 1.0
        with np.errstate(invalid="ignore"):
            same = np.isclose(ov, mv, rtol=tol, atol=tol * scale, equal_nan=True)
        if same.all():
            return None
        bad = np.argwhere(~same)[0] if mv.ndim else ()
        idx = tuple(int(i) for i in bad)
        return ("value", f"{path}: at {idx} MLX {mv[idx]!r}, lazulite {ov[idx]!r} ({mdt})")
    if not np.array_equal(mv, ov):
        diff = np.argwhere(mv != ov)
        idx = tuple(int(i) for i in diff[0]) if mv.ndim and len(diff) else ()
        return ("value", f"{path}: at {idx} MLX {mv[idx]!r}, lazulite {ov[idx]!r} ({mdt})")
    return None
