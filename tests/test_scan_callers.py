"""The values every caller passes (kb/scan/callers.py): a parameter of a function or class of the code base
whose every call, across files, passes a literal holds one of those values only. Causes of the tuning
corpora's false alarms (facebookresearch/detr's interpolate wrapper, facebookresearch/dlrm's QREmbeddingBag,
ermongroup/ddim's ResnetBlock); each fixture is a folder of tests/fixtures/scancallers/, scanned as a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scancallers"


def _scan(tmp_path: Path, name: str) -> list:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    report = scan([str(root)], given=pins.parse_versions("torch=2.11"))
    return [*report.findings, *report.notes]


def _records(found: list, file: str, line: int) -> set[str]:
    return {f.record for f in found if Path(f.path).name == file and f.line == line and not f.note}


def test_a_wrappers_mode_is_what_its_callers_pass(tmp_path):
    """detr's util/misc.py `interpolate(input, size, scale_factor, mode="nearest")` hands `mode` on to
    F.interpolate; every caller, in other files, passes "nearest" or "bilinear". The scan asked for the call
    with mode unknown and reported the bicubic, linear, trilinear, area and antialias records (5 false alarms,
    RULES R2); it now asks with those two modes: the bilinear record stays. A wrapper handed on as a value
    (`self.up = resize`) keeps every mode's record: its callers are not all seen."""
    found = _scan(tmp_path, "wrapper")
    wrapped = _records(found, "misc.py", 7)
    assert any("bilinear" in r for r in wrapped), wrapped
    assert not wrapped & {"torch.interpolate-bicubic-backward", "torch.interpolate-linear-backward",
                          "torch.interpolate-trilinear-backward", "torch.interpolate-bilinear-antialias-backward",
                          "torch.adaptive-avg-pool-backward"}, wrapped
    assert any("bicubic" in r for r in _records(found, "misc.py", 13)), found


def test_a_constructors_parameter_is_what_every_construction_passes(tmp_path):
    """dlrm's QREmbeddingBag reads `mode=self.mode`, set from the constructor's parameter, and the code base's
    only construction passes mode="sum": the max-mode record of embedding_bag was reported (RULES R4). ddim's
    ResnetBlock builds its 3x3 shortcut under `if self.use_conv_shortcut:`, and no construction passes
    conv_shortcut=True: that convolution never runs (a note that says why). Both stay findings when the
    classes are an installable package's (a library's users may pass anything: RULES L4-3)."""
    found = _scan(tmp_path, "constructor")
    assert not any("max" in r for r in _records(found, "layers.py", 15)), found
    assert not _records(found, "layers.py", 27), found
    notes = [f.note for f in found if Path(f.path).name == "layers.py" and f.line == 27 and f.note]
    assert notes and "conv_shortcut as False" in notes[0], notes
    assert _records(found, "layers.py", 25), "the 1x1 convolution every block builds stays a finding"
    packaged = _scan(tmp_path, "packaged")
    assert any("max" in r for r in _records(packaged, "layers.py", 15)), packaged
    assert _records(packaged, "layers.py", 27), packaged


def test_a_branch_no_callers_value_takes_never_runs(tmp_path):
    """vdm's utils.dist(fn, accumulate) reaches jax.lax.pmean only under `elif accumulate == 'mean'`, and its
    only caller passes accumulate='concat' (through `import vdm.utils as utils`, a name the checkout's folder
    does not carry); dalle-mini's shampoo runs its LOBPCG branch only under `if lobpcg_topk_precondition > 0`,
    left at 0 by its only caller. Both were reported (RULES R4, F3-1): each is now a note that says why. So is
    a branch on a parameter its only caller passes on from a parameter of its own (improved-diffusion's
    `avg_pool_nd(dims, ...)` under `dims == 3`, reached from a class whose dims is left at 2)."""
    found = _scan(tmp_path, "branches")
    assert not _records(found, "utils.py", 9) and not _records(found, "utils.py", 13), found
    notes = {f.line: f.note for f in found if Path(f.path).name == "utils.py" and f.note}
    assert "accumulate as 'concat'" in notes.get(9, ""), notes
    assert "topk as 0" in notes.get(13, ""), notes
    assert not _records(found, "utils.py", 20) and "dims as 2" in notes.get(20, ""), notes


def _scan_tf(tmp_path: Path, name: str) -> list:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    report = scan([str(root)], given=pins.parse_versions("tensorflow=2.20"))
    return [*report.findings, *report.notes]


