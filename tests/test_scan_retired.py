"""A module at the top of a script repository that the code base shows to be out of use (kb/scan/retired.py)."""

from __future__ import annotations

from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan
from scan_files import scan_files

_CONV = """\
    import torch.nn as nn
    class {name}(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)
    """

_MAIN = """\
    import torch
    from glow import WaveGlow
    if __name__ == "__main__":
        WaveGlow()(torch.zeros(1, 3, 8, 8).cuda())
    """


def _report(root: Path, files: dict[str, str]) -> tuple[list[tuple[str, int]], dict[tuple[str, int], str]]:
    scan_files(root, files, "torch=2.11")
    report = scan([str(root)], given=pins.parse_versions("torch=2.11"))
    kept = sorted((Path(f.path).relative_to(root).as_posix(), f.line) for f in report.findings)
    notes = {(Path(f.path).relative_to(root).as_posix(), f.line): f.note or "" for f in report.notes}
    return kept, notes


def test_a_top_module_whose_only_import_is_commented_out_or_an_old_copy_runs_in_no_program(tmp_path):
    """facebookresearch/deit's patchconvnet_models.py (hubconf's `# from patchconvnet_models import *`, P2-2) and
    NVIDIA/waveglow's glow_old.py (imported by no file; its WaveGlow is defined again by glow.py, which train.py
    runs, P2-1): in a repository that ships no package, such a top module runs in no program: a note. A top module
    with neither sign keeps its findings (users' notebooks import it: score_sde's controllable_generation.py)."""
    files = {
        "glow.py": _CONV.format(name="WaveGlow"),
        "glow_old.py": _CONV.format(name="WaveGlow"),
        "train.py": _MAIN,
        "hubconf.py": "from models import *\n# from patchconvnet_models import *\n",
        "models.py": _CONV.format(name="Deit"),
        "patchconvnet_models.py": _CONV.format(name="PatchConvnet"),
        "sampler.py": _CONV.format(name="Sampler"),
    }
    kept, notes = _report(tmp_path / "repo", files)
    assert ("glow.py", 5) in kept and ("models.py", 5) in kept and ("sampler.py", 5) in kept, kept
    assert ("glow_old.py", 5) not in kept and "older copy" in notes[("glow_old.py", 5)], notes
    assert ("patchconvnet_models.py", 5) not in kept, kept
    assert "commented out" in notes[("patchconvnet_models.py", 5)], notes


def test_a_top_module_some_file_imports_or_a_package_holds_keeps_its_findings(tmp_path):
    """The same modules keep their findings where a script imports them (in any spelling: `import m`, `from m
    import x`, `from . import m`) or where the repository is an installable package (its modules are a library)."""
    built = "    patchconvnet_models.PatchConvnet().cuda(), glow_old.WaveGlow().cuda()\n"
    for spelling in ("import patchconvnet_models\nimport glow_old\n" + "if __name__ == '__main__':\n" + built,
                     "from patchconvnet_models import PatchConvnet\nfrom glow_old import WaveGlow\n"
                     "if __name__ == '__main__':\n    PatchConvnet().cuda(), WaveGlow().cuda()\n",
                     "from . import patchconvnet_models, glow_old\n" + "if __name__ == '__main__':\n" + built):
        root = tmp_path / f"repo{len(spelling)}"
        files = {
            "glow.py": _CONV.format(name="WaveGlow"),
            "glow_old.py": _CONV.format(name="WaveGlow"),
            "train.py": _MAIN,
            "hubconf.py": "# from patchconvnet_models import *\n",
            "patchconvnet_models.py": _CONV.format(name="PatchConvnet"),
            "run.py": spelling,
        }
        kept, _ = _report(root, files)
        assert ("glow_old.py", 5) in kept and ("patchconvnet_models.py", 5) in kept, (spelling, kept)
    root = tmp_path / "package"
    kept, _ = _report(root, {
        "setup.py": "from setuptools import setup\nsetup(name='x')\n",
        "glow.py": _CONV.format(name="WaveGlow"),
        "glow_old.py": _CONV.format(name="WaveGlow"),
        "train.py": _MAIN,
        "hubconf.py": "# from patchconvnet_models import *\n",
        "patchconvnet_models.py": _CONV.format(name="PatchConvnet"),
    })
    assert ("glow_old.py", 5) in kept and ("patchconvnet_models.py", 5) in kept, kept
