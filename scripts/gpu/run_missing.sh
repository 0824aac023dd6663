#!/bin/bash
# One GPU call (about 560 s on one H100): the PyTorch sweeps that give the inventory's branches without
# evidence a case (docs/sweep.md, "Branches without evidence"). Run from anywhere inside the repository:
#
#   OUT=/some/folder bash scripts/gpu/run_missing.sh            # writes $OUT/sweeps/<env-id>/<stamp>-<suite>.json
#   OUT=/tmp/x EXTRA="--device cpu --sweep-limit 1" bash scripts/gpu/run_missing.sh   # a CPU dry run
#
# Which units run is read from the committed inventory and evidence (scripts/branch_inventory.py coverage
# --units), so a unit that already has evidence for every branch is not run again. In parallel:
#   1, 2. op_db and module_db units with an integer, bool or complex dtype branch and no case in it: forward
#         only, the first integer dtype the op takes (int64/int32/...), bool, complex64 (or complex128);
#         the units split in two halves, one sweep each;
#   3.    units with a float16, float64 or bfloat16 branch and no case in it (the float16/float64 sweep was
#         cut by its budget), forward only; modules also in dtypes module_db does not list for them;
#   4.    the branch units for sparse layouts, FFT normalisations and argument values op_db leaves out.
# B: the budget in seconds after which no sweep starts a unit (the rest are `skipped`); T: the limit per unit.
# PY: the Python that has torch (default python3). PACK=1: one archive (end of file). The second call is scripts/gpu/run_missing_jax.sh.
T=${T:-80}
. "$(dirname "$0")/common.sh"
nvidia-smi -L 2>/dev/null; $PY -c "import torch; print('torch', torch.__version__)"
$PY scripts/branch_inventory.py coverage --units pytorch-eager:int,bool,complex > "$L/units-int.txt" 2> "$L/units-int.log" &
$PY scripts/branch_inventory.py coverage --units pytorch-eager:float16,float64,bfloat16 > "$L/units-float.txt" 2> "$L/units-float.log" &
wait
cat "$L/units-int.log" "$L/units-float.log"
INTD=int64/int32/int16/int8/uint8,bool,complex64/complex128
$PY -m kb --root . verify --sweep pytorch-eager --sweep-dtypes $INTD --sweep-passes forward $(ops "$L/units-int.txt" 0) \
    --sweep-workers 5 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/int-a.log" 2>&1 &
sleep 3  # each sweep names its file by its start second and suite: two in one second would collide
$PY -m kb --root . verify --sweep pytorch-eager --sweep-dtypes $INTD --sweep-passes forward $(ops "$L/units-int.txt" 1) \
    --sweep-workers 5 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/int-b.log" 2>&1 &
sleep 3
$PY -m kb --root . verify --sweep pytorch-eager --sweep-dtypes float16,float64,bfloat16 --sweep-passes forward \
    --sweep-any-module-dtype $(ops "$L/units-float.txt") \
    --sweep-workers 5 --sweep-budget "$B" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/float.log" 2>&1 &
sleep 3
$PY -m kb --root . verify --sweep pytorch-branches --sweep-op branch:sparse_layouts --sweep-op branch:fft_norms \
    --sweep-op branch:values --sweep-workers 2 --sweep-budget "$B" --timeout 150 $EXTRA --out "$OUT/sweeps" > "$L/branches.log" 2>&1 &
wait
finish "$L"/int-a.log "$L"/int-b.log "$L"/float.log "$L"/branches.log
