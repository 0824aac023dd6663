"""Two readings from the forty-fifth corpus. kohya-ss/sd-scripts' `library/ipex` package imports Intel's extension
for PyTorch and holds Intel XPU workarounds that run on no NVIDIA GPU (kb/scan/placement.py, intel_xpu; 36 false
alarms). yassouali/pytorch-segmentation's `exec(f'self.block{i+4} = Block(...)')` sets an attribute and imports
nothing, so the code base imports no module by a computed name, and a model file nothing imports never runs
(kb/scan/unreached.py, _runs_code; 18 false alarms), as TinyLlama's unused `import importlib` does not (20)."""

from __future__ import annotations

from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan
from scan_files import scan_files


def _live_and_notes(tmp_path: Path, record: str) -> tuple[set[str], set[str]]:
    result = scan([str(tmp_path)], given=pins.parse_versions("torch=2.11"))
    pick = lambda found: {f.path.replace(str(tmp_path) + "/", "") for f in found if f.record == record}  # noqa: E731
    return pick(result.findings), pick(result.notes)


def test_intel_xpu_code_runs_on_no_nvidia_gpu(tmp_path: Path) -> None:
    """The package's `__init__.py` imports intel_extension_for_pytorch: its modules' calls are notes. The same call
    in a module of the code base outside that package stays a finding."""
    scan_files(tmp_path, {"library/__init__.py": "", "library/ipex/__init__.py": """\
        import torch
        try:
            import intel_extension_for_pytorch as ipex
        except Exception:
            ipex = None
        from .hijacks import sdpa
        """, "library/ipex/hijacks.py": """\
        import torch
        def sdpa(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        """, "library/attention.py": """\
        import torch
        def attend(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        """, "setup.py": "from setuptools import setup\nsetup(name='library', packages=['library'])\n"}, "torch=2.11")
    live, notes = _live_and_notes(tmp_path, "torch.sdpa-flash-backward")
    assert live == {"library/attention.py"} and notes == {"library/ipex/hijacks.py"}, (live, notes)


def test_an_exec_of_an_attribute_assignment_imports_nothing(tmp_path: Path) -> None:
    """train.py imports `models`, whose `__init__.py` imports one model; another model file nothing imports never
    runs, though a model module runs `exec(f"self.block{i} = ...")`. An `exec` of code read from a file may import
    anything: there the file may be imported by a computed name (its class still runs only if something names it)."""
    files = {"train.py": """\
        import torch
        import models
        if __name__ == "__main__":
            net = models.Net().cuda()
            net(torch.randn(1, 3, 8, 8, device="cuda")).sum().backward()
        """, "models/__init__.py": "from .net import Net\n", "models/net.py": """\
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                for i in range(2):
                    exec(f'self.block{i} = nn.Identity()')
                self.conv = nn.Conv2d(3, 8, 3)
            def forward(self, x):
                return self.conv(x)
        """, "models/ old_net.py": """\
        import torch.nn as nn
        class OldNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
        """}
    scan_files(tmp_path / "a", files, "torch=2.11")
    live, notes = _live_and_notes(tmp_path / "a", "torch.cudnn-convolution")
    assert live == {"models/net.py"} and notes == {"models/ old_net.py"}, (live, notes)
    assert "no entry point of this code base runs this file" in _note(tmp_path / "a")
    files["models/net.py"] = files["models/net.py"].replace("exec(f'self.block{i} = nn.Identity()')",
                                                            "exec(open('blocks.py').read())")
    scan_files(tmp_path / "b", files, "torch=2.11")
    assert "no entry point of this code base runs this file" not in _note(tmp_path / "b")  # any module may be imported


def _note(root: Path, name: str = "old_net.py") -> str:
    result = scan([str(root)], given=pins.parse_versions("torch=2.11"))
    return next(f.note for f in result.notes if f.path.endswith(name))


def test_an_unused_import_of_importlib_imports_nothing(tmp_path: Path) -> None:
    """jzhang38/TinyLlama (forty-fifth corpus, 20 false alarms): `sft/finetune.py` has `import importlib` and never
    uses it; the code base imports no module by a computed name, so `lit_gpt/adapter.py`, which nothing imports,
    never runs. A call of `importlib.import_module(name)` may import any module: the file's reason changes."""
    files = {"pretrain.py": """\
        import torch
        from lit_gpt.model import GPT
        if __name__ == "__main__":
            GPT().cuda()(torch.zeros(1, 4, dtype=torch.long, device="cuda")).sum().backward()
        """, "sft/finetune.py": "import importlib\nimport torch\n", "lit_gpt/__init__.py": "",
             "lit_gpt/model.py": """\
        import torch.nn as nn
        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(16, 8)
            def forward(self, idx):
                return self.wte(idx)
        """, "lit_gpt/adapter.py": """\
        import torch.nn as nn
        class Adapter(nn.Module):
            def __init__(self):
                super().__init__()
                self.prefix = nn.Embedding(16, 8)
        """}
    scan_files(tmp_path / "a", files, "torch=2.11")
    assert "no entry point of this code base runs this file" in _note(tmp_path / "a", "adapter.py")
    files["sft/finetune.py"] = "import importlib\nimport sys\nimportlib.import_module(sys.argv[1])\n"
    scan_files(tmp_path / "b", files, "torch=2.11")
    assert "no entry point of this code base runs this file" not in _note(tmp_path / "b", "adapter.py")


def test_an_exec_written_with_a_space_before_its_parenthesis(tmp_path: Path) -> None:
    """Coder-Yu/QRec (forty-eighth corpus, 90 risky entries read as code nothing runs) imports its model by
    `exec (importStr)`, with `importStr = 'from model.ranking.' + name + ' import ' + name`: any module of the code
    base may then be imported."""
    files = {"main.py": """\
        import sys
        def run(name):
            importStr = 'from model.ranking.' + name + ' import ' + name
            exec (importStr)
        if __name__ == "__main__":
            run(sys.argv[1])
        """, "model/__init__.py": "", "model/ranking/__init__.py": "", "model/ranking/LightGCN.py": """\
        import tensorflow as tf
        class LightGCN:
            def build(self, n):
                return tf.Variable(tf.random.truncated_normal([n, 8], stddev=0.005))
        """}
    scan_files(tmp_path, files, "tensorflow=2.20")
    result = scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20"))
    notes = [f for f in result.notes if f.path.endswith("LightGCN.py")]
    assert not any("no entry point of this code base runs this file" in f.note for f in notes), notes
