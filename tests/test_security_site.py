"""`kb site` and `kb build` never leave a partial or mixed result: a kill, a failure or a
second run at once leaves the previous output whole and no temporary folders behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kb.atomic import locked
from kb.cli import BUILD_LOCK, main
from kb.site import build as site_build

MINI = Path(__file__).parent / "fixtures" / "mini"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path / "p")
    return tmp_path / "p"


def temp_dirs(build: Path) -> list[str]:
    return sorted(p.name for p in build.iterdir() if p.name.startswith(site_build.TEMP_PREFIXES))


def _kb(root: Path, *argv: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "kb", "--root", str(root), *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _page_html(build: Path) -> None:
    html = build / "html"
    html.mkdir(parents=True, exist_ok=True)
    (html / "index.html").write_text("previous site", encoding="utf-8")


def test_mkdocs_killed_midway_leaves_the_previous_html(root: Path, monkeypatch) -> None:
    assert main(["--root", str(root), "site", "--no-html"]) == 0
    build = root / site_build.BUILD
    _page_html(build)

    def killed(argv, **kwargs):
        out = Path(argv[argv.index("--site-dir") + 1])
        (out / "half.html").write_text("partial", encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(site_build.subprocess, "run", killed)
    with pytest.raises(KeyboardInterrupt):
        site_build.mkdocs(build)
    assert (build / "html" / "index.html").read_text(encoding="utf-8") == "previous site"
    assert not (build / "html" / "half.html").exists()
    assert temp_dirs(build) == []


def test_mkdocs_failure_keeps_html_and_removes_its_temp(root: Path, monkeypatch, capsys) -> None:
    build = root / site_build.BUILD
    _page_html(build)
    monkeypatch.setattr(site_build.subprocess, "run",
                        lambda argv, **kw: subprocess.CompletedProcess(argv, 1, "", "boom"))
    assert main(["--root", str(root), "site"]) == 1
    assert (build / "html" / "index.html").read_text(encoding="utf-8") == "previous site"
    assert temp_dirs(build) == []


def test_mkdocs_success_swaps_in_the_new_html(root: Path, monkeypatch) -> None:
    build = root / site_build.BUILD
    _page_html(build)

    def ok(argv, **kwargs):
        (Path(argv[argv.index("--site-dir") + 1]) / "index.html").write_text("new site", encoding="utf-8")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(site_build.subprocess, "run", ok)
    assert main(["--root", str(root), "site"]) == 0
    assert (build / "html" / "index.html").read_text(encoding="utf-8") == "new site"
    assert temp_dirs(build) == []


def test_stale_temporary_folders_are_removed_at_start(root: Path) -> None:
    build = root / site_build.BUILD
    for name in ("docs.abc123", "html.def456", ".old.x"):
        (build / name / "sub").mkdir(parents=True)
    (build / "keep-me").mkdir(parents=True)
    assert main(["--root", str(root), "site", "--no-html"]) == 0
    assert temp_dirs(build) == [] and (build / "keep-me").is_dir()


def test_a_failed_source_write_removes_its_temp(root: Path, monkeypatch) -> None:
    from kb.lint import run

    catalog, _ = run(root)
    build = root / site_build.BUILD
    real = site_build.sources

    def broken(*args, **kwargs):
        files = real(*args, **kwargs)
        files["x/\x00bad.md"] = "nul in a file name"
        return files

    monkeypatch.setattr(site_build, "sources", broken)
    with pytest.raises(ValueError):
        site_build.write_sources(catalog, build)
    assert temp_dirs(build) == []


def test_two_site_runs_at_once_do_not_mix(root: Path) -> None:
    assert main(["--root", str(root), "site", "--no-html"]) == 0
    build = root / site_build.BUILD
    expected = sorted(p.relative_to(build).as_posix() for p in (build / "docs").rglob("*"))
    runs = [_kb(root, "site", "--no-html") for _ in range(3)]
    results = [run.communicate(timeout=120) + (run.returncode,) for run in runs]
    assert [code for *_, code in results] == [0, 0, 0], results
    assert sorted(p.relative_to(build).as_posix() for p in (build / "docs").rglob("*")) == expected
    assert temp_dirs(build) == []


def test_site_waits_for_the_lock(root: Path) -> None:
    build = root / site_build.BUILD
    with locked(build / site_build.LOCK):
        run = _kb(root, "site", "--no-html")
        time.sleep(2.0)
        assert run.poll() is None and not (build / "docs").exists()  # waiting, nothing written
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert (build / "docs").is_dir()


def test_build_waits_for_the_lock(root: Path) -> None:
    index = root / "kb" / "_index.py"
    with locked(root / BUILD_LOCK):
        run = _kb(root, "build")
        time.sleep(2.0)
        assert run.poll() is None and not index.exists()
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err


def test_oserror_is_one_line_with_exit_3(root: Path, monkeypatch, capsys) -> None:
    from kb import atomic

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    assert main(["--root", str(root), "build"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("kb: error: cannot write ") and "No space left on device" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not list(root.rglob(".*.tmp*")) and not [p for p in root.rglob(".*") if p.name.startswith("._index")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions, so a read-only folder cannot be made")
def test_read_only_tree_is_exit_3(root: Path, capsys) -> None:
    (root / "kb").mkdir(exist_ok=True)
    (root / "kb").chmod(0o555)
    try:
        code = main(["--root", str(root), "build"])
    finally:
        (root / "kb").chmod(0o755)
    assert code == 3 and "cannot write" in capsys.readouterr().err


def test_exit_3_is_documented(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "3 a file could not be written" in capsys.readouterr().out
    assert "3 = a file could not be written" in (REPO / "README.md").read_text(encoding="utf-8")


# --- issue 43, R4-M1: the guides, examples and assets are untrusted input -----------------------

PUBLISHED = ["examples/leak.py", "site/assets/leak.css", "docs/sweep.md"]


def _site(root: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "kb", "--root", str(root), "site", "--no-html"], env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("where", PUBLISHED)
def test_r4_m1_a_symlink_out_of_the_repository_is_refused_not_published(root: Path, tmp_path: Path, where: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-ON-THE-BUILD-MACHINE\n")
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).symlink_to(secret)
    result = _site(root)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-800:]
    assert where in result.stderr and "outside" in result.stderr
    build = root / site_build.BUILD
    published = [p for p in (build.rglob("*") if build.is_dir() else ()) if p.is_file()
                 and b"SECRET-ON-THE-BUILD-MACHINE" in p.read_bytes()]
    assert published == []


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_r4_m1_devices_and_fifos_are_refused_fast(root: Path, kind: str) -> None:
    examples = root / "examples"
    examples.mkdir()
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this system")
        os.mkfifo(examples / "x.py")
    else:
        (examples / "x.py").symlink_to("/dev/zero")
    result = _site(root, timeout=60)  # a hang or an unbounded read is killed here
    assert result.returncode == 2 and "examples/x.py" in result.stderr, result.stderr[-800:]


def test_r4_m1_links_inside_the_repository_are_published(root: Path) -> None:
    examples = root / "examples"
    examples.mkdir()
    (examples / "a.py").write_text("print('a')\n")
    (examples / "b.py").symlink_to("a.py")
    assert main(["--root", str(root), "site", "--no-html"]) == 0
    assert (root / site_build.BUILD / "docs" / "examples" / "b.py").read_text() == "print('a')\n"
