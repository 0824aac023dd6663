"""Data file names and lint output (issue 33 H6, M6 and Low items).

A pull request chooses the names of the files it adds: a name that is not UTF-8, a record
saved as .yml, a name with an escape sequence. Each is one finding naming the file (escaped),
and `kb validate`, `kb build`, `kb fix` and `kb site` end without a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from deep import remove_chain

from kb.findings import Finding
from kb.lint import run

ROOT = Path(__file__).resolve().parents[1]
MINI = Path(__file__).parent / "fixtures" / "mini"
SOURCES = "data/sources/tensorflow"
GOOD = f"{SOURCES}/tf.sample.yaml"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    return root


def _kb(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kb", "--root", str(root), *args], capture_output=True,
                          env=env, timeout=120)


@pytest.mark.parametrize("command", [["validate"], ["build"], ["fix"], ["validate", "--json"]])
def test_h6_name_not_utf8_is_one_finding(tmp_path: Path, command: list[str]) -> None:
    root = _project(tmp_path)
    bad = os.path.join(os.fsencode(root / SOURCES), b"tf.\xff\xfe.yaml")
    shutil.copyfile(root / GOOD, bad)
    result = _kb(root, *command)
    assert b"Traceback" not in result.stderr, result.stderr[-800:]
    if command == ["fix"]:  # fix rewrites what it can read and leaves the rest to validate
        assert result.returncode == 0
        return
    assert result.returncode == 1
    out = result.stdout + result.stderr
    name = b"tf.\\\\xff\\\\xfe.yaml" if "--json" in command else b"tf.\\xff\\xfe.yaml"
    assert name in out and b"UTF-8" in out


@pytest.mark.parametrize("suffix", [".yml", ".YAML", ".Yaml"])
def test_m6_record_with_another_suffix_is_not_skipped_silently(tmp_path: Path, suffix: str) -> None:
    root = _project(tmp_path)
    shutil.move(root / GOOD, root / f"{SOURCES}/tf.sample{suffix}")
    _, findings = run(root)
    [finding] = [f for f in findings if f.path.endswith(suffix)]
    assert finding.code == "KB003" and ".yaml" in finding.hint


def test_kb003_names_the_folder_the_file_lives_in(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / SOURCES / "extra").mkdir()
    shutil.move(root / GOOD, root / SOURCES / "extra" / "tf.sample.yaml")
    _, findings = run(root)
    [finding] = [f for f in findings if f.code == "KB003"]
    assert "data/sources/tensorflow/extra/" in finding.message and "data/sources/extra/" not in finding.message


def test_finding_lines_escape_the_path() -> None:
    finding = Finding("data/sources/tf.\x1b[2J\nx.yaml", 3, "KB003", "msg \x1b]0;t\x07", "hint \r")
    text = finding.render()
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert text.count("\n") == 1  # the path's newline does not split the finding; one hint line
    assert text.startswith("data/sources/tf.\\x1b[2J\\x0ax.yaml:3: KB003")


def test_kb012_hint_does_not_print_the_symlink_target(tmp_path: Path) -> None:
    root = _project(tmp_path)
    outside = tmp_path / "secret-place" / "outside.yaml"
    outside.parent.mkdir()
    shutil.copyfile(root / GOOD, outside)
    (root / SOURCES / "tf.link.yaml").symlink_to(outside)
    _, findings = run(root)
    [refused] = [f for f in findings if f.code == "KB012"]
    assert "secret-place" not in refused.render()


# --- issue 31 item 5: founding documents are cited by their public title and URL ---------------


@pytest.mark.parametrize("text", ["As Seed 003 says", "seed 000 (GTC)", "SEED 001 quotes", "Seeds 002 and 003 list",
                                  "the seed document", "see 003_db4fa9d8e6433647.txt", "seed documents say"])
def test_founding_document_references_are_kb019(tmp_path: Path, text: str) -> None:
    root = _project(tmp_path)
    record = root / GOOD
    record.write_text(record.read_text().replace("title: ", f"title: {text}, ", 1))
    _, findings = run(root)
    assert any(f.code == "KB019" and f.path == GOOD and "public title" in f.hint for f in findings), findings


def test_the_data_cites_no_founding_document_by_its_internal_name() -> None:
    _, findings = run(ROOT)
    assert not [f for f in findings if f.code == "KB019"], [f.render() for f in findings if f.code == "KB019"][:5]


# --- planted static evidence (data/runs/static-*/) -------------------------------------------------


def test_planted_static_evidence_files_are_findings_not_crashes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    static = root / "data" / "runs" / "static-pytorch"
    static.mkdir(parents=True)
    (static / "2.5.0.yaml").write_text("kind: static\nframework: pytorch\n")  # missing fields
    (static / "2.6.0.yaml").write_text("a: &a [x, x]\nb: [*a, *a]\n")  # an alias
    (static / "2.7.0.yaml").write_text("x: " + "[" * 5000 + "]" * 5000 + "\n")  # deep
    (static / "2.8.0.yaml").write_text("kind: static\nframework: 7\nrelease: [1]\nops: {a: {b: {c: 1}}}\n")
    os.symlink("/etc/hostname", static / "2.9.0.yaml")
    if hasattr(os, "mkfifo"):
        os.mkfifo(static / "2.10.0.yaml")
    with open(os.path.join(os.fsencode(static), b"2.\xff.yaml"), "w") as handle:
        handle.write("kind: static\n")
    for command in (["validate"], ["build"]):
        result = _kb(root, *command)
        assert b"Traceback" not in result.stderr, result.stderr[-1500:]
        assert result.returncode == 1
        out = (result.stdout + result.stderr).decode()
        for name in ("2.5.0.yaml", "2.6.0.yaml", "2.7.0.yaml", "2.8.0.yaml", "2.9.0.yaml"):
            assert name in out, (command, name, out[-2000:])


def test_a_very_deep_folder_under_data_is_no_recursion_error(tmp_path: Path) -> None:
    """Path.rglob recursed once per level (Python 3.11): 1,200 committed folders under data/sources
    made `kb validate` a RecursionError traceback."""
    root = _project(tmp_path)
    top = root / SOURCES / "a"
    here = os.getcwd()
    try:
        try:
            os.chdir(root / SOURCES)
            for _ in range(1200):
                os.mkdir("a")
                os.chdir("a")
        finally:
            os.chdir(here)
        result = _kb(root, "validate")
    finally:
        remove_chain(top)
    assert b"Traceback" not in result.stderr, result.stderr[-300:]
    assert result.returncode == 0




# --- issue 43 (round 4) -----------------------------------------------------------------------


def _chain(top: Path, depth: int, leaf: str, text: str) -> None:
    """`top/a/a/.../a/leaf`, `depth` folders deep, made without recursion."""
    here = os.getcwd()
    top.mkdir(parents=True, exist_ok=True)
    try:
        os.chdir(top)
        for _ in range(depth):
            os.mkdir("a")
            os.chdir("a")
        Path(leaf).write_text(text)
    finally:
        os.chdir(here)


def test_r4_m2_deep_folder_chains_are_walked_without_recursion(tmp_path: Path) -> None:
    """Path.rglob in the sweep reader, the nightly sweep step and the verifiers' lint recursed once
    per level: a 1,100-deep chain under data/sweeps/ made validate and build a RecursionError."""
    from kb.lint.verifiers import registered
    from kb.nightly.sweep import step_sweep

    root = _project(tmp_path)
    sweeps = root / "data" / "sweeps" / "deep"
    verifiers = root / "verifiers"
    try:
        _chain(sweeps, 1100, "x.json", "{}")
        _chain(verifiers, 1100, "v.py", "@verifier('deep-one', framework='tensorflow')\ndef f():\n    pass\n")
        for command in ("validate", "build"):
            result = _kb(root, command)
            assert b"Traceback" not in result.stderr, (command, result.stderr[-600:])
            assert result.returncode == 1 and b"x.json" in result.stdout + result.stderr, command
        assert "deep-one" in registered(root)
        entry, written = step_sweep(root, root / "data" / "sweeps", {"pytorch": "2.5"}, 1, {}, lambda _: None, 1.0,
                                    available=lambda *_: True, extra=("--help",))
        assert entry["step"] == "sweep" and written == []
    finally:
        remove_chain(sweeps)
        remove_chain(verifiers)


@pytest.mark.parametrize("name", ["tf.sample.json", "tf.sample.yaml~", "tf.sample.yaml.bak", "tf.sample.yaml.orig"])
def test_r4_l13_copies_and_exports_of_records_are_named_not_ignored(tmp_path: Path, name: str) -> None:
    root = _project(tmp_path)
    shutil.copyfile(root / GOOD, root / SOURCES / name)
    _, findings = run(root)
    [finding] = [f for f in findings if f.path.endswith(name)]
    assert finding.code == "KB003" and "not read" in finding.message


def test_r4_l13_folder_symlink_and_bad_cpu_sweep_are_named(tmp_path: Path) -> None:
    root = _project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copyfile(root / GOOD, elsewhere / "tf.other.yaml")
    (root / SOURCES / "linked").symlink_to(elsewhere)
    cpu = root / "data" / "sweeps" / "cpu-x86-64-0"
    cpu.mkdir(parents=True)
    (cpu / "2026-01-01T000000Z-keras.json").write_bytes(os.urandom(3000))
    (cpu / "2026-01-01T000000Z-tensorflow-cpu.json").write_text('{"kind": "sweep", "suite": "keras", "cases": []}')
    (cpu / "2026-01-02T000000Z-tensorflow-cpu.json").write_text('{"kind": "sweep", "suite": "tensorflow-cpu", "cases": []}')
    _, findings = run(root)
    found = {Path(f.path).name: f for f in findings}
    assert found["linked"].code == "KB003" and "folder symlink" in found["linked"].message
    assert found["2026-01-01T000000Z-keras.json"].code == "KB002"
    assert "suite 'tensorflow-cpu'" in found["2026-01-01T000000Z-tensorflow-cpu.json"].message
    assert "2026-01-02T000000Z-tensorflow-cpu.json" not in found  # a well-formed one is fine


def test_r3_l3_wrong_folder_is_said_as_the_wrong_place(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / SOURCES / "extra").mkdir()
    shutil.move(root / GOOD, root / SOURCES / "extra" / "tf.sample.yaml")
    _, findings = run(root)
    [finding] = [f for f in findings if f.code == "KB003"]
    assert "lives in" not in finding.message
    assert "is in data/sources/tensorflow/extra/" in finding.message and "data/sources/tensorflow/ itself" in finding.message


def test_r3_l5_symlink_loop_is_named_as_a_loop(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / SOURCES / "tf.l1.yaml").symlink_to("tf.l2.yaml")
    (root / SOURCES / "tf.l2.yaml").symlink_to("tf.l1.yaml")
    _, findings = run(root)
    loops = [f for f in findings if f.path.endswith(("tf.l1.yaml", "tf.l2.yaml"))]
    assert len(loops) == 2 and all("symlink loop" in f.message and "Too many levels" not in f.message for f in loops)


@pytest.mark.parametrize("kind", ["dev-zero", "outside", "fifo"])
def test_r4_l14_an_inventory_that_is_not_a_plain_file_is_named(tmp_path: Path, kind: str) -> None:
    """A data/api inventory replaced by a link to /dev/zero or a FIFO read as "no inventory"
    (every op of the framework unknown) while validate said ok."""
    root = _project(tmp_path)
    api = root / "data" / "api"
    target = next(p for p in sorted(api.iterdir()) if p.suffix == ".txt")
    target.unlink()
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this system")
        os.mkfifo(target)
    elif kind == "outside":
        (tmp_path / "names.txt").write_text("tf.add\n")
        target.symlink_to(tmp_path / "names.txt")
    else:
        target.symlink_to("/dev/zero")
    _, findings = run(root)
    [finding] = [f for f in findings if f.path.endswith(target.name)]
    assert finding.code == "KB012"


def test_r3_l11_a_60000_character_title_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    record = root / GOOD
    text = record.read_text()
    start = text.index("title: ")
    end = text.index("\n", start)
    record.write_text(text[:start] + "title: " + "x" * 60_000 + text[end:])
    _, findings = run(root)
    [finding] = [f for f in findings if f.path == GOOD and f.code == "KB002"]
    assert "title" in finding.message and "500" in finding.message


def test_r4_l18_remembered_sweep_reads_follow_the_bytes(tmp_path: Path) -> None:
    """Sweep files are read once and remembered by their bytes (.cache/kb/sweeps.memo): an edited
    file is read again, so a file that turns malformed is still named."""
    from kb.verify.sweepfile import load_sweeps

    root = _project(tmp_path)
    cpu = root / "data" / "sweeps" / "cpu-x86-64-0"
    cpu.mkdir(parents=True)
    path = cpu / "2026-01-01T000000Z-keras.json"
    path.write_text('{"kind": "sweep", "suite": "keras", "cases": []}')
    assert [s.problems for s in load_sweeps(root)] == []
    assert (root / ".cache" / "kb" / "sweeps.memo").is_file()
    path.write_text('{"kind": "sweep", "suite": "keras", "cases": 5}')
    [sweep] = load_sweeps(root)
    assert sweep.problems and "not a CPU sweep file" in sweep.problems[0][2]
