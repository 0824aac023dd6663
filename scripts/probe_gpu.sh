#!/usr/bin/env bash
# GPU evidence for `kb probe` (issue 9): real non-deterministic ops, diff, recipe, overhead.
# Run from the repo root:  OUT=/some/dir PYTHONPATH=. bash scripts/probe_gpu.sh
# Writes 6 files under $OUT: torch_default.txt torch_recipe.txt jax_default.txt jax_recipe.txt
# overhead.json env.txt. Each .txt ends with the exit code (0 identical, 1 differ, 2 error).
set -u
PY=${PY:-python3}
export PYTHONPATH=${PYTHONPATH:-.} STEPS=3 PYTHONUNBUFFERED=1 COLUMNS=120
W=$(mktemp -d)
{ $PY -c 'import sys,torch,jax; print(sys.version); print("torch", torch.__version__, torch.cuda.get_device_name(0)); print("jax", jax.__version__, jax.devices())'; nvidia-smi -L; } > "$OUT/env.txt" 2>&1
run() { # name, then VAR=value... and the script last
  local name=$1; shift
  local script=${@: -1}
  env "${@:1:$#-1}" $PY -m kb probe run --out "$W/$name" -- $PY "$script" > "$OUT/$name.txt" 2>&1
  echo "exit code: $?" >> "$OUT/$name.txt"
}
run torch_default DEVICE=cuda examples/probe/train_torch.py
run torch_recipe DEVICE=cuda DETERMINISTIC=1 CUBLAS_WORKSPACE_CONFIG=:4096:8 examples/probe/train_torch.py
run jax_default JAX_PLATFORMS=cuda,cpu examples/probe/train_jax.py
run jax_recipe JAX_PLATFORMS=cuda,cpu XLA_FLAGS=--xla_gpu_deterministic_ops=true examples/probe/train_jax.py
$PY benchmarks/probe_overhead.py --device cuda --steps 100 > "$OUT/overhead.json" 2>>"$OUT/env.txt"
$PY benchmarks/probe_overhead.py --device cpu --steps 100 >> "$OUT/overhead.json" 2>>"$OUT/env.txt"
