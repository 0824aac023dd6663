#!/usr/bin/env bash
# Refresh requirements/test.lock: every package the README's test command installs, pinned to
# one version each with the sha256 of every file of that version (pip --require-hashes).
#
#   bash scripts/lock.sh            # re-resolve everything to the newest releases the indexes serve
#   bash scripts/lock.sh --check    # exit 1 if the lock no longer satisfies pyproject.toml
#   bash scripts/lock.sh --keep     # after adding a dependency: pin it (and what it needs), keep every other pin
#
# The library itself keeps open ranges in pyproject.toml for its users; only the tests are pinned.
# The lock is made by uv (itself pinned below) for CI's interpreter and platform: CPython 3.11 on
# Linux x86-64 (manylinux_2_28). uv does not read pip's configuration, so the find-links and
# extra indexes pip is configured with on this machine are passed on to it.
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=$(sed -n "s/^uv==//p" requirements/uv.in)
out=requirements/test.lock
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/uv"
"$tmp/uv/bin/pip" install -q "uv==$UV_VERSION"

# shellcheck source=scripts/pip_indexes.sh
source scripts/pip_indexes.sh
args=("${index_args[@]}")

target=$out
mode=(--upgrade)
if [ "${1:-}" = "--check" ]; then
  # Keep every pin that still satisfies pyproject.toml; any change means the lock is stale.
  target="$tmp/check.lock"; cp "$out" "$target"; mode=()
elif [ "${1:-}" = "--keep" ]; then
  mode=()
fi
"$tmp/uv/bin/uv" pip compile "${mode[@]}" pyproject.toml requirements/build.in --extra test \
  --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
  --index-strategy unsafe-best-match --quiet "${args[@]}" -o "$target"
# uv itself, for scripts/test_env.sh (pip installs it from this lock, with hashes).
if [ "${1:-}" != "--check" ]; then
  "$tmp/uv/bin/uv" pip compile requirements/uv.in --generate-hashes --python-version 3.11 \
    --python-platform x86_64-manylinux_2_28 --quiet "${args[@]}" -o requirements/uv.lock
fi
if [ "${1:-}" = "--check" ]; then
  pins() { grep -E '^[A-Za-z0-9]' "$1" | sed 's/ \\$//' | sort; }
  if ! diff <(pins "$out") <(pins "$target"); then
    echo "requirements/test.lock is stale: run bash scripts/lock.sh" >&2; exit 1
  fi
  echo "requirements/test.lock satisfies pyproject.toml"
fi
