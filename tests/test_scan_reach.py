"""What the scanner follows to rule a record in or out (issue 35, the measured corpus's false alarms):
shapes it cannot see (notes), buffers passed to a helper, compiled-op records at torch.compile,
mapped functions imported from the same code base, tensors made on the host, boolean masks, TF seeds."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kb.cli import main
from kb.scan import lookup, pins
from kb.scan.run import scan

needs_calls = pytest.mark.skipif(not lookup.CALLS_SUPPORTED, reason="kb.status(call=...) is not in this KB version yet")
VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.8"


def _scan(tmp_path: Path, files: dict[str, str], versions: str = VERSIONS):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    return scan([str(tmp_path)], given=pins.parse_versions(versions))


def _found(report, record: str) -> list[tuple[int, str]]:
    return [(f.line, f.level) for f in report.findings if f.record == record]


@needs_calls
def test_a_loss_whose_input_rank_is_not_visible_is_a_possible_finding(tmp_path, capsys):
    report = _scan(tmp_path, {"train.py": """\
        import torch.nn.functional as F
        def step(model, x, y, logits):
            out = model(x)
            a = F.cross_entropy(out, y)                     # rank unknown: possible, naming the condition
            b = F.cross_entropy(logits.transpose(1, 2), y)  # dimension 2 exists: at least 3-D, a finding
            c = F.cross_entropy(out.view(-1, 10), y)        # 2-D: nothing
            return a + b + c
        """})
    assert _found(report, "torch.nll-loss") == [(4, "possible"), (5, "possible")]
    assert report.notes == ()
    assert "depending on an input of 3 or more dimensions" in report.findings[0].answer
    # a possible finding fails only --fail-on any
    (tmp_path / "train.py").write_text("import torch.nn.functional as F\ndef f(o, y):\n    return F.nll_loss(o, y)\n")
    assert main(["scan", str(tmp_path / "train.py"), "--versions", VERSIONS, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["level"] for f in doc["findings"]] == ["possible"] and doc["notes"] == []


def test_a_helper_called_only_with_registered_buffers_runs_no_backward(tmp_path):
    helper = """\
        import torch
        from torch import nn
        def extract(a, t, shape):
            return a.gather(-1, t).reshape(shape)
        class Diffusion(nn.Module):
            def __init__(self):
                super().__init__()
                register_buffer = lambda name, val: self.register_buffer(name, val.float())
                register_buffer("alphas", torch.linspace(0, 1, 10))
                self.register_buffer("betas", torch.linspace(0, 1, 10))
                self.w = nn.Parameter(torch.zeros(10))
            def forward(self, x, t):
                return extract(self.alphas, t, x.shape) + extract(self.betas, t, x.shape){extra}
        """
    assert _found(_scan(tmp_path, {"d.py": helper.format(extra="")}), "torch.gather-backward") == []
    # one call passes a parameter (it requires grad): the gather's backward may run
    other = tmp_path / "other"
    found = _found(_scan(other, {"d.py": helper.format(extra=" + extract(self.w, t, x.shape)")}), "torch.gather-backward")
    assert found == [(4, "possible")]


def test_torch_compile_is_not_where_a_compiled_ops_kernel_runs(tmp_path):
    report = _scan(tmp_path, {"t.py": """\
        import torch
        model = torch.compile(torch.nn.Linear(3, 3))
        """})
    records = {f.record for f in report.findings if f.op == "torch.compile"}
    assert "torch.inductor-autotuning" in records  # about compiling itself
    assert not records & {"torch.inductor-scan", "torch.inductor-scatter-accumulate", "torch.inductor-ldl-solve",
                          "torch.inductor-logcumsumexp"}


def test_a_mapped_function_from_a_module_of_the_code_base_is_read(tmp_path):
    pipeline = """\
        import tensorflow as tf
        import {module}
        import functools
        def convert(x, flag=True):
            return tf.cast(x, tf.float32)
        def make(ds, sp):
            f = functools.partial(convert, flag=False)
            ds = ds.map({module}.TokenizeOp(sp), num_parallel_calls=tf.data.AUTOTUNE)
            return ds.map(f, num_parallel_calls=tf.data.AUTOTUNE)
        """
    quiet = """\
        class TokenizeOp:
            def __init__(self, sp):
                self.sp = sp
            def __call__(self, features):
                return {k: self.sp.tokenize(v) for k, v in features.items()}
        """
    noisy = quiet.replace("self.sp.tokenize(v)", "tf.image.random_flip_left_right(v)")
    calm = _scan(tmp_path / "a", {"pipeline.py": pipeline.format(module="tok"), "tok.py": quiet})
    assert _found(calm, "tf.data-loader-parallelism") == []
    loud = _scan(tmp_path / "b", {"pipeline.py": pipeline.format(module="tok"), "tok.py": noisy})
    assert [line for line, _ in _found(loud, "tf.data-loader-parallelism")] == [8]


@needs_calls
def test_a_schedule_made_on_the_host_is_answered_for_the_cpu(tmp_path):
    source = """\
        import math
        import torch
        def cosine(n, s=0.008):
            t = torch.linspace(0, n, n + 1, dtype=torch.float64) / n
            a = torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
            a = a / a[0]
            return torch.clip(1 - a[1:] / a[:-1], 0, 0.999)
        def linear(n):
            return torch.linspace(1e-4, 0.02, n, dtype=torch.float64)
        class D(torch.nn.Module):
            def __init__(self, n=1000, kind="cosine", x=None):
                super().__init__()
                fn = cosine
                if kind == "linear":
                    fn = linear
                alphas = 1.0 - fn(n)
                self.c = torch.cumprod(alphas, dim=0)
                self.d = torch.cumprod(x, dim=0)
                self.e = torch.cumprod(torch.ones(n, device="cuda") * 0.5, dim=0)
        """
    found = _found(_scan(tmp_path, {"d.py": source}), "torch.cumprod")
    assert [line for line, _ in found] == [18, 19]  # x: unknown; device="cuda": on the GPU


@needs_calls
def test_a_length_the_code_cannot_know_stays_a_possible_finding_naming_it(tmp_path):
    """The cumprod record holds for more than 65,536 elements (`input.numel`); the scanner never
    knows a length, so a CUDA cumprod is possible, depending on the count (issue 42)."""
    report = _scan(tmp_path, {"d.py": """\
        import torch
        def f(x):
            return torch.cumprod(x.cuda(), dim=0)
        """})
    (finding,) = [f for f in report.findings if f.record == "torch.cumprod"]
    assert finding.level == "possible" and "input.numel" in finding.depends_on


def test_a_running_count_of_a_boolean_mask(tmp_path):
    report = _scan(tmp_path, {"p.py": """\
        import torch
        def embed(mask, x: torch.Tensor):
            not_mask = ~mask
            y = not_mask.cumsum(1, dtype=torch.float32)
            z = (x > 0).cumsum(1, dtype=torch.float32)
            w = x.cumsum(1)
            return y, z, w
        """})
    assert [line for line, _ in _found(report, "torch.cumsum")] == [6]


def test_tensorflow_seeds_the_code_sets(tmp_path):
    unseeded = """\
        import tensorflow as tf
        def data(ds, seed: int = 41, other=None):
            a = ds.shuffle(100, seed=seed)
            b = ds.shuffle(100, seed=other)
            return a, b
        """
    found = _found(_scan(tmp_path / "a", {"p.py": unseeded}), "tf.random-seeds")
    assert [line for line, _ in found] == [4]  # seed: an int parameter; other: may be None
    seeded = "import tensorflow as tf\ntf.random.set_seed(0)\n" + textwrap.dedent(unseeded).split("\n", 1)[1]
    assert _found(_scan(tmp_path / "b", {"p.py": seeded}), "tf.random-seeds") == []
    in_function = "import tensorflow as tf\ndef main():\n    tf.random.set_seed(0)\n" + textwrap.dedent(unseeded).split("\n", 1)[1]
    assert [line for line, _ in _found(_scan(tmp_path / "c", {"p.py": in_function}), "tf.random-seeds")] == [6]


def test_spellings_of_tf_layers_and_the_jax_matmul_operator(tmp_path):
    report = _scan(tmp_path, {"m.py": """\
        import jax.numpy as jnp
        import tensorflow as tf

        def f(x, inputs):
            w = jnp.ones((3, 3))
            y = x @ w                 # w is visibly a JAX array: jax.numpy.matmul
            z = x @ x                 # nothing shows what x is
            h = tf.compat.v1.layers.dense(inputs, 10, use_bias=False)   # no bias: nothing
            g = tf.layers.dense(inputs, 10)                             # Dense(10) with a bias
            return y, z, h, g
        """}, VERSIONS.replace("tensorflow=2.20", "tensorflow=2.15"))  # Keras 2: its Dense runs BiasAddGrad
    assert [(f.line, f.record) for f in report.findings if f.op == "jax.numpy.matmul"] == [
        (6, "jax.xla-autotuning"), (6, "jax.xla-gemm-conv-attention")]
    assert [(f.line, f.op) for f in report.findings if f.record == "tf.bias-add-backprop"] == [(9, "tf.keras.layers.Dense")]


def test_a_module_of_the_code_base_that_is_not_a_regular_file_is_never_opened(tmp_path):
    import os

    pipeline = """\
        import tensorflow as tf
        import tok
        def make(ds, sp):
            return ds.map(tok.TokenizeOp(sp), num_parallel_calls=tf.data.AUTOTUNE)
        """
    (tmp_path / "pipeline.py").write_text(textwrap.dedent(pipeline))
    os.mkfifo(tmp_path / "tok.py")  # opening a FIFO for reading would block the scan forever
    report = scan([str(tmp_path / "pipeline.py")], given=pins.parse_versions(VERSIONS))
    assert [f.line for f in report.findings if f.record == "tf.data-loader-parallelism"] == [4]  # unread: may draw


def test_an_embedding_whose_weight_is_used_directly_runs_no_embedding_kernel(tmp_path):
    source = """\
        import torch
        from torch import nn
        class DETR(nn.Module):
            def __init__(self, n, d):
                super().__init__()
                self.query_embed = nn.Embedding(n, d)
                self.tok = nn.Embedding(n, d)
                self.handed = nn.Embedding(n, d)
                self.user = Wrapper(self.handed)
            def forward(self, x, ids):
                return self.query_embed.weight + self.tok(ids)
        """
    found = _found(_scan(tmp_path, {"m.py": source}), "torch.embedding-backward")
    assert [line for line, _ in found] == [7, 8]  # called; handed to another object (it may call it)


def test_a_stated_fact_rules_out_conditions_as_a_query_would() -> None:
    """`given` accepts any value but None; an exact dtype satisfies its kind: the scan's
    contradiction check must not call such a condition contradicted (kb/calls.py value_holds)."""
    from kb.scan.lookup import _contradicted

    assert _contradicted([{"dim": ["given"]}], {"dim": 0}) is False
    assert _contradicted([{"dim": ["given"]}], {"dim": None}) is True
    assert _contradicted([{"input.dtype": ["float"]}], {"input.dtype": "bfloat16"}) is False
    assert _contradicted([{"input.ndim": [3, 4]}], {"input.ndim": 2}) is True


def test_a_position_embedding_called_only_with_arange_is_not_an_accumulating_backward(tmp_path) -> None:
    """nanoGPT's `wpe(pos)` with `pos = torch.arange(0, t)`: unique indices, each row added once.
    The token embedding of the same class, called with data, stays a finding."""
    src = tmp_path / "model.py"
    src.write_text(
        "import torch\nfrom torch import nn\n\n"
        "class GPT(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.wte = nn.Embedding(100, 8)\n"
        "        self.wpe = nn.Embedding(16, 8)\n\n"
        "    def forward(self, idx):\n"
        "        pos = torch.arange(0, idx.size(1), device=idx.device)\n"
        "        return self.wte(idx) + self.wpe(pos)\n\n"
        "    def reset_parameters(self):\n"
        "        nn.init.normal_(self.wpe.weight)\n"
    )
    lines = _embedding_lines(src)
    assert 7 in lines and 8 not in lines
    src.write_text(src.read_text().replace("self.wpe(pos)", "self.wpe(pos.repeat(2))"))
    assert 8 in _embedding_lines(src)


def _embedding_lines(path) -> set[int]:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "kb", "scan", str(path), "--versions", "torch=2.11", "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    data = json.loads(out.stdout)
    return {f["line"] for f in data["findings"] if f["record"] == "torch.embedding-backward"}
