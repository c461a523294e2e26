"""The Python side of crates/lazulite/examples/bench_load.rs: load the same 1 GB
safetensors file and sum one tensor, with `safetensors.numpy.load_file` (reads every
tensor), with `safe_open` (reads one), or with `lazulite.core.load` (lazy, memory-mapped).
One measurement per fresh process; the Rust example creates the file.

Run: python bench_load.py [load_file|safe_open|lazulite] [path]
     (needs numpy and safetensors; `lazulite` needs lazulite.core)
"""

import resource
import sys
import time

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file

mode = sys.argv[1] if len(sys.argv) > 1 else "load_file"
path = sys.argv[2] if len(sys.argv) > 2 else "/tmp/lazulite_bench_1g.safetensors"
if mode == "lazulite":
    import lazulite.core as mx
start = time.perf_counter()
if mode == "lazulite":
    tensors = mx.load(path)
    loaded = time.perf_counter()
    total = mx.sum(tensors["t03"]).item()
elif mode == "load_file":
    tensors = load_file(path)
    loaded = time.perf_counter()
    total = np.sum(tensors["t03"], dtype=np.float64)
else:
    with safe_open(path, framework="np") as f:
        loaded = time.perf_counter()
        total = np.sum(f.get_tensor("t03"), dtype=np.float64)
used = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{mode}: load {1e3 * (loaded - start):.3f} ms; load + sum of one 64 MB tensor "
      f"{1e3 * (used - start):.1f} ms (sum {total:.6e}); peak RSS {peak:.0f} MB")
