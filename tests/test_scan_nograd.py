"""Where a call runs with no gradient or never runs: causes of the sixth frozen corpus's false alarms
(benchmarks/scan_frozen6/), fixed after its measure: tuned on it, so not a measure of it."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files

FIXTURES = Path(__file__).parent / "fixtures" / "scan" / "nograd"


def _scan(tmp_path: Path, case: str, versions: str) -> list:
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted((FIXTURES / case).iterdir())}
    return scan_files(tmp_path, files, versions)


def test_a_nested_function_handed_to_a_data_pipeline_runs_with_no_gradient(tmp_path):
    """google-research/big_transfer's `_pp`, nested in `get_data` and handed only to `data.map(_pp)`, and the
    `_crop` it alone calls: their resizes run in the tf.data pipeline on the host, where no gradient is
    recorded, so the records of the backward pass do not apply. A nested function called under a
    GradientTape (`_augment`) keeps them."""
    found = _scan(tmp_path, "pipeline", "tensorflow=2.20")
    assert sorted((f.line, f.record) for f in found if f.record == "tf.resize-bilinear-backprop") == [
        (23, "tf.resize-bilinear-backprop")], found


def test_a_gather_from_a_registered_buffer_in_the_function_form(tmp_path):
    """w86763777/pytorch-ddpm's `extract`: `torch.gather(v, index=t, dim=0)`, where every call passes a
    registered buffer (the noise schedule) for `v`. No gradient flows into a buffer, so the gather's
    backward (its atomic scatter into the gathered-from tensor) never runs; the method form `v.gather(...)`
    was already read so. A gather from a parameter (`pick(self.weights, t)`) keeps the record."""
    found = _scan(tmp_path, "buffers", "torch=2.11")
    assert sorted((f.line, f.record) for f in found if f.record == "torch.gather-backward") == [
        (14, "torch.gather-backward")], found
