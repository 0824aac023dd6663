"""kb scan on whole repositories: where a switch holds (entry points and what they run),
method receivers and arity, what the code rules out, and the spellings that reach a record."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from kb.query import index
from kb.scan import pins, resolve, switches
from kb.scan.report_text import line, summary_lines
from kb.scan.run import scan, targets


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _scan(root: Path, versions: str = "torch=2.11", paths: list[str] | None = None):
    return scan(paths or [str(root)], given=pins.parse_versions(versions))


def _found(report, root: Path) -> set[tuple[str, int, str]]:
    return {(Path(f.path).relative_to(root).as_posix(), f.line, f.record) for f in report.findings}


REPO = {
    "models/__init__.py": "",
    "models/net.py": """\
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
        """,
    "train.py": """\
        import torch
        from models.net import Net

        def main():
            model = Net().cuda()  # a GPU program: a program that never uses one runs its records on the CPU
            loss = model(torch.zeros(1, 3, 8, 8)).sum()
            loss.backward()

        if __name__ == "__main__":
            main()
        """,
    # a one-off checkpoint conversion: sets the switch at module level, runs nothing of train.py
    "convert.py": """\
        import torch
        from models.net import Net

        torch.use_deterministic_algorithms(True)

        if __name__ == "__main__":
            torch.save(Net().state_dict(), "net.pt")
        """,
}


def test_a_conversion_script_switch_does_not_cover_the_training_script(tmp_path):
    _write(tmp_path, REPO)
    report = _scan(tmp_path)
    assert ("models/net.py", 6, "torch.cudnn-convolution") in _found(report, tmp_path)
    conv = next(f for f in report.findings if f.record == "torch.cudnn-convolution")
    assert conv.level == "nondeterministic"
    assert "PT_DET does not hold here" in conv.fix and "convert.py" in conv.fix and "train.py" in conv.fix
    text = "\n".join(summary_lines(report, index()["solutions"]))
    assert f"{tmp_path / 'convert.py'} (__main__ block): applies PT_DET ({tmp_path / 'convert.py'}:4)" in text
    assert "set no fix, so the findings in the files they run stay" in text and "train.py" in text
    # the whole code base's table says the switch holds only in one run
    assert report.applied["PT_DET"].condition.startswith("it runs only in the run of")


def test_a_switch_in_a_function_holds_where_an_entry_point_calls_it(tmp_path):
    files = dict(REPO)
    del files["convert.py"]
    files["utils.py"] = """\
        import torch

        def seed_everything():
            torch.use_deterministic_algorithms(True)
        """
    train = textwrap.dedent(files["train.py"]).replace("from models.net import Net", "from models.net import Net\nimport utils")
    files["train.py"] = train.replace("    model = Net()", "    utils.seed_everything()\n    model = Net()")
    _write(tmp_path, files)
    assert _found(_scan(tmp_path), tmp_path) == set()  # PT_DET holds in train.py's run, the only one
    # the same helper, never called: the switch is conditional and the finding stays
    (tmp_path / "train.py").write_text(files["train.py"].replace("    utils.seed_everything()\n", ""))
    report = _scan(tmp_path)
    assert ("models/net.py", 6, "torch.cudnn-convolution") in _found(report, tmp_path)
    assert report.applied["PT_DET"].condition is not None


def test_a_pytest_helper_switch_is_conditional(tmp_path):
    _write(tmp_path, {
        "lib/conv.py": "import torch.nn as nn\nlayer = nn.Conv2d(3, 3, 3)\n",
        "tests/helpers.py": "import torch\n\ndef deterministic():\n    torch.backends.cudnn.deterministic = True\n",
    })
    report = _scan(tmp_path)
    assert ("lib/conv.py", 2, "torch.cudnn-convolution") in _found(report, tmp_path)
    assert "deterministic() is called" in report.applied["PT_CUDNN_DET"].condition


def test_a_switch_in_an_imported_module_holds(tmp_path):
    _write(tmp_path, {
        "setup_det.py": "import torch\ntorch.use_deterministic_algorithms(True)\n",
        "train.py": "import setup_det\nimport torch.nn as nn\nlayer = nn.Conv2d(3, 3, 3)\nif __name__ == '__main__':\n    pass\n",
    })
    assert _found(_scan(tmp_path), tmp_path) == set()


def test_console_scripts_are_entry_points(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n[project.scripts]\nx-train = "pkg.cli:main"\n',
        "pkg/__init__.py": "",
        "pkg/cli.py": "import torch\nfrom pkg import model\n\ndef main():\n    torch.use_deterministic_algorithms(True)\n",
        "pkg/model.py": "import torch.nn as nn\nlayer = nn.Conv2d(3, 3, 3)\n",
    })
    report = _scan(tmp_path)
    assert _found(report, tmp_path) == set()
    assert any(r.why == "console script x-train" for r in report.runs)


def _calls(source: str) -> list[resolve.Call]:
    wanted, methods, _ = targets(index())
    return list(resolve.analyse(textwrap.dedent(source), "t.py", wanted, methods, switches.WATCHED).calls)


def _records(tmp_path: Path, source: str, versions: str = "torch=2.11") -> list[tuple[int, str, str]]:
    (tmp_path / "t.py").write_text(textwrap.dedent(source))
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions(versions))
    return [(f.line, f.record, f.level) for f in (*report.findings, *report.notes)]


def test_receivers_and_arity(tmp_path):
    found = _records(tmp_path, """\
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = nn.Parameter(torch.zeros(4))

            def forward(self, x, i, v):
                x.index_add_(0, i, v)
                return self.table.gather(0, i)

        def other(t, i, v, queue, accelerator):
            t.index_add_(0, i, v)
            accelerator.gather(t)
            queue.put(t)
            store.put(t, block=True)

        def typed(x: torch.Tensor, i, v):
            x.index_add_(0, i, v)
        """)
    assert (10, "torch.index-add", "nondeterministic") in found  # an argument of forward
    assert (11, "torch.gather-backward", "nondeterministic") in found  # a module's parameter
    assert (14, "torch.index-add", "possible") in found  # nothing says what t is
    assert (20, "torch.index-add", "nondeterministic") in found  # annotated
    assert not [f for f in found if f[0] in (15, 16, 17)]  # gather(x) and put(x) cannot be the tensor methods
    (tmp_path / "t.py").write_text("import torch\ndef f(t, i, v):\n    t.index_add_(0, i, v)\n")
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions("torch=2.11"))
    assert "t is not visibly a torch.Tensor" in report.findings[0].answer


def test_jax_at_updates():
    calls = _calls("""\
        import jax.numpy as jnp
        x = jnp.zeros(3)
        a = x.at[i].set(1.0)
        b = x.at[i].get()
        c = x.at[i].min(y)
        d = x.at[i].max(y)
        e = x.at[i].add(y)
        f = x.at[i].multiply(y)
        """)
    at = {c.line: dict(c.extra) for c in calls if c.op.endswith(".at")}
    assert sorted(at) == [7, 8]  # .get/.min/.max are no findings; .set(1.0) writes one value: any order
    assert [at[n]["at.method"] for n in (7, 8)] == ["add", "multiply"]


def test_jax_at_set_only_where_writes_can_meet():
    calls = _calls("""\
        import jax.numpy as jnp
        x = jnp.zeros(3)
        a = x.at[ids].set(v)
        b = x.at[:, 0].set(v)
        c = x.at[-1, ..., None].set(v)
        d = x.at[ids].set(-jnp.inf)
        e = x.at[ids].set(-1e9)
        f = x.at[ids, 2].set(v, unique_indices=True)
        """)
    at = {c.line: dict(c.extra) for c in calls if c.op.endswith(".at")}
    assert sorted(at) == [3, 6, 8]  # ints/slices name each element once; a literal value is one value
    assert at[3] == {"at.method": "set", "unique_indices": False}  # left out: JAX's default
    assert at[8]["at.method"] == "set" and "unique_indices" not in at[8]  # stated: a keyword argument


def test_jax_at_set_and_add_answer_apart(tmp_path):
    found = _records(tmp_path, """\
        import jax.numpy as jnp
        x = jnp.zeros(3)
        a = x.at[i].set(v)
        b = x.at[i].add(v)
        c = x.at[i].set(v, unique_indices=True)
        """, versions="jax=0.11.2")
    # .set depends on indices the code does not show: a note, not a finding; .add is a finding
    assert set(found) == {(3, "jax.at-set-repeated-indices", "note"), (4, "jax.scatter-add", "possible"),
                          (5, "jax.at-set-unique-indices-promise", "note")}


def test_torchvision_roi_ops(tmp_path):
    found = _records(tmp_path, """\
        import torch
        from torchvision.ops import roi_align, RoIPool
        import torchvision

        def head(feat, boxes):
            a = roi_align(feat, boxes, output_size=7, sampling_ratio=2, aligned=True)
            b = torchvision.ops.roi_align(feat, boxes, 7)
            return RoIPool(7, 1.0)(feat, boxes), a, b
        """, versions="torch=2.11,torchvision=0.26")
    rows = {(n, r) for n, r, _ in found}
    assert (6, "torchvision.roi-align-backward") in rows
    assert (7, "torchvision.roi-align-backward") in rows
    assert (8, "torchvision.roi-pool-backward") in rows


def test_what_the_code_rules_out(tmp_path):
    found = _records(tmp_path, """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader

        class Lin(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.empty(3, 3))
                self.reset_parameters()

            def reset_parameters(self):
                nn.init.kaiming_uniform_(self.w)

        pool = nn.AdaptiveAvgPool2d(1)
        pool2 = nn.AdaptiveAvgPool2d((1, 1))
        pool7 = nn.AdaptiveAvgPool2d(7)
        buf = torch.empty(3)
        filled = torch.empty(3).normal_()

        def step(logits, target, emb, ids, reduce):
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), target)
            seg = F.cross_entropy(logits, target)
            with torch.no_grad():
                emb(ids).sum()
                picked = torch.gather(logits, 1, ids)
            src = torch.zeros(3, device="cuda")
            src.scatter_reduce_(0, ids, logits, reduce=f"a{reduce}")
            loss.backward()

        main_loader = DataLoader(ds, batch_size=8)
        train_loader = DataLoader(ds, batch_size=8, num_workers=4, shuffle=True)
        val_loader = DataLoader(ds, batch_size=8, num_workers=4, shuffle=False)
        """)
    lines = {(n, r): level for n, r, level in found}
    assert not any(n == 9 for n, _ in lines)  # Parameter(torch.empty) initialised by reset_parameters
    assert (18, "torch.uninitialized-memory") in lines and not any(n == 19 for n, _ in lines)
    assert not any(n in (15, 16) for n, _ in lines) and (17, "torch.adaptive-avg-pool-backward") in lines
    assert not any(n == 22 for n, _ in lines)  # 2-D cross_entropy is not the nll_loss2d record
    assert lines[(23, "torch.nll-loss")] == "possible"  # ndim unknown: a possible finding naming the condition (issue 45)
    assert not any(n == 26 for n, _ in lines)  # gather under no_grad: its backward never runs
    assert not any(n == 28 and r == "torch.scatter-reduce-sum-mean" for n, r in lines)  # f"a{...}" is amin/amax
    assert not any(n == 31 for n, _ in lines)  # num_workers=0
    assert lines[(32, "torch.data-loader-workers")] == "nondeterministic"
    assert lines[(33, "torch.data-loader-workers")] == "possible"  # no shuffling: only random augmentation


def test_a_program_that_never_runs_backward(tmp_path):
    model = "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.e = nn.Embedding(10, 4)\n"
    _write(tmp_path, {
        "model.py": model,
        "sample.py": "import torch\nfrom model import M\nif __name__ == '__main__':\n    with torch.no_grad():\n        M().cuda()\n"
                     "    e = torch.nn.Embedding(10, 4)\n",
    })
    # the sampling script's own calls run no backward pass; the model file it imports may be trained
    # anywhere, and is answered as a scan of it alone answers it (issue 45: the same records either way)
    expected = {("model.py", 5, "torch.embedding-backward")}
    assert _found(_scan(tmp_path), tmp_path) == expected
    (tmp_path / "train.py").write_text("from model import M\nif __name__ == '__main__':\n    M().e.weight.sum().backward()\n")
    assert _found(_scan(tmp_path), tmp_path) == expected
    assert _found(_scan(tmp_path, paths=[str(tmp_path / "model.py")]), tmp_path) == expected


def test_spellings(tmp_path):
    found = _records(tmp_path, """\
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data.dataloader import DataLoader
        from torch.nn.modules.conv import Conv3d

        class MyConv(nn.Conv1d):
            pass

        a = DataLoader(ds, num_workers=2, shuffle=True)
        b = MyConv(3, 3, 3)
        c = Conv3d(1, 1, 1)
        d = F.pad(x, (1, 1, 1, 1), mode="reflect")
        e = F.pad(x, (1, 1, 1, 1, 1, 1), "replicate")
        f = F.pad(x, (1, 1), mode="constant")
        g = F.pad(x, pads, mode="reflect")
        """, "torch=2.6")
    lines = {(n, r): level for n, r, level in found}
    assert (9, "torch.data-loader-workers") in lines
    assert (10, "torch.cudnn-convolution") in lines and (11, "torch.cudnn-convolution") in lines
    assert (12, "torch.reflection-pad-2d-backward") in lines
    assert (13, "torch.replication-pad-1d-3d-backward") in lines
    assert not any(n == 14 for n, _ in lines)
    assert lines[(15, "torch.reflection-pad-2d-backward")] == "possible"


def test_compiled_calls_are_marked():
    calls = _calls("""\
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def forward(self, x):
                return torch.cumsum(x, 0)

        @torch.compile(mode="max-autotune")
        def f(a):
            return torch.cumsum(a, 0)

        def eager(a):
            return torch.cumsum(a, 0)

        model = torch.compile(Net())
        """)
    marked = {c.line: c.compiled for c in calls if c.op == "torch.cumsum"}
    assert marked == {6: True, 10: True, 13: False}


def test_jax_backend_and_keras_bias(tmp_path):
    jax_found = _records(tmp_path, """\
        import jax
        f = jax.jit(g, backend="cpu")
        h = jax.jit(g)
        p = jax.pmap(g)
        """, "jax=0.8")
    assert [(n, r) for n, r, _ in jax_found] == [(3, "jax.xla-autotuning"), (4, "jax.xla-autotuning")]
    layers = """\
        import tensorflow as tf
        a = tf.keras.layers.Dense(4, use_bias=False)
        b = tf.keras.layers.Dense(4)
        """
    tf_found = _records(tmp_path, layers, "tensorflow=2.15")  # Keras 2's Dense adds its bias with tf.nn.bias_add
    assert [(n, r) for n, r, _ in tf_found if r == "tf.bias-add-backprop"] == [(3, "tf.bias-add-backprop")]
    # From 2.16 tf.keras is Keras 3, whose Dense adds the bias with ops.add: no BiasAddGrad, but both layers
    # draw their kernel initializer from Keras's unseeded generator
    keras3 = _records(tmp_path, layers, "tensorflow=2.20")
    assert [(n, r) for n, r, _ in keras3] == [(2, "keras.unseeded-random"), (3, "keras.unseeded-random")]


def test_text_line_says_when_the_record_applies(tmp_path):
    (tmp_path / "t.py").write_text("import torch\ntorch.index_add(x, 0, i, s)\n")
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions("torch=2.11"))
    assert "; applies when: " in line(report.findings[0])


def test_layout_reads_entry_points_and_calls():
    tree = ast.parse(textwrap.dedent("""\
        import utils
        from . import helpers as h
        setup()
        class T:
            def __init__(self):
                self.go()
            def go(self):
                h.seed()
        if __name__ == "__main__":
            main()
        """))
    layout = resolve.layout(tree)
    assert layout.main and layout.top == ("setup",) and layout.in_main == ("main",)
    assert dict(layout.functions)["T.__init__"] == ("self.go",) and dict(layout.functions)["T.go"] == ("h.seed",)
    assert ("", 1, ("helpers",)) in layout.imports


def test_tf_data_maps_that_draw_no_random_numbers(tmp_path):
    found = _records(tmp_path, """\
        import tensorflow as tf

        def augment(x):
            return tf.image.random_flip_left_right(x)

        def decode(x):
            return augment(tf.cast(x, tf.float32))

        def scale(x):
            return tf.cast(x, tf.float32) / 255.0

        ds = tf.data.Dataset.range(10)
        a = ds.map(scale, num_parallel_calls=tf.data.AUTOTUNE)
        b = ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
        c = ds.map(lambda x: x + 1, num_parallel_calls=tf.data.AUTOTUNE)
        d = ds.map(imported_fn, num_parallel_calls=tf.data.AUTOTUNE)
        e = ds.map(decode)
        """, "tensorflow=2.20")
    lines = sorted(n for n, r, _ in found if r == "tf.data-loader-parallelism")
    assert lines == [14, 16]  # decode calls augment (random); imported_fn cannot be read; e is sequential


def test_a_parameter_every_call_passes_as_the_same_literal(tmp_path):
    source = """\
        import torch.nn.functional as F

        def resize(x, size, mode = 'bilinear'):
            return F.interpolate(x, size, mode = mode)

        def up(x):
            return resize(x, 8, mode = 'bilinear')

        def down(x):
            return resize(x, 2)
        """
    found = _records(tmp_path, source)
    assert [(n, r, level) for n, r, level in found] == [(4, "torch.interpolate-bilinear-backward", "nondeterministic")]
    found = _records(tmp_path, source.replace("resize(x, 2)", "resize(x, 2, mode = 'nearest')"))
    assert (4, "torch.interpolate-bilinear-backward", "possible") in found  # bilinear or nearest: not one literal


def test_jax_at_add_with_static_indices_accumulates_nothing():
    """`x.at[::2, 3:].add(7.)` and `x.at[11].add(23)` name each element at most once, as `.set`'s static indices
    do: no element takes two updates, so the scatter-add has no order to vary. An array index stays a finding."""
    calls = _calls("""\
        import jax.numpy as jnp
        x = jnp.ones((5, 6))
        a = x.at[::2, 3:].add(7.)
        b = jnp.arange(10).at[11].add(23)
        c = x.at[..., None].multiply(2.)
        d = x.at[ids].add(1.)
        e = x.at[ids, 0].add(v)
        """)
    at = {c.line: dict(c.extra) for c in calls if c.op.endswith(".at")}
    assert sorted(at) == [6, 7]


def test_f_pad_keeps_its_own_records_beside_the_pad_modules(tmp_path):
    """`F.pad(x, p, mode="reflect")` runs the ReflectionPad kernels (read as `nn.ReflectionPad2d`), and F.pad has
    a record of its own, measured on F.pad itself (torch.pad-reflect-replicate-backward, 4-D float input, 2.11):
    both are asked. A mode held in an attribute set from an `__init__` default asks both too; `mode="constant"`
    neither."""
    found = _records(tmp_path, """\
        import torch.nn as nn
        import torch.nn.functional as F

        class Down(nn.Module):
            def __init__(self, pad_mode="reflect"):
                super().__init__()
                self.pad_mode = pad_mode

            def forward(self, x):
                return F.pad(x, (1, 1, 1, 1), self.pad_mode)

        d = F.pad(x, (1, 1, 1, 1), mode="reflect")
        f = F.pad(x, (1, 1), mode="constant")

        def step(x):
            y = F.pad(x, (1, 1, 1, 1), mode="reflect")
            y.sum().backward()

        def repeated(x, p):
            return F.pad(x, (p,) * 4, mode="replicate")
        """)
    lines = {(n, r): level for n, r, level in found}
    assert (12, "torch.reflection-pad-2d-backward") in lines and (12, "torch.pad-reflect-replicate-backward") in lines
    assert (10, "torch.reflection-pad-2d-backward") in lines and (10, "torch.pad-reflect-replicate-backward") in lines
    assert not any(n == 13 for n, _ in lines)
    # a literal pad of 4 rules out the 1-D and 3-D pad records; F.pad runs its kernel where it is called (no module
    # is made and left uncalled, whatever is done with its result)
    assert not any(r in ("torch.reflection-pad-1d-2d-backward", "torch.reflection-pad-3d-backward") for n, r in lines if n == 12)
    assert lines[(16, "torch.reflection-pad-2d-backward")] == "nondeterministic", lines
    assert sorted(r for n, r in lines if n == 20) == ["torch.pad-reflect-replicate-backward",
                                                      "torch.replication-pad-2d-backward"]  # (p,) * 4: four pads
