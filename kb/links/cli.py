"""`kb links refresh`: the command-line face of kb/links/refresh.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EPILOG = """\
examples:
  kb links refresh                         ask api.github.com about every link (GITHUB_TOKEN if set)
  GITHUB_TOKEN=... kb links refresh        5000 requests/hour instead of 60
  kb links refresh --base-url http://127.0.0.1:8080   a local stand-in (tests)
  kb links refresh --max-wait 0            never wait for a rate limit; keep old entries instead

Writes data/links-state.yaml (atomically, at the end; data/links.yaml is never rewritten);
responses are cached with their ETags under .cache/kb-links/ so unchanged links cost a 304.
A deleted (404/410) or moved (301) issue is kept and flagged, never dropped.

exit codes: 0 every link refreshed, 1 some links kept their previous state (errors, rate
limit), 2 bad input (data/links.yaml or the state file unreadable).
"""


def add_parser(sub: argparse._SubParsersAction, parser_class: type) -> None:
    links = sub.add_parser("links", help="GitHub links: refresh their live state", description=(
        "Work on data/links.yaml's GitHub issues, PRs and commits."), epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    links_sub = links.add_subparsers(dest="links_command", metavar="ACTION", parser_class=parser_class)
    p = links_sub.add_parser("refresh", help="ask the GitHub API for state, title, labels, merge date, release",
                             epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-url", default="https://api.github.com", help="GitHub API root (default %(default)s)")
    p.add_argument("--max-wait", type=float, default=900.0,
                   help="longest total wait for a rate limit to reset, in seconds (default %(default)s)")
    p.add_argument("--timeout", type=float, default=10.0, help="per-request timeout in seconds (default %(default)s)")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write .cache/kb-links/")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_refresh)
    links.set_defaults(func=lambda args: (links.print_help(), 2)[1])


def cmd_refresh(args: argparse.Namespace) -> int:
    import os

    from kb.links import refresh, state

    from kb.root import root_of

    root = root_of(args)
    client = refresh.GitHub(
        args.base_url, token=os.environ.get("GITHUB_TOKEN"),
        cache_dir=None if args.no_cache else root / refresh.CACHE_DIR,
        timeout=args.timeout, max_wait=args.max_wait,
    )
    try:
        outcome, _ = refresh.run(root, client=client, quiet=args.quiet)
    except (refresh.BadInput, state.StateFileError) as exc:
        print(f"kb links refresh: error: {exc}", file=sys.stderr)
        return 2
    print(summary(outcome))
    for line in outcome.flagged:
        print(f"flagged: {line}")
    for line in outcome.errors:
        print(f"kept previous: {line}", file=sys.stderr)
    return 1 if outcome.errors else 0


def summary(outcome) -> str:
    return (f"wrote {state_path()}: {len(outcome.links)} links, {outcome.refreshed} refreshed, "
            f"{outcome.unchanged} unchanged (304), {len(outcome.flagged)} flagged, {len(outcome.errors)} kept previous")


def state_path() -> str:
    from kb.links.state import STATE_FILE

    return STATE_FILE
