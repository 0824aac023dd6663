"""Code that runs only on the host where no gradient is taken, followed across files (kb/scan/hostcode.py):
causes of false alarms in the tuning corpora (benchmarks/scan_frozen*/), fixed after their measure."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files

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
    (`on_device`: not host code)."""
    found = _scan(tmp_path, "dataset", "torch=2.11")
    assert sorted((f.path.rsplit("/", 1)[-1], f.line) for f in found if f.record == "torch.gather-backward") == [
        ("mel.py", 9), ("mel.py", 13)], found