def _cell_records(found: list, file: str, line: int) -> set[str]:
    return {f.record for f in found if Path(f.path).name.split("#")[0] == file and f.line == line and not f.note}


def test_helpers_reached_only_through_a_branch_no_caller_takes_never_run(tmp_path):
    """google-research/simclr's preprocessing: `prepare(image, training=False, distort=True)` runs
    `train_view(image, distort)` only under `if training:`, and the script calls it only with training=False.
    The `if` was a note, but the draws of the helpers it alone calls (`jitter`, the random flip) stayed findings:
    a function named only in code that never runs never runs itself (RULES R4, L1-1)."""
    found = _scan_tf(tmp_path, "helpers")
    assert not _records(found, "evaluate.py", 6) and not _records(found, "evaluate.py", 12), found
    notes = [f.note for f in found if Path(f.path).name == "evaluate.py" and f.line == 12 and f.note]
    assert notes and "train_view" in notes[0], notes


def test_a_notebooks_cells_are_one_program_for_the_values_passed(tmp_path):
    """simclr's colabs define the preprocessing module in one cell and call it in a later one, only with
    `training=False` (evaluate.ipynb), or with `training=True, distort=False` (distill.ipynb): the draws of the
    turned-off branches never run there. A notebook's calls were never read as the callers (RULES R4). Where a
    cell passes the function on as a value (`ds.map(prepare)`, train.ipynb), every draw stays a finding."""
    found = _scan_tf(tmp_path, "notebook")
    assert not _cell_records(found, "evaluate.ipynb", 2) and not _cell_records(found, "evaluate.ipynb", 8), found
    assert not _cell_records(found, "distill.ipynb", 2), found
    assert _cell_records(found, "distill.ipynb", 8), "the flip runs in training whatever distort is"
    assert _cell_records(found, "train.ipynb", 2) and _cell_records(found, "train.ipynb", 8), found


def test_a_partial_of_a_function_is_a_call_with_the_arguments_it_binds(tmp_path):
    """simclr's `functools.partial(color_jitter, strength=strength, impl=impl)` named color_jitter as a value,
    so its `impl` (and that of the functions it calls) was unknown and the `impl == 'simclrv1'` branch of
    random_brightness a finding (RULES L1-1: every caller keeps impl='simclrv2'). A partial now counts as a
    call passing what it binds; a parameter it leaves open (`contrast`'s `upper`, given later) stays unknown."""
    found = _scan_tf(tmp_path, "partial")
    assert not _records(found, "augment.py", 11), found
    assert _records(found, "augment.py", 8), "the v2 draw runs"
    assert _records(found, "augment.py", 17), "upper is given where the partial is called: unknown"


def test_a_parameter_passed_on_six_calls_deep_keeps_its_callers_values(tmp_path):
    """simclr hands `impl` from preprocess_image down six functions to random_brightness (through a partial):
    the values were followed four calls deep only, so the `impl == 'simclrv1'` branch stayed a finding."""
    found = _scan_tf(tmp_path, "deep")
    assert not _records(found, "chain.py", 6), found
    notes = [f.note for f in found if Path(f.path).name == "chain.py" and f.line == 6 and f.note]
    assert notes and "impl as 'v2'" in notes[0], notes


def test_a_draw_only_compared_with_a_bound_it_never_crosses_reaches_no_result(tmp_path):
    """simclr's `random_apply(func, p, x)` draws `tf.random.uniform([], 0, 1)` only to test `< p`, and in the
    distillation colabs every call that runs passes p=1.0 (the p=0.8 calls are under `if color_distort:`, which
    no caller takes): the test is always true, the draw reaches no result (RULES Y1-2). A call in code that never
    runs passed its value before; where a running call passes p=0.8 the draw stays a finding."""
    found = _scan_tf(tmp_path, "threshold")
    assert not _records(found, "augment.py", 6), found
    notes = [f.note for f in found if Path(f.path).name == "augment.py" and f.line == 6 and f.note]
    assert notes and "1.0" in notes[0], notes
    assert _records(_scan_tf(tmp_path, "threshold_open"), "augment.py", 6)


