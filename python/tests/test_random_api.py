"""mx.random through Python: keys, seeds, shapes, dtypes, defaults and errors (the
distributions' statistics are tested in Rust)."""

import numpy as np
import pytest

import lazulite.core as mx


def test_keys_and_split():
    k = mx.random.key(0)
    assert k.dtype == mx.uint32 and k.shape == (2,)
    assert mx.random.key(7).tolist() == [0, 7]
    assert mx.random.split(k).shape == (2, 2)
    assert mx.random.split(k, num=3).shape == (3, 2)
    a = mx.random.uniform(key=k)
    b = mx.random.uniform(key=k)
    assert a.item() == b.item()


def test_seed_makes_draws_repeatable():
    mx.random.seed(3)
    first = mx.random.normal((4,)).tolist()
    mx.random.seed(3)
    assert mx.random.normal((4,)).tolist() == first
    import lazulite.core.random as random_module

    assert random_module is mx.random


def test_shapes_dtypes_and_ranges():
    k = mx.random.key(1)
    u = mx.random.uniform(shape=(1000,), key=k)
    assert u.shape == (1000,) and u.dtype == mx.float32
    v = np.array(u)
    assert (v >= 0).all() and (v < 1).all()
    u = np.array(mx.random.uniform(-2, 5, (1000,), key=k))
    assert (u >= -2).all() and (u < 5).all()
    assert mx.random.uniform().shape == ()
    assert mx.random.normal(dtype=mx.float16).dtype == mx.float16
    n = np.array(mx.random.normal((2000,), loc=3.0, scale=0.5, key=k))
    assert abs(n.mean() - 3.0) < 0.1 and abs(n.std() - 0.5) < 0.1
    r = np.array(mx.random.randint(0, 10, (500,), key=k))
    assert r.min() >= 0 and r.max() < 10
    assert mx.random.randint(0, 10, (3,)).dtype == mx.int32
    assert mx.random.randint(0, 10, (3,), dtype=mx.uint8).dtype == mx.uint8
    b = mx.random.bernoulli(mx.array([0.0, 1.0]))
    assert b.tolist() == [False, True]
    assert mx.random.bernoulli(shape=(5,)).shape == (5,)
    t = np.array(mx.random.truncated_normal(-1.0, 1.0, (500,), key=k))
    assert (t >= -1).all() and (t <= 1).all()
    assert mx.random.gumbel((3, 2)).shape == (3, 2)
    lap = np.array(mx.random.laplace((2000,), loc=1.0, scale=2.0, key=k))
    assert abs(np.median(lap) - 1.0) < 0.3


def test_errors():
    with pytest.raises(ValueError):
        mx.random.uniform(dtype=mx.int32)
    with pytest.raises(ValueError):
        mx.random.randint(0, 5, dtype=mx.float32)
    with pytest.raises(ValueError):
        mx.random.bernoulli(mx.array([1, 0]))


def test_categorical_matches_mlx_and_checks_arguments():
    k = mx.random.key(0)
    logits = mx.array([[1.0, 2, 3], [0, 0, 5]])
    # Values drawn by MLX 0.32.4 with the same keys.
    assert mx.random.categorical(logits, key=k).tolist() == [2, 2]
    assert mx.random.categorical(logits, axis=0, key=k).tolist() == [1, 0, 1]
    s = mx.random.categorical(logits, shape=[4, 2], key=k)
    assert s.dtype == mx.uint32 and s.tolist() == [[0, 2], [2, 2], [2, 2], [0, 2]]
    assert mx.random.categorical(logits, num_samples=3, key=k).shape == (2, 3)
    assert mx.random.categorical(mx.array([1, 2, 3]), key=k).shape == ()
    with pytest.raises(ValueError, match="At most one of shape or num_samples"):
        mx.random.categorical(logits, shape=[2], num_samples=3, key=k)
    with pytest.raises(IndexError, match=r"\[categorical\] Invalid axis 2"):
        mx.random.categorical(logits, axis=2, key=k)
    with pytest.raises(ValueError):
        mx.random.categorical(logits, shape=[3], key=k)
    with pytest.raises(ValueError, match="Negative dimensions"):
        mx.random.categorical(logits, num_samples=-1, key=k)
    with pytest.raises(ValueError, match="zero size"):
        mx.random.categorical(mx.zeros((2, 0)), key=k)


def test_categorical_frequencies():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    logits = mx.array(np.log(p).astype(np.float32))
    for batch in (logits, mx.stack([logits, logits])):
        s = np.array(mx.random.categorical(batch, num_samples=20000, key=mx.random.key(3))).ravel()
        counts = np.bincount(s, minlength=4)
        expected = p * s.size
        chi2 = ((counts - expected) ** 2 / expected).sum()
        assert chi2 < 11.34  # 3 degrees of freedom, 1% critical value


