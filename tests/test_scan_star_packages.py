"""`from package import *` of a package whose __init__.py sets `__all__`: Python imports each name of `__all__`
as a submodule of the package (THUwangcy/ReChorus's main.py star-imports models.sequential, whose __init__.py
globs its folder, and picks the model class by name at run time)."""

from __future__ import annotations

from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan
from scan_files import scan_files

_MODEL = """\
    import torch.nn as nn
    class {name}(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(100, 8)
            self.conv = nn.Conv1d(8, 8, 3)
        def forward(self, ids):
            return self.conv(self.emb(ids))
    """

_REPO = {
    "src/main.py": """\
        import torch
        from models.seq import *
        from models.lit import *
        from utils import utils

        def main(name):
            utils.init_seed(0)
            model = eval('{0}.{0}'.format(name))()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            loss = model(torch.zeros(4, dtype=torch.long).cuda()).sum()
            loss.backward()
            opt.step()

        if __name__ == "__main__":
            main("GRU")
        """,
    "src/utils/__init__.py": "",
    "src/utils/utils.py": """\
        import torch
        def init_seed(seed):
            torch.manual_seed(seed)
            torch.backends.cudnn.benchmark = False
            torch.backends.cudnn.deterministic = True
        """,
    "src/models/__init__.py": "",
    "src/models/seq/__init__.py": """\
        from os.path import dirname, basename, isfile, join
        import glob

        modules = glob.glob(join(dirname(__file__), "*.py"))
        __all__ = [
            basename(f)[:-3] for f in modules if isfile(f) and not f.endswith('__init__.py')
        ]
        """,
    "src/models/seq/GRU.py": _MODEL.format(name="GRU"),
    "src/models/seq/SAS.py": _MODEL.format(name="SAS"),
    "src/models/lit/__init__.py": "__all__ = ['Named']\n",
    "src/models/lit/Named.py": _MODEL.format(name="Named"),
    "src/models/lit/Other.py": _MODEL.format(name="Other"),
}


def test_star_import_of_a_package_with_a_computed_all_imports_its_folder(tmp_path):
    """A star import of a package whose `__all__` is computed from its folder (glob, os.listdir, pkgutil) imports
    every module of that folder: the run of main.py reaches each model, so its embeddings stay findings
    (init_seed's cudnn.deterministic fixes the convolutions, not the embedding's backward). A literal `__all__`
    imports exactly the submodules it names: the package's other modules stay unimported (a note)."""
    scan_files(tmp_path / "repo", _REPO, "torch=2.11")
    root = tmp_path / "repo"
    report = scan([str(root)], given=pins.parse_versions("torch=2.11"))
    found = sorted((Path(f.path).relative_to(root).as_posix(), f.line, f.record) for f in report.findings)
    notes = {(Path(f.path).relative_to(root).as_posix(), f.line, f.record): f.note for f in report.notes}
    for name in ("seq/GRU", "seq/SAS", "lit/Named"):
        assert (f"src/models/{name}.py", 5, "torch.embedding-backward") in found, (name, found, notes)
        assert not any(path == f"src/models/{name}.py" and record == "torch.cudnn-convolution"
                       for path, _, record in found), found
    assert not any(path == "src/models/lit/Other.py" for path, _, _ in found), found
    assert any(path == "src/models/lit/Other.py" and "no entry point of this code base runs this file" in note
               for (path, _, _), note in notes.items()), notes


def test_a_subclass_a_package_init_re_exports_by_a_star_import(tmp_path: Path) -> None:
    """kan-bayashi/ParallelWaveGAN (forty-third corpus, 8 misses, found after its measure): `parallel_wavegan/layers/
    __init__.py` says `from .residual_block import *`, which defines `Conv1d(torch.nn.Conv1d)` and `Conv1d1x1(Conv1d)`;
    the models take them by `from parallel_wavegan.layers import Conv1d1x1`. Building one builds a Conv1d."""
    found = scan_files(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='pw', packages=['pw', 'pw.layers', 'pw.models'])\n",
                                  "pw/__init__.py": "", "pw/layers/__init__.py": "from .blocks import *  # NOQA\n",
                                  "pw/layers/blocks.py": """\
        import torch
        class Conv1d(torch.nn.Conv1d):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
        class Conv1d1x1(Conv1d):
            def __init__(self, i, o):
                super().__init__(i, o, kernel_size=1)
        """, "pw/models/__init__.py": "from .gen import *  # NOQA\n", "pw/models/gen.py": """\
        import torch
        from pw.layers import Conv1d, Conv1d1x1
        class Generator(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.first = Conv1d1x1(1, 8)
                self.last = Conv1d(8, 1, 3)
            def forward(self, x):
                return self.last(self.first(x))
        """}, "torch=2.11")
    lines = sorted(f.line for f in found if f.record == "torch.cudnn-convolution" and Path(f.path).name == "gen.py")
    assert lines == [6, 7], found
