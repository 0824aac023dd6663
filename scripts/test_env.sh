#!/usr/bin/env bash
# The test environment of the README's test command: a new .venv holding exactly
# requirements/test.lock (every package pinned, every file's sha256 checked) and this project as
# an editable install.
#
# pip installs uv from requirements/uv.lock (hashes checked), and uv installs the lock: it fetches
# and unpacks the wheels in parallel, several times faster than pip here. Nothing is byte-compiled:
# the tests' own imports write the bytecode of what they use (README).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q --require-hashes -r requirements/uv.lock
# shellcheck source=scripts/pip_indexes.sh
source scripts/pip_indexes.sh
.venv/bin/uv pip install -q --python .venv/bin/python --index-strategy unsafe-best-match "${index_args[@]}" \
  --require-hashes -r requirements/test.lock
.venv/bin/pip install -q --no-deps --no-build-isolation -e .
