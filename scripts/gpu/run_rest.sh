#!/bin/bash
# One GPU call (about 300 s on one H100 or H200, B around 230): the PyTorch and JAX sweeps of the inventory's
# branches that still have no evidence and no stated reason after run_gaps.sh (2026-11-28T03:29) and the reasons
# written since (docs/sweep.md, "Branches without evidence"). Run from anywhere inside the repository:
#
#   OUT=/some/folder bash scripts/gpu/run_rest.sh            # writes $OUT/sweeps/<env-id>/<stamp>-<suite>.json
#   OUT=/tmp/x EXTRA="--device cpu --sweep-limit 1" B=60 T=30 bash scripts/gpu/run_rest.sh   # a CPU dry run
#
# The unit lists are read from the committed inventory, reasons and evidence (scripts/branch_inventory.py
# coverage --units), so a unit whose branches all have evidence by then is not run again. In parallel:
#   1. the PyTorch branch unit `rest` (verifiers/sweep/torch_branches_more.py): the convolution modules with
#      padding_mode='replicate', the sparse cases added after 03:29 (F.l1_loss with reduction='sum' and F.mse_loss's
#      weighted path on COO, torch.empty and torch.zeros(out=) on COO, masked.sum(keepdim=True) on CSR),
#      the convolution and RNN modules (float weights) given an int64 or bool input, whose F.pad or torch.zeros
#      runs first in that dtype, baddbmm and triangular_solve with a CSR input (the inventory's fact for their
#      SparseCsrCUDA branch),
#      torch.ops.aten._safe_softmax in float16, bfloat16, int64 and bool, nn.RNN in complex64 (tanh);
#   2. the op_db and module_db units whose every case errored in earlier calls, for inputs the harness could not
#      build then and builds now (binary_cross_entropy, BCELoss, bernoulli, lu_unpack, embedding_bag: a value
#      contract; column_stack, expand_as, broadcast_tensors, as_strided_scatter: sizes; sampled_addmm: a CSR
#      argument; masked_fill: a worker that died), and Tensor.item in complex (the worker now compares a Python
#      complex), in every dtype group, forward and backward;
#   3. torch._scaled_mm and _scaled_mm_v2 in float8 (op_db gives them no float32 or bfloat16);
#   4. the JAX catalog functions with a float16, bfloat16 or float64 branch without a case, or a gradient branch
#      without a backward case (the sort family, median, nanmedian, select, interp, lax.complex/conj), in bfloat16
#      and float64 (the dtypes their branches lack; a backward case in either is one for the gradient branches),
#      with 150 s a unit (their deterministic-mode workers ran past 60 s before);
#   5. the JAX branch units with a branch without evidence (linear algebra and FFT now in float16 and bfloat16,
#      matmul in float64, sort with ties, interp).
# B (default 230): each sweep's --sweep-budget (after which it starts no unit; the rest are `skipped`) is B + 70
# less its unit limit, at least 60 (a worker takes seconds to start), so that a unit started last ends by about
# B + 70 = 300 s; T: the limit per unit of the op_db units. PY: the Python with torch and jax. PACK=1: one archive
# (scripts/gpu/common.sh).
T=${T:-90}
B=${B:-230}
. "$(dirname "$0")/common.sh"
devices  # common.sh: the GPU and the torch and jax versions
SPECS="pytorch-eager:errors,complex jax:float16,bfloat16,float64,backward jax-branches"
unit_lists $SPECS  # common.sh: one list per spec
# module_db's RNN complex inputs cannot be built (the relu cell has no complex clamp): the `rest` unit calls it
grep -v -e '^module:torch.nn.RNN|' "$L/units-pytorch-eager-errors,complex.txt" > "$L/units-eager.txt"
$PY -m kb --root . verify --sweep pytorch-branches --sweep-op branch:rest \
    --sweep-workers 1 --sweep-budget "$(budget 200)" --timeout 200 $EXTRA --out "$OUT/sweeps" > "$L/branches.log" 2>&1 &
sleep 3  # each sweep names its file by its start second and suite: two in one second would collide
$PY -m kb --root . verify --sweep pytorch-eager \
    --sweep-dtypes float32,float16,bfloat16,float64,int64/int32/int16/int8/uint8,bool,complex64/complex128 \
    $(ops "$L/units-eager.txt") --sweep-workers 3 --sweep-budget "$(budget "$T")" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/eager.log" 2>&1 &
sleep 3
$PY -m kb --root . verify --sweep pytorch-eager --sweep-dtypes float8_e4m3fn/float8_e5m2 --sweep-op='torch._scaled_mm|' \
    --sweep-op='torch._scaled_mm_v2|' --sweep-workers 1 --sweep-budget "$(budget "$T")" --timeout "$T" $EXTRA --out "$OUT/sweeps" > "$L/fp8.log" 2>&1 &
$PY -m kb --root . verify --sweep jax --sweep-dtypes bfloat16,float64 $(ops "$L/units-jax-float16,bfloat16,float64,backward.txt") \
    --sweep-workers 3 --sweep-budget "$(budget 150)" --timeout 150 $EXTRA --out "$OUT/sweeps" > "$L/jax.log" 2>&1 &
sleep 3
$PY -m kb --root . verify --sweep jax-branches $(ops "$L/units-jax-branches-jax-branches.txt") \
    --sweep-workers 3 --sweep-budget "$(budget 90)" --timeout 90 $EXTRA --out "$OUT/sweeps" > "$L/jax-branches.log" 2>&1 &
wait
finish "$L"/branches.log "$L"/eager.log "$L"/fp8.log "$L"/jax.log "$L"/jax-branches.log
