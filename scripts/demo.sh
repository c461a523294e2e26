#!/usr/bin/env bash
# The main job: a demo of lazy evaluation, transforms and more on real computations.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release --example demo
