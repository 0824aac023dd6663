"""Folders a module adds to sys.path (kb/scan/syspaths.py, kb/scan/scope.py): xingyizhou/CenterNet (forty-fifth
corpus, 29 risky entries read as code nothing runs) starts `src/main.py` with `import _init_paths`, which puts
`src/lib` on sys.path; `from models.model import create_model` is then `src/lib/models/model.py`, and the networks it
imports are trained."""

from __future__ import annotations

from pathlib import Path

from kb.scan import syspaths
from scan_files import scan_files

_FILES = {
    "src/_init_paths.py": """\
        import os.path as osp
        import sys
        def add_path(path):
            if path not in sys.path:
                sys.path.insert(0, path)
        this_dir = osp.dirname(__file__)
        lib_path = osp.join(this_dir, 'lib')
        add_path(lib_path)
        """,
    "src/main.py": """\
        import _init_paths
        import torch
        from models.model import create_model
        if __name__ == "__main__":
            model = create_model().cuda()
            model(torch.randn(1, 3, 8, 8, device="cuda")).sum().backward()
        """,
    "src/lib/models/__init__.py": "",
    "src/lib/models/model.py": """\
        from .networks.resnet import Net
        def create_model():
            return Net()
        """,
    "src/lib/models/networks/__init__.py": "",
    "src/lib/models/networks/resnet.py": """\
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
            def forward(self, x):
                return self.conv(x)
        """,
}


def test_a_module_under_a_folder_put_on_sys_path_runs(tmp_path: Path) -> None:
    found = scan_files(tmp_path, _FILES, "torch=2.11")
    assert [(Path(f.path).name, f.line) for f in found if f.record == "torch.cudnn-convolution"] == [("resnet.py", 5)], found


def test_the_folders_read_from_the_text() -> None:
    """A join onto the file's folder (through a name assigned from `__file__`, each extra `dirname` one folder up), and
    a literal handed to sys.path; a join onto anything else, or an absolute path, is not read."""
    text = """import os, sys
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "third_party", "nms"))
sys.path.append("../lib")
sys.path.append("/opt/lib")
sys.path.insert(0, os.path.join(os.getcwd(), "other"))
"""
    assert syspaths.added(text) == ("../third_party/nms", "../lib")
    assert syspaths.added("import os\nos.path.join(os.path.dirname(__file__), 'x')\n") == ()  # no sys.path: not read
