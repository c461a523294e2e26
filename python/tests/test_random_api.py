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
