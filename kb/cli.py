"""The `kb` command line: the same answers as the Python API, for people and scripts.

Exit codes scripts can rely on: 0 = answered / clean / fresh; 1 = the data has lint
findings, or generated files are stale, or `kb fix` could not fix everything;
2 = bad input (unknown op, malformed version, bad arguments); 3 = a file could not be
read or written (disk full, read-only folder): one line, no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from kb.root import root_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers treat it as True)
if TYPE_CHECKING:
    from typing import NoReturn

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_IO = 0, 1, 2, 3

EPILOG = """\
examples:
  kb status tf.nn.bias_add 1.15            is bias_add reproducible on TF 1.15? what fixes it?
  kb status tf.image.resize 2.21.0rc1      pre-releases answer as their release
  kb status tf.nn.conv2d 20.03 --distribution ngc
  kb status tf.bias-add-backprop 2.0 --json
  kb status nccl.ncclAllReduce 2.21.5      libraries answer on their own versions (cudnn., cublas., nccl.)
  kb status torch.nn.functional.interpolate 2.11 --call mode=bilinear --call input.ndim=4
                                           the answer for this call (parameters, input facts, backend)
  kb validate                              lint every file under data/ (codes KB001...)
  kb fix                                   rewrite data files into canonical form
  kb build                                 regenerate kb/_index.py and schema/
  kb build --check                         fail (exit 1) if any generated file is stale
  kb verify --dry-run                      which verifiers would run here (kb verify --help)
  kb verify --coverage                     records without a verifier, and why
  kb site                                  build the docs site + JSON API into site/build/
  kb scan .                                which calls in this code base are not reproducible (kb scan --help)
  kb probe run -- python train.py          train twice with probes; name where the runs first differ
  kb check -- python train.py              predict, then run as written and with the recipe (kb check --help)
  kb links refresh                         live state of every GitHub link -> data/links-state.yaml
  kb nightly                               verify, refresh links, rebuild, write reports/nightly.md

