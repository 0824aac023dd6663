"""Code that runs only on the host where no gradient is taken, followed across files (kb/scan/hostcode.py):
causes of false alarms in the tuning corpora (benchmarks/scan_frozen*/), fixed after their measure."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scan" / "hostcode"


def _scan(tmp_path: Path, case: str, versions: str) -> list:
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted((FIXTURES / case).iterdir())}
    return scan_files(tmp_path, files, versions)


def test_functions_reached_only_from_a_dataset_item_in_other_files(tmp_path):
    """jaywalnut310/vits's `spectrogram_torch` (mel_processing.py), called only from `TextAudioLoader.get_audio`,
    which only the Dataset's `__getitem__` calls, and SeanNaren/deepspeech.pytorch's spec augment, two files
    further (spec_augment -> time_warp -> sparse_image_warp): they run in the data loader on the host, where
    no gradient is taken, so records of the backward pass do not apply. A function the training step also
    calls (`features`) keeps the record, and so does one a Dataset calls after moving its tensor to CUDA
    (`on_device`: not host code). A window placed on its input's own device (`device=y.device`) moves nothing,
    and a flag read as `self.config.time_warp` is no use of the function `time_warp`."""
    found = _scan(tmp_path, "dataset", "torch=2.11")
    assert sorted((f.path.rsplit("/", 1)[-1], f.line) for f in found if f.record == "torch.gather-backward") == [
        ("mel.py", 10), ("mel.py", 14)], found


def _scanned(tmp_path: Path, case: str, versions: str):
    _scan(tmp_path, case, versions)
    return scan([str(tmp_path)], given=pins.parse_versions(versions))


def test_a_program_that_trains_only_on_tpu_cores(tmp_path):
    """hojonathanho/diffusion: run_training builds a `TPUEstimator(use_tpu=True)` whose RunConfig names a
    `TPUClusterResolver`, and no file of the program names a GPU: the model's ops run on TPU cores, so the
    records of the GPU alone (the conv's cuDNN records) are notes that say so; a record of any device (the
    unseeded `tf.random.normal`) stays a finding."""
    result = _scanned(tmp_path, "tpu", "tensorflow=2.20")
    assert not [f for f in result.findings if f.record.startswith("tf.cudnn")], result.findings
    assert [f.record for f in result.findings if f.record == "tf.random-seeds"], result.findings
    notes = [f.note for f in result.notes if f.record.startswith("tf.cudnn")]
    assert notes and all("TPU" in note for note in notes), notes


def test_a_program_that_hides_the_gpus_from_tensorflow(tmp_path):
    """google-research/vision_transformer's main.py: `tf.config.experimental.set_visible_devices([], 'GPU')` at
    the start of main() (TensorFlow raises if it comes after the GPUs are in use): the TensorFlow ops of the
    files only that program runs run on the CPU, so a record of the GPU alone is a note there; the file
    another program also runs keeps it."""
    result = _scanned(tmp_path, "hidden", "tensorflow=2.20")
    found = sorted((f.path.rsplit("/", 1)[-1], f.line) for f in result.findings if f.record == "tf.gather-backprop")
    assert found == [("ops.py", 5)], result.findings
    notes = [f.note for f in result.notes if f.record == "tf.gather-backprop"]
    assert len(notes) == 1 and "hides every GPU from TensorFlow" in notes[0], notes
