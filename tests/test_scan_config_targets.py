"""Classes a YAML configuration builds by their dotted `target:` path (the tenth frozen corpus's
CompVis/latent-diffusion: `instantiate_from_config(config.model)` with `target: ldm.models...LatentDiffusion`):
they are built, so their records are findings, not "nothing builds" notes (RULES P1-2)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import configtargets, pins
from kb.scan.run import scan

TRAIN = """\
import importlib
import sys

import yaml
import torch

import pkg.models  # noqa: F401  (reached: its classes are read one by one)


def get_obj_from_str(string):
    module, cls = string.rsplit(".", 1)
    return getattr(importlib.import_module(module), cls)


def instantiate_from_config(config):
    return get_obj_from_str(config["target"])(**config.get("params", dict()))


if __name__ == "__main__":
    config = yaml.safe_load(open(sys.argv[1]))
    model = instantiate_from_config(config["model"]).cuda()
    model(torch.randn(2, 3, 8, 8).cuda()).sum().backward()
"""

MODELS = """\
import torch.nn as nn


class Configured(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3)

    def forward(self, x):
        return self.conv(x)


class Unnamed(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)

    def forward(self, x):
        return self.conv(x)
"""

CONFIG = """\
model:
  target: pkg.models.Configured   # the model
  params:
    channels: 3
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _lines(root: Path) -> tuple[set[tuple[str, int]], dict[tuple[str, int], str]]:
    report = scan([str(root)], given=pins.parse_versions("torch=2.11"))
    kept = {(Path(f.path).relative_to(root).as_posix(), f.line) for f in report.findings}
    notes = {(Path(f.path).relative_to(root).as_posix(), f.line): f.note or "" for f in report.notes}
    return kept, notes


def test_a_class_a_config_target_names_is_built_where_code_instantiates_from_configs(tmp_path):
    """Configured is named only by configs/train.yaml's `target:`; main.py builds it by that string: its
    convolution is a finding. Unnamed, named by no config, is still built by nothing (a note)."""
    _write(tmp_path, {"main.py": TRAIN, "pkg/__init__.py": "", "pkg/models.py": MODELS, "configs/train.yaml": CONFIG})
    kept, notes = _lines(tmp_path)
    assert ("pkg/models.py", 7) in kept, (kept, notes)
    assert ("pkg/models.py", 16) not in kept
    assert "nothing in this code base builds Unnamed" in notes[("pkg/models.py", 16)]


def test_a_config_target_counts_only_where_some_code_instantiates_from_a_config(tmp_path):
    """Without code that builds an object from a target string, a YAML file's `target:` builds nothing."""
    _write(tmp_path, {"main.py": TRAIN.replace("get_obj_from_str(config[\"target\"])", "dict"),
                      "pkg/__init__.py": "", "pkg/models.py": MODELS, "configs/train.yaml": CONFIG})
    kept, notes = _lines(tmp_path)
    assert ("pkg/models.py", 7) not in kept
    assert "nothing in this code base builds Configured" in notes[("pkg/models.py", 7)]


def test_target_keys_read_from_yaml(tmp_path):
    """`target:` and Hydra's `_target_:`, quoted or not, in a list item too; a value that is no dotted path
    (prose, a plain word) is no target."""
    _write(tmp_path, {"a.yaml": "model:\n  target: a.b.C\n  _target_: \"x.y.Z\"  # hydra\nlist:\n  - target: 'm.N'\n"
                                "other:\n  target: path to lightning module\n  target: word\n"})
    assert configtargets.targets([str(tmp_path)]) == {"a.b.C", "x.y.Z", "m.N"}
