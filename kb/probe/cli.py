"""`kb probe run` and `kb probe diff`: train N times with probes, then name where runs split.

Exit codes: 0 runs identical, 1 runs differ, 2 bad input (no command, a missing or malformed
log, a script that failed or recorded nothing). Standard library + rich only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from kb.probe.diff import KIND_WORDS, ProbeInputError, Run, compare
from kb.probe.kbask import verdict
from kb.probe.recorder import ENV_DIR, ENV_RUN, META, PLACES, RECORDS

EXIT_SAME, EXIT_DIFFER, EXIT_USAGE = 0, 1, 2

EPILOG = """\
examples:
  kb probe run -- python train.py            train twice (logs in kb-probe/run1, run2), then diff
  kb probe run -n 3 --out /tmp/p -- python train.py --epochs 1
  kb probe diff kb-probe/run1 kb-probe/run2  name the first step and place where they differ
  kb probe diff A B --json                   the same for machines

In train.py:  from kb import probe; probe.watch(model, optimizer)   (PyTorch)
              y = probe.monitor(y, "name"); probe.step(i)             (any framework)
Each run gets KB_PROBE_DIR (its log directory) and KB_PROBE_RUN (1..N) in its environment.

exit codes: 0 identical, 1 runs differ, 2 bad input (or a run failed / recorded nothing).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("probe", help="find the step and place where two training runs first differ",
                       description="Determinism debug tool (after the GTC 2019 talk 'Determinism in Deep Learning'): probes in the model, train twice, "
                                   "name the first differing step and place, ask the KB what fixes it.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    psub = p.add_subparsers(dest="probe_command", metavar="{run,diff}")
    r = psub.add_parser("run", help="run a training command N times with separate probe logs, then diff",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("-n", type=int, default=2, help="number of runs (default 2)")
    r.add_argument("--out", default="kb-probe", help="directory for run1..runN (default ./kb-probe)")
    r.add_argument("--json", action="store_true", help="print the diff reports as JSON")
    r.add_argument("--first-only", action="store_true", help="stop the diff at the first step that differs")
    r.add_argument("--calls", action="store_true",
                   help="PyTorch watch(): also record the output of every call between a module's children, "
                        "every step (names one call of a chain; slower)")
    r.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command, e.g. -- python train.py")
    r.set_defaults(func=cmd_run, needs_data=False)
    d = psub.add_parser("diff", help="compare two probe logs", epilog=EPILOG,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    d.add_argument("--first-only", action="store_true", help="stop at the first step that differs (long runs)")
    d.set_defaults(func=cmd_diff, needs_data=False)
    p.set_defaults(func=_usage(p), needs_data=False)


def _usage(p):
    def show(args) -> int:
        p.print_help()
        return EXIT_USAGE

    return show


def _error(message: str) -> int:
    print(f"kb probe: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def cmd_diff(args) -> int:
    try:
        report = compare(Run(args.a), Run(args.b), first_only=args.first_only)
    except ProbeInputError as exc:
        return _error(str(exc))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        render(report)
    return EXIT_SAME if report["identical"] else EXIT_DIFFER


def _clear(directory: str) -> None:
    """Remove a previous run's log, but never a directory that holds anything else."""
    if not os.path.exists(directory):
        return
    ours = {RECORDS, PLACES, META, "stdout.txt", "stderr.txt"}
    entries = set(os.listdir(directory))
    if not entries <= ours and not all(e.endswith(".tmp") or e in ours for e in entries):
        raise ProbeInputError(f"{directory}: exists and holds files that are not probe logs; choose another --out")
    shutil.rmtree(directory)


def cmd_run(args) -> int:
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        return _error("no command given; usage: kb probe run [-n N] -- python train.py")
    if args.n < 2:
        return _error(f"-n {args.n}: need at least 2 runs to compare")
    dirs = [os.path.join(args.out, f"run{i}") for i in range(1, args.n + 1)]
    try:
        for d in dirs:
            _clear(d)
    except ProbeInputError as exc:
        return _error(str(exc))
    for i, d in enumerate(dirs, 1):
        os.makedirs(d)
        env = dict(os.environ, **{ENV_DIR: os.path.abspath(d), ENV_RUN: str(i)})
        if getattr(args, "calls", False):
            env["KB_PROBE_CALLS"] = "1"
        start = time.perf_counter()
        with open(os.path.join(d, "stdout.txt"), "wb") as out, open(os.path.join(d, "stderr.txt"), "wb") as err:
            try:
                rc = subprocess.run(cmd, env=env, stdout=out, stderr=err).returncode
            except OSError as exc:
                return _error(f"cannot start {cmd[0]!r}: {exc}")
        seconds = time.perf_counter() - start
        if rc != 0:
            with open(os.path.join(d, "stderr.txt"), encoding="utf-8", errors="replace") as handle:
                tail = handle.read()[-2000:]
            # the script's own output, shown line by line with its control characters escaped
            print("\n".join(visible(line) for line in tail.split("\n")), file=sys.stderr)
            how = f"was killed by signal {-rc}" if rc < 0 else f"exited with {rc}"
            return _error(f"run {i} {how} (log: {visible(d)}/stderr.txt); nothing to compare")
        if not os.path.isfile(os.path.join(d, RECORDS)) or os.path.getsize(os.path.join(d, RECORDS)) == 0:
            return _error(f"run {i} recorded no probe (does the script use kb.probe?); see {d}/stdout.txt")
        print(f"run {i}: {seconds:.1f} s, log {d}", file=sys.stderr)
    reports = []
    try:
        for d in dirs[1:]:
            reports.append(compare(Run(dirs[0]), Run(d), first_only=args.first_only))
    except ProbeInputError as exc:
        return _error(str(exc))
    if args.json:
        print(json.dumps(reports if len(reports) > 1 else reports[0], indent=2))
    else:
        for report in reports:
            render(report)
    return EXIT_SAME if all(r["identical"] for r in reports) else EXIT_DIFFER


def visible(text: str) -> str:
    """Names from a training log shown as text: control characters (an ESC sequence could
    rewrite the terminal) become \\xNN escapes (kb.untrusted.shown)."""
    from kb.untrusted import shown

    return shown(text)


def render(report: dict) -> None:
    try:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        console = Console(highlight=False, soft_wrap=True)
    except ImportError:  # a bare training box: plain text, same content
        _render(report, _Plain(), visible, None)
        return
    _render(report, console, lambda s: escape(visible(s)), Table)


class _Plain:
    def print(self, text: str) -> None:
        import re

        print(visible(re.sub(r"\[/?[a-z ]*\]", "", text)))


def _render(report: dict, console, e, Table) -> None:
    a, b = report["runs"]
    for run, failures in report.get("not_recorded", {}).items():
        for failure in failures:
            console.print(f"[yellow]not recorded[/] in {e(run)}: {e(failure['where'])}: {e(failure['why'])} "
                          f"({e(str(failure['count']))} time(s))")
    if report["identical"]:
        console.print(f"[green]identical[/]: {e(a)} and {e(b)}: {report['compared']} probe records over "
                      f"{report['steps']} step(s) have the same bytes")
        return
    first, blame = report["first"], report["blame"]
    console.print(f"[red]runs differ[/] ({e(a)} vs {e(b)}): [bold]{e(report['message'])}[/]")
    shape = "x".join(str(n) for n in first.get("shape", [])) or "scalar"
    line = f"  first: step {e(str(first['step']))}, {e(KIND_WORDS.get(first['kind'], str(first['kind'])))} {e(str(first['name']) + str(first.get('path', '')))}"
    line += f" [{e(shape)} {e(str(first.get('dtype')))}] ({e(str(first['why']))})"
    if first.get("max_abs_diff_at_least") is not None:
        line += f"; max |a-b| >= {first['max_abs_diff_at_least']:.3g}"
    console.print(line)
    console.print(f"  upstream: {first['upstream_identical']} earlier probe record(s) in step {first['step']} identical")
    steps = sorted({d["step"] for d in report["downstream"]})
    if report["downstream_count"] is None:
        more = None
    else:
        more = f" (first {len(report['downstream'])} listed in --json)" if report["downstream_count"] > len(report["downstream"]) else ""
    if more is None:
        console.print("  downstream: not compared (--first-only)")
    else:
        console.print(f"  downstream: {report['downstream_count']} later record(s) differ{more}"
                          + (f", in step(s) {', '.join(map(str, steps[:8]))}{'...' if len(steps) > 8 else ''}" if steps else ""))
    if "certainty" in blame:
        console.print(f"  suspects: {e(blame['how'])}")
    label = "call" if "certainty" in blame else "op"
    rows = [(a.get("shown", a["op"]) + (f" in {a['place']}" if a.get("place") not in (None, blame["place"]) else ""),
             verdict(a)) for a in blame["answers"]]
    if rows and Table is None:
        for call, text in rows:
            console.print(f"  {call}: {text}")
    elif rows:
        table = Table(title=f"{label}s at `{e(blame['place'])}`: {e(str(blame['framework']))} {e(str(blame['version']))} ({blame['device']})")
        table.add_column(label, overflow="fold")
        table.add_column("knowledge base", overflow="fold")
        for call, text in rows:
            table.add_row(e(call), e(text))
        console.print(table)
        for answer in blame["answers"]:
            for fix in answer.get("fixes") or []:
                if fix.get("snippet"):
                    console.print(f"  {fix['code']}: {e(fix['snippet'])}")
