"""Every "To add ..." note in the repository, followed: the notes are how a newcomer adds a
record, a case, a check or a sweep unit, and a note nobody follows drifts (a renamed file, a
step that no longer works) without failing anything.

Each note is found by its first line ("To add a ..."), and `test_every_note_is_followed` fails
for a new note until it has an entry in FOLLOWED here. Every note's file paths must exist
(`test_the_paths_a_note_names_exist`). The notes whose steps add data or code are done, step by
step, in a temporary copy (of the small fixture project, tests/fixtures/mini/, for the ones
`kb validate` checks, or of kb/ and verifiers/ for a sweep unit and a lint check), and the
result is checked the way the note says: `kb fix` and `kb validate --strict` clean, the answer
of `kb.status`, the plan of `kb verify --dry-run`, a lint finding, a unit the worker lists.
The others (a probe adapter, a scan rule or resolver, a call fact, a query cache) change the
package itself in several places and have their own tests named in the note; here their paths
are checked.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "tests" / "fixtures" / "mini"
HEAD = re.compile(r"^(?:#+ )?To add (?:a |an )?([a-z][a-z ]+?)(?: \(|:|$)", re.MULTILINE)

FOLLOWED = {
    # note: (the file it is in, how it is checked here)
    "record": ("kb/catalog.py", "followed: test_a_record"),
    "call case to a verifier": ("kb/verify/cases.py", "followed: test_a_verifier_and_its_cases"),
    "verifier": ("verifiers/__init__.py", "followed: test_a_verifier_and_its_cases"),
    "lint check": ("kb/lint/__init__.py", "followed: test_a_lint_check"),
    "sweep unit": ("docs/sweep.md", "followed: test_a_sweep_unit"),
    "call fact": ("kb/calls.py", "paths; tests/test_calls_forms.py checks the facts' spellings"),
    "cache": ("kb/query/__init__.py", "paths; tests/test_query_caches.py is the note's own check"),
    "probe adapter": ("kb/probe/__init__.py", "paths; tests/test_probe.py"),
    "scan rule": ("kb/scan/__init__.py", "paths; tests/test_scan_rules.py is the note's own check"),
    "rule": ("kb/scan/resolvers.py", "paths; tests/test_scan_rules.py"),
}


def notes() -> dict[str, tuple[str, str]]:
    """note name -> (file, the note's text: from its first line to the first blank line after a
    step, or to the next heading in Markdown)."""
    out = {}
    files = [*sorted((ROOT / "kb").rglob("*.py")), *sorted((ROOT / "verifiers").rglob("*.py")),
             *sorted((ROOT / "docs").glob("*.md")), ROOT / "verifiers" / "README.md"]
    for path in files:
        if path.name.startswith(("_index", "_details", "_seen")) or path.name == "history.md":
            continue
        text = path.read_text(encoding="utf-8")
        for match in HEAD.finditer(text):
            rest = text[match.start():]
            end = re.search(r"\n## " if path.suffix == ".md" else r'"""|\n\n(?=[A-Z])', rest[1:])
            out[match.group(1)] = (path.relative_to(ROOT).as_posix(), rest[: end.start() + 1 if end else len(rest)])
    return out


NOTES = notes()


def test_every_note_is_followed() -> None:
    assert {name: where for name, (where, _) in NOTES.items()} == {name: where for name, (where, _) in FOLLOWED.items()}


def test_the_architecture_page_lists_every_note() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## How to add one", 1)[1].split("## Module map", 1)[0]
    missing = [where for name, (where, _) in FOLLOWED.items() if name != "rule" and f"`{where}`" not in table]
    assert missing == []


@pytest.mark.parametrize("name", sorted(FOLLOWED))
def test_the_paths_a_note_names_exist(name: str) -> None:
    """Every path a note names (a placeholder `<x>` matches any name) is in the repository."""
    text = NOTES[name][1]
    paths = set(re.findall(r"(?<![\w./<>-])((?:kb|verifiers|tests|docs|data|schema)/[\w<>./-]*[\w>/])", text))
    assert paths, name
    missing = [p for p in sorted(paths) if not list(ROOT.glob(re.sub(r"<[^>]+>", "*", p.rstrip("/"))))]
    assert missing == [], f"the note on adding a {name} names paths that do not exist: {missing}"


