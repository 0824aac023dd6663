"""Code no program runs in a repository that ships a package (the fifth frozen corpus's borisdayma/dalle-mini,
jaywalnut310/vits, hojonathanho/diffusion and salesforce/awd-lstm-lm): the fixtures under
tests/fixtures/reach/ are the shapes of their code, copied to a temporary folder (the kb checkout around the
fixtures is itself a package) and scanned whole."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import Report, scan

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reach"


def _scan(tmp_path: Path, name: str, versions: str = "torch=2.11") -> tuple[Report, Path]:
    where = tmp_path / name
    shutil.copytree(FIXTURES / name, where)
    return scan([str(where)], given=pins.parse_versions(versions)), where


Lines = tuple[list[tuple[str, int]], dict[tuple[str, int], str]]  # (path, line) kept; (path, line) -> note


def _kept_and_notes(tmp_path: Path, name: str, versions: str) -> Lines:
    return _lines(*_scan(tmp_path, name, versions))


def _lines(report: Report, where: Path) -> Lines:
    kept = sorted({(Path(f.path).relative_to(where).as_posix(), f.line) for f in report.findings})
    notes = {(Path(f.path).relative_to(where).as_posix(), f.line): f.note or "" for f in report.notes}
    return kept, notes


def test_a_script_folder_outside_the_installable_package_runs_only_as_far_as_its_scripts_reach(tmp_path):
    """dalle-mini's setup.cfg installs `packages = find:` under `src/` only: `tools/train/` is a script folder
    (RULES F3-1), so a function there that nothing calls never runs (a note), while the package's own
    helper nothing calls keeps its finding (its users may call it)."""
    report, where = _scan(tmp_path, "packaged")
    kept, notes = _lines(report, where)
    assert kept == [("src/pkg/model.py", 7), ("src/pkg/model.py", 11), ("tools/train/matrices.py", 5)], kept
    assert "nothing in this code base calls unused" in notes[("tools/train/matrices.py", 9)]
    assert "no installable package of the code base holds this file" in notes[("tools/train/matrices.py", 9)]


def test_a_setup_py_that_only_builds_an_extension_ships_no_package(tmp_path):
    """vits' monotonic_align/setup.py builds a Cython extension for its own folder and installs no Python
    package: the repository is still a script repository, and a class nothing builds never runs (L1-1)."""
    report, where = _scan(tmp_path, "extension")
    kept, notes = _lines(report, where)
    assert kept == [("modules.py", 13)], kept
    assert "nothing in this code base builds ConvReluNorm" in notes[("modules.py", 7)]


def test_the_files_a_packaging_file_installs(tmp_path):
    """setup.py's find_packages with exclude and py_modules, pyproject's packages.find, a literal package list
    (its subfolders held too); a setup.py that computes its arguments, or relies on automatic discovery, is
    not read: every file counts as held (None), as before scopes were read."""
    from kb.scan import packaging

    files = ["lib/__init__.py", "lib/core.py", "lib/sub/__init__.py", "lib/sub/x.py", "lib/tests/__init__.py",
             "lib/tests/t.py", "tools/run.py", "single.py", "other.py"]

    def held(packaging_files: dict[str, str]) -> set[str] | None:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        for name in [*files, *packaging_files]:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(packaging_files.get(name, ""), encoding="utf-8")
        (root / ".git").mkdir()
        out = packaging.held([str(root)], [str(root / f) for f in files])
        return None if out is None else {Path(p).relative_to(root).as_posix() for p in out}

    assert held({"setup.py": "from setuptools import setup, find_packages\n"
                             "setup(packages=find_packages(exclude=['*.tests']), py_modules=['single'])\n"}) \
        == {"lib/__init__.py", "lib/core.py", "lib/sub/__init__.py", "lib/sub/x.py", "single.py"}
    assert held({"pyproject.toml": "[project]\nname='x'\n[tool.setuptools.packages.find]\ninclude=['lib']\n"}) \
        == {"lib/__init__.py", "lib/core.py"}
    assert held({"setup.py": "from setuptools import setup\nsetup(packages=['lib'])\n"}) \
        == {"lib/__init__.py", "lib/core.py", "lib/sub/__init__.py", "lib/sub/x.py", "lib/tests/__init__.py",
            "lib/tests/t.py"}
    assert held({"pyproject.toml": "[tool.black]\nline-length = 100\n"}) == set()
    assert held({"setup.py": "from setuptools import setup\nsetup(**config)\n"}) is None
    assert held({"setup.py": "from setuptools import setup\nsetup(name='x')\n"}) is None
    assert held({"pyproject.toml": "[project]\nname='x'\n"}) is None


def test_a_method_nothing_calls_of_a_class_whose_ancestors_are_all_the_code_bases_own(tmp_path):
    """hojonathanho/diffusion's `Model(tpu_utils.Model)`: its base is a class of the code base, which calls
    only `train_fn` and `samples_fn`; `interpolate_fn`, named nowhere, never runs (L1-1). A class with a
    framework base (a Keras layer) keeps a method nothing names: the framework may call it as a hook."""
    kept, notes = _kept_and_notes(tmp_path, "ownbase", "tensorflow=2.20")
    assert kept == [("scripts/run_cifar.py", 8), ("scripts/run_cifar.py", 11), ("scripts/run_cifar.py", 19)], kept
    assert "nothing in this code base calls Model.interpolate_fn" in notes[("scripts/run_cifar.py", 14)]


def test_a_jitted_helper_nothing_runs_and_the_helpers_only_it_calls(tmp_path):
    """dalle-mini's symmetric_matrices.py: `@functools.partial(jax.jit, ...)` and `@jax.jit` wrap a function
    without registering it (a decorator that may put it in a table still keeps it), the decorator's line is
    the function's site, and a helper named only by a helper nothing runs never runs either."""
    kept, notes = _kept_and_notes(tmp_path, "decorated", "jax=0.8")
    assert kept == [("helpers.py", 17), ("helpers.py", 19), ("helpers.py", 32)], kept
    assert "calls product (its name appears only in code nothing runs)" in notes[("helpers.py", 7)]
    assert "calls product_concat (its name appears nowhere outside it)" in notes[("helpers.py", 12)]


