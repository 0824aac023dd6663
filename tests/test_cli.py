"""The `kb` command line: answers, exit codes scripts rely on, no tracebacks on bad input."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kb import jsonio
from kb.cli import main

ROOT = Path(__file__).resolve().parents[1]
MINI = Path(__file__).parent / "fixtures" / "mini"


def test_status_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "tf.nn.bias_add", "1.15"]) == 0
    out = capsys.readouterr().out
    assert "not deterministic" in out and "TDP" in out and "tf.bias-add-backprop" in out


def test_status_output_keeps_bracketed_titles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "tf.image.resize", "2.8"]) == 0
    out = capsys.readouterr().out
    assert "[determinism] Add unimplemented exception" in out  # not eaten as rich markup
    assert "not deterministic" in out and "recipe: none" in out


def test_status_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "tf.nn.bias_add", "2.21.0rc1", "--json"]) == 0
    data = jsonio.loads(capsys.readouterr().out, where="kb status --json")
    assert data["deterministic"] is False and data["recipe"] == ["EOD"]
    assert data["sources"][0]["pass"] == "backward"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["status", "tf.nn.bias_ad", "2.1"], "did you mean: tf.nn.bias_add"),
        (["status", "tf.nn.bias_add", "2.x"], "not a version"),
        (["status", "nonsense", "2.1"], "cannot tell the framework"),
        (["status", "tf.nn.bias_add", "2.1", "--device", "tpu"], "invalid choice"),
        (["status", "tf.nn.bias_add"], "required"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_without_traceback(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "examples:" in capsys.readouterr().out


def test_validate_clean_and_dirty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "p"
    shutil.copytree(MINI, root)
    assert main(["--root", str(root), "validate"]) == 0
    record = root / "data/sources/tensorflow/tf.sample.yaml"
    record.write_text(record.read_text().replace("device: gpu", "device: tpu"))
    capsys.readouterr()
    assert main(["--root", str(root), "validate", "--json"]) == 1
    findings = jsonio.loads(capsys.readouterr().out, where="kb validate --json")
    assert findings[0]["code"] == "KB002" and findings[0]["line"] == 7


def test_fix_rewrites_and_refuses_comments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "p"
    shutil.copytree(MINI, root)
    record = root / "data/sources/tensorflow/tf.sample.yaml"
    canonical = record.read_text()
    record.write_text(canonical.replace("title: Sample source", 'title: "Sample source"'))
    assert main(["--root", str(root), "fix"]) == 0
    assert record.read_text() == canonical
    commented = canonical.replace("device: gpu", "device: gpu  # keep me")
    record.write_text(commented)
    assert main(["--root", str(root), "fix"]) == 1
    assert record.read_text() == commented  # never loses the comment
    assert "comments" in capsys.readouterr().out


def test_fix_leaves_broken_files_alone(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(MINI, root)
    record = root / "data/sources/tensorflow/tf.sample.yaml"
    broken = record.read_text().replace("device: gpu", "device: [gpu")
    record.write_text(broken)
    assert main(["--root", str(root), "fix"]) == 1
    assert record.read_text() == broken


def test_build_writes_then_check_passes(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(MINI, root)
    (root / "kb").mkdir()
    assert main(["--root", str(root), "build", "--check"]) == 1  # nothing generated yet
    assert main(["--root", str(root), "build"]) == 0
    assert main(["--root", str(root), "build", "--check"]) == 0
    index = (root / "kb/_index.py").read_text()
    assert "'tf.sample'" in index


def test_build_refuses_data_with_findings(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(MINI, root)
    record = root / "data/sources/tensorflow/tf.sample.yaml"
    record.write_text(record.read_text().replace("solutions: [TDO]", "solutions: [TDX]"))
    assert main(["--root", str(root), "build"]) == 1
    assert not (root / "kb/_index.py").exists()


def test_repository_generated_files_are_fresh() -> None:
    """`kb build --check` on this repository: the checked-in index and schemas match data/."""
    result = subprocess.run([sys.executable, "-m", "kb", "--root", str(ROOT), "build", "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_repository_data_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "kb", "--root", str(ROOT), "validate"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_missing_data_folder_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "validate"]) == 2
    assert "no data/ folder" in capsys.readouterr().err


def test_status_explains_each_recipe_code(capsys: pytest.CaptureFixture[str]) -> None:
    """A code alone (PT_DET) means nothing to a newcomer: the answer prints what to set."""
    assert main(["status", "torch.Tensor.index_add_", "2.5"]) == 0
    out = capsys.readouterr().out
    recipe = out.split("recipe: ", 1)[1].split("solutions (", 1)[0]
    assert recipe.startswith("PT_DET")
    assert "PT_DET: torch.use_deterministic_algorithms(True)" in recipe
    assert "torch.use_deterministic_algorithms(True)" in recipe.split("PT_DET: ", 1)[1].split("\n", 1)[1]
    assert "state: whether the source" in out  # one legend line for the table's words


def test_a_clean_run_is_remembered_and_any_change_runs_it_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kb/unchanged.py: validate and build say the same thing on unchanged files without reading the
    data again; an edited record, a hand-edited generated file or a link among the inputs is checked
    in full."""
    from kb import unchanged

    root = tmp_path / "p"
    shutil.copytree(MINI, root)
    (root / "kb").mkdir()
    assert main(["--root", str(root), "build"]) == 0
    assert main(["--root", str(root), "validate"]) == 0
    first = capsys.readouterr().out
    assert (root / ".cache/kb/unchanged-validate.json").is_file() and (root / ".cache/kb/unchanged-build.json").is_file()
    assert main(["--root", str(root), "validate"]) == 0 and main(["--root", str(root), "build", "--check"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == first.splitlines()[-1]  # the same "ok: ..." line
    # a generated file edited by hand: stale, though the data did not change
    index = root / "kb/_index.py"
    index.write_text(index.read_text() + "\n# edited\n")
    assert main(["--root", str(root), "build", "--check"]) == 1
    assert main(["--root", str(root), "build"]) == 0 and main(["--root", str(root), "build", "--check"]) == 0
    # an edited record: the lint runs and finds it
    record = root / "data/sources/tensorflow/tf.sample.yaml"
    record.write_text(record.read_text().replace("solutions: [TDO]", "solutions: [TDX]"))
    assert main(["--root", str(root), "validate"]) == 1
    assert main(["--root", str(root), "build", "--check"]) == 1
    record.write_text(record.read_text().replace("solutions: [TDX]", "solutions: [TDO]"))
    assert main(["--root", str(root), "validate"]) == 0
    # a link among the inputs: no digest, every run in full
    (root / "data/sources/tensorflow/link.yaml").symlink_to(record)
    assert unchanged.inputs_digest(root, "validate") is None
    (root / "data/sources/tensorflow/link.yaml").unlink()
    assert unchanged.inputs_digest(root, "validate") == unchanged.inputs_digest(root, "validate") is not None
    # a damaged store costs time only
    (root / ".cache/kb/unchanged-validate.json").write_text("{not json")
    assert main(["--root", str(root), "validate"]) == 0
