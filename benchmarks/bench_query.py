"""Query-path benchmarks: start-up cost of `kb.status()` and in-process lookups per second.

    python benchmarks/bench_query.py            # defaults: 40 start-ups, 2 s of lookups
    python benchmarks/bench_query.py --runs 100

Start-up: median wall time of `python -c "import kb; kb.status('tf.nn.bias_add','1.15')"`
against `python -c pass`, interleaved so machine noise hits both alike (target <= 1.3x).
Miss: the same for a name no record lists (`torch.abs`), which reads PyTorch's API inventory
(data/api/pytorch.txt.gz, the largest), and that first read in-process (kb/query/names.py).
Lookups: (a) repeated queries, answered from the cache; (b) distinct (op, version)
pairs with the cache cleared each round, i.e. the full evaluation (target >= 200k/s);
both again with a `call=` for every op (its first parameter with a literal default set to
that default, plus `input.ndim`), which evaluates the records' call conditions.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

QUERY = "import kb; kb.status('tf.nn.bias_add','1.15')"
MISS = "import kb; kb.status('torch.abs','2.11')"  # no record: answered from the inventory


def miss_read(runs: int) -> list[float]:
    """Seconds of the first inventory read (a miss) in a fresh process, `runs` times."""
    code = ("import time, kb; from kb.query import names; names.frameworks(); t = time.perf_counter(); "
            "names.inventory('pytorch'); print(time.perf_counter() - t)")
    return [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
            for _ in range(runs)]


def startup(runs: int, query_code: str = QUERY) -> tuple[list[float], list[float]]:
    base, query = [], []
    for _ in range(runs):
        for code, out in (("pass", base), (query_code, query)):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            out.append(time.perf_counter() - start)
    return base, query


def _call_for(op: str) -> dict:
    import kb

    call: dict = {"input.ndim": 4}
    for name, default in kb.parameters(op) or ():
        if default is not kb.NO_DEFAULT and default is not kb.UNKNOWN_DEFAULT and not name.startswith("*"):
            call[name] = default
            break
    return call


def lookups(seconds: float, with_call: bool = False) -> tuple[float, float, int]:
    import kb
    from kb import query

    idx = query.index()
    ops = sorted(n for table in idx["names"].values() for n in table)
    versions = ["1.14", "1.15.5", "2.0", "2.1.0", "2.3.4", "2.5", "2.7.0rc1", "2.8", "2.10.1", "2.21.0"]
    calls = {op: _call_for(op) if with_call else None for op in ops}
    pairs = [(op, v, calls[op]) for op in ops for v in versions]
    for op, v, call in pairs:  # warm-up: imports `packaging` for the rc version once
        kb.status(op, v, call=call)

    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for op, v, call in pairs:
            kb.status(op, v, call=call)
        done += len(pairs)
    cached = done / (time.perf_counter() - start)

    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        query._cache.clear()
        for op, v, call in pairs:
            kb.status(op, v, call=call)
        done += len(pairs)
    cold = done / (time.perf_counter() - start)
    return cached, cold, len(pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40, help="start-ups of each command (default 40)")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per lookup measurement (default 2; 0: start-up only)")
    args = parser.parse_args()
    # Byte-compile kb/ as a pip install would: with PYTHONDONTWRITEBYTECODE set (as on
    # this project's machines) Python would otherwise recompile kb/ on every start.
    import compileall
    from pathlib import Path

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "kb"), quiet=1)
    subprocess.run([sys.executable, "-c", QUERY], check=True)
    bases, queries = startup(args.runs)
    base, query = statistics.median(bases), statistics.median(queries)
    print(f"start-up, median of {args.runs}: python -c pass {base * 1000:.2f} ms; "
          f"kb.status {query * 1000:.2f} ms; ratio {query / base:.3f} (target <= 1.3)")
    # The fastest run of each is what the machine's neighbours disturbed least.
    print(f"start-up, fastest of {args.runs}: python -c pass {min(bases) * 1000:.2f} ms; "
          f"kb.status {min(queries) * 1000:.2f} ms; ratio {min(queries) / min(bases):.3f}")
    subprocess.run([sys.executable, "-c", MISS], check=True)
    bases, misses = startup(args.runs, MISS)
    reads = miss_read(max(args.runs // 4, 5))
    print(f"miss (torch.abs), median of {args.runs}: python -c pass {statistics.median(bases) * 1000:.2f} ms; "
          f"kb.status {statistics.median(misses) * 1000:.2f} ms; of which the inventory read "
          f"{statistics.median(reads) * 1000:.2f} ms (median of {len(reads)})")
    if args.seconds <= 0:
        return 0
    for with_call in (False, True):
        cached, cold, pairs = lookups(args.seconds, with_call)
        label = "with call=" if with_call else "without call"
        print(f"lookups {label} over {pairs} distinct (op, version) pairs: cached {cached:,.0f}/s; "
              f"uncached {cold:,.0f}/s (target >= 200,000/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
