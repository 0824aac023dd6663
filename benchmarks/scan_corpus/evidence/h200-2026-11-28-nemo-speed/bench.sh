#!/bin/bash
# On the device: NeMo (2,579 Python files) scanned whole with --jobs 1, CPU time; d60ff2a against this checkout, in turn.
set -u
mkdir -p /tmp/nemo /tmp/d60 && tar -xzf .gpu/nemo.tgz -C /tmp/nemo && tar -xzf .gpu/d60.tgz -C /tmp/d60
python3 -V; nproc; python3 -c "import yaml, rich; print('yaml', yaml.__version__, 'rich ok')"
# warm the bytecode of both checkouts once (an installed copy has it), then time
python3 -m kb --help >/dev/null; (cd /tmp/d60 && python3 -m kb --help >/dev/null)
for i in 1 2 3 4 5; do
  python3 benchmarks/bench_scan.py --tree /tmp/nemo --runs 1 --kb /tmp/d60
  python3 benchmarks/bench_scan.py --tree /tmp/nemo --runs 1
done 2>&1 | tee $OUT/interleaved.txt
python3 benchmarks/bench_scan.py --tree /tmp/nemo --runs 3 --cached 2>&1 | tee $OUT/cached.txt
V=torch=2.11,tensorflow=2.20,jax=0.7
python3 -m kb scan /tmp/nemo --jobs 1 --no-cache --format json --versions $V > /tmp/a.json
python3 -m kb scan /tmp/nemo --jobs 1 --cache-dir /tmp/c --format json --versions $V > /tmp/b.json
python3 -m kb scan /tmp/nemo --jobs 1 --cache-dir /tmp/c --format json --versions $V > /tmp/c.json
cmp /tmp/a.json /tmp/b.json && cmp /tmp/a.json /tmp/c.json && echo "JSON identical: no cache, first scan, repeated" | tee $OUT/same.txt
