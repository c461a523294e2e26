#!/usr/bin/env bash
# Creates .venv (if missing) with the Python test tools, then builds the `lazulite.core`
# extension in the dev profile and installs it there. Quick when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements="maturin==1.16.0 numpy==2.4.6 pytest==9.2.0 ruff==0.14.0 hypothesis==6.170.15 safetensors==0.8.0 gguf==0.19.0 jax[cpu]==0.10.2"
stamp=.venv/.lazulite-requirements

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# mlx-lm (with its tokenizer stack, as users install it) runs on lazulite through the
# lazulite-mlx package, which makes `import mlx` resolve to lazulite; mlx-lm's own model
# and sampler tests come from its source release.
mlx_lm="mlx-lm==0.32.2 transformers==5.24.0 sentencepiece==0.2.3 protobuf==7.36.2 pyyaml==6.0.4 jinja2==3.1.6"
# The shim is installed as a user would (not editable: an editable install loses to any
# folder named `mlx` in the working directory); its checksum makes a change reinstall it.
shim=$(cat python/mlx-shim/pyproject.toml python/mlx-shim/mlx/__init__.py | sha1sum | cut -c1-12)
if [ "$(cat "$stamp" 2>/dev/null)" != "$requirements $mlx_lm $shim" ]; then
  # shellcheck disable=SC2086 # the lists are split on purpose
  .venv/bin/python -m pip install --quiet $requirements $mlx_lm
  .venv/bin/python -m pip install --quiet --no-deps --force-reinstall ./python/mlx-shim
  rm -rf python/mlx-shim/build python/mlx-shim/*.egg-info
  rm -rf .venv/mlx-lm-source && mkdir -p .venv/mlx-lm-source
  .venv/bin/python -m pip download --quiet --no-deps --no-binary :all: mlx-lm==0.32.2 -d .venv/mlx-lm-source
  tar -xzf .venv/mlx-lm-source/mlx_lm-0.32.2.tar.gz -C .venv/mlx-lm-source
  echo "$requirements $mlx_lm $shim" > "$stamp"
fi

(cd python && VIRTUAL_ENV="$PWD/../.venv" ../.venv/bin/maturin develop --quiet)

# Real MLX, in a virtual environment of its own (in .venv the lazulite-mlx package owns the
# name `mlx`): the differential test (python/tests/test_differential.py) runs it in child
# processes as its oracle.
mlx_requirements="mlx==0.32.4 mlx-cpu==0.32.4 numpy==2.4.6"
if [ "$(cat .venv-mlx/.lazulite-requirements 2>/dev/null)" != "$mlx_requirements" ]; then
  python3 -m venv .venv-mlx
  # shellcheck disable=SC2086 # the list is split on purpose
  .venv-mlx/bin/python -m pip install --quiet $mlx_requirements
  echo "$mlx_requirements" > .venv-mlx/.lazulite-requirements
fi
