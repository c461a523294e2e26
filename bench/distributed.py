"""all_sum bandwidth: lazulite's `mx.distributed.all_sum` next to the same reduction made
through mpi4py on NumPy arrays (MPI's own speed, the ceiling), over 2 and 4 processes.

    bash bench/setup.sh && .venv-bench/bin/python bench/distributed.py

Run without arguments it launches itself under `mpirun` for each process count and
prints one table. Each size is timed in turns (lazulite, then mpi4py, repeated) and the
median is reported as bandwidth: bytes of the array / seconds per call. Ratios above 1
mean lazulite moves data faster than the direct MPI call.
"""

import os
import statistics
import subprocess
import sys
import time

# Array sizes in bytes: one element (latency), then 1, 64 and 256 MB (bandwidth).
SIZES = [4, 1 << 20, 64 << 20, 256 << 20]
REPEATS = {4: 200, 1 << 20: 30, 64 << 20: 7, 256 << 20: 5}


def worker():
    import numpy as np
    from mpi4py import MPI

    import lazulite.core as mx

    group = mx.distributed.init(strict=True)
    comm = MPI.COMM_WORLD
    rows = []
    for size in SIZES:
        n = size // 4
        # Materialised data on both sides (mx.ones would be a broadcast scalar, copied
        # into a contiguous buffer by every call).
        x = mx.random.uniform(shape=(n,))
        a = np.random.default_rng(0).random(n, dtype=np.float32)
        out = np.empty_like(a)
        mx.eval(x)

        def run_lazulite():
            mx.eval(mx.distributed.all_sum(x))

        def run_mpi4py():
            comm.Allreduce(a, out, op=MPI.SUM)

        times = {"lazulite": [], "mpi4py": []}
        for f in (run_lazulite, run_mpi4py):
            f()  # warm-up: first-touch pages, connections
        for _ in range(REPEATS[size]):
            for name, f in (("lazulite", run_lazulite), ("mpi4py", run_mpi4py)):
                comm.Barrier()
                start = time.perf_counter()
                f()
                elapsed = time.perf_counter() - start
                times[name].append(comm.allreduce(elapsed, op=MPI.MAX))
        rows.append((size, statistics.median(times["lazulite"]), statistics.median(times["mpi4py"])))
    if group.rank() == 0:
        for size, lz, ref in rows:
            if size < 1 << 20:
                print(f"| {group.size()} | 1 element | {lz * 1e6:.1f} µs | {ref * 1e6:.1f} µs | {ref / lz:.2f}x |")
            else:
                gb = size / (1 << 30)
                print(f"| {group.size()} | {size >> 20} MB | {gb / lz:.2f} GB/s | {gb / ref:.2f} GB/s | {ref / lz:.2f}x |")
        sys.stdout.flush()


def main():
    if os.environ.get("OMPI_COMM_WORLD_SIZE"):
        worker()
        return
    print("all_sum of float32, median over turns (GB/s = array bytes / time per call)")
    print("| processes | size | lazulite | mpi4py | mpi4py time / lazulite time |")
    print("|---|---|---|---|---|")
    for n in [2, 4]:
        subprocess.run(
            [sys.executable, "-m", "lazulite.launch", "-n", str(n), __file__],
            check=True,
        )


if __name__ == "__main__":
    main()
