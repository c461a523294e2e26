"""Smaller behaviours of MLX 0.32.4 that programs meet, each checked against what real
MLX does (its results and exception classes, observed with mlx 0.32.4 on Linux)."""

import numpy as np
import pytest

import lazulite.core as mx
import lazulite.nn as nn


def test_linspace_refuses_a_negative_count():
    with pytest.raises(ValueError, match=r"\[linspace\] number of samples, -1, must be non-negative."):
        mx.linspace(0, 1, -1)
    assert mx.linspace(0, 1, 0).shape == (0,)


def test_randint_of_an_empty_interval_gives_low():
    key = mx.random.key(1)
    assert mx.random.randint(5, 2, (3,), key=key).tolist() == [5, 5, 5]
    assert mx.random.randint(5, 5, (3,), key=key).tolist() == [5, 5, 5]
    assert mx.random.randint(mx.array([1, 5]), mx.array([3, 2]), (2,), key=key).tolist()[1] == 5


def test_async_eval_inside_a_transform_raises():
    x = mx.ones(2)
    for transform in [mx.grad, mx.vmap, mx.compile]:
        def f(v):
            mx.async_eval(v * 3)
            return v.sum()
        with pytest.raises(ValueError, match=r"\[async_eval\] Not allowed inside a graph transformation."):
            transform(f)(x)
    # Arrays that do not depend on the transform's inputs may be evaluated (as in MLX).
    assert mx.grad(lambda v: (mx.async_eval(mx.ones(3)), v.sum())[1])(x).tolist() == [1.0, 1.0]
    y = x * 2
    mx.async_eval(y)
    assert y.tolist() == [2.0, 2.0]


def test_async_eval_in_a_decode_style_loop():
    # A decode-style loop: each step queued while earlier ones may still be computing.
    x, expected, history = mx.array([0.5, -1.0, 2.0]), np.array([0.5, -1.0, 2.0], np.float32), []
    for step in range(100):
        x = x * 0.5 + step
        mx.async_eval(x)
        expected = expected * np.float32(0.5) + np.float32(step)
        history.append((x, expected))
        if step % 5 == 2:
            assert history[step // 2][0].tolist() == history[step // 2][1].tolist()
    for array, values in history:
        assert array.tolist() == values.tolist()


def test_synchronize_waits_for_async_eval():
    # Two queued chains of sines over a large array: once synchronize returns, the kernel
    # profile has counted every one of their kernels.
    x = mx.random.normal((1 << 20,))
    mx.eval(x)
    mx.start_profile()
    for _ in range(2):
        y = x
        for _ in range(150):
            y = mx.sin(y)
        mx.async_eval(y)
    mx.synchronize()
    rows = mx.stop_profile()
    assert sum(r["calls"] for r in rows if r["primitive"] == "sin") == 300


FORK_AFTER_ASYNC_EVAL = """
import os, signal
import numpy as np
import lazulite.core as mx

x = mx.ones((256, 256))
expected = np.ones((256, 256), np.float32)
for _ in range(10):
    x = mx.tanh(x @ x * 0.002)
    expected = np.tanh(expected @ expected * np.float32(0.002))
mx.async_eval(x)
pid = os.fork()
if pid == 0:
    signal.alarm(60)  # a child that hangs dies, and the parent reports it
    os._exit(0 if np.allclose(np.array(x), expected, rtol=1e-5, atol=1e-6) else 1)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
assert np.allclose(np.array(x), expected, rtol=1e-5, atol=1e-6)
"""


def test_a_process_forked_after_async_eval_reads_the_arrays():
    # fork waits for queued evaluations: the child has no evaluation thread. Run in a
    # fresh interpreter, away from other libraries' threads.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FORK_AFTER_ASYNC_EVAL], timeout=120)
    assert done.returncode == 0


def test_custom_function_inside_compile_runs_on_values():
    @mx.custom_function
    def f(x):
        return x * x

    g = mx.compile(lambda x: f(x) + 1)
    x = mx.array([1.0, 2.0])
    for _ in range(3):
        y = g(x)
        mx.async_eval(y)  # the forward is Python: computed on this thread when read
        assert y.tolist() == [2.0, 5.0]


def test_compile_refuses_arguments_that_are_not_trees_of_arrays_or_constants():
    with pytest.raises(ValueError, match=r"\[compile\] Function arguments must be trees of arrays or constants"):
        mx.compile(lambda x, s: x)(mx.ones(2), object())
    with pytest.raises(ValueError, match="received type complex"):
        mx.compile(lambda x, s: x)(mx.ones(2), 1 + 2j)
    for constant in [True, 3, 1.5, "name", None]:
        assert mx.compile(lambda x, s: x * 2)(mx.ones(2), constant).tolist() == [2.0, 2.0]


@pytest.mark.parametrize("layer", [
    lambda eps: nn.LayerNorm(4, eps=eps), lambda eps: nn.RMSNorm(4, eps=eps),
    lambda eps: nn.InstanceNorm(4, eps=eps), lambda eps: nn.GroupNorm(2, 4, eps=eps),
    lambda eps: nn.BatchNorm(4, eps=eps),
])
def test_normalisation_layers_refuse_a_non_positive_eps(layer):
    for eps in [0.0, -1.0]:
        with pytest.raises(ValueError, match="'eps' must be positive"):
            layer(eps)
    layer(1e-6)


def test_assignment_values_may_have_extra_leading_ones():
    a = mx.zeros((2, 3))
    a[0] = mx.ones((1, 1, 3))
    assert a.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    a[:, 1] = mx.full((1, 2), 5.0)
    assert a.tolist() == [[1.0, 5.0, 1.0], [0.0, 5.0, 0.0]]
    with pytest.raises(ValueError):
        a[0] = mx.ones((2, 1, 3))


def test_assignment_through_a_0d_mask():
    a = mx.zeros((2,))
    a[mx.array(True)] = 5.0
    assert a.tolist() == [5.0, 5.0]
    a[mx.array(False)] = 7.0
    assert a.tolist() == [5.0, 5.0]
    b = np.zeros((2, 2), np.float32)
    b[np.True_] = np.array([1.0, 2.0])
    c = mx.zeros((2, 2))
    c[mx.array(True)] = mx.array([1.0, 2.0])
    assert np.array_equal(np.array(c), b)