def test_a_module_built_and_never_called_runs_no_kernel(tmp_path):
    """salesforce/awd-lstm-lm (RULES F4-1): `self.encoder = nn.Embedding(...)` whose weight only a helper's
    `F.embedding` reads (the helper's parameter is only read, never called) in a class whose forward is in
    view, a local `loss_fn = nn.CrossEntropyLoss()` that its function never uses, and a module-level
    `criterion` of a program that parses its command line and that nothing imports (pointer.py), run no
    kernel: notes. A module the forward calls (`self.lookup(words)`) and a criterion a script calls keep their
    findings, and so does the functional call that reads the weight."""
    kept, notes = _kept_and_notes(tmp_path, "holder", "torch=2.11")  # (line 5's resize_ of a weight's new(): not quantized)
    assert kept == [("embed_regularize.py", 7), ("main.py", 10), ("model.py", 10)], kept
    assert "the Embedding built here as self.encoder is never called" in notes[("model.py", 9)]
    assert "the CrossEntropyLoss built here as criterion is never used" in notes[("pointer.py", 11)]
    assert "the CrossEntropyLoss built here as loss_fn is never used" in notes[("pointer.py", 15)]


def test_a_name_in_prose_is_no_use_and_dead_code_keeps_nothing_alive_across_files(tmp_path):
    """williamleif/GraphSAGE (the fourth corpus): `MLP` appears elsewhere only in docstrings and comments
    ("pooling over MLP functions"), so nothing builds it; the metric only MLP.loss calls, in another file,
    never runs either. A name in code (or in a string with no space: a table's key) still counts."""
    kept, notes = _kept_and_notes(tmp_path, "prose", "tensorflow=2.20")
    assert kept == [("metrics.py", 9)], kept
    assert "calls masked_xent (its name appears only in code nothing runs)" in notes[("metrics.py", 5)]


