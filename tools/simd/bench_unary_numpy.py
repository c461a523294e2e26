"""NumPy's times for the ops of `cargo run --release --example bench_unary` on 10M float32
(median of 7 runs, ms). NumPy has no erf or erfinv; sigmoid, rsqrt and reciprocal are
composed as users do.

Run: python tools/simd/bench_unary_numpy.py
"""
import time

import numpy as np

n = 10_000_000
rng = np.random.default_rng(0)
wide = rng.uniform(-3, 3, n).astype(np.float32)
positive = rng.uniform(0.01, 10, n).astype(np.float32)
unit = rng.uniform(-0.99, 0.99, n).astype(np.float32)
above_one = rng.uniform(1, 10, n).astype(np.float32)
ops = [
    ("exp", np.exp, wide), ("expm1", np.expm1, wide), ("log", np.log, positive),
    ("log1p", np.log1p, positive), ("log2", np.log2, positive), ("log10", np.log10, positive),
    ("sin", np.sin, wide), ("cos", np.cos, wide), ("tan", np.tan, wide),
    ("tanh", np.tanh, wide), ("sinh", np.sinh, wide), ("cosh", np.cosh, wide),
    ("arctan", np.arctan, wide), ("arcsin", np.arcsin, unit), ("arccos", np.arccos, unit),
    ("arcsinh", np.arcsinh, wide), ("arccosh", np.arccosh, above_one),
    ("arctanh", np.arctanh, unit),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), wide), ("sqrt", np.sqrt, positive),
    ("rsqrt", lambda x: 1 / np.sqrt(x), positive), ("floor", np.floor, wide),
    ("ceil", np.ceil, wide), ("round", np.round, wide), ("trunc", np.trunc, wide),
    ("abs", np.abs, wide), ("negative", np.negative, wide), ("square", np.square, wide),
    ("sign", np.sign, wide), ("reciprocal", lambda x: 1 / x, positive),
]
print(f"unary ops on {n} float32, median of 7 runs")
for name, f, x in ops:
    times = []
    for _ in range(7):
        start = time.perf_counter()
        f(x)
        times.append(time.perf_counter() - start)
    print(f"{name:10} {sorted(times)[3] * 1e3:8.2f} ms")
