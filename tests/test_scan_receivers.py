"""Causes of false alarms of the tuning corpora where a method was matched by its name alone (look-alike
methods, RULES C3), where indices are unique, and where a data loader shuffles nothing (RULES R3): fixed after
their measures, so not a measure of them. Each fixture is a folder of tests/fixtures/scanrecv/, scanned as a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scanrecv"


def _scan(tmp_path: Path, name: str, versions: str, file: str | None = None) -> list:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    target = root / file if file else root
    return [f for f in scan([str(target)], given=pins.parse_versions(versions)).findings if not f.note]


def _lines(found: list, record: str, file: str) -> list[int]:
    return sorted(f.line for f in found if f.record == record and Path(f.path).name == file)


def test_a_method_of_a_receiver_visibly_not_the_frameworks_is_no_site(tmp_path):
    """kimiyoung/transformer-xl, deepmind/graph_nets, ChenglongChen/tensorflow-DeepFM (6 false alarms, RULES
    C3): `self.scatter` / `self.gather` / `super().scatter` in a DataParallel subclass were read as
    Tensor.scatter / gather, a multiprocessing `Pool(...).map` and a namedtuple class's `.map` as tf.data's map,
    and the `.fit` of the code base's own scikit-learn estimator (a class of another module) as Keras fit. A
    receiver whose type is visibly no framework object (`self` or `super()` of a class whose bases are plain
    Python, another library's or a torch module's; an instance of such a class of the code base; an object of
    Python's standard library) makes no site; receivers of unknown type stay possible findings."""
    versions = "torch=2.11,tensorflow=2.20"
    found = _scan(tmp_path, "lookalike", versions)
    assert _lines(found, "torch.scatter-src-tensor", "parallel.py") == [23], found
    assert _lines(found, "torch.gather-backward", "parallel.py") == [19], found
    assert _lines(found, "tf.data-loader-parallelism", "main.py") == [], found  # no workers: fit-runs-no-workers
    pool = _scan(tmp_path / "file", "lookalike", versions, "pool.py")
    assert _lines(pool, "tf.data-loader-parallelism", "pool.py") == [17], pool


def test_a_tensor_methods_receiver_and_a_partials_call_are_read_for_a_gradient(tmp_path):
    """lucidrains/vit-pytorch (2 false alarms, RULES R3): `torch.arange(n).repeat_interleave(k)` and
    `torch.repeat_interleave(arange(len(images)), counts)` with `arange = partial(torch.arange, device=d)`
    repeat integer index tensors, which carry no gradient. The scan read no tensor method's receiver (only a
    functional call's arguments), called the parameter a factory copies or is shaped by a possible source of
    one, read no `functools.partial` binding, and took `len(x)` for as needy as `x`. Now a method's receiver is
    its input; torch factories make new leaves; integer parameters (`repeats`, `dim`) carry none; a partial's
    call is its function's call. A receiver or input that may require a gradient stays a finding."""
    found = _scan(tmp_path, "gradfree", "torch=2.11,tensorflow=2.20")
    assert _lines(found, "torch.repeat-interleave-backward", "posemb.py") == [14, 27], found
    # another class's method (tkipf/gcn's `self.optimizer.minimize(self.loss)`) is not read so: it stays
    assert _lines(found, "tf.gradient-gating", "optimizer.py") == [11], found


def test_a_position_embedding_a_module_dict_holds_is_a_unique_lookup(tmp_path):
    """karpathy/minGPT, karpathy/nanoGPT (2 false alarms, RULES R3): `wpe = nn.Embedding(...)` inside
    `self.transformer = nn.ModuleDict(dict(...))`, called only as `self.transformer.wpe(pos)` with `pos =
    torch.arange(...)` (`.unsqueeze(0)` in minGPT), was reported: the unique-position-lookup rule read only
    `self.X = nn.Embedding(...)` called as `self.X(torch.arange(...))`. Now each module a ModuleDict holds is
    read by its path (`self.a.X`, `self.a["X"]`) and the indices may be any that never repeat; a ModuleDict's
    rule applies to its own construction only (two on one line are told apart by column). Embeddings called on
    token ids, or whose container is handed on, stay findings."""
    found = _scan(tmp_path, "positions", "torch=2.11")
    assert _lines(found, "torch.embedding-backward", "model.py") == [9, 13, 27], found


def test_loaders_that_shuffle_nothing_are_read_through_samplers_collates_and_flags(tmp_path):
    """pytorch/examples, facebookresearch/dlrm, SeanNaren/deepspeech.pytorch, milesial/Pytorch-UNet (7 false
    alarms, RULES R3): loaders that shuffle nothing over datasets that draw nothing were reported because the
    scan took any sampler for a shuffling one (`DistributedSampler(ds, shuffle=False)`, `SequentialSampler`, a
    `BatchSampler` of such, through a name set in branches), read no collate function chosen among the module's
    functions (nor one calling a function defined inside it), read no `FakeData` transforms by position (it
    seeds each image by its index), no `loader.dataset` (the loader's own dataset, through a parameter), no
    `random_split` (Subsets of the dataset), and no branch a construction turns off (`if self.split:` of a
    dataset made with split=False; `if self.aug and ...` with the augmentation left at None, through the base
    `__init__` the class calls), took a local variable named `sample` for a random draw, and took every
    argument the dataset keeps (`self.scale = scale`, handed to its own method) for an object it may wrap, even
    a path or a parameter annotated `float`. Loaders with a shuffling sampler, a collate function that may
    draw, a dataset made with the random branch on, or an argument not visibly plain data stay."""
    found = _scan(tmp_path, "loaders", "torch=2.11")
    record = "torch.data-loader-workers"
    assert _lines(found, record, "samplers.py") == [18], found
    assert _lines(found, record, "collate.py") == [40], found
    assert _lines(found, record, "flagged.py") == [71, 73, 78, 105], found
