#!/usr/bin/env bash
# GPU evidence for `kb probe` (issue 17): the call-level blame on two models whose only
# non-determinism is one call (flash attention backward; embedding backward), the same with
# the PyTorch recipe, the device fingerprint (PyTorch, JAX in jit) checked against its
# definition, and the probe's overhead on GPT-2-small and ResNet-50 sized training steps.
# Run from the repo root (about 4 minutes on one H100):
#   OUT=/some/dir PYTHONPATH=. bash scripts/probe_gpu.sh
# Writes 7 files under $OUT: env.txt attention.txt embedding.txt checks.txt fused.txt overhead.jsonl
# reports.json (the diffs as JSON). Each probe transcript ends with its exit code
# (0 identical, 1 differ, 2 error).
set -u
PY=${PY:-python3}
export PYTHONPATH=${PYTHONPATH:-.} PYTHONUNBUFFERED=1 COLUMNS=120 STEPS=3 N=0
W=$(mktemp -d)
{ date -u; $PY -c 'import sys,torch; print(sys.version); print("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))'
  $PY -c 'import jax; print("jax", jax.__version__, jax.devices())'; nvidia-smi -L; } > "$OUT/env.txt" 2>&1
probe() { # transcript name, then VAR=value... and the script last
  local name=$1; shift
  local script=${@: -1}
  echo "\$ ${*:1:$#-1} kb probe run -- python $script" >> "$OUT/$name.txt"
  env "${@:1:$#-1}" timeout 120 $PY -m kb probe run --out "$W/$name" -- $PY "$script" >> "$OUT/$name.txt" 2>&1
  echo "exit code: $?" >> "$OUT/$name.txt"
  echo >> "$OUT/$name.txt"
  N=$((${N:-0} + 1))
  $PY -m kb probe diff --json "$W/$name/run1" "$W/$name/run2" > "$W/report_$N.json" 2>/dev/null
}
probe attention MODEL=attention DEVICE=cuda examples/probe/train_blocks.py
probe attention MODEL=attention DEVICE=cuda DETERMINISTIC=1 examples/probe/train_blocks.py
probe embedding MODEL=embedding DEVICE=cuda examples/probe/train_blocks.py
probe embedding MODEL=embedding DEVICE=cuda DETERMINISTIC=1 examples/probe/train_blocks.py
$PY -c 'import glob, json, sys
reports = []
for path in sorted(glob.glob(sys.argv[1] + "/report_*.json"), key=lambda p: int(p.rsplit("_", 1)[1][:-5])):
    text = open(path).read().strip()
    reports.append(json.loads(text) if text else {"error": "no report", "file": path})
print(json.dumps(reports, indent=1))' "$W" > "$OUT/reports.json"
timeout 60 $PY scripts/probe_check_fingerprint.py > "$OUT/checks.txt" 2>&1; echo "exit code: $?" >> "$OUT/checks.txt"
timeout 120 $PY scripts/probe_check_fused.py > "$OUT/fused.txt" 2>&1; echo "exit code: $?" >> "$OUT/fused.txt"
timeout 200 $PY benchmarks/probe_models.py --device cuda --steps 10 > "$OUT/overhead.jsonl" 2>>"$OUT/env.txt"
rm -rf "$W"
