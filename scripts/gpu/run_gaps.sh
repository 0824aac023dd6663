#!/bin/bash
# One GPU call (about 300 s on one H100): the PyTorch and JAX sweeps of the inventory's branches that still
# have no evidence and no stated reason after run_missing.sh and run_missing_jax.sh (docs/sweep.md, "Branches
# without evidence"). Run from anywhere inside the repository:
#
#   OUT=/some/folder bash scripts/gpu/run_gaps.sh            # writes $OUT/sweeps/<env-id>/<stamp>-<suite>.json
#   OUT=/tmp/x EXTRA="--device cpu --sweep-limit 1" bash scripts/gpu/run_gaps.sh   # a CPU dry run
#
# The unit lists are read from the committed inventory, reasons and evidence (scripts/branch_inventory.py
# coverage --units), so a unit whose branches all have evidence is not run again. In parallel:
#   1. PyTorch branch units sparse_coo, sparse_csr (the two halves of sparse_layouts, whose CSR half the 150 s
#      unit limit cut on 2026-11-28; with the losses, normalize, MultiheadAttention, batched CSR bmm and COO
#      complex views) and module_values (loss modules' reductions, dense addmv and sparse.mm);
#   2. op_db and module_db units with an integer, bool or complex dtype branch and no case in it, forward only,
#      modules in dtypes module_db does not list for them (--sweep-any-module-dtype: run_missing.sh's sweep
#      skipped them, "none of torch.int64, ... on cuda");
#   3. the same for float16, float64 and bfloat16 (11 units);
#   4. the JAX catalog in float16 and float64 where a branch lacks a case (the 2026-11-28 sweep's budget cut 76);
#   5. the JAX branch units with a branch without evidence (scans, linear algebra, FFT, matmul, sort, interp),
#      and the small diagflat and lexsort units (the catalog's 2M-value inputs overflowed or timed out);
#   6. the JAX convolution and XLA attention units in float64 only (--sweep-dtypes narrows a branch unit).
# The branch units get 280 s each: on 2026-11-28 sparse_coo and sparse_csr ran past 150 s and left 79 layout
# branches without a case (they start first, so they still end by about 300 s).
# B: the budget in seconds after which no sweep starts a unit (the rest are `skipped`; default 240 here, so
# that the units started last end by about 300 s); T: the limit per unit. PY: the Python with torch and jax.
# PACK=1: one archive (scripts/gpu/common.sh).
T=${T:-60}
B=${B:-240}
. "$(dirname "$0")/common.sh"
devices  # common.sh: the GPU and the torch and jax versions
SPECS="pytorch-eager:int,bool,complex pytorch-eager:float16,float64,bfloat16 jax:float16,float64 jax-branches"
unit_lists $SPECS  # common.sh: one list per spec
JB="$L/units-jax-branches-jax-branches.txt"
grep -v -e '^jax.lax.conv_general_dilated|' -e '^jax.nn.dot_product_attention|' "$JB" > "$L/units-jb-all.txt"
grep -e '^jax.lax.conv_general_dilated|' -e '^jax.nn.dot_product_attention|' "$JB" > "$L/units-jb-f64.txt"
printf '%s\n' 'jax.numpy.diagflat|b:n=2048' 'jax.numpy.lexsort|b:2x65536' >> "$L/units-jb-all.txt"
$PY -m kb --root . verify --sweep pytorch-branches --sweep-op branch:sparse_coo --sweep-op branch:sparse_csr \
    --sweep-op branch:module_values --sweep-workers 3 --sweep-budget "$B" --timeout 280 $EXTRA --out "$OUT/sweeps" > "$L/branches.log" 2>&1 &
sleep 3  # each sweep names its file by its start second and suite: two in one second would collide
$PY -m kb --root . verify --sweep pytorch-eager --sweep-dtypes int64/int32/int16/int8/uint8,bool,complex64/complex128 \
    --sweep-passes forward --sweep-any-module-dtype $(ops "$L/units-pytorch-eager-int,bool,complex.txt") \
    --sweep-workers 4 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/int.log" 2>&1 &
sleep 3
$PY -m kb --root . verify --sweep pytorch-eager --sweep-dtypes float16,float64,bfloat16 --sweep-passes forward \
    --sweep-any-module-dtype $(ops "$L/units-pytorch-eager-float16,float64,bfloat16.txt") \
    --sweep-workers 2 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/float.log" 2>&1 &
$PY -m kb --root . verify --sweep jax --sweep-dtypes float16,float64 $(ops "$L/units-jax-float16,float64.txt") \
    --sweep-workers 4 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/jax.log" 2>&1 &
sleep 3
$PY -m kb --root . verify --sweep jax-branches $(ops "$L/units-jb-all.txt") \
    --sweep-workers 3 --sweep-budget "$B" --timeout 90 $EXTRA --out "$OUT/sweeps" > "$L/jax-branches.log" 2>&1 &
sleep 3
$PY -m kb --root . verify --sweep jax-branches --sweep-dtypes float64 $(ops "$L/units-jb-f64.txt") \
    --sweep-workers 2 --sweep-budget "$B" --timeout 90 $EXTRA --out "$OUT/sweeps" > "$L/jax-f64.log" 2>&1 &
wait
finish "$L"/branches.log "$L"/int.log "$L"/float.log "$L"/jax.log "$L"/jax-branches.log "$L"/jax-f64.log