def test_names_are_read_as_pythons_tokenizer_reads_them():
    """The unreached pass reads each name use with one regular expression (Python's tokenizer took a third of a
    large repository's scan): every name token, with `.name` an attribute, is found on its line as the
    tokenizer finds it, after an ellipsis and across relative imports, multi-line strings and line
    continuations; comments and prose are not uses, a string without spaces and an f-string's expressions are. A
    name that `=` binds is no use either: a keyword argument or parameter (`resize(img, helper="x")`, as
    pytorch-semseg's `misc.imresize(..., interp="bicubic")` named no function `interp`: thirtieth corpus) or the
    target of an assignment statement."""
    import io
    import tokenize

    from kb.scan.unreached import _WORD, _names

    text = textwrap.dedent('''\
        """Module prose naming helper and Model."""
        from ..pkg import helper  # a comment naming Model
        from ...up import other
        def stub() -> int: ...
        Model = build(
            x.
            attr, r"raw\\" helper", b'bytes', rb"Model",
        )
        table = {"helper": 1, 'Model': 2}
        s = """a multi-line \\
        string with helper
        """; t = helper.attr + 1.5e3 + 0x1f \\
            + other.Model
        msg = f"{helper(x)} and {Model}"
        resize(img, helper="x", attr = 2, other=other)
        ''')
    wanted = {"helper", "Model", "attr", "other", "x", "build", "stub"}

    expected = []
    previous = ""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for k, token in enumerate(tokens):
        binds = k + 1 < len(tokens) and tokens[k + 1].string == "=" and previous in ("", "(", ",", "\n")  # a keyword or an assignment's target
        if token.type == tokenize.NAME and token.string in wanted and not binds:
            expected.append((token.string, token.start[0], previous == "."))
        elif token.type == tokenize.STRING and not any(c.isspace() for c in token.string):
            expected.extend((w, token.start[0], True) for w in _WORD.findall(token.string) if w in wanted)
        if token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = "\n"
        elif token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.string
    got = _names(text, wanted)
    f_string = {("helper", 14, True), ("Model", 14, True), ("x", 14, True)}  # an f-string's expressions are uses
    assert set(got) - f_string == set(expected), (sorted(set(got) ^ set(expected)))
    assert f_string <= set(got)
    assert not [n for n in got if n[1] in (1, 11)]  # prose: the docstring and the multi-line string


def test_a_function_defined_again_below_never_runs(tmp_path):
    """openai/glow's optim.py defines `adam` twice, with only other functions' definitions between: the second
    binding replaces the first before anything can call it, so the first never runs (a note), while both
    `adamax` and the second `adam` keep their findings (RULES R4)."""
    kept, notes = _kept_and_notes(tmp_path, "shadowed", "tensorflow=2.20")
    assert ("optim.py", 5) not in kept and ("optim.py", 10) in kept and ("optim.py", 15) in kept, kept
    assert "defined again" in notes[("optim.py", 5)], notes


def test_a_method_nothing_calls_of_a_class_whose_only_framework_base_is_a_data_container(tmp_path):
    """kvfrans/jax-diffusion-transformer's `TrainState(flax.struct.PyTreeNode)`: a PyTreeNode (like a NamedTuple
    or abc.ABC) is a container that calls none of its subclass's methods, so `apply_loss_fn`, named nowhere, never
    runs, whichever way the base is spelled; the methods the script calls keep their findings."""
    report, where = _scan(tmp_path, "pytree", "jax=0.8")
    kept, _ = _lines(report, where)
    assert kept == [("train.py", 9), ("utils/state.py", 15), ("utils/state.py", 22)], kept
    assert any("nothing in this code base calls State.apply_loss_fn" in (f.note or "") for f in report.notes
               if f.line == 11), report.notes


