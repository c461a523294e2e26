"""Python trees (nested lists, tuples and dicts) as in ``mlx.utils``: map over their
leaves, flatten them to ``("dotted.path", leaf)`` pairs and back, reduce them."""

from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

Flat = Union[List[Tuple[str, Any]], Dict[str, Any]]


def _is_leaf(tree: Any, is_leaf: Optional[Callable]) -> bool:
    if is_leaf is not None and is_leaf(tree):
        return True
    return not isinstance(tree, (list, tuple, dict))


def _same_kind(tree: Any, children) -> Any:
    """A list/tuple/namedtuple of the same type as ``tree`` holding ``children``."""
    kind = type(tree)
    return kind(*children) if hasattr(tree, "_fields") else kind(children)


def tree_map(fn: Callable, tree: Any, *rest: Any, is_leaf: Optional[Callable] = None) -> Any:
    """``tree`` with every leaf replaced by ``fn(leaf, *same_leaf_of_each_rest)``;
    the trees in ``rest`` must contain ``tree``'s structure."""
    if _is_leaf(tree, is_leaf):
        return fn(tree, *rest)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v, *(r[k] for r in rest), is_leaf=is_leaf) for k, v in tree.items()}
    return _same_kind(
        tree, [tree_map(fn, v, *(r[i] for r in rest), is_leaf=is_leaf) for i, v in enumerate(tree)]
    )


def tree_map_with_path(
    fn: Callable,
    tree: Any,
    *rest: Any,
    is_leaf: Optional[Callable] = None,
    path: Optional[Any] = None,
) -> Any:
    """As :func:`tree_map`, with the leaf's dotted path as ``fn``'s first argument."""
    if _is_leaf(tree, is_leaf):
        return fn(path, tree, *rest)
    prefix = f"{path}." if path else ""
    if isinstance(tree, dict):
        return {
            k: tree_map_with_path(fn, v, *(r[k] for r in rest), is_leaf=is_leaf, path=f"{prefix}{k}")
            for k, v in tree.items()
        }
    return _same_kind(
        tree,
        [
            tree_map_with_path(fn, v, *(r[i] for r in rest), is_leaf=is_leaf, path=f"{prefix}{i}")
            for i, v in enumerate(tree)
        ],
    )


def tree_flatten(
    tree: Any,
    prefix: str = "",
    is_leaf: Optional[Callable] = None,
    destination: Optional[Flat] = None,
) -> Flat:
    """The leaves of ``tree`` as ``(path, leaf)`` pairs with dotted paths
    (``[[[0]]]`` gives ``[("0.0.0", 0)]``), added to ``destination`` (a list, or a dict
    of path to leaf). The first character of ``prefix`` is dropped."""
    if destination is None:
        destination = []
    if isinstance(destination, list):
        add = destination.extend
    elif isinstance(destination, dict):
        add = destination.update
    else:
        raise ValueError("Destination should be either a list or a dictionary or None")
    if _is_leaf(tree, is_leaf):
        add([(prefix[1:], tree)])
    elif isinstance(tree, dict):
        for k, v in tree.items():
            tree_flatten(v, f"{prefix}.{k}", is_leaf, destination)
    else:
        for i, v in enumerate(tree):
            tree_flatten(v, f"{prefix}.{i}", is_leaf, destination)
    return destination


def tree_unflatten(tree: Flat) -> Any:
    """The tree whose :func:`tree_flatten` is ``tree``; levels whose keys are all
    integers become lists."""
    items = list(tree.items()) if isinstance(tree, dict) else list(tree)
    if len(items) == 1 and items[0][0] == "":
        return items[0][1]
    children = defaultdict(list)
    for key, value in items:
        head, _, tail = key.partition(".")
        children[head].append((tail, value))
    try:
        indices = {int(k): k for k in children}
    except ValueError:
        indices = None
    if indices is None or len(indices) != len(children):
        return {k: tree_unflatten(v) for k, v in children.items()}
    out: List[Any] = []
    for i, k in sorted(indices.items()):
        out.extend({} for _ in range(i - len(out)))
        out.append(tree_unflatten(children[k]))
    return out


def tree_reduce(fn, tree, initializer=None, is_leaf=None):
    """``fn(accumulator, leaf)`` over the leaves in order, starting from
    ``initializer`` (or the first leaf when it is ``None``)."""
    if _is_leaf(tree, is_leaf):
        return tree if initializer is None else fn(initializer, tree)
    accumulator = initializer
    for child in tree.values() if isinstance(tree, dict) else tree:
        accumulator = tree_reduce(fn, child, accumulator, is_leaf)
    return accumulator


def _is_empty_container(tree: Any) -> bool:
    return isinstance(tree, (list, tuple, dict)) and len(tree) == 0


def tree_merge(tree_a: Any, tree_b: Any, merge_fn: Optional[Callable] = None) -> Any:
    """One tree holding the values of both, like a deep ``dict.update``: where only one
    tree has something (``None`` and empty containers count as nothing) it is kept;
    lists and tuples merge position by position, dicts key by key; two leaves at the
    same place are combined with ``merge_fn(leaf_a, leaf_b)`` (``ValueError`` without
    one)."""
    if _is_empty_container(tree_a) and _is_empty_container(tree_b):
        if type(tree_a) is not type(tree_b):
            raise ValueError(f"Cannot merge {type(tree_a).__name__} with {type(tree_b).__name__}")
        return type(tree_a)()
    a = None if _is_empty_container(tree_a) else tree_a
    b = None if _is_empty_container(tree_b) else tree_b
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        width = max(len(a), len(b))
        padded_a = list(a) + [None] * (width - len(a))
        padded_b = list(b) + [None] * (width - len(b))
        return _same_kind(a, [tree_merge(x, y, merge_fn) for x, y in zip(padded_a, padded_b)])
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: tree_merge(a.get(k), b.get(k), merge_fn) for k in set(a) | set(b)}
    if merge_fn is None:
        raise ValueError("Trees contain elements at the same locations but no merge function was provided")
    return merge_fn(a, b)


__all__ = ["tree_map", "tree_map_with_path", "tree_flatten", "tree_unflatten", "tree_reduce", "tree_merge"]
