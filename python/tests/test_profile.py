"""The kernel profile: `start_profile` / `stop_profile` count every kernel evaluation runs,
by primitive and output shapes, and time them."""

import time

import numpy as np

import lazulite.core as mx


def operands():
    # Shapes no other test in this process evaluates while the profile runs.
    a = mx.array(np.full((7, 13), 0.5, np.float32))
    b = mx.array(np.full((13, 5), 0.25, np.float32))
    mx.eval(a, b)
    return a, b


def calls(rows, primitive, shape, dtype=mx.float32):
    return sum(r["calls"] for r in rows
               if r["primitive"] == primitive and r["outputs"] == [(shape, dtype)])


def test_profile_counts_each_kernel_by_primitive_and_shape():
    a, b = operands()
    mx.start_profile()
    start = time.perf_counter()
    product = a @ b
    mx.eval([product + i for i in range(3)], (product > 1).astype(mx.int32))
    wall = time.perf_counter() - start
    rows = mx.stop_profile()
    mx.eval(product - 1)
    assert calls(rows, "matmul", (7, 5)) == 1
    assert calls(rows, "add", (7, 5)) == 3
    assert calls(rows, "greater", (7, 5), mx.bool_) == 1
    assert calls(rows, "astype", (7, 5), mx.int32) == 1
    assert calls(rows, "subtract", (7, 5)) == 0
    seconds = [r["seconds"] for r in rows]
    assert seconds == sorted(seconds, reverse=True)
    assert 0 < sum(seconds) <= wall
    assert mx.stop_profile() == []


def test_starting_again_drops_the_rows_so_far():
    a, b = operands()
    mx.start_profile()
    mx.eval(a @ b)
    mx.start_profile()
    mx.eval(a * 3)
    rows = mx.stop_profile()
    assert calls(rows, "matmul", (7, 5)) == 0
    assert calls(rows, "multiply", (7, 13)) == 1


def test_kernels_on_the_async_evaluation_thread_are_counted():
    a, _ = operands()
    mx.start_profile()
    queued = mx.exp(a)
    mx.async_eval(queued)
    mx.eval(queued)
    rows = mx.stop_profile()
    assert calls(rows, "exp", (7, 13)) == 1
