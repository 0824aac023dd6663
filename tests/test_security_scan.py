"""`kb scan` on hostile trees (issue 33 H1-H4, M2, M7 and the Low items; issue 31 item 6).

Each case is a tree an attacker can commit to a repository whose pull requests are scanned
in CI: the scan must end fast, say what it refused (file and line), keep every other file's
findings, and print nothing that can rewrite a terminal or break the SARIF upload. CLI runs
that could hang run in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deep import remove_chain

from kb.cli import main
from bounds import BOUND_S

ROOT = Path(__file__).resolve().parents[1]
OK = "import torch\ntorch.zeros(1).index_add_(0, i, v)\n"
# a hang is killed here; the scan itself (startup included) must finish well inside it
HANG_S = 60


def _limit_memory() -> None:  # an unbounded read fails fast instead of filling a shared machine
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024 ** 3, 3 * 1024 ** 3))


def _kb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, cwd=cwd, env=env,
                          timeout=HANG_S, preexec_fn=_limit_memory)


def _scan(capsys, *args: str) -> tuple[int, dict]:
    code = main(["scan", *args, "--versions", "torch=2.5", "--format", "json"])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def _ok_tree(tmp_path: Path, name: str = "tree") -> Path:
    tree = tmp_path / name
    tree.mkdir()
    (tree / "ok.py").write_text(OK)
    return tree


def _records(doc: dict) -> list[tuple[str, str]]:
    return [(Path(f["path"]).name, f["record"]) for f in doc["findings"]]


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


@needs_fifo
def test_h1_fifo_named_py_is_refused_not_read(tmp_path: Path) -> None:
    tree = _ok_tree(tmp_path)
    os.mkfifo(tree / "pipe.py")
    result = _kb("scan", str(tree), "--versions", "torch=2.5", "--format", "json")
    doc = json.loads(result.stdout)
    assert ("ok.py", "torch.index-add") in _records(doc)
    [error] = doc["errors"]
    assert error["path"].endswith("pipe.py") and "not a regular file" in error["message"]
    assert b"Traceback" not in result.stderr


@needs_fifo
def test_h1_fifo_lockfile_is_exit_2(tmp_path: Path) -> None:
    tree = _ok_tree(tmp_path)
    os.mkfifo(tmp_path / "requirements.txt")
    result = _kb("scan", str(tree), "--lockfile", str(tmp_path / "requirements.txt"))
    assert result.returncode == 2
    assert b"requirements.txt" in result.stderr and b"not a regular file" in result.stderr
    assert b"Traceback" not in result.stderr


def test_h2_symlink_to_dev_zero_is_refused(tmp_path: Path) -> None:
    tree = _ok_tree(tmp_path)
    os.symlink("/dev/zero", tree / "zero.py")
    result = _kb("scan", str(tree), "--versions", "torch=2.5", "--format", "json")
    assert b"Traceback" not in result.stderr
    doc = json.loads(result.stdout)
    assert ("ok.py", "torch.index-add") in _records(doc)
    [error] = doc["errors"]
    assert error["path"].endswith("zero.py")


def test_h2_file_symlinks_out_of_the_tree_are_not_followed(tmp_path: Path, capsys) -> None:
    tree = _ok_tree(tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text(OK)
    os.symlink("../outside/secret.py", tree / "a.py")
    os.symlink("/etc/hostname", tree / "b.py")
    (tree / "sub").mkdir()
    os.symlink("../ok.py", tree / "sub" / "inside.py")  # inside the tree: read
    code, doc = _scan(capsys, str(tree))
    assert sorted(_records(doc)) == [("inside.py", "torch.index-add"), ("ok.py", "torch.index-add")]
    refused = {Path(e["path"]).name: e["message"] for e in doc["errors"]}
    assert set(refused) == {"a.py", "b.py"}
    assert all("outside" in m for m in refused.values())
    # the refusal does not print where the link points (a path on the CI machine)
    assert "/etc/hostname" not in json.dumps(doc) and str(tmp_path / "outside") not in json.dumps(doc)


def test_h3_deep_notebook_is_one_error_and_the_rest_is_scanned(tmp_path: Path, capsys) -> None:
    tree = _ok_tree(tmp_path)
    (tree / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    code, doc = _scan(capsys, str(tree))
    assert code == 1 and ("ok.py", "torch.index-add") in _records(doc)
    [error] = doc["errors"]
    assert error["path"].endswith("deep.ipynb") and "nested deeper" in error["message"] and error["line"] == 1


def test_h3_deep_notebook_sarif_keeps_the_findings(tmp_path: Path) -> None:
    tree = _ok_tree(tmp_path)
    (tree / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    result = _kb("scan", str(tree), "--versions", "torch=2.5", "--format", "sarif")
    assert result.returncode == 1 and b"Traceback" not in result.stderr
    run = json.loads(result.stdout)["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["torch.index-add"]
    assert len(run["invocations"][0]["toolExecutionNotifications"]) == 1


@pytest.mark.parametrize("name,text", [
    ("deep.toml", "a = " + "[" * 50_000 + "]" * 50_000 + "\n"),
    ("deep.lock", "".join(f"[{'.'.join(['t'] * n)}]\n" for n in (3000,)) + "x = 1\n"),
    ("inline.lock", "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n"),
])
def test_h4_deep_lockfile_is_exit_2_naming_the_file(tmp_path: Path, capsys, name: str, text: str) -> None:
    tree = _ok_tree(tmp_path)
    (tmp_path / name).write_text(text)
    start = time.monotonic()
    code = main(["scan", str(tree), "--lockfile", str(tmp_path / name)])
    _, err = capsys.readouterr()
    assert time.monotonic() - start < BOUND_S
    assert code == 2 and name in err and "nest" in err


def test_m2_huge_integer_in_a_notebook_is_one_error(tmp_path: Path, capsys) -> None:
    tree = _ok_tree(tmp_path)
    (tree / "int.ipynb").write_text('{"cells": [], "x": ' + "9" * 100_000 + "}")
    cell = {"cell_type": "code", "source": "x = " + "9" * 100_000 + "\n"}
    (tree / "int_cell.ipynb").write_text(json.dumps({"cells": [cell]}))
    (tree / "int.py").write_text("x = " + "9" * 100_000 + "\n")
    code, doc = _scan(capsys, str(tree))
    assert ("ok.py", "torch.index-add") in _records(doc)
    assert sorted(Path(e["path"]).name for e in doc["errors"]) == ["int.ipynb", "int.py", "int_cell.ipynb"]


def test_m7_pep263_latin1_source_is_scanned(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + OK.encode())
    code, doc = _scan(capsys, str(tree))
    assert doc["errors"] == [] and _records(doc) == [("latin.py", "torch.index-add")]


@pytest.mark.parametrize("raw,words", [
    (b"# coding: no-such-codec\nx = 1\n", "encoding"),
    (b"# coding: rot13\nx = 1\n", "encoding"),
    (b"\xff\xfe not utf-8\n", "UTF-8"),
])
def test_bad_encodings_are_one_error(tmp_path: Path, capsys, raw: bytes, words: str) -> None:
    tree = _ok_tree(tmp_path)
    (tree / "enc.py").write_bytes(raw)
    code, doc = _scan(capsys, str(tree))
    assert ("ok.py", "torch.index-add") in _records(doc)
    [error] = doc["errors"]
    assert words in error["message"]


HOSTILE_NAMES = ["evil\x1b[2J\x1b]0;owned\x07.py", "line\nbreak.py", "tab\tcr\r.py"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_file_names_in_text_output_are_escaped(tmp_path: Path, name: str) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / name).write_text(OK)
    (tree / (name[:-3] + "_bad.py")).write_text("def (:\n")
    result = _kb("scan", str(tree), "--versions", "torch=2.5")
    out = result.stdout.decode()
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    finding_lines = [line for line in out.splitlines() if "torch.index-add]" in line or "error:" in line]
    assert len(finding_lines) == 2  # one line each: a newline in a name does not split it
    assert all(line.startswith(str(tree)) for line in finding_lines)


def test_non_utf8_file_name_in_every_format(tmp_path: Path) -> None:
    tree = os.path.join(os.fsencode(tmp_path), b"t")
    os.mkdir(tree)
    with open(os.path.join(tree, b"bad\xff\xfe.py"), "wb") as handle:
        handle.write(OK.encode())
    for fmt in ("text", "json", "sarif"):
        result = _kb("scan", os.fsdecode(tree), "--versions", "torch=2.5", "--format", fmt)
        assert result.returncode == 1, (fmt, result.stderr[-500:])
        assert b"Traceback" not in result.stderr
        if fmt != "text":
            json.loads(result.stdout)
    sarif = json.loads(result.stdout)
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert "%FF%FE" in uri


def test_sarif_uri_of_hostile_name_is_percent_encoded(tmp_path: Path, monkeypatch) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "a b#\x1b.py").write_text(OK)
    result = _kb("scan", "t", "--versions", "torch=2.5", "--format", "sarif", cwd=tmp_path)
    run = json.loads(result.stdout)["runs"][0]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "t/a%20b%23%1B.py"


def test_dev_zero_as_path_is_not_a_regular_file(capsys) -> None:
    code = main(["scan", "/dev/zero"])
    _, err = capsys.readouterr()
    assert code == 2 and "not a regular file" in err and "no such file" not in err


def test_jobs_a_million_is_clamped(tmp_path: Path) -> None:
    tree = _ok_tree(tmp_path)
    for n in range(70):
        (tree / f"m{n}.py").write_text(OK)
    start = time.monotonic()
    result = _kb("scan", str(tree), "--versions", "torch=2.5", "--format", "json", "--jobs", "1000000")
    assert result.returncode == 1 and len(json.loads(result.stdout)["findings"]) == 71
    assert time.monotonic() - start < HANG_S


@pytest.mark.parametrize("name,text,words", [
    ("uv.lock", '[[package]]\nname = "torch"\nversion = "banana"\n', ["uv.lock", "torch", "banana"]),
    ("requirements.txt", "numpy\ntorch==2.5.0+cu121.bad!\n", ["requirements.txt:2"]),
])
def test_lockfile_bad_version_names_file_and_package(tmp_path: Path, capsys, name: str, text: str,
                                                    words: list[str]) -> None:
    tree = _ok_tree(tmp_path)
    (tmp_path / name).write_text(text)
    code = main(["scan", str(tree), "--lockfile", str(tmp_path / name)])
    _, err = capsys.readouterr()
    assert code == 2 and all(w in err for w in words), err


def test_versions_unknown_release_is_said(tmp_path: Path, capsys) -> None:
    tree = _ok_tree(tmp_path)
    main(["scan", str(tree), "--versions", "torch=99"])
    out, err = capsys.readouterr()
    assert "99" in out + err and "not a known release" in out + err


def test_large_tree_of_big_files_stays_bounded(tmp_path: Path, capsys) -> None:
    tree = _ok_tree(tmp_path)
    (tree / "big.py").write_bytes(b"x = 1\n" * 1_000_000)  # 6 MB: over the per-file bound
    code, doc = _scan(capsys, str(tree))
    [error] = doc["errors"]
    assert "big.py" in error["path"] and "at most" in error["message"]


def test_a_very_deep_folder_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    """Python 3.11's os.walk recurses once per level: 1,500 nested folders were a RecursionError."""
    tree = _ok_tree(tmp_path)
    here = os.getcwd()
    try:
        try:
            os.chdir(tree)
            for _ in range(1500):
                os.mkdir("a")
                os.chdir("a")
            with open("deep.py", "w") as handle:
                handle.write(OK)
        finally:
            os.chdir(here)
        result = _kb("scan", str(tree), "--versions", "torch=2.5", "--format", "json")
    finally:
        # always, even on failure: shutil.rmtree (pytest's cleanup of old temporary folders,
        # shared by every run on this machine) recurses per level too and would fail
        if (tree / "a").exists():
            remove_chain(tree / "a")
            os.rmdir(tree / "a")
    assert b"Traceback" not in result.stderr, result.stderr[-300:]
    doc = json.loads(result.stdout)
    assert sorted(_records(doc)) == [("deep.py", "torch.index-add"), ("ok.py", "torch.index-add")]