exit codes: 0 answer/clean, 1 lint findings or stale files, 2 bad input,
3 a file could not be written or read (disk full, read-only folder; one line names it).
A reader that stops early (`kb status ... | head -1`) is not an error: the exit code is 0.
--json output is strict JSON: a float that is not finite is written "nan", "inf" or "-inf".
"""


def _shown(filename: object) -> str:
    """A path for a one-line error: relative to the current folder when inside it."""
    if filename is None:
        return "a file"
    text = os.fsdecode(filename) if isinstance(filename, (str, bytes, os.PathLike)) else str(filename)
    relative = os.path.relpath(text) if os.path.isabs(text) else text
    return relative if not relative.startswith("..") else text


def _stdout_is_null() -> bool:
    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError, AttributeError):
        return False
    return (out.st_dev, out.st_ino, out.st_rdev) == (null.st_dev, null.st_ino, null.st_rdev)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null: the interpreter's last flush would
    otherwise fail again and print "Exception ignored ... BrokenPipeError" (exit 120)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _error(message: str) -> int:
    print(f"kb: error: {message}", file=sys.stderr)
    return EXIT_USAGE


# --- status -------------------------------------------------------------------------


def cmd_status(args: argparse.Namespace) -> int:
    import kb
    from kb import jsonio

    try:
        call = _parse_call(args.call)
        result = kb.status(
            args.op, args.version, framework=args.framework, device=args.device, distribution=args.distribution,
            call=call,
        )
    except kb.UnknownOpError as exc:
        return _error(str(exc))
    except ValueError as exc:
        return _error(str(exc))
    except OSError as exc:  # the KB's own API inventory is broken: not the op's fault (R4-L14)
        print(f"kb: error: {exc}", file=sys.stderr)
        return EXIT_IO
    if args.json:
        print(jsonio.dumps(result.to_dict(), indent=2))
        return EXIT_OK
    _print_status(result)
    return EXIT_OK


def _parse_call(items: list[str] | None) -> dict[str, object] | None:
    """`--call mode=nearest --call input.ndim=4` -> {"mode": "nearest", "input.ndim": 4}.

    A value is read as a Python literal where it is one (True, 4, 0.5, None, 'x'), else as a
    string, so `mode=bilinear` needs no quotes.
    """
    if not items:
        return None
    import ast

    call: dict[str, object] = {}
    for item in items:
        key, eq, text = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--call takes KEY=VALUE (e.g. --call mode=nearest), not {item!r:.80}")
        key = key.strip()
        if key in call:
            raise ValueError(f"--call gives {key!r} twice")
        try:
            value = ast.literal_eval(text.strip()) if len(text) <= 200 else text
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = text.strip()
        call[key] = value
    return call


def _print_codes(console, codes) -> None:
    """Each code of a recipe with its title and what to set: a code alone means nothing to a newcomer."""
    from rich.markup import escape as e

    from kb import query

    for code in codes:
        info = query.solution(code)
        if info is None:
            continue
        console.print(f"  [bold]{e(code)}[/]: {e(info['title'])}")
        snippet = (info.get("snippet") or "").strip()
        lines = snippet.splitlines() if snippet else [" ".join(str(info.get("how") or "").split())]
        for line in lines[:8]:
            console.print(f"      {e(line)}", highlight=False)


SILENT_NOTE = "NOT fixed by the deterministic switch"


def _print_status(result) -> None:
    from rich.markup import escape as e
    from rich.table import Table

    console = _console()
    colour = {True: "green", False: "red", None: "yellow"}[result.deterministic]
    where = f"{result.distribution} {result.version}" if result.distribution else f"{result.framework} {result.version}"
    # The first line says how it is known (kb/query/headline.py): the same words as --json's "headline".
    console.print(f"[bold]{e(result.op)}[/] on {e(where)} ({result.device}): [{colour}]{e(result.headline)}[/]")
    swept_only = result.basis == "verified" and not result.sources and result.verified
    console.print("basis: " + {
        "verified": ("verified by an operator sweep only: no record; the runs below saw no difference for the calls "
                     "listed, on that device and release (weaker than a code read)" if swept_only and result.deterministic
                     else "verified: this call ran on this version and device (measured, below)"),
        "static": "static: code or binary read at this release (below)",
        "documented": ("documented: the framework's own guarantee under its switch (note below)" if not result.sources
                       and not result.excluded else "documented: the records' sources; not run for this call and version here"),
        "unverified": "[yellow]unverified[/]: no record, no run and no code read covers it here"}[result.basis])
    if result.call is not None:
        shown = ", ".join(f"{k}={v!r}" for k, v in result.call.items()) or "defaults only"
        console.print(f"call: {e(shown)}")
    if result.depends_on_call and not result.sources:
        console.print("[yellow]depends on the call:[/] the runs below cover only the calls that ran; "
                      "describe the call with --call KEY=VALUE")
    elif result.depends_on_call:
        console.print("[yellow]depends on the call:[/] some sources apply only to some calls (see 'applies when'); "
                      "describe the call with --call KEY=VALUE")
    silent = [n for n in result.notes if SILENT_NOTE in n] if result.silent else []
    for note in silent:  # first: what a user who set the switch still leaks
        console.print(f"[red]warning:[/] {e(note)}")
    if result.recipe:
        console.print("recipe: " + " + ".join(result.recipe) + " (apply all, in this order)")
        _print_codes(console, result.recipe)
    elif result.deterministic is False and result.recipe is None and any(s.deterministic is None for s in result.sources):
        console.print("recipe: none: the KB does not know every applying source's status in this version "
                      "(the 'unknown' rows below)")
    elif result.deterministic is False and result.recipe is None:
        console.print("recipe: none: at least one source has no solution in this version")
    elif result.deterministic is None and result.sources:
        console.print("recipe: none: the KB does not know every source's status in this version")
    if result.solutions:
        console.print("solutions (each fixes at least one source): " + ", ".join(result.solutions))
    if result.batch_invariant is False:
        console.print("[yellow]not batch invariant:[/] results can change with batch size or concurrent requests")
    if result.varies_with:
        moving = [s for s in result.sources if s.varies == "configuration"]
        pins = ", ".join(dict.fromkeys(c for s in moving for c in s.solutions)) or "none known"
        console.print("[yellow]changes across configurations:[/] repeats run to run with them fixed, but "
                      f"{', '.join(result.varies_with)} change the bits ({e(', '.join(s.id for s in moving))}); "
                      f"to keep them: {e(pins)}")
    for note in result.notes:
        if note in silent:
            continue
        console.print(f"[yellow]note:[/] {e(note)}")
    if not result.sources:
        console.print({"unverified": "no record, run or code read covers this op on this release and device",
                       "static": "no known source of non-determinism; the kernel's code was read (below)",
                       "verified": "no record of this op: what the operator sweep measured is below",
                       }.get(result.basis, "no known source of non-determinism for this op"))
        _print_evidence(console, result)
        return
    table = Table(show_lines=False)
    conditioned = any(source.condition for source in result.sources)
    columns = ("source", "range", "state", "switch", "solutions", "raises") + (("applies when",) if conditioned else ())
    for column in columns:
        table.add_column(column, overflow="fold")
    for source in result.sources:
        state = {True: "deterministic", False: "non-deterministic", None: "unknown"}[source.deterministic]
        if source.varies == "configuration":
            state = "repeats run to run; changes with " + ", ".join(source.varies_with)
        codes = ", ".join(source.solutions) if source.solutions else ("NS" if source.deterministic is False else "")
        switch = {"fixes": "fixes", "raises": "raises", "silent": "[red]no effect[/]"}.get(source.switch or "", "")
        row = [e(source.id), e(source.versions or "-"), state, switch, codes, e(source.raises or "")]
        if conditioned:
            when = source.condition or "every call"
            if source.condition and source.applies is True:
                when += " (this call: yes)"
            elif source.depends_on and result.call is not None:
                when += f" (this call: unknown; say {', '.join(source.depends_on)})"
            row.append(e(when))
        table.add_row(*row)
    console.print(table)
    console.print("[dim]state: whether the source makes results differ from run to run in this range; "
                  "solutions: codes any one of which fixes it (NS: none known); raises: the error the "
                  "switch gives instead of running a non-deterministic kernel[/]")
    for source in result.sources:
        if source.note:
            console.print(f"[dim]{e(source.id)}:[/] {e(source.note)}")
        for claim in source.disputed:
            console.print(f"[yellow]disputed[/] {e(source.id)}: {e(claim)}")
        if source.caused_by:
            console.print(f"[dim]{e(source.id)}:[/] caused by {e(', '.join(source.caused_by))} (ask kb status <id> <library version>)")
    _print_evidence(console, result)


def _print_evidence(console, result) -> None:
    """What was measured and read for the answer, then its references."""
    from rich.markup import escape as e

    for evidence in result.verified[:8]:
        console.print(f"[dim]measured:[/] {e(str(evidence))}")
    if len(result.verified) > 8:
        console.print(f"[dim]measured:[/] and {len(result.verified) - 8} more (--json lists them all)")
    for static in result.static:
        console.print(f"[dim]{e(static.source)}:[/] read from the released wheel: {e(str(static))}")
    for read in result.read[:8]:
        console.print(f"[dim]code read:[/] {e(str(read))}  {e(read.url or '')}")
    if len(result.read) > 8:
        console.print(f"[dim]code read:[/] and {len(result.read) - 8} more (--json lists them all)")
    if result.references:
        console.print("references:")
        for ref in result.references:
            console.print(f"  {e(str(ref))}" + (f"  {e(ref.url)}" if ref.url else ""))


# --- validate / fix / build / schema ------------------------------------------------


def _print_findings(findings, as_json: bool) -> None:
    if as_json:
        from kb import jsonio

        print(jsonio.dumps([f.to_dict() for f in findings], indent=2))
        return
    for finding in findings:
        print(finding.render())
    if findings:
        files = len({f.path for f in findings})
        print(f"{len(findings)} finding(s) in {files} file(s)", file=sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    from kb import unchanged

    root = root_of(args)
    command = f"validate strict={args.strict} json={args.json}"
    digest = unchanged.inputs_digest(root, command)
    kept = unchanged.passed(root, command, digest)
    if kept is not None:  # a clean run on exactly these files: the same answer (kb/unchanged.py)
        for line in kept["said"]:
            print(line)
        return EXIT_OK
    from kb.lint import errors, run

    catalog, findings = run(root)
    _print_findings(findings, args.json)
    failing = findings if args.strict else errors(findings)
    ok = (f"ok: {len(catalog.sources)} source records, {len(catalog.solutions)} solution codes, "
          f"{len(catalog.links)} links, {len(catalog.registries)} version registries")
    if not failing and not args.json:
        print(ok + (f" ({len(findings)} warning(s) for review)" if findings else ""))
    if not findings:  # what this clean run printed, said again while nothing changes
        unchanged.record(root, command, digest, ["[]"] if args.json else [ok])
    return EXIT_FINDINGS if failing else EXIT_OK


def cmd_fix(args: argparse.Namespace) -> int:
    from kb.atomic import write_atomic
    from kb.lint import run
    from kb.lint.canonical import expected_texts
    from kb.yamlio import has_comments

    catalog, findings = run(root_of(args))
    blocked = {f.path for f in findings if f.code in ("KB001", "KB002")}
    changed = refused = 0
    for path, text in expected_texts(catalog).items():
        rel = catalog.rel(path)
        doc = catalog.documents[path]
        if doc.text == text:
            continue
        if rel in blocked:
            continue
        comments = has_comments(doc.text)
        if comments:
            print(f"{rel}:{comments[0]}: not rewritten: it has comments that `kb fix` would drop; move them into notes:")
            refused += 1
            continue
        write_atomic(path, text)
        changed += 1
        print(f"fixed {rel}")
    for name in sorted(blocked):
        print(f"{name}: not rewritten: fix its KB001/KB002 errors first (see `kb validate`)")
    print(f"{changed} file(s) rewritten", file=sys.stderr)
    return EXIT_FINDINGS if (refused or blocked) else EXIT_OK


BUILD_LOCK = ".cache/kb-build.lock"


def cmd_build(args: argparse.Namespace) -> int:
    import contextlib

    from kb import unchanged

    root = root_of(args)
    digest = unchanged.inputs_digest(root, "build")
    kept = unchanged.passed(root, "build", digest)
    if kept is not None:  # up to date on exactly these files last time (kb/unchanged.py)
        for line in kept["said"]:
            print(line)
        return EXIT_OK
    from kb.atomic import locked, write_atomic
    from kb.generated import generated_files
    from kb.lint import checking, errors
    from kb.links.state import StateFileError

    # The files are made while the lint checks run beside them (kb/lint: a second process where
    # the OS forks, as for `kb site`); nothing is compared or written until the data is clean.
    failed: StateFileError | None = None
    with checking(root_of(args)) as (catalog, wait):
        try:
            files = generated_files(catalog)
        except StateFileError as exc:
            failed, files = exc, {}
        except Exception:
            if not errors(wait()):  # broken data can break the build: the findings say why
                raise
            files = {}
        findings = errors(wait())
    if findings:
        _print_findings(findings, False)
        print("kb build: refusing to build from data with findings; run `kb validate`", file=sys.stderr)
        return EXIT_FINDINGS
    if failed is not None:
        return _error(f"{failed} (rerun `kb links refresh` or delete the file)")
    stale = []
    with contextlib.nullcontext() if args.check else locked(catalog.root / BUILD_LOCK):  # one writer at a time
        for path, text in files.items():
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != text:
                stale.append(path)
                if not args.check:
                    write_atomic(path, text)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'} {catalog.rel(path)}")
    if args.check and stale:
        print("generated files are stale: run `kb build`", file=sys.stderr)
        return EXIT_FINDINGS
    if not stale:
        print(f"up to date: {len(files)} generated file(s)")
    # what was written is an input too: the digest is taken after the writes
    unchanged.record(root, "build", digest if not stale else unchanged.inputs_digest(root, "build"),
                     [f"up to date: {len(files)} generated file(s)"])
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from kb.atomic import write_atomic
    from kb.generated import schema_texts

    out = root_of(args) / "schema"
    for name, text in schema_texts().items():
        write_atomic(out / name, text)
        print(f"wrote schema/{name}")
    return EXIT_OK


# --- parser -------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its message short
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


CORE = ("status", "validate", "fix", "build", "schema")
"""Commands defined in this module: their parser needs none of the areas' modules."""
AREAS = ("verify", "site", "probe", "check", "scan", "links", "nightly")
"""Commands whose parsers live in kb/<area>/cli.py, added in this order."""


