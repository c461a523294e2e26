#!/usr/bin/env bash
# Builds the guide and the Python API reference into site/ with MkDocs in strict mode (a
# broken link, a missing page or an unresolvable reference fails the build), then the
# Rust API reference with rustdoc, warnings denied, and checks that it shows an example
# for every public item (tools/check_rust_examples.py). Reuses the
# .venv of setup-python.sh (the API pages are read from the built extension) and installs
# the documentation tools into it. The pages' examples are tests: see python/tests/test_docs.py.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-python.sh
tools="mkdocs==1.6.1 mkdocstrings==1.0.8 mkdocstrings-python==2.0.11"
stamp=.venv/.lazulite-docs-requirements
if [ "$(cat "$stamp" 2>/dev/null)" != "$tools" ]; then
  # shellcheck disable=SC2086 # the list is split on purpose
  .venv/bin/python -m pip install --quiet $tools
  echo "$tools" > "$stamp"
fi

rm -rf site
.venv/bin/python -m mkdocs build --strict --quiet

# The site links only to its own pages and files.
if grep -rIl --include='*.html' -E '(href|src)="(https?:)?//' site >/dev/null; then
  echo "site/ links outside itself:" >&2
  grep -rIo --include='*.html' -E '(href|src)="(https?:)?//[^"]*' site | sort -u >&2
  exit 1
fi
echo "docs: built site/ ($(find site -name '*.html' | wc -l) pages)"

# The Rust API reference, with every public item documented (missing_docs) and every
# intra-doc link resolved: a warning fails the build. Then every public item and method
# must show an example (the examples themselves run as doctests: cargo test --doc).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p lazulite --quiet
echo "docs: built ${CARGO_TARGET_DIR:-target}/doc/lazulite/index.html"
.venv/bin/python tools/check_rust_examples.py
