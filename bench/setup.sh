#!/usr/bin/env bash
# Creates .venv-bench (if missing) with the benchmark's peers (NumPy, JAX on CPU, MLX on CPU,
# mlx-lm) and matplotlib (for `compare.py --write`, which redraws the chart), and installs the `lazulite.core` extension built in release mode. Kept apart from the
# test venv (.venv), which must not need JAX or MLX.
set -euo pipefail
cd "$(dirname "$0")/.."

# mlx-lm (bench/llm.py) with the tokenizer stack it imports, pinned as in the test venv.
requirements="maturin==1.16.0 numpy==2.4.6 matplotlib==3.11.2 jax[cpu]==0.10.2 mlx==0.32.4 mlx-cpu==0.32.4 mpi4py==4.1.2 mlx-lm==0.32.2 transformers==5.24.0 sentencepiece==0.2.3 protobuf==7.36.2 pyyaml==6.0.4 jinja2==3.1.6"
stamp=.venv-bench/.lazulite-bench-requirements

if [ ! -x .venv-bench/bin/python ]; then
  python3 -m venv .venv-bench
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$requirements" ]; then
  # shellcheck disable=SC2086 # the list is split on purpose
  .venv-bench/bin/python -m pip install --quiet $requirements
  echo "$requirements" > "$stamp"
fi

(cd python && VIRTUAL_ENV="$PWD/../.venv-bench" ../.venv-bench/bin/maturin develop --release --quiet)