def test_a_keras_layer_built_and_never_called_draws_no_weights(tmp_path):
    """google-research/simclr's distillation colab (RULES F4-1, Y1-1 of the seventh frozen corpus): a Keras
    layer built in a model's `__init__` that its `call` never calls is never built, so it draws no initial
    weights; in a notebook's cells as in a script. The layer `call` runs keeps its finding, and a class's own
    `self.layers` list (simclr's resnet.py) is not Keras's walk of a model's layers. Nothing imports a
    notebook: another notebook's `self.head` (simclr's finetuning colab) is not a use of this one's."""
    report, where = _scan(tmp_path, "kerasholder", "tensorflow=2.20")
    kept, _ = _lines(report, where)
    # the fits of finetune.ipynb cell 3 and train.py:17 ask for no workers (fit-runs-no-workers): no finding
    assert kept == [("blocks.py", 9), ("distill.ipynb", 4), ("finetune.ipynb", 4), ("train.py", 7)], kept
    notes = {(Path(f.path).relative_to(where).as_posix(), f.line, f.note) for f in report.notes}
    assert any(n[:2] == ("distill.ipynb", 5) and "the Dense built here as self.head is never used" in (n[2] or "")
               for n in notes), notes
    assert any(n[:2] == ("train.py", 8) and "the Dense built here as self.spare is never used" in (n[2] or "")
               for n in notes), notes


def test_a_module_imported_by_a_dotted_name_string_runs_only_the_functions_some_string_or_code_names(tmp_path):
    """NVlabs/stylegan's train.py picks its losses by `func_name='training.loss.D_logistic_simplegp'` strings that
    dnnlib's call_func_by_name imports with importlib: a module-level function of training/loss.py that no string
    and no code names never runs (a note). Where a string builds the name at run time (`"training.misc." + name`),
    any function of that module may run: its findings stay."""
    report, where = _scan(tmp_path, "by_name", "tensorflow=2.21")
    kept, notes = _lines(report, where)
    assert kept == [("training/loss.py", 5), ("training/misc.py", 5), ("training/misc.py", 9)], kept
    assert "nothing in this code base calls G_unused" in notes[("training/loss.py", 9)]


def _backward_lines(tmp_path: Path, extra: dict[str, str]) -> Lines:
    where = tmp_path / "inference_only"
    shutil.copytree(FIXTURES / "inference_only", where)
    for name, text in extra.items():
        (where / name).write_text(textwrap.dedent(text))
    report = scan([str(where)], given=pins.parse_versions("tensorflow=2.20,jax=0.8"))
    backward = ("jax.gather-backward", "tf.gather-backprop")
    kept = sorted({(Path(f.path).relative_to(where).as_posix(), f.line) for f in report.findings if f.record in backward})
    notes = {(Path(f.path).relative_to(where).as_posix(), f.line): f.note or "" for f in report.notes
             if f.record in backward}
    return kept, notes


