"""grad, value_and_grad, vjp, jvp, vmap and stop_gradient on Python callables, with
trees of arrays as arguments and results; errors as MLX raises them."""

from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest

import lazulite.core as mx


def close(a, b):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6)


def test_grad_of_builtin_and_lambda():
    x = mx.array([0.0, 1.0, 2.0])
    close(mx.grad(lambda t: mx.sum(mx.sin(t)))(x), np.cos([0.0, 1.0, 2.0]))
    close(mx.grad(lambda t: (t * t).sum())(x), [0.0, 2.0, 4.0])


def test_argnums_int_tuple_and_argnames():
    f = lambda a, b, c=1.0: a * b * c  # noqa: E731
    a, b, c = mx.array(2.0), mx.array(3.0), mx.array(4.0)
    assert mx.grad(f, argnums=1)(a, b).item() == 2.0
    ga, gb = mx.grad(f, argnums=(0, 1))(a, b, c=c)
    assert (ga.item(), gb.item()) == (12.0, 8.0)
    positional, named = mx.grad(f, argnames=["c"])(a, b, c=c)
    assert positional is None and named["c"].item() == 6.0
    (ga, gb), named = mx.grad(f, argnums=[0, 1], argnames="c")(a, b, c=c)
    assert (ga.item(), gb.item(), named["c"].item()) == (12.0, 8.0, 6.0)


def test_value_and_grad_with_aux_outputs():
    def f(x):
        return x * x, {"double": x * 2}, [x + 1, "not an array"]

    (value, aux, extra), g = mx.value_and_grad(f)(mx.array(3.0))
    assert value.item() == 9.0 and g.item() == 6.0
    assert aux["double"].item() == 6.0 and extra[0].item() == 4.0 and extra[1] == "not an array"


def test_nested_trees_keep_their_structure():
    params = {"layers": [(mx.array(1.0), mx.array(2.0)), (mx.array(3.0),)], "scale": mx.array(0.5)}

    def loss(p):
        total = p["scale"] * p["layers"][0][0] * p["layers"][0][1]
        return total + p["layers"][1][0] ** 2

    g = mx.grad(loss)(params)
    assert isinstance(g["layers"][0], tuple) and isinstance(g["layers"], list)
    assert g["layers"][0][0].item() == 1.0 and g["layers"][0][1].item() == 0.5
    assert g["layers"][1][0].item() == 6.0 and g["scale"].item() == 2.0


def test_higher_order_and_composition():
    f = lambda x: x**3  # noqa: E731
    x = mx.array(2.0)
    assert mx.grad(mx.grad(f))(x).item() == pytest.approx(12.0)
    assert mx.grad(mx.grad(mx.grad(f)))(x).item() == pytest.approx(6.0)
    per_example = mx.vmap(mx.grad(lambda t: t * t * t))(mx.array([1.0, 2.0, 3.0]))
    close(per_example, [3.0, 12.0, 27.0])