# --- round 4 (issue 43) ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_r4_h1_undefined_codec_is_one_error_naming_the_file(tmp_path: Path, fmt: str) -> None:
    """`# coding: undefined` raises a plain UnicodeError: it aborted the whole scan (exit 2, empty output)."""
    tree = _ok_tree(tmp_path)
    (tree / "z.py").write_bytes(b"# coding: undefined\nx = 1\n")
    result = _kb("scan", str(tree), "--versions", "torch=2.5", "--format", fmt)
    assert result.returncode == 1, result.stderr[-300:]
    doc = json.loads(result.stdout)
    if fmt == "json":
        assert _records(doc) == [("ok.py", "torch.index-add")]
        [error] = doc["errors"]
        assert error["path"].endswith("z.py") and "undefined" in error["message"]
    else:
        run = doc["runs"][0]
        assert len(run["results"]) == 1
        [note] = run["invocations"][0]["toolExecutionNotifications"]
        assert "z.py" in json.dumps(note) and "undefined" in note["message"]["text"]


def test_r4_l4_idna_coding_line_is_read_as_python_reads_it(tmp_path: Path, capsys) -> None:
    """Python compiles a file whose coding line names idna; its calls were reported as not parsed."""
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "i.py").write_bytes(b"# coding: idna\n" + OK.encode())
    (tree / "p.py").write_bytes(b"# coding: punycode\n" + OK.encode())  # Python refuses this one
    code, doc = _scan(capsys, str(tree))
    assert _records(doc) == [("i.py", "torch.index-add")]
    assert [Path(e["path"]).name for e in doc["errors"]] == ["p.py"]


