"""What one call costs from Python: lazulite next to MLX, op by op.

Each statement builds a lazy array and drops it (nothing is evaluated), so the figure is
the binding, the recording of the graph node and its freeing: the per-op cost a Python
loop of small ops pays. Both libraries run in this process, alternating statement by
statement; a figure is the best of 5 repeats of 5,000 calls, in nanoseconds.

    bash bench/setup.sh
    .venv-bench/bin/python bench/record.py
"""

from __future__ import annotations

import timeit

import lazulite.core as lz

try:
    import mlx.core as mlx
except ImportError:  # the table then has lazulite alone
    mlx = None

STATEMENTS = [
    "x + y", "x + 1.0", "x * 2", "x / 3", "x ** 2", "-x", "mx.exp(x)", "mx.sqrt(x)",
    "mx.maximum(x, 0.0)", "mx.clip(x, 0, 1)", "mx.where(b, x, y)", "x.astype(mx.float16)",
    "x.sum()", "x.sum(axis=1)", "mx.sum(x, axis=-1, keepdims=True)", "x.mean(axis=0)",
    "mx.argmax(x, axis=-1)", "mx.softmax(x, axis=-1)", "mx.logsumexp(x, axis=-1)",
    "x @ y.T", "mx.matmul(x, y.T)", "x.T", "x.transpose(1, 0)", "x.reshape(-1)",
    "x.reshape((4, 128))", "x.flatten()", "mx.expand_dims(x, 0)", "mx.squeeze(x[None])",
    "mx.broadcast_to(x[:1], (8, 64))", "x[0]", "x[:, 1:3]", "x[i]", "x[None]",
    "mx.take(x, i, axis=0)", "mx.concatenate([x, y], axis=0)", "mx.stack([x, y])",
    "mx.split(x, 2, axis=1)", "mx.zeros((8, 64))", "mx.arange(10)", "mx.array(3.0)",
    "mx.array([1.0, 2.0, 3.0])", "mx.random.normal((4,))",
    "x.shape", "x.dtype", "x.ndim", "x.size",
]


def operands(mx) -> dict:
    x = mx.zeros((8, 64), dtype=mx.float32)
    y = mx.ones((8, 64))
    i = mx.array([1, 2, 3])
    b = x > 0
    mx.eval(x, y, i, b)
    return {"mx": mx, "x": x, "y": y, "i": i, "b": b}


def nanoseconds(statement: str, names: dict, number: int = 5_000) -> float:
    return min(timeit.repeat(statement, globals=names, number=number, repeat=5)) / number * 1e9


def main() -> None:
    libraries = {"lazulite": operands(lz)}
    if mlx is not None:
        libraries["mlx"] = operands(mlx)
    print("| call | " + " | ".join(f"{name} ns" for name in libraries) + " | ratio |")
    print("|---|" + "---:|" * (len(libraries) + 1))
    slower = 0
    for statement in STATEMENTS:
        times = {name: nanoseconds(statement, names) for name, names in libraries.items()}
        ratio = times["lazulite"] / times["mlx"] if "mlx" in times else float("nan")
        slower += ratio > 1
        cells = " | ".join(f"{t:.0f}" for t in times.values())
        print(f"| `{statement}` | {cells} | {ratio:.2f} |")
    if mlx is not None:
        print(f"\nlazulite / MLX above 1 for {slower} of {len(STATEMENTS)} calls")


if __name__ == "__main__":
    main()
