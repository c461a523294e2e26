"""`lazulite.core.__array_namespace_info__()`: the array API standard's inspection object,
answering as `mlx.core.__array_namespace_info__()` does (one CPU device; the standard's
dtypes, which leave out float16 and bfloat16)."""

from . import core as mx

# The standard's kinds and the dtypes of each, in the order MLX lists them.
_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64",),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + ("float32", "complex64", "float64")
_ALL = ("bool",) + _KINDS["numeric"]


def _dtype(name):
    return mx.bool_ if name == "bool" else getattr(mx, name)


def _check_device(device):
    if device is not None and not isinstance(device, mx.Device):
        raise TypeError("Expected a mlx Device")


class ArrayNamespaceInfo:
    """What the namespace supports, its devices and its dtypes."""

    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 10}

    def default_device(self):
        return mx.default_device()

    def default_dtypes(self, *, device=None):
        _check_device(device)
        return {"real floating": mx.float32, "complex floating": mx.complex64,
                "integral": mx.int32, "indexing": mx.int32}

    def devices(self):
        return (mx.Device(mx.cpu),)

    def dtypes(self, *, device=None, kind=None):
        _check_device(device)
        if kind is None:
            names = _ALL
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            if not all(isinstance(k, str) and k in _KINDS for k in kinds):
                raise ValueError(f"Unsupported dtype kind: {kinds!r}")
            names = tuple(n for n in _ALL if any(n in _KINDS[k] for k in kinds))
        return {n: _dtype(n) for n in names}


def __array_namespace_info__():
    return ArrayNamespaceInfo()
