"""Causes of false alarms of the tuning corpora on input pipelines (RULES C3 look-alikes, R4 code that runs
only in the input pipeline): fixed after their measures, so not a measure of them. Each fixture is a folder
of tests/fixtures/scanpipe/, scanned as a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scanpipe"
VERSIONS = "torch=2.11,tensorflow=2.20"


def _scan(tmp_path: Path, name: str) -> list:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return [f for f in scan([str(root)], given=pins.parse_versions(VERSIONS)).findings if not f.note]


def _lines(found: list, record: str, file: str) -> list[int]:
    return sorted(f.line for f in found if f.record == record and Path(f.path).name == file)


def test_a_plain_librarys_instance_and_an_attribute_only_set_to_one_are_no_framework_object(tmp_path):
    """NVlabs/stylegan, as-ideas/TransformerTTS (2 false alarms, RULES C3): `svm = sklearn.svm.LinearSVC()`
    then `svm.fit(...)` was read as Keras fit, and `self._random.shuffle(samples)` with `self._random =
    Random(seed)` set in `__init__` as tf.data's shuffle: only an instance of Python's own classes counted as
    no framework object, and an attribute of `self` had no kind. Now an instance of any plain library's class
    (Python's, NumPy's, scikit-learn's) is that library's, and `self.<attr>` has the kind of the one object the
    class's methods assign it, when it writes it no other way. Unknown receivers (a parameter, what an
    unknown function makes) stay."""
    found = _scan(tmp_path, "libraries")
    assert _lines(found, "tf.data-loader-parallelism", "svm.py") == [], found  # no workers asked: fit-runs-no-workers
    assert _lines(found, "tf.random-seeds", "samples.py") == [16], found


def test_a_known_librarys_function_handed_to_a_map_draws_only_what_its_name_says(tmp_path):
    """deepmind/graph_nets (2 false alarms): `graph.map(tf.stop_gradient, fields)` on a GraphsTuple parameter
    (read, by its name, as a parallel tf.data map: the fields sit where num_parallel_calls would) was a
    finding, since mapped-function-draws-no-random read only the code base's functions. A function of
    TensorFlow, NumPy, JAX, torch or math named in full draws no random numbers unless a part of its name
    says so (random, shuffle, dropout, sample, noise, a distribution): `tf.image.random_flip_left_right` and
    an unknown function stay findings."""
    found = _scan(tmp_path, "mapped")
    assert _lines(found, "tf.data-loader-parallelism", "fields.py") == [13, 17], found


def test_a_function_a_pipeline_stage_runs_through_a_partial_a_lambda_or_filter_takes_no_gradient(tmp_path):
    """mozilla/DeepSpeech (feeding.py: `process_fn = partial(entry_to_features, ...)`, then
    `dataset.map(process_fn, ...)`): a function handed to a tf.data stage runs in the input pipeline and is
    never differentiated, but the scan followed only a function named bare in `.map(fn)`: the name in a
    `functools.partial` counted as a value handed on to anywhere, a lambda's calls as made where the lambda
    is called, and `filter` was no stage. Now `.map(partial(f, ...))`, `fn = partial(f, ...)` read only as a
    stage's function, `.map(lambda x: f(x))` and `.filter(f)` run f in the pipeline: records of the backward
    pass do not apply to it. A partial also returned to the caller (and called there) keeps its findings."""
    found = _scan(tmp_path, "stages")
    assert _lines(found, "tf.resize-bilinear-backprop", "pipeline.py") == [24], found


def test_a_mapped_function_is_read_into_the_functions_its_folder_imports(tmp_path):
    """mozilla/DeepSpeech (feeding.py's `dataset.map(process_fn, num_parallel_calls=AUTOTUNE)`): the mapped
    function calls `apply_graph_augmentations`, imported with `from .augmentations import ...`, and the scan
    took any call of a name it could not read for a random draw. Now a function imported from a module of the
    same folder (`from .helpers import f`, `from helpers import f`) is read as the file's own are, to the same
    depth: one that draws no random numbers leaves the map a note, one that draws keeps the finding."""
    found = _scan(tmp_path, "sibling")
    assert _lines(found, "tf.data-loader-parallelism", "loader.py") == [17], found