def test_reductions_under_transforms():
    per_example = mx.vmap(mx.grad(lambda t: (t * t).sum()))(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    close(per_example, [[2.0, 4.0], [6.0, 8.0]])
    out = mx.vmap(lambda x: x.sum(), in_axes=1)(mx.ones((2, 3)))
    close(out, [2.0, 2.0, 2.0])


def test_stop_gradient():
    g = mx.grad(lambda x: x * mx.stop_gradient(x))(mx.array(3.0))
    assert g.item() == 3.0


def test_grad_with_respect_to_integer_inputs_flows_as_in_mlx():
    # MLX differentiates integer inputs: the cotangent flows through integer arithmetic
    # and is cast to the input's dtype (values and dtypes from MLX 0.32.4).
    x = mx.array([1, 2, 3])
    cases = {
        lambda v: (2 * v).sum(): [2, 2, 2],
        lambda v: (v * v).sum(): [2, 4, 6],
        lambda v: mx.cumsum(v).sum(): [3, 2, 1],
        lambda v: mx.where(v > 1, v, 0).sum(): [0, 1, 1],
        lambda v: (v.astype(mx.float32) ** 2).sum(): [2, 4, 6],
        # 0.5 cast to int32 is 0.
        lambda v: (v / 2).sum(): [0, 0, 0],
        # Gather indices computed from the input: zero (MLX raises).
        lambda v: v[v - 1].sum(): [1, 1, 1],
    }
    for f, expected in cases.items():
        g = mx.grad(f)(x)
        assert g.dtype == mx.int32
        assert g.tolist() == expected


def test_grad_errors():
    f = lambda a, b: (a * b).sum()  # noqa: E731
    one, two = mx.array(1.0), mx.array(2.0)
    with pytest.raises(ValueError, match=r"\[grad\] Can't compute the gradient of argument index 5"):
        mx.grad(f, argnums=5)(one, two)
    with pytest.raises(ValueError, match=r"\[value_and_grad\] Can't compute the gradient of argument index 2"):
        mx.value_and_grad(f, argnums=2)(one, two)
    with pytest.raises(ValueError, match="Duplicate argument index 0"):
        mx.grad(f, argnums=(0, 0))
    with pytest.raises(ValueError, match="negative argument index -1"):
        mx.grad(f, argnums=-1)
    with pytest.raises(ValueError, match="Gradient wrt no argument requested"):
        mx.grad(f, argnums=[])
    with pytest.raises(ValueError, match="keyword argument 'q'"):
        mx.grad(f, argnames=["q"])(one, two)
    with pytest.raises(ValueError, match="should be a scalar array; but str was returned"):
        mx.grad(lambda x: "a")(one)
    with pytest.raises(ValueError, match="should be a scalar array; but tuple was returned"):
        mx.grad(lambda x: (x, 2))(one)
    with pytest.raises(ValueError, match="either a scalar array or a tuple"):
        mx.value_and_grad(lambda x: "a")(one)
    with pytest.raises(ValueError):
        mx.grad(lambda x: x)(mx.array([1.0, 2.0]))  # not a scalar
    with pytest.raises(ValueError, match="only arrays"):
        mx.grad(f)("a", two)


def test_python_exceptions_inside_the_function_propagate():
    class Boom(Exception):
        pass

    def f(x):
        raise Boom("inside")

    with pytest.raises(Boom, match="inside"):
        mx.grad(f)(mx.array(1.0))
    with pytest.raises(Boom):
        mx.vmap(f)(mx.ones((2,)))
    with pytest.raises(Boom):
        mx.vjp(f, [mx.array(1.0)], [mx.array(1.0)])


def test_vjp_and_jvp():
    outs, vjps = mx.vjp(lambda x, y: [x * 2, y * x], [mx.array(1.0), mx.array(3.0)],
                        [mx.array(1.0), mx.array(1.0)])
    assert [o.item() for o in outs] == [2.0, 3.0]
    assert [v.item() for v in vjps] == [5.0, 1.0]
    outs, jvps = mx.jvp(lambda x: (x * 2, mx.sin(x)), [mx.array(0.0)], [mx.array(1.0)])
    assert isinstance(outs, list) and [j.item() for j in jvps] == [2.0, 1.0]
    outs, jvps = mx.jvp(lambda x: x * 3, [mx.array([1.0, 2.0])], [mx.array([1.0, 0.5])])
    assert jvps[0].tolist() == [3.0, 1.5]
    with pytest.raises(ValueError):
        mx.vjp(lambda x: x * 2, [mx.array([1.0, 2.0])], [mx.array(1.0), mx.array(1.0)])
    with pytest.raises(ValueError):
        mx.jvp(lambda x: x, [mx.array([1.0])], [mx.array([1.0, 2.0])])


def test_vmap_axes_and_trees():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = mx.vmap(lambda x: x * 2)(mx.array(xs))
    close(out, xs * 2)
    out = mx.vmap(lambda x: x * 3, in_axes=1)(mx.array(xs))
    close(out, xs.T * 3)
    out = mx.vmap(lambda x, y: x + y, in_axes=(0, None))(mx.array(xs), mx.array([1.0, 2.0, 3.0]))
    close(out, xs + [1.0, 2.0, 3.0])
    out = mx.vmap(lambda x: x * 2, in_axes=0, out_axes=1)(mx.array(xs))
    close(out, (xs * 2).T)
    out = mx.vmap(lambda x, y: x + y, in_axes=(1, 0))(mx.array(xs), mx.array(xs.T))
    close(out, xs.T * 2)
    with pytest.raises(ValueError, match="not a valid prefix"):
        mx.vmap(lambda x, y: x + y, in_axes=[1, 0])(mx.array(xs), mx.array(xs.T))

    def f(p):
        return {"a": p["w"] * 2, "b": p["w"] + 1}

    res = mx.vmap(f, in_axes={"w": 1}, out_axes={"a": 1, "b": 0})({"w": mx.array(xs)})
    close(res["a"], xs * 2)
    close(res["b"], xs.T + 1)
    pair = mx.vmap(lambda t, s: (t[0] + t[1] + s, t[0]), in_axes=((0, 1), None))(
        (mx.array(xs), mx.array(xs.T)), mx.array(1.0)
    )
    close(pair[0], xs * 2 + 1)
    close(pair[1], xs)


def test_vmap_errors():
    with pytest.raises(ValueError, match="not a valid prefix"):
        mx.vmap(lambda x, y: x + y, in_axes=(0,))(mx.ones(2), mx.ones(2))
    with pytest.raises(IndexError, match="Invalid vectorization axis 1"):
        mx.vmap(lambda x: x, in_axes=1)(mx.ones(2))
    with pytest.raises(ValueError, match="only arrays"):
        mx.vmap(lambda x: x)([mx.ones(2), 1.0])
    with pytest.raises(ValueError):
        mx.vmap(lambda x, y: x + y)(mx.ones(2), mx.ones(3))


class Params(NamedTuple):
    w: mx.array
    b: mx.array


Pair = namedtuple("Pair", ["x", "y"])


class Couple(tuple):
    pass


def test_tuple_types_survive_every_transform():
    p = Params(mx.array([1.0, 2.0]), mx.array(3.0))
    g = mx.grad(lambda p: (p.w * p.b).sum())(p)
    assert type(g) is Params
    close(g.w, [3.0, 3.0]), close(g.b, 3.0)
    value, g = mx.value_and_grad(lambda p: (p.w * p.b).sum())(p)
    assert type(g) is Params and value.item() == 9.0
    g = mx.grad(lambda t: (t.x * t.y).sum())(Pair(mx.array([1.0]), mx.array([2.0])))
    assert type(g) is Pair
    close(g.x, [2.0]), close(g.y, [1.0])
    g = mx.grad(lambda t: (t[0] * t[1]).sum())(Couple((mx.array([1.0]), mx.array([2.0]))))
    assert type(g) is Couple
    out = mx.vmap(lambda x: Params(x * 2, x.sum()))(mx.ones((3, 2)))
    assert type(out) is Params and out.w.shape == (3, 2) and out.b.shape == (3,)
    out = mx.vmap(lambda p: p.w * p.b)(Params(mx.ones((3, 2)), mx.full((3,), 2.0)))
    close(out, np.full((3, 2), 2.0))
    out = mx.compile(lambda x: Params(x * 2, x + 1))(mx.ones(2))
    assert type(out) is Params
    close(out.w, [2.0, 2.0]), close(out.b, [2.0, 2.0])
    close(mx.compile(lambda p: p.w + p.b)(p), [4.0, 5.0])


def test_grad_passes_containers_themselves():
    import lazulite.nn as nn

    layer = nn.Linear(2, 1)
    weight = layer.weight
    x = mx.array([[1.0, 2.0]])
    g = mx.grad(lambda m, x: m(x).sum())(layer, x)
    # The module itself is called; its gradient comes back as a plain dict, and the
    # module holds its own arrays again afterwards.
    assert type(g) is dict and set(g) == {"weight", "bias"}
    close(g["weight"], [[1.0, 2.0]]), close(g["bias"], [1.0])
    assert layer.weight is weight


def test_arrays_written_into_a_differentiated_list_stay():
    def f(params):
        params[0] = mx.array([7.0])
        return params[1].sum()

    params = [mx.array([1.0]), mx.array([2.0])]
    second = params[1]
    g = mx.grad(f)(params)
    close(g[0], [0.0]), close(g[1], [1.0])
    assert params[1] is second and params[0].item() == 7.0


def test_transformed_functions_keep_name_and_doc():
    def double(x):
        """Doubles x."""
        return (x * 2).sum()

    for wrapped in [mx.compile(double), mx.grad(double), mx.value_and_grad(double), mx.vmap(double)]:
        assert wrapped.__name__ == "double" and wrapped.__doc__ == "Doubles x."
    assert mx.compile(lambda x: x).__name__ == "<lambda>"


def test_vmap_refuses_keyword_arguments():
    with pytest.raises(TypeError, match=r"\[vmap\] Keyword arguments are not supported."):
        mx.vmap(lambda x, y=1: x * y)(mx.ones(2), y=mx.ones(2))


def test_vmap_of_searchsorted_over_the_values():
    seq = mx.array([1.0, 3.0, 5.0, 7.0])
    values = mx.array([[0.0, 3.0, 8.0], [3.0, 5.0, 6.0]])
    for side in ["left", "right"]:
        got = mx.vmap(lambda v: mx.searchsorted(seq, v, side=side))(values)
        expected = [np.searchsorted(np.array(seq), np.array(v), side=side) for v in values]
        assert np.array_equal(np.array(got), np.stack(expected))
    got = mx.vmap(lambda v: mx.searchsorted(seq, v), in_axes=1, out_axes=1)(values)
    assert np.array_equal(np.array(got), np.searchsorted(np.array(seq), np.array(values)))
    with pytest.raises(ValueError, match="Cannot vmap over the sorted sequence"):
        mx.vmap(lambda s: mx.searchsorted(s, mx.array([2.0])))(mx.ones((2, 3)))


def test_vmap_of_masked_assignment():
    def assign(x, m, v):
        y = x * 1
        y[m] = v
        return y

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = np.array([[True, False, True, False], [False, False, False, False], [True, True, True, True]])
    v = np.arange(1, 13, dtype=np.float32).reshape(3, 4) * 10
    got = mx.vmap(assign)(mx.array(x), mx.array(m), mx.array(v))
    expected = []
    for xi, mi, vi in zip(x, m, v):
        yi = xi.copy()
        yi[mi] = vi[: mi.sum()]  # the true positions take the values in order
        expected.append(yi)
    np.testing.assert_array_equal(np.array(got), np.stack(expected))
    # A gradient flows to the values taken and to the positions kept.
    gx, gv = mx.grad(lambda x, v: mx.vmap(assign)(x, mx.array(m), v).sum(), argnums=(0, 1))(mx.array(x), mx.array(v))
    np.testing.assert_array_equal(np.array(gx), (~m).astype(np.float32))
    np.testing.assert_array_equal(np.array(gv), np.array([[1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]], np.float32))
    # Fewer values than true positions is an index error when evaluated.
    with pytest.raises(IndexError):
        mx.eval(mx.vmap(assign)(mx.array(x), mx.array(m), mx.array(v[:, :2])))
