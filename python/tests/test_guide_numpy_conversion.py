"""The examples of MLX's guide page on NumPy conversion, as written (with `mx` = lazulite.core).
PyTorch, JAX and TensorFlow run where installed."""

import numpy as np
import pytest

import lazulite.core as mx
from conftest import needs_core_rules


def test_numpy_round_trip():
    a = mx.arange(3)
    b = np.array(a)  # copy of a
    c = mx.array(b)  # copy of b
    assert b.tolist() == [0, 1, 2] and c.tolist() == [0, 1, 2]
    assert b.flags.owndata or b.base is not None


def test_bfloat16_note():
    a = mx.arange(3).astype(mx.bfloat16)
    with pytest.raises(ValueError):
        np.array(a)
    assert np.array(a.astype(mx.float32)).tolist() == [0.0, 1.0, 2.0]


def test_view_writes_through(capsys):
    a = mx.arange(3)
    a_view = np.array(a, copy=False)
    print(a_view.flags.owndata)  # False
    a_view[0] = 1
    print(a[0].item())  # 1
    assert capsys.readouterr().out == "False\n1\n"


@needs_core_rules
def test_external_writes_are_not_seen_by_gradients():
    def f(x):
        x_view = np.array(x, copy=False)
        x_view[:] *= x_view  # modify memory without telling mx
        return x.sum()

    x = mx.array([3.0])
    y, df = mx.value_and_grad(f)(x)
    assert y.item() == 9.0
    assert df.item() == 1.0


def test_pytorch():
    torch = pytest.importorskip("torch")
    a = mx.arange(3)
    b = torch.tensor(memoryview(a))
    c = mx.array(b.numpy())
    assert c.tolist() == [0, 1, 2]


def test_jax():
    jnp = pytest.importorskip("jax.numpy")
    a = mx.arange(3)
    b = jnp.array(a)
    c = mx.array(b)
    assert c.tolist() == [0, 1, 2]


def test_tensorflow():
    tf = pytest.importorskip("tensorflow")
    a = mx.arange(3)
    b = tf.constant(memoryview(a))
    c = mx.array(b)
    assert c.tolist() == [0, 1, 2]