def _core_command(argv: list[str]) -> str | None:
    """The command of `argv` (one of CORE or AREAS) when only `--root` comes before it, else None."""
    i = 0
    while i < len(argv) and argv[i].startswith("--root"):
        i += 1 if "=" in argv[i] else 2
    return argv[i] if i < len(argv) and argv[i] in CORE + AREAS else None


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only` (a command), that command's part of it alone.

    `kb validate` and `kb build` must start fast, and `kb site` must stay one thread until it
    forks (kb/aside.py): the areas' parsers import their modules (`kb verify --static` names its
    frameworks from the wheel readers, which load numpy, whose BLAS starts a thread), so a
    command is parsed without the other areas. Its arguments, help and errors are the same.
    """
    top = _Parser(
        prog="kb",
        description="Is this op run-to-run reproducible on my framework version, and what switch makes it so?",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--root", default=None, help="project root holding data/ (default: the nearest folder holding data/, from the current one up)")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("status", help="answer for one op and version", description=(
        "Answer for one op and version. OP is a public name (tf.nn.bias_add, tf.keras.layers.Conv2D) "
        "or a source record id (tf.bias-add-backprop); library ops use their C names under the library "
        "prefix (cudnn.cudnnConvolutionBackwardFilter, cublas.cublasGemmEx, nccl.ncclAllReduce) and a "
        "library version. VERSION is a PEP 440 version; pre-releases answer as their release (2.21.0rc1 -> 2.21)."))
    p.add_argument("op")
    p.add_argument("version")
    p.add_argument("--framework", help="tensorflow, pytorch, jax, horovod, cudnn, cublas, nccl, vllm... (default: from the name's prefix)")
    p.add_argument("--device", default="gpu", choices=("gpu", "cpu", "any"), help="device the op runs on (default gpu)")
    p.add_argument("--distribution", choices=("ngc",), help="read VERSION as an NGC container version")
    p.add_argument("--call", action="append", metavar="KEY=VALUE", help=(
        "how the op is called, once per fact: a parameter (--call mode=nearest, --call accumulate=True), "
        "a tensor argument's dtype kind (--call weights=float), input.ndim, input.dtype (a kind or an exact "
        "dtype: --call input.dtype=bfloat16), input.layout (--call input.layout=strided for a dense tensor, sparse_coo, ...; "
        "unknown when left out), the input's element count (--call input.numel=1000), a sequence's length "
        "(--call pad.len=2) or backend (--call backend=flash); values are Python "
        "literals where they are one. Parameters left out take the op's defaults; a value outside a "
        "parameter's documented set is refused (exit 2)"))
    p.add_argument("--json", action="store_true", help="print the Status as JSON")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("validate", help="lint data/ and report every finding with file:line")
    p.add_argument("--json", action="store_true", help="findings as a JSON list")
    p.add_argument("--strict", action="store_true", help="warnings (KB015: a run contradicts its record) fail too")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("fix", help="rewrite data files into canonical form (refuses files with comments or errors)")
    p.set_defaults(func=cmd_fix)

    p = sub.add_parser("build", help="regenerate kb/_index.py, schema/, docs/lint.md and the README status section")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if any generated file is stale")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("schema", help="export JSON Schema for editors to schema/")
    p.set_defaults(func=cmd_schema)
    if only in CORE:
        return top
    wanted = (only,) if only in AREAS else AREAS
    if "verify" in wanted:  # kb/verify/cli.py
        from kb.verify.cli import add_parser as add_verify

        add_verify(sub)
    if "site" in wanted:  # kb/site/cli.py
        from kb.site.cli import add_parser as add_site

        add_site(sub)
    if "probe" in wanted:  # the determinism debug tool: kb/probe/cli.py
        from kb.probe.cli import add_parser as add_probe_parser

        add_probe_parser(sub)
    if "check" in wanted:  # the user's own program, predicted then run: kb/check/cli.py
        from kb.check.cli import add_parser as add_check

        add_check(sub)
    if "scan" in wanted:  # kb/scan/cli.py
        from kb.scan.cli import add_parser as add_scan

        add_scan(sub)
    if "links" in wanted:  # links refresh: kb/links/cli.py
        from kb.links.cli import add_parser as add_links

        add_links(sub, _Parser)
    if "nightly" in wanted:  # kb/nightly/cli.py
        from kb.nightly.cli import add_parser as add_nightly

        add_nightly(sub, _Parser)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser(_core_command(argv)).parse_args(argv)
    if not getattr(args, "func", None):
        parser().print_help()
        return EXIT_USAGE
    needs_data = getattr(args, "needs_data", True) and args.func is not cmd_status
    if needs_data and not (root_of(args) / "data").is_dir():
        return _error(f"no data/ folder under {root_of(args)}; run from the project root or pass --root")
    to_null = _stdout_is_null()
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader stopped early (`kb status ... | head -1`): not an error
        _silence_stdout()
        return EXIT_OK
    except SystemExit as exc:
        # rich's Console ends a write to a closed pipe with SystemExit(1) after pointing stdout at
        # /dev/null: that is the same reader gone, not "lint findings" (exit 1)
        if exc.code == 1 and not to_null and _stdout_is_null():
            return EXIT_OK
        raise
    except OSError as exc:  # disk full, read-only data/: one line, its own exit code
        print(f"kb: error: cannot write {_shown(exc.filename)}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_IO
