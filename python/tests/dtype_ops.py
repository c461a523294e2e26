"""The ops whose result dtypes are compared with MLX (test_result_dtypes.py), as a
function of the module (`mlx.core` or `lazulite.core`) so both run the same table."""


def ops(mx):
    """name -> function of one 2x3 array (values 0..5) of the dtype under test."""
    return {
        "sum": lambda a: mx.sum(a, axis=1),
        "prod": lambda a: mx.prod(a),
        "max": lambda a: mx.max(a, axis=0),
        "mean": lambda a: mx.mean(a),
        "var": lambda a: mx.var(a, axis=1),
        "logsumexp": lambda a: mx.logsumexp(a),
        "all": lambda a: mx.all(a),
        "argmax": lambda a: mx.argmax(a, axis=1),
        "median": lambda a: mx.median(a),
        "count_nonzero": lambda a: mx.count_nonzero(a),
        "softmax": lambda a: mx.softmax(a, axis=-1),
        "cumsum": lambda a: mx.cumsum(a, axis=1),
        "cumprod": lambda a: mx.cumprod(a, axis=1),
        "cummax": lambda a: mx.cummax(a, axis=0),
        "logcumsumexp": lambda a: mx.logcumsumexp(a, axis=1),
        "sort": lambda a: mx.sort(a),
        "argsort": lambda a: mx.argsort(a),
        "topk": lambda a: mx.topk(a, 2),
        "trace": lambda a: mx.trace(a),
        "pad": lambda a: mx.pad(a, 1),
        "clip": lambda a: mx.clip(a, 1, 3),
        "where": lambda a: mx.where(a, a, 0),
        "nan_to_num": lambda a: mx.nan_to_num(a),
        "isclose": lambda a: mx.isclose(a, a),
        "matmul": lambda a: mx.matmul(a, a.T),
        "outer": lambda a: mx.outer(a[0], a[1]),
        "tensordot": lambda a: mx.tensordot(a, a.T, axes=1),
    }
