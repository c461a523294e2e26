"""lazulite.utils: the tree functions of mlx.utils, with the same results."""

from collections import namedtuple

import pytest

import lazulite.core as mx
from lazulite.utils import tree_flatten, tree_map, tree_map_with_path, tree_reduce, tree_unflatten


def test_tree_flatten_examples():
    assert tree_flatten([[[0]]]) == [("0.0.0", 0)]
    assert tree_flatten([[[0]]], prefix=".hello") == [("hello.0.0.0", 0)]
    assert tree_flatten({"a": {"b": 1}}, destination={}) == {"a.b": 1}
    assert tree_flatten({"a": [1, (2, 3)], "b": 4}) == [("a.0", 1), ("a.1.0", 2), ("a.1.1", 3), ("b", 4)]
    assert tree_flatten(5) == [("", 5)]
    with pytest.raises(ValueError, match="Destination should be either a list or a dictionary"):
        tree_flatten([1], destination=set())
    assert tree_flatten([[1], 2], is_leaf=lambda t: t == [1]) == [("0", [1]), ("1", 2)]


def test_tree_unflatten_round_trips():
    assert tree_unflatten([("hello.world", 42)]) == {"hello": {"world": 42}}
    assert tree_unflatten({"hello.world": 42}) == {"hello": {"world": 42}}
    tree = {"model": [{"w": 0, "b": 1}, {"w": 2, "b": 3}], "lr": 5}
    assert tree_unflatten(tree_flatten(tree)) == tree
    assert tree_unflatten([("", 7)]) == 7
    assert tree_unflatten([("2", "c"), ("0", "a")]) == ["a", {}, "c"]


def test_tree_map():
    tree = {"a": [1, 2], "b": (3, {"c": 4})}
    assert tree_map(lambda x: x * 10, tree) == {"a": [10, 20], "b": (30, {"c": 40})}
    assert tree_map(lambda x, y: x + y, [1, 2], [10, 20, 30]) == [11, 22]
    Point = namedtuple("Point", "x y")
    assert tree_map(lambda v: v + 1, Point(1, 2)) == Point(2, 3)
    assert tree_map(len, [[1, 2], [3]], is_leaf=lambda t: isinstance(t, list) and all(isinstance(i, int) for i in t)) == [2, 1]
    squared = tree_map(lambda a: a * a, {"w": mx.array([1.0, 2.0])})
    assert squared["w"].tolist() == [1.0, 4.0]


def test_tree_map_with_path():
    paths = []
    tree_map_with_path(lambda p, _: paths.append(p), {"model": [{"w": 0, "b": 1}, {"w": 0, "b": 1}]})
    assert paths == ["model.0.w", "model.0.b", "model.1.w", "model.1.b"]


def test_tree_reduce():
    assert tree_reduce(lambda acc, x: acc + x, {"a": [1, 2, 3], "b": [4, 5]}, 0) == 15
    assert tree_reduce(lambda acc, x: acc + x, [1, 2, 3]) == 6
    assert tree_reduce(lambda acc, x: acc + x, [], 0) == 0
    assert tree_reduce(max, [[3, 9], (4,)]) == 9
