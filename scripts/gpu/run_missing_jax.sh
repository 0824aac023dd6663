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
T=${T:-90}
. "$(dirname "$0")/common.sh"
nvidia-smi -L 2>/dev/null; $PY -c "import jax; print('jax', jax.__version__, jax.devices())"
$PY scripts/branch_inventory.py coverage --units jax:float16,float64 > "$L/units-jax.txt" 2> "$L/units-jax.log" &
$PY scripts/branch_inventory.py coverage --units jax-branches > "$L/units-jax-branches.txt" 2> "$L/units-jax-branches.log" &
wait
cat "$L/units-jax.log" "$L/units-jax-branches.log"
$PY -m kb --root . verify --sweep jax --sweep-dtypes float16,float64 $(ops "$L/units-jax.txt") \
    --sweep-workers 5 --sweep-budget "$B" --timeout 60 $EXTRA --out "$OUT/sweeps" > "$L/jax.log" 2>&1 &
$PY -m kb --root . verify --sweep jax-branches $(ops "$L/units-jax-branches.txt") \
    --sweep-workers 3 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/jax-branches.log" 2>&1 &
wait
finish "$L"/jax.log "$L"/jax-branches.log
