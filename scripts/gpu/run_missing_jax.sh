#!/bin/bash
# The second GPU call (about 560 s on one H100): the JAX sweeps that give the inventory's branches without
# evidence a case (docs/sweep.md, "Branches without evidence"). Run from anywhere inside the repository:
#
#   OUT=/some/folder bash scripts/gpu/run_missing_jax.sh
#   OUT=/tmp/x EXTRA="--device cpu --sweep-limit 1" bash scripts/gpu/run_missing_jax.sh   # a CPU dry run
#
# In parallel, each unit in the three XLA modes:
#   1. the JAX catalog's functions with a float16 or float64 branch and no case in it (the catalog ran
#      float32 and bfloat16 only), forward and vjp, in float16 and float64 (x64 on);
#   2. the JAX branch units with a branch that has no evidence (scans, sorts, top_k, unique, linear
#      algebra, FFT, matmul, cuDNN attention, 3-D and grouped convolutions, segment min/max, histogram):
#      earlier calls skipped them by budget or did not have them yet.
# B: the budget in seconds; T: the limit per unit. PY: the Python that has jax (default python3).
set -u
set -f  # unit names go through $(...) unquoted: no globbing
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PY=${PY:-python3}
B=${B:-400}
T=${T:-90}
EXTRA=${EXTRA:-}
: "${OUT:?set OUT to the folder the evidence files go to}"
mkdir -p "$OUT/sweeps" "$OUT/logs"
nvidia-smi -L 2>/dev/null; $PY -c "import jax; print('jax', jax.__version__, jax.devices())"
L="$OUT/logs"
$PY scripts/branch_inventory.py coverage --units jax:float16,float64 > "$L/units-jax.txt" 2> "$L/units-jax.log" &
$PY scripts/branch_inventory.py coverage --units jax-branches > "$L/units-jax-branches.txt" 2> "$L/units-jax-branches.log" &
wait
cat "$L/units-jax.log" "$L/units-jax-branches.log"
ops() { awk '{print "--sweep-op=" $0}' "$1"; }
$PY -m kb --root . verify --sweep jax --sweep-dtypes float16,float64 $(ops "$L/units-jax.txt") \
    --sweep-workers 5 --sweep-budget "$B" --timeout 60 $EXTRA --out "$OUT/sweeps" > "$L/jax.log" 2>&1 &
$PY -m kb --root . verify --sweep jax-branches $(ops "$L/units-jax-branches.txt") \
    --sweep-workers 3 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/jax-branches.log" 2>&1 &
wait
for f in "$L"/jax.log "$L"/jax-branches.log; do
  echo "== $f"; grep -v "^\[" "$f" | tail -n 8 | cut -c1-300
done
ls -laR "$OUT/sweeps"
# PACK=1: the evidence files and logs in one archive, $OUT/results.tgz, and nothing else under $OUT:
# for a runner that brings back only a few files, or none in nested folders (on 2026-11-27 two calls'
# evidence was lost that way: four sweep files under $OUT/sweeps/<env>/ were not returned).
if [ -n "${PACK:-}" ]; then
  tar -czf "$OUT/results.tgz" -C "$OUT" sweeps logs && rm -rf "$OUT/sweeps" "$OUT/logs" && ls -la "$OUT"
fi