def test_the_code_after_a_guard_every_callers_value_takes_never_runs(tmp_path):
    """google-research/simclr's dropblock begins `if not is_training or keep_prob is None: return net`, and no
    caller passes keep_prob: the draws and the max pool after that guard were reported (RULES R4). A branch
    that every value takes and that ends in `return` (or `raise`) leaves the statements after it in its block
    unrun, and an `or` with one operand always true is true: they are notes that say why, and a helper called
    only there never runs either. Where a caller passes another value (resize's mode) the finding stays."""
    found = _scan(tmp_path, "guard")
    assert not _records(found, "blocks.py", 13) and not _records(found, "blocks.py", 6), found
    notes = {f.line: f.note for f in found if Path(f.path).name == "blocks.py" and f.note}
    assert "never runs" in notes.get(13, "") and "keep_prob as None" in notes.get(13, ""), notes
    assert _records(found, "blocks.py", 21), "a caller passes mode='bicubic': the interpolation may run"


def test_a_parameter_relayed_by_a_class_of_another_file_that_holds_no_recorded_call(tmp_path):
    """openai/consistency_models' `conv_nd(dims, ...)` / `avg_pool_nd(dims, ...)` (cm/nn.py) are called from
    cm/unet.py's Downsample, which passes on its own `dims` (left at 2 by UNetModel) and holds no recorded call
    itself: it was no target, so its dims was unknown there and the Conv3d and AvgPool3d branches were reported
    (RULES R4). A function or class that calls a target of another file now is one, so the values its callers
    give are followed through it; a literal 1 keeps the Conv1d branch."""
    found = _scan(tmp_path, "relayed")
    assert not _records(found, "nn.py", 11) and not _records(found, "nn.py", 19), found
    notes = {f.line: f.note for f in found if Path(f.path).name == "nn.py" and f.note}
    assert "dims as" in notes.get(11, "") and "dims as 2" in notes.get(19, ""), notes
    assert _records(found, "nn.py", 7) and _records(found, "nn.py", 9), "conv_nd(1, ...) and dims=2 run"


def test_a_method_called_only_as_self_method_takes_its_own_classs_values(tmp_path):
    """Leavingseason/xDeepFM's `_build_extreme_FM(..., bias=False)` adds `tf.nn.bias_add` only under `if bias:`,
    and its only call, `self._build_extreme_FM(..., bias=False)` in its own class, turns it off: the bias_add
    was reported (RULES R4). A method called only as `self.m(...)` within classes defining m takes the values
    those calls pass; one called otherwise too (`obj.helper(..., bias=True)`) keeps its findings, and so do a
    branch its calls do take and a method of a class with a framework's base (Keras calls `call` itself)."""
    found = _scan_tf(tmp_path, "method")
    assert not _records(found, "model.py", 20), found
    notes = {f.line: f.note for f in found if Path(f.path).name == "model.py" and f.note}
    assert "bias as False" in notes.get(20, ""), notes
    assert _records(found, "model.py", 33), "its only call passes bias=True"
    assert _records(found, "model.py", 38), "called from outside its class with bias=True"
    assert _records(found, "model.py", 47), "a Keras layer's call: the framework calls it too"


def test_a_methods_keyword_no_call_passes_holds_its_default(tmp_path):
    """rosinality/stylegan2-pytorch's lpips: `DistModel.initialize(..., is_train=False)` builds the ranking
    head (BCERankingLoss, whose Dist2LogitLayer holds three nn.Conv2d) only `if self.is_train:`, and its only
    call, `self.model.initialize(model=..., spatial=...)` on another object, never passes is_train: the
    convolutions were reported (3 false alarms, RULES R4). A method of the code base's own classes whose every
    use in the code base is a call `<anything>.m(...)` (or `Base.m(self, ...)`, or an `inspect` argument)
    takes the values those calls pass; a keyword passed by position (`tuner.configure(True)`) keeps its
    branch."""
    found = _scan(tmp_path, "initialize")
    assert not _records(found, "dist_model.py", 18), found
    notes = {(Path(f.path).name, f.line): f.note for f in found if f.note}
    assert "is_train as False" in notes.get(("dist_model.py", 18), ""), notes
    assert not _records(found, "networks.py", 7), "Ranker is built only in the branch that never runs"
    assert _records(found, "dist_model.py", 30), "configure(True) passes is_train by position"
    assert _records(found, "networks.py", 16), "Metric is built on every call"


def _scan_jax(tmp_path: Path, name: str) -> list:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    report = scan([str(root)], given=pins.parse_versions("jax=0.4.30"))
    return [*report.findings, *report.notes]


