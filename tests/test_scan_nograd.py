"""Where a call runs with no gradient or never runs: causes of the sixth frozen corpus's false alarms
(benchmarks/scan_frozen6/), fixed after its measure: tuned on it, so not a measure of it."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files

from kb.scan import pins
from kb.scan.run import scan

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
    registered buffer (the noise schedule) for `v`, or what torch functions, arithmetic and a dict of such
    values make of buffers (`1.0 / self.betas`, `torch.log(torch.cat([...]))`). No gradient flows into a buffer, so the gather's
    backward (its atomic scatter into the gathered-from tensor) never runs; the method form `v.gather(...)`
    was already read so. A gather from a parameter (`pick(self.weights, t)`) keeps the record."""
    found = _scan(tmp_path, "buffers", "torch=2.11")
    assert sorted((f.line, f.record) for f in found if f.record == "torch.gather-backward") == [
        (15, "torch.gather-backward")], found


def test_a_branch_behind_a_constant_false_test_never_runs(tmp_path):
    """google-research/vdm's `if False:` around an augmentation: CPython does not even compile that body, so
    its unseeded draws never run; the same holds for the `else:` of `if True:` and the body of `while 0:`.
    Their findings are notes that say so; the draw before the `if` stays a finding."""
    _scan(tmp_path, "constant", "tensorflow=2.20")
    result = scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20"))
    assert [f.line for f in result.findings if f.record == "tf.random-seeds"] == [7], result.findings
    notes = sorted((f.line, f.note) for f in result.notes if f.record == "tf.random-seeds")
    assert [line for line, _ in notes] == [9, 14, 16], notes
    assert all("never runs" in note for _, note in notes)


def test_a_module_built_and_used_only_under_no_grad(tmp_path):
    """clovaai/deep-text-recognition-benchmark's test(): `criterion = torch.nn.CTCLoss(...)`, then used only
    inside `with torch.no_grad():` (handed to the validation loop there): whatever runs it runs with no
    gradient recorded, so its backward never runs. The training function's criterion, also called outside
    the block, keeps the record."""
    found = _scan(tmp_path, "criterion", "torch=2.11")
    assert sorted((f.line, f.record) for f in found if f.record == "torch.ctc-loss-backward") == [
        (24, "torch.ctc-loss-backward")], found


def test_a_nested_function_a_factory_returns_for_a_data_pipeline_runs_with_no_gradient(tmp_path):
    """google-research/simclr's randbits colab: `get_process_fns` returns its nested `preprocess_train_fn` and
    `preprocess_eval_fn`, the script unpacks them (`train_fn, eval_fn = get_process_fns(3)`) and hands those
    names only to `Dataset.map`: they run in the tf.data pipeline, where no gradient is recorded, and so does
    `crop_and_resize`, which only the mapped function calls. A returned function the code calls itself
    (`augment(...)` under a GradientTape) keeps its record."""
    found = _scan(tmp_path, "factory", "tensorflow=2.20")
    assert sorted((f.line, f.record) for f in found if f.record == "tf.resize-bilinear-backprop") == [
        (20, "tf.resize-bilinear-backprop")], found
