"""False alarms of `torch.data-loader-workers` over the tuning corpora (benchmarks/scan_frozen3/,
scan_frozen7/): loaders that shuffle nothing over a dataset that draws nothing, which the scan could not
read through. Each fixture is a folder of tests/fixtures/scanloaders/, scanned as a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scanloaders"


def _scan(tmp_path: Path, name: str) -> list[int]:
    """The lines of the fixture's train.py loaders still reported (the others the rule
    dataset-draws-no-random rules out, saying why)."""
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    found = [f for f in scan([str(root)], given=pins.parse_versions("torch=2.11")).findings
             if f.record == "torch.data-loader-workers" and Path(f.path).name == "train.py"]
    return sorted(f.line for f in found if not f.note)


def test_settings_a_dataset_hands_to_its_functions_as_numbers(tmp_path):
    """jik876/hifi-gan (1 false alarm, RULES R3): a dataset made with settings the caller read from a config
    (`h.n_fft`) hands them to a function of the code base that uses them as numbers only (torch.stft,
    librosa, str, arithmetic); the scan took each handed-on setting for an object the caller chose. A
    dataset that hands the caller's object to a function that calls or indexes it stays a finding."""
    assert _scan(tmp_path, "handed") == [11, 12]


def test_a_transform_a_factory_of_the_code_base_makes(tmp_path):
    """abarankab/DDPM (1 false alarm, RULES R3): a torchvision dataset's transform made by a function of
    another module of the code base (a Compose of ToTensor and a class defined in the function whose
    `__call__` draws nothing) was not read. A factory whose transform adds noise or flips at random stays
    a finding."""
    assert _scan(tmp_path, "factory") == [11, 13]


def test_a_setting_a_dataset_only_bounds_a_range_with(tmp_path):
    """tkipf/c-swm eval.py (1 false alarm, RULES R3): a dataset whose `__getitem__` loops over
    `range(self.path_length)`, a setting the caller gave (`args.steps`); the scan took handing it to `range`
    for running an object the caller chose. A dataset that iterates the caller's object stays a finding."""
    assert _scan(tmp_path, "ranged") == [12]


def test_a_torchvision_dataset_class_chosen_in_branches(tmp_path):
    """bearpaw/pytorch-classification cifar.py and imagenet.py (2 false alarms, RULES R3): the test loader's
    dataset is made by a name assigned `datasets.CIFAR10` in one branch and `datasets.CIFAR100` in the other,
    with a deterministic transform; the validation loader's ImageFolder resizes with `transforms.Scale` (the
    old name of Resize). The same class with a RandomCrop transform stays a finding."""
    assert _scan(tmp_path, "chosen") == [14, 20]


def test_loaders_that_shuffle_or_draw_stay_findings(tmp_path):
    """Over a dataset that draws nothing (a torchvision class chosen through a name, a deterministic
    transform), a loader with shuffle=True, a RandomSampler, or a sampler name one of whose values is a
    RandomSampler stays a finding, and so does one over a dataset whose `__getitem__` draws np.random
    within a `range` loop; only the SequentialSampler's loader is ruled out."""
    assert _scan(tmp_path, "staying") == [30, 31, 32, 33]


def test_a_library_dataset_over_a_data_source_of_the_code_base(tmp_path):
    """r9y9/wavenet_vocoder evaluate.py (1 false alarm, RULES R3): nnmnkwii's `FileSourceDataset(source)`,
    whose items are what `source.collect_features(path)` returns, over a data source of the code base (an
    abstract nnmnkwii `FileDataSource` subclass) that only loads files. A source whose `collect_features`
    crops at a random start stays a finding."""
    assert _scan(tmp_path, "sourced") == [10]


def test_compose_steps_handed_in_as_functions(tmp_path):
    """timesler/facenet-pytorch (twentieth corpus, RULES R3): a Compose whose steps are functions handed in
    whole (`np.float32`, the code base's `fixed_image_standardization`, `transforms.Lambda` of a lambda that
    draws nothing) was read as a transform that may draw. A step of the code base that adds noise, or a
    Lambda that draws, stays a finding."""
    assert _scan(tmp_path, "plainsteps") == [8, 9]


def test_a_transform_name_set_in_every_branch(tmp_path):
    """clovaai/CutMix-PyTorch (twenty-second corpus, 2 false alarms, RULES R3): `normalize` is set in each dataset's
    branch, each time to a `Normalize`; only a name set once was read. A name that one branch sets to a random
    transform keeps the finding."""
    assert _scan(tmp_path, "branches_normalize") == [16]
