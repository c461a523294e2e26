#!/usr/bin/env bash
# Runs every test: the Rust workspace (unit, integration, doc tests), the Rust
# distributed tests under mpirun, then the Python package's tests (multi-process ones
# included, and the guide's examples) in a virtual environment this script creates and
# fills itself, then builds the documentation site.
set -euo pipefail
cd "$(dirname "$0")/.."

# Open MPI runs the multi-process tests; lazulite itself loads it only at run time.
if ! command -v mpirun >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "== Installing Open MPI for the multi-process tests"
  (apt-get update -qq && apt-get install -y -qq openmpi-bin libopenmpi-dev) >/dev/null
fi
# Open MPI refuses root unless told; CI containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== Rust tests"
cargo test --workspace

if command -v mpirun >/dev/null 2>&1; then
  echo "== Rust distributed tests and the rule table (its collective rows) under mpirun (2 and 4 processes)"
  suite=$(cargo test -p lazulite --test suite --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*suite-[^"]*\)".*/\1/p' | head -n 1)
  for n in 2 4; do
    timeout 600 mpirun --oversubscribe -n "$n" "$suite" distributed:: rules:: --test-threads=1 --quiet
  done
  # The data-parallel example checks itself against one process (built by cargo test).
  timeout 600 mpirun --oversubscribe -n 4 target/debug/examples/distributed >/dev/null
elif [ -n "${CI:-}" ]; then
  echo "mpirun is missing: the multi-process tests cannot run" >&2
  exit 1
fi

if [ -f python/pyproject.toml ]; then
  echo "== Python tests"
  bash scripts/setup-python.sh
  .venv/bin/python -m pytest -q python/tests
  echo "== Documentation site (strict: a broken link fails)"
  bash scripts/docs.sh
fi
