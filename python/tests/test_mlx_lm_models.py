"""mlx-lm's model code on lazulite, with ``mlx`` resolving to it through the lazulite-mlx
package: every model module imports, as it does with real MLX on Linux."""

import importlib
import pkgutil

import pytest

import lazulite.core as mx


def test_every_model_module_imports():
    import mlx_lm.models

    failures = {}
    names = [m.name for m in pkgutil.iter_modules(mlx_lm.models.__path__)]
    # olmo needs the ai2-olmo package, with real MLX too.
    for name in sorted(set(names) - {"olmo"}):
        try:
            importlib.import_module(f"mlx_lm.models.{name}")
        except Exception as e:  # noqa: BLE001 - collect every failure
            failures[name] = f"{type(e).__name__}: {e}"
    assert len(names) > 100 and not failures, failures


def test_gpu_kernel_builders_raise_as_mlx_does_without_a_gpu():
    # Real MLX 0.32.4 on Linux: a Metal kernel is built and raises when called; the CUDA
    # ones raise at once.
    kernel = mx.fast.metal_kernel(name="k", input_names=["a"], output_names=["o"], source="")
    with pytest.raises(RuntimeError, match=r"\[metal_kernel\] No Metal back-end."):
        kernel(inputs=[mx.array(1.0)], output_shapes=[(1,)], output_dtypes=[mx.float32],
               grid=(1, 1, 1), threadgroup=(1, 1, 1))
    with pytest.raises(RuntimeError, match=r"\[cuda_kernel\] No CUDA back-end."):
        mx.fast.cuda_kernel(name="k", input_names=["a"], output_names=["o"], source="")
    with pytest.raises(RuntimeError, match=r"\[cuda_kernel\] No CUDA back-end."):
        mx.fast.precompiled_cuda_kernel(name="k", compiled_source=b"", inputs=[mx.array(1.0)],
                                        output_shapes=[(1,)], output_dtypes=[mx.float32], scalars=[],
                                        grid=(1, 1, 1), threadgroup=(1, 1, 1))
