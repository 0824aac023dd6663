"""`kb site`: build the documentation site (pages, JSON API, HTML) from data/."""

from __future__ import annotations

import argparse
import sys
import time

HELP = """\
Generate the site's Markdown pages and static JSON API from data/ into site/build/docs,
then run `mkdocs build --strict` into site/build/html (open site/build/html/index.html,
or serve it: python -m http.server -d site/build/html).

The "Nightly report" page shows reports/nightly.json as `kb nightly` last wrote it; with no
report it says how to make one, and a report it cannot read is named on the page and on
stderr (a warning: the site is still built).

examples:
  kb site                 build everything; prints where the site is
  kb site --no-html       only the mkdocs sources and the JSON API (fast; no mkdocs)
  kb site --report-dir /tmp/r   the nightly page from /tmp/r/nightly.json (as `kb nightly --report-dir`)

The guides (docs/), examples/ and site/assets/ are read as untrusted input: a symlink out of
the repository, a FIFO or device, a file over 4 MB or not UTF-8 is refused by name (exit 2),
and nothing is published.

exit codes: 0 built, 1 data has lint findings or mkdocs failed, 2 bad input (a refused file).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("site", help="build the documentation site and JSON API into site/build/", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--no-html", action="store_true", help="write the mkdocs sources and JSON API only")
    p.add_argument("--report-dir", help="where the nightly report (nightly.json) is read from (default reports, "
                                        "as `kb nightly`)")
    p.set_defaults(func=cmd_site)


def cmd_site(args: argparse.Namespace) -> int:
    from pathlib import Path

    from kb.atomic import locked
    from kb.lint import checking, errors
    from kb.root import root_of
    from kb.site.build import BUILD, LOCK, RefusedInput, clean_stale, mkdocs, page_count, sources, write_files

    started = time.perf_counter()
    root = root_of(args)
    build = root / BUILD
    report_dir = Path(args.report_dir).resolve() if args.report_dir else None
    warnings: list[str] = []
    # The pages are rendered while the lint checks run beside them (kb/lint: a second process
    # where the OS forks); nothing is written until the checks say the data is clean.
    with checking(root) as (catalog, wait):
        try:
            files = sources(catalog, report_dir, warn=warnings.append)
        except RefusedInput as exc:  # a guide, example or asset that is a link out, a device or a FIFO
            print(f"kb site: error: {exc}", file=sys.stderr)
            return 2
        except Exception:
            if errors(wait()):  # broken data can break the renderer: the findings say why
                files = None
            else:
                raise
        findings = errors(wait())  # KB015 warnings are evidence for review, shown on the site
    if findings:
        for finding in findings:
            print(finding.render())
        print("kb site: refusing to build from data with findings; run `kb validate`", file=sys.stderr)
        return 1
    for message in warnings:
        print(f"kb site: warning: {message}", file=sys.stderr)
    # One `kb site` at a time per tree: a second waits, so the two never mix their output.
    assert files is not None  # None only with findings, refused above
    with locked(build / LOCK):
        clean_stale(build)
        write_files(files, build)
        print(f"wrote {page_count(files)} pages and the JSON API to {BUILD}/docs")
        if args.no_html:
            return 0
        result = mkdocs(build)
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        print("kb site: mkdocs build --strict failed", file=sys.stderr)
        return 1
    print(f"site built in {time.perf_counter() - started:.1f} s: {BUILD}/html/index.html "
          f"(serve: python -m http.server -d {BUILD}/html)")
    return 0
