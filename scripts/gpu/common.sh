# Shared by scripts/gpu/run_missing*.sh (sourced, never run): the set-up, the unit-list reader and the
# end (each sweep's summary, then PACK). Sets PY, B, EXTRA, L; the caller sets T and its own defaults.
set -u
set -f  # unit names go through $(...) unquoted: no globbing
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PY=${PY:-python3}
B=${B:-400}
EXTRA=${EXTRA:-}
: "${OUT:?set OUT to the folder the evidence files go to}"
mkdir -p "$OUT/sweeps" "$OUT/logs"
L="$OUT/logs"

ops() {  # one --sweep-op=UNIT per line of a file (the unit names hold '|', never spaces); $2: that half only
  awk -v half="${2:-}" 'half == "" || NR % 2 == half {print "--sweep-op=" $0}' "$1"
}

devices() {  # the GPU and the versions that ran (the log's first lines)
  nvidia-smi -L 2>/dev/null; $PY -c "import torch, jax; print('torch', torch.__version__, 'jax', jax.__version__)"
}

budget() {  # the --sweep-budget of a sweep whose units may each run $1 seconds: its last unit ends by B + 70
  local v=$(( B + 70 - $1 )); [ "$v" -lt 60 ] && v=60; echo "$v"
}

unit_lists() {  # SPEC...: each `coverage --units SPEC` list into $L/units-<suite>-<spec>.txt, in parallel, then their logs
  local spec
  for spec in "$@"; do
    $PY scripts/branch_inventory.py coverage --units "$spec" > "$L/units-${spec%%:*}-${spec#*:}.txt" 2> "$L/units-${spec%%:*}-${spec#*:}.log" &
  done
  wait
  for spec in "$@"; do cat "$L/units-${spec%%:*}-${spec#*:}.log"; done  # no globbing here (set -f above)
}

finish() {  # each sweep log's summary, the files, then PACK
  for f in "$@"; do
    echo "== $f"; grep -v "^\[" "$f" | tail -n 8 | cut -c1-300
  done
  ls -laR "$OUT/sweeps"
  # PACK=1: the evidence files and logs in one archive, $OUT/results.tgz, and nothing else under $OUT:
  # for a runner that brings back only a few files, or none in nested folders (on 2026-11-27 two calls'
  # evidence was lost that way: four sweep files under $OUT/sweeps/<env>/ were not returned).
  if [ -n "${PACK:-}" ]; then
    tar -czf "$OUT/results.tgz" -C "$OUT" sweeps logs && rm -rf "$OUT/sweeps" "$OUT/logs" && ls -la "$OUT"
  fi
}
