"""`kb probe run` and `kb probe diff`: train N times with probes, then name where runs split.

Exit codes: 0 runs identical (every log whole: closed by its process, under the recorder's
limits), 1 runs differ, 2 bad input (no command, a missing or malformed log, a script that
failed or recorded nothing) or a log cut short with no difference in what it holds (a script
ending in os._exit, a killed run): such logs are never called identical. Standard library +
rich only.
"""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
import time

from kb import jsonio

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

exit codes: 0 identical, 1 runs differ, 2 bad input (or a run failed / recorded nothing, or
a log was cut short: a script that ends with os._exit never closes its log, so its last step
may be missing, and no difference in the rest is called "identical").
--json is strict JSON: a statistic that is not finite is written "nan", "inf" or "-inf".
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
        print(jsonio.dumps(report, indent=2))
    else:
        render(report)
    return _exit([report])


def _exit(reports: list[dict]) -> int:
    """1 when any pair differs; else 2 when a log was cut short (nothing can be called identical);
    else 0."""
    if any(r["identical"] is False for r in reports):
        return EXIT_DIFFER
    if any(r["identical"] is None for r in reports):
        print("kb probe: error: a log was cut short; the runs are not called identical (see above)", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_SAME


def _clear(directory: str) -> None:
    """Remove a previous run's log, but never a directory that holds anything else: each entry
    must be one of the files a run writes, as a file (or a link, removed, never followed); a
    folder under such a name (`stdout.txt/` holding a thesis) stops the run. Nothing is removed
    recursively."""
    if not os.path.lexists(directory):
        return
    refuse = ProbeInputError(f"{visible(directory)}: exists and holds files that are not probe logs; choose another --out")
    if os.path.islink(directory) or not os.path.isdir(directory):
        raise refuse
    ours = {RECORDS, PLACES, META, "stdout.txt", "stderr.txt"}
    entries = os.listdir(directory)
    for name in entries:
        mode = os.lstat(os.path.join(directory, name)).st_mode
        if not (name in ours or name.endswith(".tmp")) or not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise refuse
    for name in entries:
        os.unlink(os.path.join(directory, name))
    os.rmdir(directory)


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
            tail = _tail(os.path.join(d, "stderr.txt"), d)
            # the script's own output, shown line by line with its control characters escaped
            print("\n".join(visible(line) for line in tail.split("\n")), file=sys.stderr)
            how = f"was killed by signal {-rc}" if rc < 0 else f"exited with {rc}"
            return _error(f"run {i} {how} (log: {visible(d)}/stderr.txt); nothing to compare")
        records = os.path.join(d, RECORDS)
        if not os.path.lexists(records) or (stat.S_ISREG(os.lstat(records).st_mode) and os.path.getsize(records) == 0):
            return _error(f"run {i} recorded no probe (does the script use kb.probe?); see {d}/stdout.txt")
        # a link, FIFO or folder in its place is named by the log reader below (never "recorded no probe")
        print(f"run {i}: {seconds:.1f} s, log {d}", file=sys.stderr)
    reports = []
    try:
        for d in dirs[1:]:
            reports.append(compare(Run(dirs[0]), Run(d), first_only=args.first_only))
    except ProbeInputError as exc:
        return _error(str(exc))
    if args.json:
        print(jsonio.dumps(reports if len(reports) > 1 else reports[0], indent=2))
    else:
        for report in reports:
            render(report)
    return _exit(reports)


TAIL_CHARS = 2000


def _tail(path: str, directory: str) -> str:
    """The last TAIL_CHARS characters of a failed run's stderr, reading only the file's end (a
    script that wrote 300 MB there made kb read all of it), from a regular file in the run's
    folder (the script may have put something else there)."""
    from pathlib import Path

    from kb import untrusted

    try:
        untrusted.check_inside(Path(path), Path(directory))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (untrusted.Refused, OSError):
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ""
        start = max(0, info.st_size - 4 * TAIL_CHARS)  # UTF-8: at most 4 bytes a character
        os.lseek(fd, start, os.SEEK_SET)
        raw = os.read(fd, 4 * TAIL_CHARS)
    finally:
        os.close(fd)
    return raw.decode("utf-8", errors="replace")[-TAIL_CHARS:]


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
    for run, why in report.get("incomplete", {}).items():
        console.print(f"[yellow]incomplete[/] {e(run)}: {e(why)}")
    if report["identical"]:
        console.print(f"[green]identical[/]: {e(a)} and {e(b)}: {report['compared']} probe records over "
                      f"{report['steps']} step(s) have the same bytes")
        return
    if report["identical"] is None:
        console.print(f"[yellow]not called identical[/]: {e(a)} and {e(b)}: the {report['compared']} probe records "
                      f"both logs hold over {report['steps']} step(s) have the same bytes, but a log was cut short")
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