# --- the notes followed, step by step ------------------------------------------------------


def _mini(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    return root


def _kb(root: Path, *argv: str) -> int:
    from kb.cli import main

    return main(["--root", str(root), *argv])


def test_a_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kb/catalog.py: write the record from one of the same framework, `kb fix`, `kb validate
    --strict`, build, and `kb.status` answers from it."""
    from kbproject import answering, compiled

    root = _mini(tmp_path)
    sample = (root / "data" / "sources" / "tensorflow" / "tf.sample.yaml").read_text(encoding="utf-8")
    added = sample.replace("id: tf.sample", "id: tf.added").replace("  - tf.nn.bias_add", "  - tf.image.resize")
    assert added != sample and "tf.image.resize" in added
    (root / "data" / "sources" / "tensorflow" / "tf.added.yaml").write_text(added, encoding="utf-8")
    assert _kb(root, "fix") == 0
    assert _kb(root, "validate", "--strict") == 0, capsys.readouterr()
    with answering(compiled(root)) as kb:
        assert [s.id for s in kb.status("tf.image.resize", "2.10", device="gpu").sources] == ["tf.added"]


VERIFIER = textwrap.dedent('''
    from verifiers import verifier

    CASES = (
        {"op": "tf.nn.bias_add", "call": {"data_format": "NHWC", "input.ndim": 4}},
        {"op": "tf.nn.bias_add", "call": {"data_format": "NCHW", "input.ndim": 4}},
    )


    @verifier("tensorflow.added", framework="tensorflow", cases=CASES)
    def added(ctx):
        return lambda: ctx.call["data_format"]
''')


def test_a_verifier_and_its_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """verifiers/__init__.py and kb/verify/cases.py: the function with literal arguments in
    verifiers/<framework>/<area>.py, its cases, the record naming it; `kb validate --strict`
    checks the name (KB014) and the cases (KB024); discovery reads each case as the plan prints it."""
    from kb.lint.verifiers import registered
    from kb.verify.cases import label

    root = _mini(tmp_path)
    (root / "verifiers" / "tensorflow").mkdir(parents=True)
    for name in ("__init__.py", "discover.py"):
        shutil.copy(ROOT / "verifiers" / name, root / "verifiers" / name)
    (root / "verifiers" / "tensorflow" / "__init__.py").write_text("", encoding="utf-8")
    (root / "verifiers" / "tensorflow" / "added.py").write_text(VERIFIER, encoding="utf-8")
    record = root / "data" / "sources" / "tensorflow" / "tf.sample.yaml"
    text = record.read_text(encoding="utf-8")
    assert "verify:\n  unverifiable: A test fixture.\n" in text
    record.write_text(text.replace("  unverifiable: A test fixture.", "  verifier: tensorflow.added"), encoding="utf-8")
    assert _kb(root, "validate", "--strict") == 0, capsys.readouterr()
    found = registered(root)["tensorflow.added"]
    assert [label(c.op, c.call) for c in found.cases] == [
        "tf.nn.bias_add(data_format='NHWC', input.ndim=4)", "tf.nn.bias_add(data_format='NCHW', input.ndim=4)"]
    # the same steps with a misspelt parameter: KB024 names the file and line
    (root / "verifiers" / "tensorflow" / "added.py").write_text(VERIFIER.replace('"data_format": "NCHW"', '"data_fromat": "NCHW"'),
                                                                 encoding="utf-8")
    assert _kb(root, "validate", "--strict") == 1
    assert "verifiers/tensorflow/added.py:6: KB024" in capsys.readouterr().out


LINT_CHECK = textwrap.dedent('''
    """KB099: a planted check (tests/test_notes.py): a record's id is not `tf.sample`."""

    from kb.catalog import Catalog

    CODE = "KB099"
    TITLE = "planted: a record's id is not tf.sample"


    def check(catalog: Catalog) -> None:
        for path, record in catalog.sources.items():
            if record.id == "tf.sample":
                catalog.report(path, catalog.documents[path].line_of(("id",)), CODE, "the id is tf.sample", "rename it")
''')


def _copy_code(tmp_path: Path) -> Path:
    """kb/ and verifiers/ in a fresh folder (the code a note changes), caches left out."""
    code = tmp_path / "code"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "kb", code / "kb", ignore=ignore)
    shutil.copytree(ROOT / "verifiers", code / "verifiers", ignore=ignore)
    return code


def _run(code: Path, cwd: Path, script: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(code), "HOME": str(cwd)})


def test_a_lint_check(tmp_path: Path) -> None:
    """kb/lint/__init__.py: the module with CODE, TITLE and check(), imported and added to
    CHECKS; `kb validate` reports it and docs/lint.md (`kb build`) lists it."""
    code = _copy_code(tmp_path)
    (code / "kb" / "lint" / "planted.py").write_text(LINT_CHECK, encoding="utf-8")
    init = code / "kb" / "lint" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    text = text.replace("    solutions, spellings,", "    planted, solutions, spellings,", 1).replace(
        "spellings, scanrules, cases)", "spellings, scanrules, cases, planted)", 1)
    assert "planted" in text.split("CHECKS =", 1)[1]
    init.write_text(text, encoding="utf-8")
    root = _mini(tmp_path)
    done = _run(code, root, "import sys; from kb.cli import main; sys.exit(main(['validate']))")
    assert done.returncode == 1 and "data/sources/tensorflow/tf.sample.yaml:2: KB099 the id is tf.sample" in done.stdout, done
    done = _run(code, root, "from kb.generated import lint_doc_text; print(lint_doc_text())")
    assert done.returncode == 0 and "KB099" in done.stdout, done.stderr[-2000:]


UNIT = textwrap.dedent('''
    """A planted branch unit (tests/test_notes.py)."""

    from verifiers.sweep.branch_inputs import B, Spec, facts


    def added(torch, dev, dt, scale):
        b = B(torch, dev, dt, scale)
        op = "torch.cumsum"
        x = b.mixed(b.n(4096, 64))
        return [Spec(op, f"{op}|added", lambda x=x: torch.cumsum(x, 0), [x],
                     facts(torch, {"input": x}, "one long scan", x.numel(), dim=0), x.numel())]
''')


def test_a_sweep_unit(tmp_path: Path) -> None:
    """docs/sweep.md: the unit in a new verifiers/sweep/torch_branches_<area>.py, added to UNITS;
    it builds on the CPU, its case passes KB024's check, and the worker lists it."""
    pytest.importorskip("torch", reason="the CPU build of PyTorch is not installed")
    from kb.catalog import load
    from kb.lint import cases

    code = _copy_code(tmp_path)
    (code / "verifiers" / "sweep" / "torch_branches_added.py").write_text(UNIT, encoding="utf-8")
    units = code / "verifiers" / "sweep" / "torch_branches.py"
    text = units.read_text(encoding="utf-8")
    text = text.replace("\nF16, BF16", "\nfrom verifiers.sweep.torch_branches_added import added\n\nF16, BF16", 1)
    text = text.replace("**MORE,\n}", "**MORE, \"added\": added,\n}", 1)
    assert '"added": added' in text
    units.write_text(text, encoding="utf-8")
    script = textwrap.dedent('''
        import json, torch
        from verifiers.sweep.torch_branches import UNITS
        print(json.dumps([[c.op, c.branch, dict(c.call), len(c.leaves)] for c in UNITS["added"](torch, "cpu", torch.float32, 0.05)]))
    ''')
    done = _run(code, tmp_path, script)
    assert done.returncode == 0, done.stderr[-2000:]
    (op, branch, call, leaves), = json.loads(done.stdout.strip().splitlines()[-1])
    assert branch == "torch.cumsum|added" and leaves == 1 and call["dim"] == 0
    catalog = load(ROOT)
    known = cases.Known(ROOT, {o for r in catalog.sources.values() for o in (*r.ops, *r.aliases)})
    assert cases.problems(op, call, known) == []
    assert cases.problems(op, {**call, "dimm": 0}, known) != []  # the check would have caught a typo
    done = _run(code, tmp_path, "from verifiers.sweep.torch_worker import main; main(['--branches', '--device', 'cpu', '--list'])")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "branch:added|float32" in done.stdout
