"""Causes found on the fourth frozen scan corpus (benchmarks/scan_frozen4/, docs/scan.md), each fixed
at its cause: one fixture per cause, written from the shape of the code the corpus showed."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11,tensorflow=2.20") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def test_tf1_names_of_random_ops_and_softmax_xent(tmp_path):
    """graykode/nlp-tutorial's TF 1 scripts: `tf.random_normal`, `tf.truncated_normal`, `tf.random_uniform`
    (TF 1's names of tf.random.*, tf.compat.v1 in TF 2) draw from the unseeded generator unless a seed is
    given, by keyword or position; `tf.nn.softmax_cross_entropy_with_logits_v2` is the fused kernel."""
    found = _scan(tmp_path, {"nnlm.py": """\
        import tensorflow as tf
        W = tf.Variable(tf.random_normal([3, 4]))
        V = tf.Variable(tf.random_normal([3, 4], seed=1))
        U = tf.truncated_normal([2, 2])
        T = tf.random_uniform([2], 0, 1, tf.float32, 3)
        cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=W, labels=V))
        """})
    assert [(f.line, f.record, f.level) for f in found] == [
        (2, "tf.random-seeds", "nondeterministic"), (4, "tf.random-seeds", "nondeterministic"),
        (6, "tf.fused-softmax-xent", "nondeterministic")], found


_LAYERS = """\
    import torch.nn as nn
    class ScaledEmbedding(nn.Embedding):
        def reset_parameters(self):
            self.weight.data.normal_(0, 1.0 / self.embedding_dim)
    class ZeroEmbedding(ScaledEmbedding):
        pass
    class OwnArguments(nn.Embedding):
        def __init__(self, n, max_norm=None):
            super().__init__(n, 8, max_norm=max_norm)
    """


def test_a_code_base_subclass_of_a_framework_layer_is_that_layer(tmp_path):
    """maciejkula/spotlight (18 misses): `class ScaledEmbedding(nn.Embedding)` in spotlight/layers.py,
    constructed in other files of the code base (imported by name, or through its module), directly or
    through another of its subclasses, is a construction of nn.Embedding (RULES C2.3): its records apply,
    its arguments read by nn.Embedding's signature unless a class of the chain defines `__init__`."""
    net = """\
        import torch
        import torch.nn as nn
        from pkg import layers
        from pkg.layers import ScaledEmbedding, ZeroEmbedding, OwnArguments
        class Biased(ZeroEmbedding):
            pass
        class Net(nn.Module):
            def __init__(self, n, d):
                super().__init__()
                self.a = ScaledEmbedding(n, d)
                self.b = ZeroEmbedding(n, 1)
                self.c = layers.ScaledEmbedding(n, d)  # through its module (tests/test_scan_flow.py)
                self.d = Biased(n, 1)
                self.e = OwnArguments(n, max_norm=2.0)
                self.f = ScaledEmbedding(n, d, max_norm=1.0)
            def forward(self, i):
                return self.a(i) + self.b(i) + self.c(i) + self.d(i) + self.e(i) + self.f(i)
        """
    found = _scan(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": _LAYERS, "pkg/net.py": net})
    mine = {f.line: f for f in found if f.path.endswith("net.py") and f.record == "torch.embedding-backward"}
    assert sorted(mine) == [10, 11, 12, 13, 14, 15], found
    assert {f.level for f in mine.values()} == {"nondeterministic"}, found  # the record has no call conditions
    assert mine[15].facts.get("max_norm") == 1.0 and "max_norm" not in mine[14].facts, found  # its own __init__
    assert not [f for f in found if f.path.endswith("layers.py")], found  # defining a class constructs nothing


_NNLM = """\
    import torch
    import torch.nn as nn
    import torch.optim as optim
    class NNLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.C = nn.Embedding(7, 2)
            self.conv = nn.Conv2d(1, 3, (2, 2))
        def forward(self, x):
            return self.conv(self.C(x).unsqueeze(1)).sum(-1).sum(-1)
    if __name__ == '__main__':
        model = NNLM()
        criterion = nn.CrossEntropyLoss()
        optimizer = optim.Adam(model.parameters(), lr=0.001)
        out = model(torch.LongTensor([[1, 2], [1, 3]]))
        loss = criterion(out, torch.LongTensor([0, 1]))
        loss.backward()
        optimizer.step()
    """


def test_a_program_that_never_uses_a_gpu_runs_on_the_cpu(tmp_path):
    """graykode/nlp-tutorial (56 false alarms): whole scripts and notebooks that never place anything on a
    GPU (no .cuda(), .to(device), device=, DataParallel, trainer) run PyTorch on the CPU, where a record of
    the GPU alone does not apply: a note there, saying why. A file no entry point runs, and any program that
    may use a GPU (a variable device included), keep the GPU's answer."""
    records = ("torch.embedding-backward", "torch.cudnn-convolution")
    from kb.scan import pins
    from kb.scan.run import scan

    (tmp_path / "cpu").mkdir()
    scan_files(tmp_path / "cpu", {"nnlm.py": _NNLM}, "torch=2.11")
    report = scan([str(tmp_path / "cpu")], given=pins.parse_versions("torch=2.11"))
    assert not [f for f in report.findings if f.record in records], report.findings
    notes = [f for f in report.notes if f.record in records]
    assert sorted((f.line, f.record) for f in notes) == [(7, records[0]), (8, records[1])]
    assert all("never places anything on a GPU" in f.note for f in notes)
    # a top-level training script (no __main__ block) is a whole program too
    script = _NNLM.replace("    if __name__ == '__main__':\n", "").replace("\n        ", "\n    ")
    found = scan_files(tmp_path / "script", {"nnlm.py": script}, "torch=2.11")
    assert not [f for f in found if f.record in records], found
    # the same model with any GPU placement, or a device held in a variable, keeps its findings
    for k, placed in enumerate(("model = NNLM().cuda()", "model = NNLM().to(device)", "model = NNLM().to('cuda:0')",
                                "model = nn.DataParallel(NNLM())", "model = NNLM(); x = torch.ones(2, device=dev)")):
        found = scan_files(tmp_path / f"gpu{k}", {"nnlm.py": _NNLM.replace("model = NNLM()", placed, 1)}, "torch=2.11")
        assert sorted((f.line, f.record) for f in found if f.record in records) == [(7, records[0]), (8, records[1])], placed
    # ... and so does a GPU placement in a file the program imports
    found = scan_files(tmp_path / "imported", {"nnlm.py": _NNLM.replace("import torch.optim as optim", "import torch.optim as optim\n    import util"),
                                               "util.py": "import torch\ndev = torch.device('cuda')\n"}, "torch=2.11")
    assert sorted((f.line, f.record) for f in found if f.record in records) == [(8, records[0]), (9, records[1])]
    # a model file no entry point runs keeps the GPU's answer (a library, or the file named alone)
    model_only = _NNLM.split("    if __name__")[0]
    found = scan_files(tmp_path / "library", {"model.py": model_only}, "torch=2.11")
    assert sorted((f.line, f.record) for f in found if f.record in records) == [(7, records[0]), (8, records[1])]
    # an installable package's module with a __main__ smoke test is a library: its users may run it anywhere
    setup = "from setuptools import setup\nsetup(name='pkg', packages=['pkg'])\n"
    found = scan_files(tmp_path / "package", {"setup.py": setup, "pkg/__init__.py": "", "pkg/nnlm.py": _NNLM}, "torch=2.11")
    assert sorted((f.line, f.record) for f in found if f.record in records) == [(7, records[0]), (8, records[1])]
    # ... but where no packaging file installs the folder, an `__init__.py` alone makes no library: the __main__
    # block is the script repository's program (ZhaoJ9014/face.evoLVe's applications/align/face_align.py)
    found = scan_files(tmp_path / "folder", {"pkg/__init__.py": "", "pkg/nnlm.py": _NNLM}, "torch=2.11")
    assert not [f for f in found if f.record in records], found
    # the CPU's dtype casts and host tensors are no GPU placement
    cpu = _NNLM.replace("model = NNLM()", "model = NNLM().to(torch.float32).to('cpu'); z = torch.zeros(2, device='cpu')")
    found = scan_files(tmp_path / "casts", {"nnlm.py": cpu}, "torch=2.11")
    assert not [f for f in found if f.record in records], found


_SCRIPTS = {
    "train.py": """\
        import torch
        from models.net import Net, Base
        if __name__ == '__main__':
            model = Net().cuda()
            model(torch.ones(1, 3, 8, 8).cuda()).sum().backward()
            Base.training(None)
        """,
    "models/net.py": """\
        import torch.nn as nn
        import tensorflow as tf
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3)
        class Unused(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3)
        class Base:
            def loss(logits, labels):
                return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            def training(loss):
                return loss
        """,
    "models/rir.py": """\
        import torch.nn as nn
        class ResnetInit(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3)
        """,
    "tests/test_net.py": """\
        import torch.nn as nn
        def test_conv():
            nn.Conv2d(3, 3, 3)
        """,
}


def test_code_no_entry_point_of_a_script_repository_runs(tmp_path):
    """weiaicunzai/pytorch-cifar100's models/rir.py (8: a file nothing imports), NVIDIA/tacotron2's own
    DistributedDataParallel (a class nothing builds) and PetarV-/GAT's BaseGAttN.loss (a method nothing
    calls): in a repository that ships no package and runs through its scripts, code no entry point runs is
    a note (RULES L1-1, R4). A library package keeps its findings, and so does a test file."""
    from kb.scan import pins
    from kb.scan.run import scan

    scan_files(tmp_path / "repo", _SCRIPTS, "torch=2.11,tensorflow=2.20")
    report = scan([str(tmp_path / "repo")], given=pins.parse_versions("torch=2.11,tensorflow=2.20"))
    kept = sorted((Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line, f.record) for f in report.findings)
    assert kept == [("models/net.py", 6, "torch.cudnn-convolution"), ("tests/test_net.py", 3, "torch.cudnn-convolution")]
    notes = {(Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line): f.note for f in report.notes}
    assert "builds Unused" in notes[("models/net.py", 10)]
    assert "calls Base.loss" in notes[("models/net.py", 13)]
    assert "no entry point of this code base runs this file" in notes[("models/rir.py", 5)]
    # kept: a module at the top of the code base nothing imports (users' notebooks import it: yang-song/score_sde's
    # controllable_generation.py), and the classes of a module a package's __init__ star-imports (its API:
    # kuangliu/pytorch-cifar's `from .lenet import *`, LeNet picked by editing main.py)
    scan_files(tmp_path / "repo", {"sampler.py": "import torch.nn as nn\nconv = nn.Conv2d(3, 3, 3)\n",
                                   "models/__init__.py": "from .lenet import *\nfrom .net import Net\n",
                                   "models/lenet.py": "import torch.nn as nn\nclass LeNet(nn.Module):\n"
                                                      "    def __init__(self):\n        super().__init__()\n"
                                                      "        self.conv = nn.Conv2d(3, 3, 3)\n"}, "torch=2.11")
    report = scan([str(tmp_path / "repo")], given=pins.parse_versions("torch=2.11,tensorflow=2.20"))
    kept = sorted((Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line) for f in report.findings)
    assert ("sampler.py", 2) in kept and ("models/lenet.py", 5) in kept, kept
    # an installable package: its users run every part of it
    (tmp_path / "repo" / "setup.py").write_text("from setuptools import setup\nsetup(name='x')\n")
    report = scan([str(tmp_path / "repo")], given=pins.parse_versions("torch=2.11,tensorflow=2.20"))
    assert len(report.findings) == 7, report.findings


def test_index_select_from_an_integer_table_built_from_numpy(tmp_path):
    """maciejkula/spotlight's spotlight/layers.py: `torch.index_select(self._hashes, 0, ...)` where every
    `self._hashes = ...` of the class binds a value no gradient reaches (None, `torch.from_numpy` of a
    NumPy table, its `.cuda()` copy): no backward runs through the call. A parameter table keeps it."""
    code = """\
        import numpy as np
        import torch
        import torch.nn as nn
        class Bloom(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.n = n
                self._hashes = None
                self.table = nn.Parameter(torch.zeros(n, 4))
            def hashed(self, indices):
                if self._hashes is None:
                    hashes = np.stack([np.arange(self.n) % 7 for _ in range(4)], axis=1).astype(np.int64)
                    self._hashes = torch.from_numpy(hashes)
                    if indices.is_cuda:
                        self._hashes = self._hashes.cuda()
                return torch.index_select(self._hashes, 0, indices.squeeze())
            def forward(self, indices):
                return torch.index_select(self.table, 0, indices)
        """
    found = _scan(tmp_path, {"layers.py": code})
    assert [(f.line, f.record) for f in found if f.record == "torch.index-select-backward"] == [
        (18, "torch.index-select-backward")], found


def test_a_function_run_only_under_no_grad_or_in_a_data_pipeline(tmp_path):
    """ermongroup/ddim's compute_alpha (`index_select` on the noise schedule), called only inside
    `with torch.no_grad():` in sampling, and calmisential/TensorFlow2.0_ResNet's load_and_preprocess_image
    (`tf.image.resize`), handed only to a tf.data `.map(...)`: no gradient is recorded where they run, so
    records of the backward pass do not apply. A function another file calls, or one also called where a
    gradient is recorded, keeps them."""
    sampling = """\
        import torch
        def compute_alpha(beta, t):
            return (1 - beta).cumprod(dim=0).index_select(0, t + 1)
        def sample(x, b, seq):
            with torch.no_grad():
                for t in seq:
                    x = x * compute_alpha(b, t.long())
            return x
        """
    pipeline = """\
        import tensorflow as tf
        def load(path):
            img = tf.image.decode_jpeg(tf.io.read_file(path), channels=3)
            return tf.image.resize(img, [224, 224])
        def dataset(paths):
            return tf.data.Dataset.from_tensor_slices(paths).map(load)
        """
    found = _scan(tmp_path / "quiet", {"sampling.py": sampling, "pipeline.py": pipeline})
    assert [(Path(f.path).name, f.record) for f in found if f.record in (
        "torch.index-select-backward", "tf.resize-bilinear-backprop")] == [], found
    trained = sampling.rstrip(" ") + "        def loss(b, t):\n            return compute_alpha(b, t).sum()\n"
    differentiated = pipeline.rstrip(" ") + "        def augment(x):\n            return load(x)\n"
    found = _scan(tmp_path / "loud", {"sampling.py": trained, "pipeline.py": differentiated})
    assert sorted((Path(f.path).name, f.line, f.record) for f in found if f.record in (
        "torch.index-select-backward", "tf.resize-bilinear-backprop")) == [
        ("pipeline.py", 4, "tf.resize-bilinear-backprop"), ("sampling.py", 3, "torch.index-select-backward")]
    found = _scan(tmp_path / "imported", {"sampling.py": sampling,
                                          "train.py": "from sampling import compute_alpha\nprint(compute_alpha)\n"})
    assert [(f.line, f.record) for f in found if f.record == "torch.index-select-backward"] == [
        (3, "torch.index-select-backward")]


def test_a_cumsum_of_a_mask_cast_to_float_is_a_count(tmp_path):
    """maciejkula/spotlight's representations.py: `torch.cumsum((x != 0.0).float(), 2)` counts the
    non-padding entries: integer values, exact in any order. The cumsum of the values themselves stays."""
    found = _scan(tmp_path, {"rep.py": """\
        import torch
        def pool(x):
            total = torch.cumsum(x, 2)
            count = torch.cumsum((x != 0.0).float(), 2)
            other = torch.cumsum((x > 0).to(torch.float32), 2)
            return total / count + other
        """})
    assert [(f.line, f.record) for f in found if f.record == "torch.cumsum"] == [(3, "torch.cumsum")], found


def test_an_empty_buffer_filled_row_by_row_by_the_next_loop(tmp_path):
    """graykode/nlp-tutorial's Seq2Seq(Attention): `model = torch.empty([n_step, 1, n_class])`, then
    `for i in range(n_step):` writes `model[i] = self.out(...)` before the buffer is read: every row is
    written first. A loop over fewer rows, or one that reads the buffer first, keeps the finding."""
    found = _scan(tmp_path, {"attn.py": """\
        import torch
        def decode(cell, xs, n_class):
            n_step = len(xs)
            model = torch.empty([n_step, 1, n_class])
            for i in range(n_step):
                h = cell(xs[i])
                model[i] = h
            partial = torch.empty([n_step, 1, n_class])
            for i in range(n_step - 1):
                partial[i] = cell(xs[i])
            read = torch.empty(n_step, n_class)
            for i in range(n_step):
                read[i] = read.sum() + cell(xs[i])
            return model, partial, read
        """})
    assert [(f.line, f.record) for f in found if f.record == "torch.uninitialized-memory"] == [
        (8, "torch.uninitialized-memory"), (11, "torch.uninitialized-memory")], found
