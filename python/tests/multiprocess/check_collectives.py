"""Collectives and point-to-point messages, run by every process of an ``mpirun`` job
(see ``test_distributed.py``, which launches this file under 2 and 4 processes).

Every process runs the same tests in the same order, so their collectives line up.
Each process makes its input from its rank; the expected values are computed with
NumPy from every rank's input, which each process can regenerate.
"""

import numpy as np
import pytest

import lazulite.core as mx

WORLD = mx.distributed.init(strict=True)
RANK, SIZE = WORLD.rank(), WORLD.size()

DTYPES = {
    "bool": (mx.bool_, np.bool_),
    "int8": (mx.int8, np.int8),
    "uint8": (mx.uint8, np.uint8),
    "int16": (mx.int16, np.int16),
    "uint16": (mx.uint16, np.uint16),
    "int32": (mx.int32, np.int32),
    "uint32": (mx.uint32, np.uint32),
    "int64": (mx.int64, np.int64),
    "uint64": (mx.uint64, np.uint64),
    "float16": (mx.float16, np.float16),
    "bfloat16": (mx.bfloat16, np.float32),
    "float32": (mx.float32, np.float32),
    "float64": (mx.float64, np.float64),
    "complex64": (mx.complex64, np.complex64),
}
SHAPES = [(), (0,), (1,), (7,), (1024,), (3, 0, 2), (5, 3)]


def data(rank, shape, dtype_name, seed=0):
    """Rank ``rank``'s input: small values, exact in every dtype."""
    rng = np.random.default_rng([seed, rank, len(shape)] + list(shape))
    values = rng.integers(-8, 9, size=shape)
    np_dtype = DTYPES[dtype_name][1]
    if dtype_name == "bool":
        return values > 0
    if dtype_name.startswith("uint"):
        values = np.abs(values)
    if dtype_name == "complex64":
        return (values + 1j * rng.integers(-8, 9, size=shape)).astype(np_dtype)
    return values.astype(np_dtype)


def to_mx(values, dtype_name):
    return mx.array(values).astype(DTYPES[dtype_name][0])


def to_np(a):
    if a.dtype == mx.bfloat16:
        a = a.astype(mx.float32)
    return np.array(a)


def every_rank(shape, dtype_name, ranks=None, seed=0):
    return [data(r, shape, dtype_name, seed) for r in (ranks if ranks is not None else range(SIZE))]


def reduce_np(inputs, how):
    if inputs[0].dtype == np.complex64 and how != "sum":
        # lazulite orders complex numbers by real part, then imaginary part.
        keys = np.stack([np.stack([x.real, x.imag], -1) for x in inputs])
        pick = np.lexsort((keys[..., 1], keys[..., 0]), axis=0)
        index = pick[-1] if how == "max" else pick[0]
        return np.take_along_axis(np.stack(inputs), index[None], 0)[0]
    if inputs[0].dtype == np.bool_:
        return {"sum": np.logical_or, "max": np.logical_or, "min": np.logical_and}[how].reduce(inputs)
    fn = {"sum": np.add, "max": np.maximum, "min": np.minimum}[how]
    out = inputs[0]
    for x in inputs[1:]:
        out = fn(out, x, dtype=out.dtype) if how == "sum" else fn(out, x)
    return out


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("how", ["sum", "max", "min"])
def test_all_reduce_every_dtype_and_shape(dtype_name, how):
    op = {"sum": mx.distributed.all_sum, "max": mx.distributed.all_max, "min": mx.distributed.all_min}[how]
    for shape in SHAPES:
        out = op(to_mx(data(RANK, shape, dtype_name), dtype_name))
        assert out.dtype == DTYPES[dtype_name][0] and out.shape == shape
        np.testing.assert_array_equal(to_np(out), reduce_np(every_rank(shape, dtype_name), how))


def test_all_sum_large_and_strided():
    x = data(RANK, (1024, 1024), "float32")
    np.testing.assert_array_equal(np.array(mx.distributed.all_sum(mx.array(x))), sum(every_rank((1024, 1024), "float32")))
    # A transposed view and a slice are sent as their logical values.
    t = mx.array(x).T[::2]
    expected = sum(e.T[::2] for e in every_rank((1024, 1024), "float32"))
    np.testing.assert_array_equal(np.array(mx.distributed.all_sum(t)), expected)