def test_permutation_matches_mlx_and_checks_arguments():
    k = mx.random.key(0)
    p = mx.random.permutation(5, key=k)
    assert p.dtype == mx.uint32 and p.tolist() == [1, 2, 0, 4, 3]
    x = mx.arange(6).reshape(2, 3)
    assert mx.random.permutation(x, key=k).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert mx.random.permutation(x, axis=1, key=k).tolist() == [[1, 2, 0], [4, 5, 3]]
    assert mx.random.permutation(x, axis=-1, key=k).tolist() == [[1, 2, 0], [4, 5, 3]]
    assert mx.random.permutation(0, key=k).shape == (0,)
    assert sorted(mx.random.permutation(100).tolist()) == list(range(100))
    with pytest.raises(ValueError, match="Negative dimensions"):
        mx.random.permutation(-1, key=k)
    with pytest.raises(IndexError):
        mx.random.permutation(x, axis=2, key=k)
    with pytest.raises(IndexError):
        mx.random.permutation(mx.array(3), key=k)
    with pytest.raises(TypeError):
        mx.random.permutation(2.5, key=k)


def test_multivariate_normal_shapes_statistics_and_errors():
    k = mx.random.key(0)
    mean = mx.array([0.0, 1.0])
    cov = mx.array([[1.0, 0.5], [0.5, 2.0]])
    assert mx.random.multivariate_normal(mean, cov, key=k).shape == (2,)
    assert mx.random.multivariate_normal(mean, cov, shape=[3], key=k).shape == (3, 2)
    assert mx.random.multivariate_normal(mean, cov, shape=[3, 2], key=k).shape == (3, 2, 2)
    batched = mx.random.multivariate_normal(mx.zeros((3, 2)), mx.stack([cov, cov, cov]), key=k)
    assert batched.shape == (3, 2) and batched.dtype == mx.float32
    assert mx.random.multivariate_normal(mean.astype(mx.float16), cov.astype(mx.float16), key=k).dtype == mx.float32
    x = np.array(mx.random.multivariate_normal(mean, cov, shape=[50000], key=mx.random.key(5)), dtype=np.float64)
    assert np.abs(x.mean(axis=0) - [0.0, 1.0]).max() < 0.03
    assert np.abs(np.cov(x.T) - np.array(cov)).max() < 0.05
    for bad_mean, bad_cov, message in [
        (mx.array(0.0), cov, "mean must have at least one dimension"),
        (mean, mx.array([1.0, 2]), "cov must have at least two dimensions"),
        (mean, mx.zeros((2, 3)), "last two dimensions of cov must be equal"),
        (mx.zeros(3), cov, "mean and cov must have compatible shapes"),
    ]:
        with pytest.raises(ValueError, match=message):
            mx.random.multivariate_normal(bad_mean, bad_cov, key=k)
    with pytest.raises(ValueError, match="dtype must be float32"):
        mx.random.multivariate_normal(mean, cov, dtype=mx.float64, key=k)
    with pytest.raises(ValueError):
        mx.random.multivariate_normal(mx.zeros((4, 2)), cov, shape=[3], key=k)


def test_state_is_a_live_view_of_the_global_key():
    state = mx.random.state
    assert type(state).__name__ == "_RandomState"
    mx.random.seed(5)
    assert len(state) == 1
    assert state[0].tolist() == [0, 5] and state[-1].tolist() == [0, 5]
    mx.random.uniform()
    # The key MLX 0.32.4 holds after seed(5) and one draw.
    assert state[0].tolist() == [3594430910, 534832770]
    assert [k.tolist() for k in state] == [[3594430910, 534832770]]
    assert mx.random.state is state
    with pytest.raises(IndexError, match="random state index out of range"):
        state[1]
    with pytest.raises(IndexError):
        state[-2]


def test_split_count_is_a_c_int_as_in_mlx():
    # MLX 0.32.4: a count past a C int is a TypeError (its binding refuses it), a negative
    # one a ValueError from the bits it would draw.
    key = mx.random.key(0)
    with pytest.raises(TypeError):
        mx.random.split(key, 2**31)
    with pytest.raises(ValueError, match=r"\[bits\] Negative dimensions not allowed."):
        mx.random.split(key, -1)
    assert mx.random.split(key, 0).shape == (0, 2)


def test_each_thread_has_its_own_key_as_in_mlx():
    # Real MLX 0.32.4, same calls: another thread's draws through a compiled function
    # that takes the random state leave this thread's sequence where it was.
    import threading

    draw = mx.compile(lambda x: x + mx.random.uniform(shape=(2,)), inputs=mx.random.state,
                      outputs=mx.random.state)
    mx.random.seed(3)
    first = [draw(mx.zeros(2)).tolist() for _ in range(2)]
    np.testing.assert_allclose(first, [[0.5208584666252136, 0.24485553801059723],
                                       [0.4657380282878876, 0.031703751534223557]], rtol=1e-6)
    other = []
    thread = threading.Thread(target=lambda: other.append(draw(mx.zeros(2)).tolist()))
    thread.start()
    thread.join()
    assert len(other) == 1
    assert mx.random.uniform(shape=(1,)).item() == pytest.approx(0.19682888686656952, abs=1e-7)
