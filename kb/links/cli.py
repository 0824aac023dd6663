"""`kb links refresh`: the command-line face of kb/links/refresh.py."""

from __future__ import annotations

import argparse
import sys

EPILOG = """\
examples:
  kb links refresh                         ask api.github.com about every link (GITHUB_TOKEN if set)
  GITHUB_TOKEN=... kb links refresh        5000 requests/hour instead of 60
  kb links refresh --base-url http://127.0.0.1:8080   a local stand-in (tests)
  kb links refresh --max-wait 0            never wait for a rate limit; keep old entries instead

Writes data/links-state.yaml (atomically, at the end; data/links.yaml is never rewritten);
responses are cached with their ETags under .cache/kb-links/ so unchanged links cost a 304.
A deleted (404/410) or moved (301) issue is kept and flagged, never dropped; a 404 counts as
"deleted" only when the link's repository itself answers (a wrong --base-url answers 404 to
everything). An answer that is not what the API documents (not JSON, wrong shape, nested
deeper than 64 levels, over 8 MB, redirected off the API host) never replaces what was known:
the link keeps its previous state and the run exits 1. After 3 requests in a row with no
answer or a server error (5xx, after retries), or past --deadline, the rest keep theirs too.

exit codes: 0 every link refreshed, 1 some links kept their previous state (errors, rate
limit, malformed answers), 2 bad input (data/links.yaml or the state file unreadable),
3 a file could not be written (checked before the first request).
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
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds one socket operation may wait (default %(default)s)")
    p.add_argument("--request-deadline", type=float, default=60.0,
                   help="seconds one answer may take in all, however slowly it arrives (default %(default)s)")
    p.add_argument("--deadline", type=float, default=1800.0,
                   help="seconds the whole refresh may take; links not reached keep their state (default %(default)s)")
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
        timeout=args.timeout, max_wait=args.max_wait, deadline=args.request_deadline,
    )
    try:
        outcome, _ = refresh.run(root, client=client, quiet=args.quiet, deadline=args.deadline)
    except refresh.BadInput as exc:
        print(f"kb links refresh: error: {exc}", file=sys.stderr)
        return 2
    except state.StateFileError as exc:
        print(f"kb links refresh: error: {exc}", file=sys.stderr)
        return 1 if str(exc).startswith("not written") else 2
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