def test_all_sum_keeps_the_input_when_it_is_still_used():
    x = mx.array(data(RANK, (16,), "float32"))
    mx.eval(x)
    total = mx.distributed.all_sum(x)
    mx.eval(total)
    np.testing.assert_array_equal(np.array(x), data(RANK, (16,), "float32"))
    np.testing.assert_array_equal(np.array(total), sum(every_rank((16,), "float32")))


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_all_gather_every_dtype_and_shape(dtype_name):
    for shape in SHAPES:
        out = mx.distributed.all_gather(to_mx(data(RANK, shape, dtype_name), dtype_name))
        parts = every_rank(shape, dtype_name)
        expected = np.stack(parts) if shape == () else np.concatenate(parts)
        assert out.dtype == DTYPES[dtype_name][0]
        np.testing.assert_array_equal(to_np(out), expected)


@pytest.mark.parametrize("dtype_name", ["int32", "float16", "bfloat16", "float32", "complex64"])
def test_sum_scatter(dtype_name):
    for shape in [(SIZE,), (3 * SIZE, 2), (0,), (1024 * SIZE,)]:
        out = mx.distributed.sum_scatter(to_mx(data(RANK, shape, dtype_name), dtype_name))
        block = shape[0] // SIZE
        expected = reduce_np(every_rank(shape, dtype_name), "sum")[RANK * block : (RANK + 1) * block]
        np.testing.assert_array_equal(to_np(out), expected)
    with pytest.raises(ValueError):
        mx.distributed.sum_scatter(mx.zeros((SIZE + 1,)))
    with pytest.raises(ValueError):
        mx.distributed.sum_scatter(mx.array(1.0))


def test_split_groups():
    color = RANK % 2
    members = [r for r in range(SIZE) if r % 2 == color]
    group = WORLD.split(color)
    assert group.size() == len(members) and group.rank() == members.index(RANK)
    out = mx.distributed.all_sum(mx.array(data(RANK, (5,), "int32")), group=group)
    np.testing.assert_array_equal(np.array(out), sum(every_rank((5,), "int32", members)))
    gathered = mx.distributed.all_gather(mx.array([RANK]), group=group)
    assert gathered.tolist() == members
    # key orders the ranks of the new group: the largest key last.
    reversed_group = WORLD.split(0, key=SIZE - RANK)
    assert reversed_group.rank() == SIZE - 1 - RANK
    assert mx.distributed.all_gather(mx.array([RANK]), group=reversed_group).tolist() == list(range(SIZE))[::-1]
    # A group of the split can be split again.
    if group.size() > 1:
        single = group.split(group.rank())
        assert single.size() == 1


def test_split_with_a_bad_color_fails_on_every_process():
    with pytest.raises(ValueError):
        WORLD.split(-1 if RANK == 0 else 0)
    # The world still works afterwards.
    assert mx.distributed.all_sum(mx.array(1)).item() == SIZE


def test_send_recv_ring_with_unrelated_compute():
    for n in [0, 1, 7, 1 << 20]:
        x = mx.array(data(RANK, (n,), "float32"))
        sent = mx.distributed.send(x, (RANK + 1) % SIZE)
        received = mx.distributed.recv_like(x, (RANK - 1) % SIZE)
        other = (mx.arange(1000.0) * 2).sum()
        # Every process sends before it receives: the sends must not wait for receivers.
        mx.eval(sent, other, received)
        np.testing.assert_array_equal(np.array(received), data((RANK - 1) % SIZE, (n,), "float32"))
        np.testing.assert_array_equal(np.array(sent), np.array(x))


def test_recv_with_shape_and_dtype():
    if RANK == 0:
        for dst in range(1, SIZE):
            mx.eval(mx.distributed.send(mx.arange(6, dtype=mx.int16).reshape(2, 3) + dst, dst))
    else:
        out = mx.distributed.recv((2, 3), mx.int16, 0)
        assert out.dtype == mx.int16
        np.testing.assert_array_equal(np.array(out), np.arange(6).reshape(2, 3) + RANK)


def test_recv_of_the_wrong_size_is_an_error():
    if RANK == 0:
        mx.eval(mx.distributed.send(mx.zeros((3,)), 1))
    elif RANK == 1:
        with pytest.raises(ValueError, match="recv"):
            mx.eval(mx.distributed.recv((4,), mx.float32, 0))
    mx.eval(mx.distributed.all_sum(mx.array(0)))


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError):
        mx.distributed.send(mx.zeros(2), SIZE)
    with pytest.raises(ValueError):
        mx.distributed.send(mx.zeros(2), -1)
    with pytest.raises(ValueError):
        mx.distributed.recv_like(mx.zeros(2), SIZE)
    with pytest.raises(TypeError):
        mx.distributed.all_sum(mx.zeros(2), group="world")


