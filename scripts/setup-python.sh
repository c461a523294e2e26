#!/usr/bin/env bash
# Creates .venv (if missing) with the Python test tools, then builds the `lazulite.core`
# extension in the dev profile and installs it there. Quick when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements="maturin==1.16.0 numpy==2.4.6 pytest==9.2.0 hypothesis==6.170.15 safetensors==0.8.0 gguf==0.19.0 jax[cpu]==0.10.2"
stamp=.venv/.lazulite-requirements

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# mlx-lm's model code runs on lazulite in the tests; its own requirements (a tokenizer
# and model-hub stack) are not needed for that, hence --no-deps.
no_deps="mlx-lm==0.32.2"
if [ "$(cat "$stamp" 2>/dev/null)" != "$requirements $no_deps" ]; then
  # shellcheck disable=SC2086 # the list is split on purpose
  .venv/bin/python -m pip install --quiet $requirements
  .venv/bin/python -m pip install --quiet --no-deps $no_deps
  echo "$requirements $no_deps" > "$stamp"
fi

(cd python && VIRTUAL_ENV="$PWD/../.venv" ../.venv/bin/maturin develop --quiet)
