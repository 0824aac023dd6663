"""`kb scan PATH...`: the calls in a code base whose results can differ run to run.

Exit codes: 0 clean (nothing at or above --fail-on), 1 findings at or above --fail-on,
2 bad input (a missing path, a bad --versions or lockfile). A file that cannot be parsed
is reported and counts as a finding of level `possible` (it fails only --fail-on any).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FAIL_ON = {"any": 1, "nondeterministic": 2, "raises": 3}

EPILOG = """\
examples:
  kb scan .                                    every .py and .ipynb under the current folder
  kb scan train.py --versions torch=2.11       answer for PyTorch 2.11 whatever is installed
  kb scan src --lockfile uv.lock --format sarif > kb.sarif
  kb scan . --fail-on raises                   fail only on calls that raise under a switch you set

levels: raises (the call raises under a deterministic switch the code sets) >
        nondeterministic > possible (receiver type, an argument or a shape unknown; no status known);
        notes (a condition that is in the data, such as repeated indices) are listed, never fail
suppress one finding:   y = x.index_add_(0, i, v)  # kb: ignore[torch.index-add]
exit codes: 0 clean, 1 findings at or above --fail-on, 2 bad input.
"""


def add_parser(sub) -> None:
    p = sub.add_parser("scan", help="find the calls in a code base that are not run-to-run reproducible",
                       description="Read Python files and notebooks (never importing or running them), "
                                   "resolve framework calls, and answer each from the KB for your versions.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (.py, .ipynb)")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format (default text)")
    p.add_argument("--versions", action="append", default=None, metavar="NAME=VER,...",
                   help="framework versions to answer for, e.g. torch=2.11,tensorflow=2.20 (repeatable; a framework "
                        "given two versions is refused; default: the lockfile, else the installed distributions, "
                        "else the newest known)")
    p.add_argument("--lockfile", default=None, help="read pinned versions from requirements.txt, pyproject.toml, uv.lock or poetry.lock")
    p.add_argument("--device", default="gpu", choices=("gpu", "cpu", "any"), help="device the code trains on (default gpu)")
    p.add_argument("--fail-on", default="nondeterministic", choices=tuple(FAIL_ON),
                   help="lowest level that makes the exit code 1 (default nondeterministic)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip matching paths (repeatable)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: up to 2)")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="keep each file's reading here, so the next scan of the same paths reads only the files "
                        "that changed and those that look into them (default: $KB_SCAN_CACHE, else "
                        "$XDG_CACHE_HOME/kb/scan, else ~/.cache/kb/scan)")
    p.add_argument("--no-cache", action="store_true", help="read every file afresh and write no cache")
    p.add_argument("--site-url", default=None, help="base URL of the KB site, for SARIF rule help links")
    p.set_defaults(func=cmd_scan, needs_data=False)


def _error(message: str) -> int:
    print(f"kb scan: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _shown(path: str) -> str:
    from kb.scan.report_text import visible

    return visible(path)


def _cache_folder(args: argparse.Namespace) -> str | None:
    if args.no_cache:
        return None
    if args.cache_dir is not None:
        return args.cache_dir
    from kb.scan.filecache import default_folder

    return str(default_folder())


def exit_code(report, fail_on: str) -> int:
    from kb.scan.lookup import LEVELS

    threshold = FAIL_ON[fail_on]
    failing = any(LEVELS[f.level] >= threshold for f in report.findings) or (threshold == 1 and report.errors)
    return EXIT_FINDINGS if failing else EXIT_CLEAN


def cmd_scan(args: argparse.Namespace) -> int:
    from kb.query import scan_index as index  # kb/_seen.py unloaded (kb/query/state.py)
    from kb.scan import pins
    from kb.scan.run import scan
    from kb.scan.sources import NotAFile, SymlinkLoop

    if args.jobs is not None and args.jobs < 1:
        return _error("--jobs must be 1 or more")
    try:
        given = pins.parse_versions(",".join(args.versions)) if args.versions else {}
        report = scan(args.paths, given=given, lockfile=args.lockfile, device=args.device,
                      exclude=tuple(args.exclude), jobs=args.jobs, cache=_cache_folder(args))
    except SymlinkLoop as exc:
        return _error(f"{_shown(exc.args[0])}: a symlink loop (the link leads back to itself; there is no file)")
    except FileNotFoundError as exc:
        return _error(f"no such file or folder: {_shown(exc.args[0])}")
    except NotAFile as exc:
        return _error(f"{_shown(exc.args[0])}: not a regular file or a folder (a device, FIFO or socket is never read)")
    except pins.PinError as exc:
        return _error(str(exc))
    except ValueError as exc:  # a version string that is not a version
        return _error(str(exc))
    idx = index()
    if args.format == "json":
        from kb.scan import report_json

        print(report_json.dumps(report_json.document(report)))
    elif args.format == "sarif":
        from kb.scan import report_sarif

        print(json.dumps(report_sarif.document(report, idx["sources"], os.getcwd(), args.site_url), ensure_ascii=False))
    else:
        from kb.scan.report_text import render

        render(report, idx["solutions"])
    return exit_code(report, args.fail_on)
