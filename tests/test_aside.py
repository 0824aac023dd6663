"""Work beside the caller (kb/aside.py): `kb site` runs its lint checks and builds its JSON API in
forked children. The answers are the same as in one process; a child that fails, or a system
that does not fork, only costs time; nothing is written before the checks pass."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kb import aside
from kb.cli import main
from kb.lint import checking, run

MINI = Path(__file__).parent / "fixtures" / "mini"
RECORD = "data/sources/tensorflow/tf.sample.yaml"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path / "project")
    return tmp_path / "project"


def test_a_result_comes_back_from_the_child() -> None:
    job = aside.Aside(lambda: {"pid": os.getpid(), "text": "é" * 100_000})
    value = job.result()
    assert value["text"] == "é" * 100_000
    assert (value["pid"] != os.getpid()) == job.forked
    assert job.result() is value  # asked twice, computed once


def test_a_child_that_dies_is_done_again_here() -> None:
    if not (aside.FORKS and aside.single_threaded()):
        pytest.skip("no fork here (another OS, or this test process runs other threads): nothing to die")

    def dies() -> str:
        os._exit(3)

    assert aside.Aside(dies, again=lambda: "here").result() == "here"


def test_an_exception_in_the_child_is_raised_here() -> None:
    def fails() -> None:
        raise ValueError("broken data")

    with pytest.raises(ValueError, match="broken data"):
        aside.Aside(fails).result()


def test_without_fork_the_work_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "FORKS", False)
    job = aside.Aside(os.getpid)
    assert job.pid == 0 and job.result() == os.getpid()


def test_a_process_with_other_threads_does_not_fork() -> None:
    """A fork copies only the calling thread; a lock another thread holds would stay held."""
    import threading

    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not aside.single_threaded()
        job = aside.Aside(os.getpid)
        assert job.pid == 0 and job.result() == os.getpid()
    finally:
        release.set()
        other.join()


def test_a_cancelled_child_leaves_no_process() -> None:
    import time

    job = aside.Aside(lambda: time.sleep(30))
    pid = job.pid
    job.cancel()
    if pid:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.parametrize("forks", [True, False])
def test_checks_beside_find_what_run_finds(root: Path, monkeypatch: pytest.MonkeyPatch, forks: bool) -> None:
    monkeypatch.setattr(aside, "FORKS", forks and aside.FORKS)
    path = root / RECORD
    path.write_text(path.read_text().replace("solutions: [TDO]", "solutions: [TDX]") + "# a comment\n")
    expected = run(root)[1]
    assert expected
    with checking(root) as (catalog, wait):
        assert catalog.sources
        assert wait() == expected


@pytest.mark.parametrize("edit", [
    ("solutions: [TDO]", "solutions: [TDX]"),  # found by a check (beside the rendering)
    ("device: gpu", "device: [gpu"),  # found while loading (checked first)
])
def test_kb_site_with_findings_writes_nothing(root: Path, capsys: pytest.CaptureFixture, edit: tuple) -> None:
    path = root / RECORD
    path.write_text(path.read_text().replace(*edit))
    assert main(["--root", str(root), "site", "--no-html"]) == 1
    out = capsys.readouterr()
    assert "refusing to build" in out.err and RECORD in out.out
    assert not (root / "site" / "build" / "docs").exists()


def test_kb_site_builds_from_clean_data(root: Path) -> None:
    assert main(["--root", str(root), "site", "--no-html"]) == 0
    assert (root / "site" / "build" / "docs" / "sources" / "tf.sample.md").is_file()
    assert (root / "site" / "build" / "docs" / "api" / "v1" / "all.json").is_file()


FORKED = """
import sys
from pathlib import Path
from kb import aside
from kb.lint import checking, run

root = Path(sys.argv[1])
assert aside.single_threaded(), "a fresh interpreter that imported kb.lint runs one thread"
forked = []
real = aside.Aside.__init__

def spy(self, *args, **kwargs):
    real(self, *args, **kwargs)
    forked.append(self.forked)

aside.Aside.__init__ = spy
with checking(root) as (catalog, wait):
    found = wait()
assert forked == [True], forked
assert found == run(root)[1] and found, found
print("ok")
"""


def test_the_checks_fork_in_a_fresh_interpreter(root: Path) -> None:
    """The test process may run threads (a framework's pool) and then never forks; a fresh
    interpreter, as `kb site` is, does: its findings are run()'s."""
    import subprocess
    import sys

    if not aside.FORKS:
        pytest.skip("this OS does not fork")
    path = root / RECORD
    path.write_text(path.read_text().replace("solutions: [TDO]", "solutions: [TDX]"))
    done = subprocess.run([sys.executable, "-c", FORKED, str(root)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_kb_site_forks_its_checks_and_api(root: Path) -> None:
    """`kb site` parses its command line without the other areas' modules (numpy would start a
    BLAS thread), so the process is still one thread when it forks."""
    import subprocess
    import sys

    if not aside.FORKS:
        pytest.skip("this OS does not fork")
    code = ("import sys; from kb import aside; made = []; real = aside.Aside.__init__\n"
            "def spy(self, *a, **k):\n    real(self, *a, **k); made.append(self.forked)\n"
            "aside.Aside.__init__ = spy\nfrom kb.cli import main\n"
            "rc = main(['--root', sys.argv[1], 'site', '--no-html'])\nprint(rc, made)")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "0 [True, True]", done.stdout + done.stderr
