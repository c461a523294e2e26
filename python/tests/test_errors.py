"""Exception types and messages: lazulite error kinds map to MLX's exceptions."""

import pytest

import lazulite.core as mx


@pytest.mark.parametrize(
    "call, kind, message",
    [
        (lambda: mx.zeros((2, 3)) + mx.zeros((4,)), ValueError, "cannot be broadcast"),
        (lambda: mx.zeros((2, 3)).reshape(4, 2), ValueError, "reshape"),
        (lambda: mx.reshape(mx.zeros((2, 3)), (-1, -1)), ValueError, "infer one dimension"),
        (lambda: mx.transpose(mx.zeros((2, 3)), (0,)), ValueError, "Received 1 axes"),
        (lambda: mx.broadcast_to(mx.zeros((2, 3)), (3, 3)), ValueError, "broadcast"),
        (lambda: mx.zeros((-1,)), ValueError, "Negative dimensions not allowed"),
        (lambda: mx.arange(0, 10, 0), ValueError, "arange"),
        (lambda: mx.arange(True), ValueError, "bool not supported for arange"),
        (lambda: mx.arange(3, dtype=mx.bool_), ValueError, "bool not supported for arange"),
        (lambda: mx.bitwise_and(mx.zeros(2), 1), RuntimeError, "bitwise_and"),
        (lambda: -mx.array([True]), ValueError, "negative"),
        (lambda: mx.erf(mx.array([1j])), ValueError, "erf"),
        (lambda: mx.add("a", 1), ValueError, "Invalid type str received in array initialization."),
        (lambda: mx.abs([1, -2]), ValueError, "Invalid type list received in array initialization."),
        (lambda: mx.zeros(3).astype("float32"), TypeError, "Dtype"),
        (lambda: mx.zeros(3).astype(float), TypeError, "Dtype"),
        (lambda: mx.zeros(3, dtype="float32"), TypeError, None),
        (lambda: mx.zeros(3).astype(mx.floating), TypeError, None),
        (lambda: mx.zeros((2.5,)), TypeError, None),
        (lambda: mx.array(None), ValueError, "Invalid type NoneType"),
        (lambda: mx.zeros(3).item(), ValueError, r"\[convert\] Only length-1 arrays"),
        (lambda: mx.array(2**63), OverflowError, "too large"),
        (lambda: mx.arange(5)[5], IndexError, "out of bounds"),
        (lambda: mx.arange(5)[1.5], ValueError, "Cannot index mlx array using the given type."),
    ],
)
def test_exception_types(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


def test_memory_limit_is_a_guideline_as_in_mlx():
    # MLX 0.32.4: with a limit of one byte both calls still return their values.
    old = mx.set_memory_limit(1)
    try:
        assert mx.sin(mx.array(1.0)).item() == pytest.approx(0.841471, abs=1e-6)
        big = mx.sin(mx.ones((1000, 1000))) * 2
        assert big.sum().item() == pytest.approx(2e6 * 0.8414709848, rel=1e-5)
        assert mx.get_memory_limit() == 1
    finally:
        assert mx.set_memory_limit(old) == 1


def test_default_memory_limit_is_a_share_of_physical_memory():
    with open("/proc/meminfo") as f:
        total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    assert mx.get_memory_limit() == int(total * 0.8)


def test_a_block_larger_than_the_machine_raises_memory_error():
    with open("/proc/meminfo") as f:
        total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    a = mx.ones((3,))
    with pytest.raises(MemoryError):
        mx.eval(mx.zeros((total // 4096 + 1024, 1024)) + 1)
    assert a.tolist() == [1.0, 1.0, 1.0]


def test_inputs_survive_errors():
    a = mx.array([1, 2, 3], mx.uint8)
    with pytest.raises(ValueError):
        a + 300
    assert a.tolist() == [1, 2, 3] and a.dtype == mx.uint8


@pytest.mark.parametrize("window", ["bartlett", "blackman", "hamming", "hanning"])
def test_window_lengths_beyond_a_c_int_are_type_errors(window):
    # MLX reads M as a C int and refuses larger values before computing anything.
    with pytest.raises(TypeError):
        getattr(mx, window)(2**31)
    with pytest.raises(TypeError):
        getattr(mx, window)(2.0)
    assert getattr(mx, window)(5).shape == (5,)


def test_split_counts_beyond_a_c_int_are_type_errors():
    with pytest.raises(TypeError):
        mx.split(mx.array([]), 2**31)


def test_split_of_an_empty_axis_into_many_parts():
    # Many parts of an empty axis share one slice instead of recording a node each.
    parts = mx.split(mx.array([]), 2**20)
    assert len(parts) == 2**20 and parts[0].shape == (0,) and parts[-1].shape == (0,)
    assert [p.shape for p in mx.split(mx.zeros((0, 3)), 3)] == [(0, 3)] * 3


def test_equality_with_none_is_a_type_error():
    # MLX's binding has no overload taking None for == and !=.
    a = mx.array([1, 2])
    with pytest.raises(TypeError):
        a == None  # noqa: E711
    with pytest.raises(TypeError):
        a != None  # noqa: E711
    assert (a == "x") is False and (a != "x") is True
