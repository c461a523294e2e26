#!/usr/bin/env bash
# Runs every test: the Rust workspace (unit, integration, doc tests), then the Python
# package's tests in a virtual environment this script creates and fills itself.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Rust tests"
cargo test --workspace

if [ -f python/pyproject.toml ]; then
  echo "== Python tests"
  bash scripts/setup-python.sh
  .venv/bin/python -m pytest -q python/tests
fi
