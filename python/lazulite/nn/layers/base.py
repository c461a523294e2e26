"""``Module``: the base of every layer, as ``mlx.nn.Module``.

A module is a ``dict`` whose entries are its arrays (parameters), its sub-modules and
any lists/dicts of those; attribute access reads and writes those entries. Parameters are
found by walking that tree, so a model is just nested modules holding arrays."""

import textwrap
from typing import Any, Callable, List, Optional, Tuple, Union

import lazulite.core as mx
from lazulite.utils import tree_flatten, tree_unflatten

# Values stored as dict entries rather than plain attributes: what parameters() walks.
_TREE_TYPES = (mx.array, dict, list, tuple)


def _identity(x):
    return x


def _is_tree_leaf(module, key, value):
    return not isinstance(value, (Module, dict, list))


class Module(dict):
    """Base class for layers and models; subclasses call ``super().__init__()`` and set
    arrays and sub-modules as attributes.

    >>> import lazulite.nn as nn
    >>> layer = nn.Linear(3, 2)
    >>> sorted(layer.parameters())
    ['bias', 'weight']
    """

    __call__: Callable

    def __init__(self):
        self._no_grad = set()
        self._training = True

    @property
    def training(self):
        """Whether the module is in training mode (see :meth:`train`)."""
        return self._training

    @property
    def state(self):
        """The module itself: its dict of parameters, sub-modules and other entries."""
        return self

    def _extra_repr(self) -> str:
        return ""

    def __repr__(self):
        children = tree_flatten(self.children(), is_leaf=self.is_module)
        lines = [f"{type(self).__name__}({self._extra_repr()}"]
        lines += [textwrap.indent(f"({k}): {v!r}", "  ") for k, v in children]
        return "\n".join(lines) + ("\n)" if children else ")")

    def __getattr__(self, key: str):
        value = self.get(key, None)
        if value is not None:
            return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {key!r}")

    def __setattr__(self, key: str, value: Any):
        if isinstance(value, _TREE_TYPES):
            if key in self.__dict__:
                del self.__dict__[key]
            self[key] = value
        else:
            super().__setattr__(key, value)
            self.pop(key, None)

    def __delattr__(self, key):
        if self.get(key, None) is not None:
            del self[key]
        else:
            super().__delattr__(key)

    # Filters for filter_and_map: (module, key, value) -> keep?
    @staticmethod
    def is_module(value):
        return isinstance(value, Module)

    @staticmethod
    def valid_child_filter(module, key, value):
        return isinstance(value, (dict, list))

    @staticmethod
    def valid_parameter_filter(module, key, value):
        return isinstance(value, (dict, list, mx.array)) and not key.startswith("_")

    @staticmethod
    def trainable_parameter_filter(module, key, value):
        return Module.valid_parameter_filter(module, key, value) and key not in module._no_grad

    def filter_and_map(
        self,
        filter_fn: Callable[["Module", str, Any], bool],
        map_fn: Optional[Callable] = None,
        is_leaf_fn: Optional[Callable[["Module", str, Any], bool]] = None,
    ):
        """The tree of this module's entries kept by ``filter_fn(module, key, value)``,
        with ``map_fn`` applied to the leaves (``is_leaf_fn`` decides what is a leaf;
        by default anything that is not a module, dict or list)."""
        map_fn = map_fn or _identity
        is_leaf_fn = is_leaf_fn or _is_tree_leaf
        return {
            k: _walk(self, k, v, filter_fn, map_fn, is_leaf_fn)
            for k, v in self.items()
            if filter_fn(self, k, v)
        }

    def parameters(self):
        """All the arrays of this module and its sub-modules, as nested dicts/lists."""
        return self.filter_and_map(self.valid_parameter_filter)

    def trainable_parameters(self):
        """As :meth:`parameters`, without the frozen ones."""
        return self.filter_and_map(self.trainable_parameter_filter)

    def children(self):
        """The direct sub-modules (and lists/dicts of them)."""
        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=lambda m, k, v: isinstance(v, Module))

    def leaf_modules(self):
        """The sub-modules that contain no other module."""

        def is_leaf_module(module, key, value):
            return isinstance(value, Module) and not tree_flatten(value.children(), is_leaf=self.is_module)

        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=is_leaf_module)

    def update(self, parameters: dict, strict: bool = True) -> "Module":
        """Replace the arrays at the places ``parameters`` (a full or partial tree as
        :meth:`parameters` returns) gives. With ``strict``, every place must exist and
        hold an array."""
        _update_parameters(self, parameters, strict)
        return self

    def update_modules(self, modules: dict, strict: bool = True) -> "Module":
        """Replace sub-modules at the places ``modules`` gives (as :meth:`update`
        does for arrays)."""
        _update_modules(self, modules, strict)
        return self

    def apply(
        self,
        map_fn: Callable[[mx.array], mx.array],
        filter_fn: Optional[Callable[["Module", str, Any], bool]] = None,
    ) -> "Module":
        """Replace every parameter (kept by ``filter_fn``) ``p`` by ``map_fn(p)``."""
        filter_fn = filter_fn or Module.valid_parameter_filter
        self.update(self.filter_and_map(filter_fn, map_fn))
        return self

    def apply_to_modules(self, apply_fn: Callable[[str, "Module"], Any]) -> "Module":
        """Call ``apply_fn(dotted_path, module)`` on this module ("") and every
        sub-module."""
        pending = [("", self)]
        while pending:
            path, module = pending.pop()
            apply_fn(path, module)
            prefix = "." + path if path else ""
            pending.extend(tree_flatten(module.children(), prefix=prefix, is_leaf=self.is_module))
        return self

    def modules(self):
        """This module and all its sub-modules, as a list."""
        found = []
        self.apply_to_modules(lambda path, module: found.append(module))
        return found

    def named_modules(self):
        """``(dotted_path, module)`` for this module and all its sub-modules."""
        found = []
        self.apply_to_modules(lambda path, module: found.append((path, module)))
        return found

    def _checked_keys(self, keys, strict):
        keys = keys if isinstance(keys, list) else [keys]
        if strict:
            for k in keys:
                if k not in self:
                    raise KeyError(f"Module doesn't contain member {k}.")
        return keys

    def _check_keys_somewhere(self, keys):
        keys = keys if isinstance(keys, list) else [keys]
        modules = self.modules()
        for k in keys:
            if not any(k in m for m in modules):
                raise KeyError(f"Module doesn't contain member {k}.")

    def freeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> "Module":
        """Stop computing gradients for the parameters named ``keys`` (default: all)
        of this module and, with ``recurse``, of its sub-modules."""

        def freeze_one(path, module):
            local_keys = keys
            if local_keys is None:
                own = module.filter_and_map(
                    lambda m, k, v: not isinstance(v, Module) and m.valid_parameter_filter(m, k, v)
                )
                local_keys = [k for k, _ in tree_flatten(own)]
            module._no_grad.update(module._checked_keys(local_keys, strict))

        if recurse:
            if strict and keys is not None:
                self._check_keys_somewhere(keys)
                strict = False
            self.apply_to_modules(freeze_one)
        else:
            freeze_one("", self)
        return self

    def unfreeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> "Module":
        """Undo :meth:`freeze` for ``keys`` (default: all)."""

        def unfreeze_one(path, module):
            if keys is None:
                module._no_grad.clear()
            else:
                module._no_grad.difference_update(module._checked_keys(keys, strict))

        if recurse:
            if strict and keys is not None:
                self._check_keys_somewhere(keys)
                strict = False
            self.apply_to_modules(unfreeze_one)
        else:
            unfreeze_one("", self)
        return self

    def _set_training_mode(self, mode: bool) -> None:
        self._training = mode

    def train(self, mode: bool = True) -> "Module":
        """Put this module and its sub-modules in training mode (``mode=False``:
        evaluation mode), which layers such as Dropout read."""
        self.apply_to_modules(lambda path, module: module._set_training_mode(mode))
        return self

    def eval(self) -> "Module":
        """Same as ``train(False)``."""
        return self.train(False)

    def set_dtype(
        self,
        dtype: mx.Dtype,
        predicate: Optional[Callable[[mx.Dtype], bool]] = lambda t: mx.issubdtype(t, mx.floating),
    ):
        """Cast the parameters whose dtype passes ``predicate`` (default: floating
        ones) to ``dtype``."""
        keep = predicate or (lambda t: True)
        self.apply(lambda x: x.astype(dtype) if keep(x.dtype) else x)

    def load_weights(
        self,
        file_or_weights: Union[str, List[Tuple[str, mx.array]]],
        strict: bool = True,
    ) -> "Module":
        """Set the parameters from a ``.safetensors``/``.npz`` file or a list of
        ``(dotted_path, array)`` pairs. With ``strict``, the names and shapes must be
        exactly the model's."""
        weights = file_or_weights
        if isinstance(weights, str):
            weights = list(mx.load(weights).items())
        if strict:
            new = dict(weights)
            current = tree_flatten(self.parameters(), destination={})
            extra = new.keys() - current.keys()
            if extra:
                names = ",\n".join(sorted(extra))
                raise ValueError(f"Received {len(extra)} parameters not in model: \n{names}.")
            missing = current.keys() - new.keys()
            if missing:
                names = ",\n".join(sorted(missing))
                raise ValueError(f"Missing {len(missing)} parameters: \n{names}.")
            for k, v in current.items():
                if not isinstance(new[k], mx.array):
                    raise ValueError(f"Expected mx.array but received {type(new[k])} for parameter {k}")
                if new[k].shape != v.shape:
                    raise ValueError(
                        f"Expected shape {v.shape} but received shape {new[k].shape} for parameter {k}"
                    )
        if len(weights) != 0:
            self.update(tree_unflatten(weights), strict=False)
        return self

    def save_weights(self, file: str):
        """Save the parameters to ``file``: ``.npz`` (:func:`savez`) or
        ``.safetensors`` (:func:`save_safetensors`)."""
        flat = tree_flatten(self.parameters(), destination={})
        if file.endswith(".npz"):
            mx.savez(file, **flat)
        elif file.endswith(".safetensors"):
            mx.save_safetensors(file, flat)
        else:
            raise ValueError(f"Unsupported file extension for {file}. Use '.npz' or '.safetensors'.")


