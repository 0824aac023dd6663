#!/bin/bash
# One GPU call (about 300 s on one H100 or H200, B around 230): the sweeps of the inventory's branches that still
# have no evidence and no stated reason after run_rest.sh (2026-11-28T03:59, data/sweeps/h200-x1-14c028f6/) and the
# reasons written from its files (docs/sweep.md, "Branches without evidence"). Run from anywhere inside the repository:
#
#   OUT=/some/folder PACK=1 bash scripts/gpu/run_last.sh       # writes $OUT/sweeps/<env-id>/<stamp>-<suite>.json
#   OUT=/tmp/y EXTRA="--device cpu --sweep-limit 1" B=30 T=30 bash scripts/gpu/run_last.sh   # a CPU dry run
#
# The unit lists are read from the committed inventory, reasons and evidence (scripts/branch_inventory.py
# coverage --units), so a unit whose branches all have evidence or a reason by then is not run, and a sweep whose
# list is empty is not started (a sweep given no --sweep-op would run its whole catalog). In parallel:
#   1. the PyTorch branch unit `rest` (verifiers/sweep/torch_branches_more.py), for the cases added after 03:59:
#      the convolution and RNN modules (float weights) given an int64 or a bool input, and baddbmm and
#      triangular_solve with their CSR operand where the kernel takes it (batch1; A), which 03:59 passed as `input`;
#   2. the op_db units whose every case errored (coverage --units pytorch-eager:errors), if any are left;
#   3. the JAX catalog units with a bfloat16 or float64 branch without a case or a gradient branch without a backward
#      case (the sort family, median, nanmedian, select; interp's bfloat16 now has a reason): at 03:59 their
#      deterministic-mode workers ran past 150 s on 2M values; they now take 256 x 256 (the sort family, median and
#      nanmedian, with ties) or 64 x 64 (select) values (verifiers/sweep/jax_worker.py SMALL), 150 s a unit;
#   4. the JAX branch units with a branch without evidence (sort with ties in 64 x 1024 values, interp's converging
#      points in 64K values: both ran past 90 s at 03:59), 150 s a unit.
# B (default 230): each sweep's --sweep-budget (after which it starts no unit; the rest are `skipped`) is B + 70
# less its unit limit, at least 60, so that a unit started last ends by about B + 70 = 300 s; T: the limit per unit
# of the op_db units. PY: the Python with torch and jax. PACK=1: one archive (scripts/gpu/common.sh).
T=${T:-90}
B=${B:-230}
. "$(dirname "$0")/common.sh"
devices  # common.sh: the GPU and the torch and jax versions
SPECS="pytorch-eager:errors,complex jax:float16,bfloat16,float64,backward jax-branches"
unit_lists $SPECS  # common.sh: one list per spec
LOGS="$L/branches.log"
$PY -m kb --root . verify --sweep pytorch-branches --sweep-op branch:rest \
    --sweep-workers 1 --sweep-budget "$(budget 200)" --timeout 200 $EXTRA --out "$OUT/sweeps" > "$L/branches.log" 2>&1 &
sleep 3  # each sweep names its file by its start second and suite: two in one second would collide
if [ -s "$L/units-pytorch-eager-errors,complex.txt" ]; then
  LOGS="$LOGS $L/eager.log"
  $PY -m kb --root . verify --sweep pytorch-eager \
      --sweep-dtypes float32,float16,bfloat16,float64,int64/int32/int16/int8/uint8,bool,complex64/complex128 \
      $(ops "$L/units-pytorch-eager-errors,complex.txt") --sweep-workers 2 --sweep-budget "$(budget "$T")" --timeout "$T" \
      $EXTRA --out "$OUT/sweeps" > "$L/eager.log" 2>&1 &
  sleep 3
fi
if [ -s "$L/units-jax-float16,bfloat16,float64,backward.txt" ]; then
  LOGS="$LOGS $L/jax.log"
  $PY -m kb --root . verify --sweep jax --sweep-dtypes bfloat16,float64 $(ops "$L/units-jax-float16,bfloat16,float64,backward.txt") \
      --sweep-workers 3 --sweep-budget "$(budget 150)" --timeout 150 $EXTRA --out "$OUT/sweeps" > "$L/jax.log" 2>&1 &
  sleep 3
fi
if [ -s "$L/units-jax-branches-jax-branches.txt" ]; then
  LOGS="$LOGS $L/jax-branches.log"
  $PY -m kb --root . verify --sweep jax-branches $(ops "$L/units-jax-branches-jax-branches.txt") \
      --sweep-workers 2 --sweep-budget "$(budget 150)" --timeout 150 $EXTRA --out "$OUT/sweeps" > "$L/jax-branches.log" 2>&1 &
fi
wait
finish $LOGS
