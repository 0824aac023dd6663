"""List the ops whose knowledge-base answer at the frozen corpus's versions is not deterministic.

    python benchmarks/scan_frozen/candidate_ops.py > benchmarks/scan_frozen/candidate_ops.txt
    (the third corpus's list, benchmarks/scan_frozen3/candidate_ops.txt, was made the same way)

Each line: the op (a record's `ops` or `aliases` entry), the version it is answered at, and the records that answer it not
deterministic (with the call condition under which each applies, if any). An op of a record
whose every answer at these versions is deterministic or unknown is left out: its calls are
not candidate sites (RULES.md, rule C1). Library records (cudnn, cublas, cccl, nccl) are
reached only through framework ops and are not listed.
"""

from __future__ import annotations

import glob
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import kb  # noqa: E402

# torch=2.11, tensorflow=2.20, jax=0.8 are the scan's --versions; tf.keras at 2.20 is Keras 3,
# which kb answers for Keras 3.15; frameworks --versions does not pin are answered at the
# newest release the knowledge base knows.
VERSIONS = {"pytorch": "2.11", "tensorflow": "2.20", "jax": "0.8", "keras": "3.15", "torchvision": "0.26",
            "horovod": "0.28.1"}


def main() -> int:
    ops: set[tuple[str, str]] = set()
    for path in sorted(glob.glob(str(ROOT / "data/sources/*/*.yaml"))):
        record = yaml.safe_load(Path(path).read_text())
        if record["framework"] in VERSIONS:
            ops.update((record["framework"], op) for op in record["ops"] + (record.get("aliases") or []))
    for framework, op in sorted(ops, key=lambda x: x[1]):
        status = kb.status(op, VERSIONS[framework])
        parts = [f"{s.id}" + (f" (when {s.condition})" if s.condition else "")
                 for s in status.sources if s.deterministic is False]
        if parts:
            print(f"{op} @{VERSIONS[framework]}: " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