def test_a_function_that_calls_a_target_through_its_modules_name_is_a_relay(tmp_path):
    """google/mipnerf's `integrated_pos_enc(x, min_deg, max_deg, diag=True)` calls `math.matmul` (a helper of
    another file, reached through the module's imported name) only under `if diag:`'s else branch, and its only
    caller leaves diag at True. It held no recorded call and called the helper by no imported name, so it was no
    target: its branch was read as run and the helper's matmul was reported (RULES R4, P4-2). A call spelled
    `module.f` now makes its caller a relay as `f` does: the else branch never runs, nor does the helper."""
    found = _scan_jax(tmp_path, "modulecall")
    assert not _records(found, "helpers.py", 6), found
    notes = [f.note for f in found if Path(f.path).name == "helpers.py" and f.line == 6 and f.note]
    assert notes and "matmul" in notes[0], notes


def test_a_subclass_without_its_own_constructor_is_built_as_its_base(tmp_path):
    """google-deepmind/emergent_in_context_learning's Attention builds RelativePositionEmbedding only under
    `if self._relative_pos_emb:`, and the blocks build it only through its subclasses (SelfAttention,
    CausalSelfAttention: no `__init__` of their own), passing on their own `self._relative_pos_emb`, left at
    False. Attention was named as a base (no target), its heirs were no targets (no constructor), and the same
    attribute name set in each block's constructor made it "set more than once": the branch was read as run
    (RULES R4). A construction of an heir is now one of its base, and `self.<attr> =` in a class of another
    family is not counted: the branch never runs."""
    found = _scan(tmp_path, "inherited")
    assert not _records(found, "blocks.py", 13), found
    notes = [f.note for f in found if Path(f.path).name == "blocks.py" and f.line == 13 and f.note]
    assert notes and "relative as False" in notes[0], notes


def test_a_package_that_exports_nothing_takes_its_callers_values(tmp_path):
    """eriklindernoren/PyTorch-YOLOv3's `pytorchyolo/` (built by poetry, every `__init__.py` empty) builds its
    Upsample only as `Upsample(scale_factor=..., mode="nearest")`, which reads `mode=self.mode`: the callers
    pass read only the files no installable package holds, so every interpolation mode was reported (RULES
    L4-3, P4-2: a package that exports nothing offers no class whose attributes its users set). Its modules
    now take their callers' values; a package whose `__init__` exports the class keeps every mode."""
    found = _scan(tmp_path, "quietpackage")
    assert not _records(found, "models.py", 12), found
    assert any("bilinear" in r for r in _records(found, "layers.py", 12)), found


def test_a_call_spreading_a_dict_bound_once_passes_its_keywords(tmp_path):
    """Atomu2014/product-nets builds each model as `LR(**lr_params)` from a dict display bound once and only
    printed besides, every one with `'opt_algo': 'gd'`, handed on to `utils.get_optimizer`, whose other
    optimizers' branches (`if opt_algo == 'adam'`, ...) were reported (RULES R4). A `**name` of such a dict
    now passes its keywords; a dict changed after it is built (`params["mode"] = ...`) passes nothing known."""
    found = _scan(tmp_path, "spread")
    assert not _records(found, "ops.py", 6), found
    notes = [f.note for f in found if Path(f.path).name == "ops.py" and f.line == 6 and f.note]
    assert notes and "mode as 'nearest'" in notes[0], notes
    train = tmp_path / "spread" / "train.py"
    train.write_text(train.read_text().replace("print(params)", 'params["mode"] = "bilinear"'))
    report = scan([str(tmp_path / "spread")], given=pins.parse_versions("torch=2.11"))
    assert _records([*report.findings, *report.notes], "ops.py", 6), report.findings


def test_a_construction_through_a_packages_reexport_is_a_caller(tmp_path):
    """THUDM/GCC (fifty-first corpus, 1 miss): `from gcc.models import GraphEncoder`, which `gcc/models/__init__.py`
    imports from `.graph_encoder`, then `GraphEncoder(..., degree_input=True)`: that construction is a caller, so the
    `if degree_input:` branch runs and its embedding is a finding, not a note that only the file's own `__main__`
    construction (which leaves it False) calls it."""
    found = _scan(tmp_path, "reexported")
    assert _records(found, "enc.py", 9) == {"torch.embedding-backward"}, found
