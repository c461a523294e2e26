"""Draws docs/images/benchmarks.svg: lazulite's speed relative to NumPy, JAX and MLX on a
selection of workloads, from the latest side-by-side table in docs/benchmarks.md (the
first table there whose columns are workload | lazulite | numpy | jax | mlx | ratio,
which is what `bench/compare.py` prints).

    .venv-bench/bin/python bench/chart.py            # the selection below
    .venv-bench/bin/python bench/chart.py --all      # every workload of the table

(`bash bench/setup.sh` installs matplotlib into .venv-bench; `bench/compare.py --write`
runs this after writing the table.)

Each bar is (peer's median time) / (lazulite's median time), drawn from 1: to the right,
lazulite is that many times faster; to the left, slower. A missing bar: the peer lacks
the workload (n/a in the table). The axis is logarithmic. The output is reproducible
(no date, fixed ids), so an unchanged table gives an unchanged file.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "benchmarks.md"
OUT = ROOT / "docs" / "images" / "benchmarks.svg"
PEERS = ["numpy", "jax", "mlx"]
HEADER = ["workload", "lazulite", "numpy", "jax", "mlx", "ratio"]
SELECTION = [
    "matmul float32 1024",
    "matmul float32 2048",
    "matmul bfloat16 2048",
    "exp 10M f32",
    "sin 10M f32",
    "tanh 10M f32",
    "add 10M f32",
    "chain 10M f32",
    "sum 10M",
    "max 10M",
    "softmax rows 4096^2",
    "sort 1M",
    "cumsum 10M",
    "transpose + add 4096^2",
    "conv2d 8x64x64x64 -> 64, 3x3 pad 1",
    "fft 2^20 f32",
    "grad sum(sin(x)) 10M f32",
    "MLP 784-512-512-10 value_and_grad+SGD b256",
    "10000 chained scalar adds",
]


def read_table(text: str) -> dict[str, dict[str, float | None]]:
    """The first figures table of `text`: workload -> {library: median ms or None}."""
    rows: dict[str, dict[str, float | None]] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if [c.strip() for c in line.strip().strip("|").split("|")] == HEADER:
            break
    else:
        raise ValueError("no table with columns " + " | ".join(HEADER))
    next(lines)  # the |---| line
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        figures = {}
        for name, cell in zip(HEADER[1:5], cells[1:5]):
            try:
                figures[name] = float(cell)
            except ValueError:
                figures[name] = None  # n/a: the library lacks the workload
        rows[cells[0]] = figures
    return rows


def speedups(rows, workloads):
    """For each workload, peer time / lazulite time per peer (None where missing)."""
    out = []
    for w in workloads:
        if w not in rows:
            raise KeyError(f"workload {w!r} is not in the table of {TABLE.name}")
        r = rows[w]
        out.append((w, [r[p] / r["lazulite"] if r[p] and r["lazulite"] else None for p in PEERS]))
    return out


def draw(data, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "lazulite"
    plt.rcParams["svg.fonttype"] = "none"
    height = 0.36 * len(data) + 1.4
    fig, ax = plt.subplots(figsize=(8, height))
    bar = 0.27
    colours = {"numpy": "#4c72b0", "jax": "#55a868", "mlx": "#c44e52"}
    for k, peer in enumerate(PEERS):
        ys = [i + (k - 1) * bar for i in range(len(data))]
        xs = [s[k] if s[k] is not None else math.nan for _, s in data]
        # Bars start at 1 (as fast as the peer): right for faster, left for slower.
        widths = [x - 1.0 for x in xs]
        ax.barh(ys, widths, left=1.0, height=bar, color=colours[peer], label=f"vs {peer}")
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(data)), [w for w, _ in data], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("peer time / lazulite time (log scale; > 1: lazulite faster)")
    ax.set_title("lazulite against NumPy, JAX (jit) and MLX (CPU), median times", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # No date, creator or document type: the file changes only when the figures do, and
    # it names no address outside the repository (the SVG namespace aside).
    fig.savefig(path, format="svg",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    plt.close(fig)
    text = path.read_text()
    text = re.sub(r"<!DOCTYPE[^>]*>\n", "", text)
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="every workload of the table")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = read_table(TABLE.read_text())
    workloads = list(rows) if args.all else SELECTION
    draw(speedups(rows, workloads), args.out)
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