def test_a_script_repository_in_which_no_code_differentiates_runs_no_backward_pass(tmp_path):
    """maskgit (RULES Z4-1) and gpt-2 ship only sampling code: no file calls jax.grad, tf.gradients, an
    optimizer or .backward(), so no program runs a backward pass and each framework's records of that pass
    are notes; a training script keeps them in the files it runs (a file only the sampling program runs keeps a
    note), and an installable package that its users may train (RULES R4, T7) keeps them all."""
    kept, notes = _backward_lines(tmp_path, {})
    assert kept == [], kept
    assert set(notes) == {("net/layers.py", 7), ("net/lm.py", 7)}, notes
    assert all("no code in this code base differentiates" in why for why in notes.values()), notes
    dead_penalty = {"net/losses.py": """\
        import jax
        def squared(x):
            return x * x
        def penalty(f, x):
            out, pull = jax.vjp(f, x)
            return pull(out)
        """, "sample.py": "from net.losses import squared\n" + (FIXTURES / "inference_only" / "sample.py").read_text()}
    assert _backward_lines(tmp_path / "dead", dead_penalty)[0] == []  # a gradient helper nothing calls (maskgit's)
    trained = {"train.py": """\
        import jax
        from net.layers import upsample
        def loss(x):
            return upsample(x).sum()
        if __name__ == "__main__":
            jax.grad(loss)(1.0)
        """}
    # the training script differentiates through net/layers.py; net/lm.py only the sampling program runs (BlinkDL/
    # RWKV-LM's run scripts, the forty-ninth corpus): its backward records are notes that say so
    kept, notes = _backward_lines(tmp_path / "trained", trained)
    assert kept == [("net/layers.py", 7)], kept
    assert "no program that runs this file differentiates" in notes[("net/lm.py", 7)], notes
    vjp = {"train.py": "import jax\nfrom net.layers import upsample\nout, pull = jax.vjp(upsample, 1.0)\n"}
    assert _backward_lines(tmp_path / "vjp", vjp)[0] == [("net/layers.py", 7)]
    both = {"train.py": "import jax\nfrom net.layers import upsample\nfrom net.lm import model\njax.grad(upsample)(1.0)\n"}
    assert _backward_lines(tmp_path / "both", both)[0] == [("net/layers.py", 7), ("net/lm.py", 7)]
    no_program = {"sample.py": "from net.layers import upsample\ndef main(x):\n    return upsample(x)\n"}
    assert _backward_lines(tmp_path / "library", no_program)[0] == [("net/layers.py", 7), ("net/lm.py", 7)]
    packaged = {"setup.py": "import setuptools\nsetuptools.setup(name='net', packages=['net'])\n"}
    assert _backward_lines(tmp_path / "packaged", packaged)[0] == [("net/layers.py", 7), ("net/lm.py", 7)]
    # Keras 2's fit_generator trains (qqwweee/keras-yolo3, the ninth corpus, after its measure)
    generator = {"train.py": "from net.layers import upsample\nmodel = upsample(1.0)\nmodel.fit_generator(iter([]), epochs=1)\n"}
    assert _backward_lines(tmp_path / "generator", generator)[0] == [("net/layers.py", 7)]


def test_a_jax_gather_from_a_table_built_from_constants_runs_no_backward(tmp_path):
    """EasyLM's rotary table (RULES R4): made by jnp.arange and what jax.numpy makes of it, in the function
    itself, so no gradient reaches it whatever the integer positions; a gather from a parameter, or from a
    table filled with a value that may carry a gradient (`jnp.full(shape, scale)`), keeps its finding."""
    where = FIXTURES / "constant_gather" / "rope.py"
    report = scan([str(where)], given=pins.parse_versions("jax=0.8"))
    lines = where.read_text().splitlines()
    kept = sorted(f.line for f in report.findings if f.record == "jax.gather-backward")
    assert kept == [n for n, line in enumerate(lines, 1) if line.endswith("# kept")], kept


def test_a_method_only_self_calls_never_runs_when_no_class_that_finds_it_is_built(tmp_path):
    """williamleif/GraphSAGE (the fourth corpus): `self.build()` runs the build of the object's own class.
    Model.build is inherited only by MLP, which nothing builds, and GeneralizedModel.build is overridden by
    every subclass the code base builds (in this file and in another), while GeneralizedModel itself is named
    only as a base, in `super(...)` and in `GeneralizedModel.__init__(self)`: both never run (notes). A
    method a built subclass inherits (Trainer.step, through Inherits) and one of a class built from a table
    (Tabled) keep their findings, and so does the overriding build that runs."""
    kept, notes = _kept_and_notes(tmp_path, "dispatch", "tensorflow=2.20")
    assert kept == [("models.py", 44), ("models.py", 54), ("models.py", 67), ("supervised.py", 12)], kept
    assert "Model.build is called only as self.build" in notes[("models.py", 13)]
    assert "a subclass that inherits it (MLP)" in notes[("models.py", 13)]
    assert "builds GeneralizedModel (overridden in SampleAndAggregate)" in notes[("models.py", 31)]


