"""`kb check -- CMD`: will this training program repeat bit for bit once the knowledge base's
recipe is applied? Predicted from the calls it really makes, then run and compared.

Exit codes (the probe's): 0 the runs under the recipe were identical; 1 they differed, or the
recipe made the program raise; 2 bad input: no command, a program that fails as written or
takes no training step, an --out folder that holds other files. With --predict-only: 0 when
the runs are predicted to repeat under the recipe, 1 when predicted to differ or raise.
"""

from __future__ import annotations

import argparse
import json
import sys

EXIT_SAME, EXIT_DIFFER, EXIT_USAGE = 0, 1, 2

DESCRIPTION = """\
Run your own training program and find out whether it repeats bit for bit once the knowledge
base's recipe is applied, without editing it:

  1. inventory: the program runs once for its first steps while a start-up hook records each
     distinct call it makes (PyTorch: every framework call, with its exact dtypes, ranks,
     layout, device and the attention backend; JAX: the jaxpr and compiled HLO of each jitted
     function). The knowledge base answers for each call, one recipe is chosen for the whole
     program, and the outcome under it is PREDICTED before anything else runs: fixed, raises
     (which call), still differs (which call, and what would fix it), or unknown (no known
     source, not verified: never called "deterministic").
  2. the program runs twice as written and twice with the recipe applied (environment
     variables and switches set by the start-up hook), each a fresh process, for --steps
     training steps; every loss and every parameter after every step is compared bit for bit.
  3. where two runs differ, two more runs with probes on every module name the first call
     that split (kb probe's diff), with the knowledge base's answer for it.

The report puts prediction and outcome side by side, with the time the recipe costs.
"""

EPILOG = """\
examples:
  kb check -- python train.py                     5 steps, report in the terminal
  kb check --steps 20 --out /tmp/c -- python train.py --epochs 1
  kb check --json -- python -m mypkg.train        the same report as JSON (progress on stderr)
  kb check --predict-only -- python train.py      the inventory and the prediction, no more runs

What counts as a step: PyTorch, one optimizer.step() (of the first optimizer that steps; a
program with no optimizer: each backward()); JAX, one call of a jitted function that takes a
gradient. After --steps steps each run stops (exit status 0). Every run's output, log and
account are kept under --out (default ./kb-check): inventory/, as_written1/, recipe1/, ...

The start-up hook is a sitecustomize module put first on PYTHONPATH; it runs only in the first
Python process of the command and never raises into the program (a failure of its own is
reported, and the program goes on). Commands run with python -I, -E or -S skip it.

exit codes: 0 identical under the recipe, 1 the runs differ or raise under it,
2 bad input (no command, a program that fails as written or takes no step).
"""


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="run your training twice as written and twice with the recipe; predicted first",
                       description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=5, help="training steps per run (default 5)")
    p.add_argument("--inventory-steps", type=int, default=2, help="steps the inventory run records calls for (default 2)")
    p.add_argument("--out", default="kb-check", help="folder for the runs (default ./kb-check)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds one run may take (default 600)")
    p.add_argument("--json", action="store_true", help="print the report as JSON (progress stays on stderr)")
    p.add_argument("--predict-only", action="store_true", help="stop after the inventory and the prediction")
    p.add_argument("--blame", choices=("all", "recipe", "none"), default="all",
                   help="where a pair of runs differs, two watched runs name the call that split: for every pair "
                        "(all, default), only under the recipe (recipe), or never (none)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command, e.g. -- python train.py")
    p.set_defaults(func=cmd_check, needs_data=False)


def _error(message: str) -> int:
    from kb.untrusted import shown

    print(f"kb check: error: {shown(message)}", file=sys.stderr)
    return EXIT_USAGE


def cmd_check(args) -> int:
    from kb.check.report import render
    from kb.check.runner import CheckError, check

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        return _error("no command given; usage: kb check [--steps N] -- python train.py")
    if args.steps < 1 or args.inventory_steps < 1:
        return _error("--steps and --inventory-steps take a whole number of steps >= 1")
    if not args.timeout > 0:
        return _error("--timeout takes a number of seconds > 0")

    def progress(text: str) -> None:
        if not args.quiet:
            print(f"kb check: {text}", file=sys.stderr, flush=True)

    try:
        report = check(cmd, out=args.out, steps=args.steps, inventory_steps=args.inventory_steps, timeout=args.timeout,
                       blame=args.blame, predict_only=args.predict_only, progress=progress)
    except CheckError as exc:
        partial = getattr(exc, "report", None)
        if args.json and partial is not None:
            print(json.dumps(dict(partial, error=str(exc)), indent=1, allow_nan=False))
        return _error(str(exc))
    code = exit_code(report)
    report["exit"] = code
    if args.json:
        print(json.dumps(report, indent=1, allow_nan=False))
    else:
        sys.stdout.write(render(report))
    return code


def exit_code(report: dict) -> int:
    if "under_recipe" not in report:  # --predict-only
        return EXIT_SAME if report["prediction"]["expect"] == "identical" else EXIT_DIFFER
    result = report["under_recipe"]["result"]
    if result == "identical":
        return EXIT_SAME
    if result in ("differs", "raises"):
        return EXIT_DIFFER
    return EXIT_USAGE