def test_mismatched_shapes_or_dtypes_fail_on_every_process():
    with pytest.raises(ValueError, match="different shapes or dtypes"):
        mx.eval(mx.distributed.all_sum(mx.zeros((RANK + 1,))))
    with pytest.raises(ValueError, match="different shapes or dtypes"):
        mx.eval(mx.distributed.all_gather(mx.zeros((2,), dtype=mx.float32 if RANK else mx.int32)))
    assert mx.distributed.all_sum(mx.array(2)).item() == 2 * SIZE


def finite_difference(f, x, eps=1e-3):
    """d f(x) / d x for each element of this process's x (float64). The processes take
    turns: while one perturbs its input the others keep theirs, and all evaluate f."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for turn in range(SIZE):
        for i in np.ndindex(x.shape):
            for sign in (1, -1):
                shifted = x.copy()
                if turn == RANK:
                    shifted[i] += sign * eps
                value = f(mx.array(shifted, dtype=mx.float64)).item()
                if turn == RANK:
                    grad[i] += sign * value / (2 * eps)
    return grad


def test_gradients_against_finite_differences():
    x0 = data(RANK, (3,), "float64") + 0.25 * RANK
    weights = mx.arange(3 * SIZE, dtype=mx.float64) + 1

    def through_gather(x):
        return (mx.distributed.all_gather(x) * weights).sum()

    def through_sum(x):
        return (mx.distributed.all_sum(x * x) * weights[:3]).sum()

    def through_max(x):
        return (mx.distributed.all_max(x) * weights[:3]).sum()

    for f in [through_gather, through_sum, through_max]:
        analytic = np.array(mx.grad(f)(mx.array(x0, dtype=mx.float64)))
        np.testing.assert_allclose(analytic, finite_difference(f, x0), rtol=1e-6, atol=1e-6)


def test_jvp_of_all_sum():
    x = mx.array(data(RANK, (4,), "float32"))
    t = mx.ones((4,)) * (RANK + 1)
    out, tangent = mx.jvp(mx.distributed.all_sum, [x], [t])
    np.testing.assert_array_equal(np.array(tangent[0]), np.full(4, SIZE * (SIZE + 1) / 2))


def test_vmap_against_a_loop():
    xs = mx.array(data(RANK, (5, 3), "float32"))
    for f in [mx.distributed.all_sum, mx.distributed.all_gather, mx.distributed.all_max]:
        for axis in [0, 1]:
            batched = mx.vmap(f, in_axes=axis)(xs)
            loop = mx.stack([f(xs[i] if axis == 0 else xs[:, i]) for i in range(xs.shape[axis])])
            np.testing.assert_array_equal(np.array(batched), np.array(loop))


def test_compile():
    f = mx.compile(lambda x: mx.distributed.all_sum(x * 2) + 1)
    for shape in [(3,), (3,)]:
        x = mx.array(data(RANK, shape, "float32"))
        np.testing.assert_array_equal(np.array(f(x)), 2 * sum(every_rank(shape, "float32")) + 1)


@pytest.mark.parametrize("dtype_name", ["int8", "uint8", "int16", "uint16"])
def test_small_integer_sums_wrap_around_as_numpy(dtype_name):
    np_dtype = DTYPES[dtype_name][1]
    big = np.iinfo(np_dtype).max // 2 + 3
    out = mx.distributed.all_sum(mx.full((4096,), big, dtype=DTYPES[dtype_name][0]))
    expected = np.full(4096, big, dtype=np_dtype)
    for _ in range(SIZE - 1):
        expected = np.add(expected, np.full(4096, big, dtype=np_dtype), dtype=np_dtype)
    np.testing.assert_array_equal(np.array(out), expected)


def test_all_sum_reduces_in_place_when_nobody_else_holds_the_input():
    n = 1 << 22
    mx.clear_cache()
    before = mx.get_active_memory()
    mx.reset_peak_memory()
    y = mx.distributed.all_sum(mx.arange(n, dtype=mx.float32) * (RANK + 1))
    mx.eval(y)
    # The product's buffer is reduced in place: one array's worth of memory, not two.
    assert mx.get_peak_memory() - before < 1.5 * n * 4
    assert y[-1].item() == pytest.approx((n - 1) * SIZE * (SIZE + 1) / 2, rel=1e-6)