def test_a_method_of_a_class_a_package_exports_keeps_its_finding(tmp_path):
    """A class that a package's __init__.py imports is exported for its users' own code, which may build it:
    its method that only `self.build()` names, overridden by the one subclass the code base builds, keeps
    its finding."""
    kept, _ = _kept_and_notes(tmp_path, "dispatch_export", "tensorflow=2.20")
    assert kept == [("lib/models.py", 10), ("lib/models.py", 15)], kept


def test_graph_ops_stored_and_never_read_never_run(tmp_path):
    """tkipf/gae (the fifth corpus): `self.grads_vars = optimizer.compute_gradients(cost)` next to the `minimize`
    that the session runs. In a graph program (placeholders, a Session) ops run only when fetched: a result
    whose name appears nowhere else never runs (a note); the gradients the session fetches and the minimize
    op keep their findings. An attribute written in two classes and read by neither never runs either. In a code base that may run eagerly or in a tf.function, nothing is claimed."""
    report, where = _scan(tmp_path, "unfetched", "tensorflow=2.20")
    kept, notes = _lines(report, where)
    assert kept == [("optimizer.py", 9), ("optimizer.py", 11)], kept
    assert "stored as self.grads_vars, which nothing in this code base reads" in notes[("optimizer.py", 10)]
    assert "stored as self.unused_op" in notes[("optimizer.py", 12)]
    assert "stored as self.grads_vars" in notes[("optimizer.py", 17)]  # written in two classes, read by neither
    train = where / "train.py"
    train.write_text(train.read_text() + "\nstep = tf.function(lambda: opt.opt_op)\n")
    kept, _ = _lines(scan([str(where)], given=pins.parse_versions("tensorflow=2.20")), where)
    assert kept == [("optimizer.py", n) for n in (9, 10, 11, 12, 17)], kept


def test_graph_ops_are_kept_where_a_file_of_the_code_base_cannot_be_read(tmp_path):
    """kang205/SASRec (the eighth corpus): the training loop that fetches `model.train_op` is Python 2 (a file
    the scan cannot parse): its reads are unknown, so no stored graph op is claimed unfetched."""
    where = tmp_path / "unfetched"
    shutil.copytree(FIXTURES / "unfetched", where)
    (where / "loop.py").write_text("from train import opt, sess\nprint sess.run([opt.grads_vars, opt.unused_op])\n")
    kept, _ = _lines(scan([str(where)], given=pins.parse_versions("tensorflow=2.20")), where)
    assert kept == [("optimizer.py", n) for n in (9, 10, 11, 12, 17)], kept


def test_a_keras_layer_whose_drawn_weights_every_program_loads_over_draws_nothing_that_is_read(tmp_path):
    """google-research/big_transfer's bit_tf2 (RULES X3-1 of the sixth frozen corpus): the unseeded initial
    weights of the convolutions of a model (held through a layer class and a helper method) are overwritten
    whole by `model.load_weights(...)` right after `model.build(...)` in the only program that builds it: a
    note. The Dropout draws at every call (kept); a load under `if args.resume:` or with `skip_mismatch=True`
    keeps the finding."""
    report, where = _scan(tmp_path, "kerasloaded", "tensorflow=2.20")
    kept, notes = _lines(report, where)
    unseeded = sorted({(Path(f.path).relative_to(where).as_posix(), f.line) for f in report.findings
                       if f.record == "keras.unseeded-random"})
    assert unseeded == [("models.py", 8), ("models.py", 30), ("models.py", 39)], unseeded
    for line in (7, 18):
        assert "loads a whole set of weights into it" in notes[("models.py", line)], notes
