"""`kb nightly`: arguments, the one-line summary, and the exit code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EPILOG = """\
examples:
  kb nightly                               everything: verify, links, build, report
  kb nightly --no-links --no-build         only verify and compare (offline)
  kb nightly --no-verify --no-links --no-build --report-dir /tmp/r   compare existing run files
  kb nightly --links-base-url http://127.0.0.1:8080                  links against a stand-in
  python scripts/nightly.py ...            the same, for cron or CI

Steps: detect the environment (GPU via nvidia-smi or torch.cuda; installed frameworks),
`kb verify --json --out data/runs` (reported "not available" if this build has none), `kb
verify --sweep SUITE --out data/sweeps` for each installed PyTorch/JAX release not swept yet
("sweep not available" if this build has no sweep; new silent sources are reported first), `kb
links refresh`, `kb build`, then compare each environment's newest run file with its previous
one and write reports/nightly.md and reports/nightly.json (atomically). `kb site` shows the
JSON as the site's "Nightly report" page.

exit codes: 0 no regression, 1 a regression (each named on stderr and in the report),
2 bad input.
"""


def add_parser(sub: argparse._SubParsersAction, parser_class: type) -> None:
    p = sub.add_parser("nightly", help="re-verify, refresh links, rebuild, and report what changed",
                       description="Re-verify what this machine can, refresh links, rebuild, report changes.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs-dir", help="where run files live (default data/runs)")
    p.add_argument("--report-dir", help="where nightly.md and nightly.json go (default reports)")
    p.add_argument("--no-verify", action="store_true", help="do not run the verifiers; compare existing run files")
    p.add_argument("--no-sweep", action="store_true", help="do not run the operator sweep for releases not swept yet")
    p.add_argument("--sweep-timeout", type=float, default=3600, help="seconds for each sweep suite (default 1 h)")
    p.add_argument("--sweeps-dir", help="where the sweep writes its files (default data/sweeps; releases swept there or in "
                                        "data/sweeps are not swept again)")
    p.add_argument("--sweeps-from", help="merge the sweep files GPU jobs wrote (a folder of CI artifacts) into data/sweeps "
                                         "instead of sweeping here; their new silent sources are reported first")
    p.add_argument("--sweep-releases", action="store_true",
                   help="also sweep each PyTorch and JAX registry release newer than the swept ones (at most 2 a "
                        "night per framework), each installed in a virtual environment of its own")
    p.add_argument("--no-links", action="store_true", help="do not refresh GitHub links")
    p.add_argument("--no-build", action="store_true", help="do not run `kb build`")
    p.add_argument("--links-base-url", default="https://api.github.com", help="GitHub API root (default %(default)s)")
    p.add_argument("--stale-days", type=int, default=90, help="report records whose newest run is older (default 90)")
    p.add_argument("--verify-timeout", type=float, default=6 * 3600, help="seconds for the verify step (default 6 h)")
    p.add_argument("--no-torch-probe", action="store_true",
                   help="find GPUs with nvidia-smi only (do not import torch in a child process to ask torch.cuda)")
    p.set_defaults(func=cmd_nightly)


def cmd_nightly(args: argparse.Namespace) -> int:
    from kb.nightly.run import Options, nightly

    from kb.root import root_of

    root = root_of(args)
    if args.stale_days < 0:
        print("kb nightly: error: --stale-days must be 0 or more", file=sys.stderr)
        return 2
    opts = Options(
        root=root,
        runs_dir=Path(args.runs_dir).resolve() if args.runs_dir else None,
        report_dir=Path(args.report_dir).resolve() if args.report_dir else None,
        verify=not args.no_verify, links=not args.no_links, build=not args.no_build,
        base_url=args.links_base_url, stale_days=args.stale_days, verify_timeout=args.verify_timeout,
        probe_torch=not args.no_torch_probe, sweep=not args.no_sweep, sweep_timeout=args.sweep_timeout,
        sweeps_dir=Path(args.sweeps_dir).resolve() if args.sweeps_dir else None,
        sweeps_from=Path(args.sweeps_from).resolve() if args.sweeps_from else None,
        sweep_releases=args.sweep_releases,
    )
    body = nightly(opts)
    for item in body["regressions"]:
        print(f"regression: {item['source']} on {item['env']} (mode {item['mode']}, {item['kind']}): {item['detail']}",
              file=sys.stderr)
    for item in body.get("new_silent", []):
        print(f"new silent source: {item['op']} ({item['suite']} {item['version']}, {item['pass']}, {item['dtype']}): "
              f"differs under the switch without an error; covered by {item['covered_by']}", file=sys.stderr)
    print(f"{len(body.get('new_silent', []))} new silent source(s), "
          f"{len(body['regressions'])} regression(s), {len(body['newly_differ'])} newly differing, "
          f"{len(body['newly_confirmed'])} newly confirmed, {len(body['link_changes'])} link change(s), "
          f"{len(body['stale'])} stale record(s)")
    return 1 if body["regressions"] else 0
