"""What hostile input costs the readers (issue 10): each must be refused within a second.

    python benchmarks/bench_untrusted.py          # prints one line per case; exit 1 if any >= 1 s

Cases: the YAML fixtures of tests/test_untrusted.py (alias bomb, 10,000-level nesting, a
50 MB file, a huge single string, a symlink out of data/, a node flood), the same for JSON,
the worst accepted-size YAML (just under the node bound, read alone and linted), and the issue's own scenario:
`kb validate` in a copy of this repository with tf.bomb.yaml in data/sources/tensorflow/
(wall time of the whole command, interpreter start-up included, best of 3).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kb import jsonio, yamlio  # noqa: E402

BOMB = (ROOT / "tests/fixtures/untrusted/alias-bomb.yaml").read_text()
HEAD = "id: tf.x\nframework: tensorflow\n"


def _yaml_cases(tmp: Path) -> dict[str, Path]:
    data = tmp / "data"
    data.mkdir()
    cases = {
        "alias bomb": BOMB,
        "nesting 10,000 levels": "a: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "huge single string (500k chars)": HEAD + "title: '" + "x" * 500_000 + "'\n",
        "node flood (over 100,000 nodes)": HEAD + "ops: [" + ",".join(["tf.a"] * 120_000) + "]\n",
        "accepted: 99,000 nodes": HEAD + "ops: [" + ",".join(["tf.a"] * 99_000) + "]\n",
    }
    out = {}
    for i, (name, text) in enumerate(cases.items()):
        out[name] = data / f"case{i}.yaml"
        out[name].write_text(text)
    big = data / "big.yaml"
    big.write_text(HEAD)
    os.truncate(big, 50 * 1024 * 1024)
    out["50 MB file"] = big
    (tmp / "outside.yaml").write_text(HEAD)
    link = data / "link.yaml"
    link.symlink_to(tmp / "outside.yaml")
    out["symlink outside data/"] = link
    return out


def _time(call) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        call()
        result = "accepted"
    except (yamlio.YamlError, jsonio.JsonError) as exc:
        result = f"{getattr(exc, 'code', '') or 'error'} line {exc.line}: {exc.message[:60]}"
    return time.perf_counter() - start, result


def main() -> int:
    worst = 0.0
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for case, path in _yaml_cases(tmp).items():
            seconds, result = _time(lambda: yamlio.read(path))
            worst = max(worst, seconds)
            print(f"yaml  {case:34s} {seconds * 1000:8.1f} ms  {result}")
        json_cases = {
            "nesting 10,000 levels": "[" * 10_000 + "]" * 10_000,
            "huge single string (2 MiB)": '["' + "x" * (2 * 1024 * 1024) + '"]',
            "node flood (over 500,000 values)": "[" + ",".join(["1"] * 600_000) + "]",
        }
        for case, text in json_cases.items():
            seconds, result = _time(lambda: jsonio.loads(text, where="bench"))
            worst = max(worst, seconds)
            print(f"json  {case:34s} {seconds * 1000:8.1f} ms  {result}")
        big = tmp / "data" / "big.json"
        big.write_text("[1")
        os.truncate(big, 50 * 1024 * 1024)
        seconds, result = _time(lambda: jsonio.load(big))
        worst = max(worst, seconds)
        print(f"json  {'50 MB file':34s} {seconds * 1000:8.1f} ms  {result}")

        # the worst a file within every bound can cost the whole lint (parse, schema, KB009, KB010)
        from kb.lint import run

        mini = tmp / "mini"
        shutil.copytree(ROOT / "tests/fixtures/mini", mini)
        (mini / "data/sources/tensorflow/tf.big.yaml").write_text("# c\n" + HEAD + "ops: [" + ",".join(["tf.a"] * 99_000) + "]\n")
        start = time.perf_counter()
        _, findings = run(mini)
        seconds = time.perf_counter() - start
        worst = max(worst, seconds)
        print(f"lint  {'accepted 99,000-node record':34s} {seconds * 1000:8.1f} ms  {len(findings)} findings")

        repo = tmp / "repo"
        shutil.copytree(ROOT / "data", repo / "data")
        (repo / "data/sources/tensorflow/tf.bomb.yaml").write_text(BOMB)
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "kb", "validate"], cwd=repo, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
            runs.append(time.perf_counter() - start)
        found = [line for line in out.stdout.splitlines() if "tf.bomb.yaml" in line]
        print(f"cmd   kb validate with tf.bomb.yaml      {min(runs) * 1000:8.1f} ms  exit {out.returncode}: {found[0] if found else 'NO FINDING'}")
        worst = max(worst, min(runs))
    print(f"worst {worst * 1000:.1f} ms (target < 1000 ms)")
    return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