def test_r4_l3_symlink_loop_is_an_error_line_in_a_tree_and_named_alone(tmp_path: Path, capsys) -> None:
    tree = _ok_tree(tmp_path)
    (tree / "l1.py").symlink_to("l2.py")
    (tree / "l2.py").symlink_to("l1.py")
    code, doc = _scan(capsys, str(tree))
    assert ("ok.py", "torch.index-add") in _records(doc)
    assert sorted(Path(e["path"]).name for e in doc["errors"]) == ["l1.py", "l2.py"]
    assert all("symlink loop" in e["message"] for e in doc["errors"])
    code = main(["scan", str(tree / "l1.py")])
    _, err = capsys.readouterr()
    assert code == 2 and "symlink loop" in err and "no such file" not in err


@pytest.mark.parametrize("argv", [["--versions", "torch=2.5,torch=2.6"], ["--versions", "torch=2.5", "--versions", "torch=2.11"]])
def test_r4_l7_a_framework_pinned_twice_is_refused(tmp_path: Path, capsys, argv: list[str]) -> None:
    tree = _ok_tree(tmp_path)
    code = main(["scan", str(tree), *argv])
    _, err = capsys.readouterr()
    assert code == 2 and "twice" in err and "2.5" in err


def test_r4_l7_repeated_versions_flags_for_different_frameworks_add_up(tmp_path: Path, capsys) -> None:
    tree = _ok_tree(tmp_path)
    main(["scan", str(tree), "--versions", "torch=2.5", "--versions", "jax=0.4.30", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["versions"]["pytorch"]["version"] == "2.5"  # the first flag is not dropped for the second


def test_r4_l2_a_file_of_very_many_lines_is_refused_before_parsing(tmp_path: Path, capsys, monkeypatch) -> None:
    """A 4.8 MB file of 480,000 assignments took 1.75 GB: the syntax tree is ~360x the text."""
    from kb.scan import sources

    tree = _ok_tree(tmp_path)
    (tree / "gen.py").write_text("import torch\n" + "x = y + 1\n" * (sources.MAX_LINES + 1))
    code, doc = _scan(capsys, str(tree))
    assert ("ok.py", "torch.index-add") in _records(doc)
    [error] = doc["errors"]
    assert error["path"].endswith("gen.py") and f"at most {sources.MAX_LINES:,}" in error["message"]


def test_r4_l2_sarif_keeps_at_most_what_code_scanning_takes(tmp_path: Path, capsys, monkeypatch) -> None:
    from kb.scan import report_sarif

    monkeypatch.setattr(report_sarif, "MAX_RESULTS", 3)
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "many.py").write_text("import torch\n" + "torch.zeros(1).index_add_(0, i, v)\n" * 5)
    main(["scan", str(tree), "--versions", "torch=2.5", "--format", "sarif"])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert len(run["results"]) == 3
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith("2 more finding(s)")
