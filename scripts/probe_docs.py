"""Regenerate the example outputs in docs/probe.md by running the examples (CPU).

    PYTHONPATH=. python scripts/probe_docs.py            # rewrite the blocks in docs/probe.md
    PYTHONPATH=. python scripts/probe_docs.py --check    # exit 1 where a block is stale

Each block in the page sits between `<!-- example: NAME -->` and `<!-- /example -->` and is
the command line followed by exactly what `kb probe run` printed on stdout (tests check that
the page matches a fresh run). Runs happen in a temporary directory, so paths read
`kb-probe/run1`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "probe.md"
EXAMPLES: dict[str, tuple[dict[str, str], str, list[str]]] = {
    # name: (environment shown in the command, example script, extra `kb probe run` options)
    "torch-attention": ({"MODEL": "attention", "PLANT": "1"}, "train_blocks.py", []),
    "torch-embedding": ({"MODEL": "embedding", "PLANT": "1"}, "train_blocks.py", []),
    "torch-mix": ({"PLANT": "backward"}, "train_torch.py", []),
    "torch-identical": ({}, "train_torch.py", []),
    "tensorflow": ({"PLANT": "backward"}, "train_tf.py", []),
    "jax": ({"PLANT": "forward"}, "train_jax.py", ["--first-only"]),
}
BLOCK = re.compile(r"(<!-- example: (?P<name>[a-z-]+) -->\n```\n)(?P<body>.*?)(```\n<!-- /example -->)", re.S)


def example_env(name: str) -> dict[str, str]:
    """The environment an example runs in (this one's, plus the shown variables)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100", TF_CPP_MIN_LOG_LEVEL="3", STEPS="3", **EXAMPLES[name][0])
    env.pop("KB_PROBE_DIR", None)
    return env


def run_example(name: str, keep: Path | None = None) -> str:
    """The block's text: the command as a user types it, then the diff as printed. The runs
    happen in a temporary directory, or in `keep` (which then holds kb-probe/run1, run2)."""
    env_shown, script, options = EXAMPLES[name]
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-m", "kb", "probe", "run", *options, "--", sys.executable,
                              str(ROOT / "examples" / "probe" / script)], cwd=keep or tmp, env=example_env(name),
                             capture_output=True, text=True, timeout=900)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{name}: kb probe run exited {out.returncode}:\n{out.stderr[-3000:]}")
    command = " ".join([*(f"{k}={v}" for k, v in env_shown.items()), "kb probe run", *options, "--", "python",
                        f"examples/probe/{script}"])
    body = "\n".join(line.rstrip() for line in out.stdout.rstrip("\n").splitlines())
    return f"$ {command}\n{body}\n"


def blocks(text: str) -> dict[str, str]:
    return {m["name"]: m["body"] for m in BLOCK.finditer(text)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 if stale")
    ap.add_argument("--only", action="append", choices=sorted(EXAMPLES), help="just these examples")
    args = ap.parse_args()
    text = DOC.read_text(encoding="utf-8")
    missing = set(args.only or EXAMPLES) - set(blocks(text))
    if missing:
        raise SystemExit(f"{DOC}: no block for {', '.join(sorted(missing))} (expected '<!-- example: NAME -->')")
    fresh = {name: run_example(name) for name in (args.only or EXAMPLES)}
    if args.check:
        stale = [name for name, body in fresh.items() if blocks(text)[name] != body]
        for name in stale:
            print(f"{DOC}: example {name} is stale; run: PYTHONPATH=. python scripts/probe_docs.py --only {name}")
        return 1 if stale else 0
    new = BLOCK.sub(lambda m: m.group(1) + fresh.get(m["name"], m["body"]) + m.group(4), text)
    sys.path.insert(0, str(ROOT))
    from kb.atomic import write_atomic

    write_atomic(DOC, new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
