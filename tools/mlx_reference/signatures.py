"""Writes python/tests/mlx_signatures.json: the signature line of each MLX function and
array method lazulite binds, as real MLX documents it. Run with a Python that has mlx:

    python tools/mlx_reference/signatures.py
"""

import json
from pathlib import Path

import mlx.core as mx

OUT = Path(__file__).resolve().parents[2] / "python" / "tests" / "mlx_signatures.json"

FUNCTIONS = """
sum prod max min mean var std logsumexp all any argmax argmin median count_nonzero softmax
cumsum cumprod cummax cummin logcumsumexp sort argsort partition argpartition topk
searchsorted diff flatten unflatten squeeze expand_dims swapaxes moveaxis concatenate concat
stack split unstack pad tile repeat roll flip as_strided view contiguous atleast_1d atleast_2d
atleast_3d broadcast_arrays empty full_like linspace eye identity tri tril triu meshgrid diag
diagonal trace where clip nan_to_num isclose allclose array_equal matmul addmm inner outer
tensordot kron einsum vecdot grad value_and_grad vjp jvp vmap stop_gradient export_to_dot
save savez savez_compressed save_safetensors save_gguf load
take take_along_axis put_along_axis slice slice_update
compile checkpoint async_eval disable_compile enable_compile
conv1d conv2d conv3d conv_general conv_transpose1d conv_transpose2d conv_transpose3d
gather_mm gather_qmm hadamard_transform to_fp8 from_fp8
""".split()
RANDOM = "key split seed uniform normal randint bernoulli truncated_normal gumbel laplace".split()
LINALG = """
norm inv tri_inv cholesky cholesky_inv pinv solve solve_triangular qr svd eigh eigvalsh lu
lu_factor cross det slogdet eig eigvals
""".split()
METHODS = """
sum prod max min mean var std logsumexp all any argmax argmin cumsum cumprod cummax cummin
logcumsumexp flatten squeeze swapaxes moveaxis split diagonal diag view __dlpack__
__dlpack_device__
""".split()


def first_line(obj):
    return obj.__doc__.strip().splitlines()[0]


facts = {
    "functions": {n: first_line(getattr(mx, n)) for n in FUNCTIONS},
    "random": {n: first_line(getattr(mx.random, n)) for n in RANDOM},
    "methods": {n: first_line(getattr(mx.array, n)) for n in METHODS},
    "linalg": {n: first_line(getattr(mx.linalg, n)) for n in LINALG},
}
OUT.write_text(json.dumps(facts, indent=1) + "\n")
print(f"wrote {OUT}")