def _walk(module, key, value, filter_fn, map_fn, is_leaf_fn):
    """filter_and_map's recursion: ``key`` is the path of ``value`` inside ``module``."""
    if is_leaf_fn(module, key, value):
        return map_fn(value)
    if isinstance(value, Module):
        return {
            k: _walk(value, k, v, filter_fn, map_fn, is_leaf_fn)
            for k, v in value.items()
            if filter_fn(value, k, v)
        }
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            path = f"{key}.{k}"
            out[k] = _walk(module, path, v, filter_fn, map_fn, is_leaf_fn) if filter_fn(module, path, v) else {}
        return out
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            path = f"{key}.{i}"
            out.append(_walk(module, path, v, filter_fn, map_fn, is_leaf_fn) if filter_fn(module, path, v) else {})
        return out
    raise RuntimeError("Unexpected leaf found while traversing the module")


def _entries(tree, strict):
    """``(key, value)`` pairs of a dict or list ``tree`` given to update."""
    if isinstance(tree, dict):
        return list(tree.items())
    if isinstance(tree, list):
        return list(enumerate(tree))
    if strict:
        raise ValueError(f"Received invalid type: {type(tree).__name__}.")
    return []


def _has_slot(destination, key, strict, what):
    if isinstance(key, int):
        if key < len(destination):
            return True
        if strict:
            raise ValueError(f"List index {key} is out of bounds for destination of length {len(destination)}.")
        return False
    if key in destination:
        return True
    if strict:
        raise ValueError(f'Module does not have {what} named "{key}".')
    return False


def _update_parameters(destination, parameters, strict):
    for key, new in _entries(parameters, strict):
        if not _has_slot(destination, key, strict, "parameter"):
            continue
        current = destination[key]
        if isinstance(current, mx.array):
            if strict and not isinstance(new, mx.array):
                raise ValueError(f"Received invalid type: {type(new).__name__}.")
            destination[key] = new
        else:
            _update_parameters(current, new, strict)


def _update_modules(destination, modules, strict):
    for key, new in _entries(modules, strict):
        if not _has_slot(destination, key, strict, "sub-module"):
            continue
        current = destination[key]
        if isinstance(current, Module) and isinstance(new, Module):
            destination[key] = new
        elif isinstance(current, (dict, list)):
            _update_modules(current, new, strict)
        elif strict and new != {}:
            raise ValueError(f"Received invalid type: {type(new).__name__}.")
