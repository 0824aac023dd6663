"""`kb check`'s start-up hook: it applies a recipe without editing the program and holds it
against the program's own settings, runs only in the first Python process, chains the
sitecustomize it shadows, and never raises into the program (a failure of its own is told on
stderr and the program goes on). CPU only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kb.check import boot
from kb.check.inside import Session

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = textwrap.dedent("""\
    import json, os, subprocess, sys
    import torch
    torch.backends.cudnn.benchmark = True          # the program's own settings, which the recipe holds
    torch.use_deterministic_algorithms(False)
    s = torch.seed()                               # a seed from the clock, which SEED holds
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('KB_CHECK_ACTIVE'))"],
                           capture_output=True, text=True).stdout.strip()
    print(json.dumps({"det": torch.are_deterministic_algorithms_enabled(), "bench": torch.backends.cudnn.benchmark,
                      "seed": s, "child": child, "cublas": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
                      "user_site": os.environ.get("USER_SITE_RAN")}))
""")


def _env(tmp_path: Path, recipe: tuple[str, ...], **extra: str) -> dict:
    hook = boot.write_hook(str(tmp_path / "hook"))
    user = tmp_path / "user"
    user.mkdir()
    (user / "sitecustomize.py").write_text("import os\nos.environ['USER_SITE_RAN'] = '1'\n", encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    base["PYTHONPATH"] = str(user)
    return boot.run_environment(base, hook_dir=hook, out=str(tmp_path / "out"), mode="run", steps=3, recipe=recipe,
                                extra=extra)


def test_the_recipe_is_applied_and_held_without_editing_the_program(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(PROGRAM, encoding="utf-8")
    env = _env(tmp_path, ("PT_CUBLAS", "PT_DET", "PT_NOBENCH", "SEED"))
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["det"] is True and seen["bench"] is False  # the program turned both back; the recipe held them
    assert seen["seed"] == boot.SEED
    assert seen["cublas"] == ":4096:8"  # an environment code
    assert seen["child"] == "None"  # the hook runs in the first Python process only
    assert seen["user_site"] == "1"  # the sitecustomize it shadows still ran
    check = json.loads((tmp_path / "out" / boot.CHECK_FILE).read_text(encoding="utf-8"))
    assert check["recipe"]["applied"] == ["PT_DET", "PT_NOBENCH", "SEED"] and check["recipe"]["failed"] == []
    texts = " ".join(n["text"] for n in check["notes"])
    assert "use_deterministic_algorithms(False)" in texts and "cudnn.benchmark = True" in texts and "torch.seed()" in texts
    assert check["errors"] == []


def test_a_hook_that_fails_is_reported_and_the_program_goes_on(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "kb" / "check").mkdir(parents=True)
    (broken / "kb" / "__init__.py").write_text("", encoding="utf-8")
    (broken / "kb" / "check" / "__init__.py").write_text("", encoding="utf-8")
    (broken / "kb" / "check" / "inside.py").write_text("def start():\n    raise RuntimeError('planted')\n",
                                                      encoding="utf-8")
    env = _env(tmp_path, ())
    env[boot.ENV_ROOT] = str(broken)
    proc = subprocess.run([sys.executable, "-c", "print('the program ran')"], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "the program ran"
    assert "kb check: start-up hook: _kb_check_start failed: RuntimeError: planted" in proc.stderr


def test_a_failing_hook_inside_the_process_is_noted_not_raised() -> None:
    session = Session()

    def explode(x):
        raise ValueError("planted")

    assert session.guarded("a planted hook", explode)(1) is None
    assert session.guarded("a planted hook", explode)(2) is None
    assert list(session.errors.values()) == [{"where": "a planted hook", "why": "ValueError: planted", "count": 2}]


def test_recipe_environment_appends_xla_flags_to_the_users() -> None:
    env = boot.recipe_environment(("XLA_DET", "PT_DET"), {"XLA_FLAGS": "--xla_dump_to=/tmp/x"})
    assert env == {"XLA_FLAGS": "--xla_dump_to=/tmp/x --xla_gpu_deterministic_ops=true"}
    assert boot.applicable("PT_EAGER_OP") is None and boot.applicable("PT_DET") == "hook"
    assert boot.applicable("SEED") == "hook+env" and boot.applicable("XLA_DET") == "env"
