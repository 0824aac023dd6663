"""kb scan: exactly the findings each real fixture script should give, in all three formats;
alias, method, notebook, switch, suppression, version and lockfile cases; SARIF against the
official 2.1.0 schema; exit codes; the user's code and the frameworks are never imported.

Fixture scripts are public training scripts (tests/fixtures/scan/SOURCES.md says where each
is from). Versions are pinned with --versions so the answers do not follow what is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.cli import main
from kb.query import index
from kb.scan import lookup, pins, resolve, switches
from kb.scan.run import scan, targets

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests/fixtures/scan"
VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.7"
needs_calls = pytest.mark.skipif(not lookup.CALLS_SUPPORTED, reason="kb.status(call=...) is not in this KB version yet")

# What a scan of each fixture finds, alone, at VERSIONS: (line or (cell, line), record, level).
EXPECTED = {
    "pytorch-examples/mnist/main.py": [
        (13, "torch.cudnn-convolution", "nondeterministic"),
        (14, "torch.cudnn-convolution", "nondeterministic"),
        # F.nll_loss(output, target) at 42 and 61: only a 3-D or higher input takes the atomic kernel, and
        # output = model(data) of the Net every call of train()/test() passes is 2-D (kb/scan/rank.py)
        (124, "torch.data-loader-workers", "nondeterministic"),
        (125, "torch.data-loader-workers", "nondeterministic"),
    ],
    "pytorch-examples/dcgan/main.py": [
        (51, "torch.cudnn-benchmark", "nondeterministic"),  # cudnn.benchmark = True
        (107, "torch.data-loader-workers", "nondeterministic"),
        *[(line, "torch.cudnn-convolution", "nondeterministic") for line in (132, 136, 140, 144, 148, 175, 178, 182, 186, 190)],
    ],
    "pytorch-examples/fast_neural_style/neural_style/transformer_net.py": [
        (48, "torch.reflection-pad-2d-backward", "nondeterministic"),
        (49, "torch.cudnn-convolution", "nondeterministic"),
        (90, "torch.reflection-pad-2d-backward", "nondeterministic"),
        (91, "torch.cudnn-convolution", "nondeterministic"),
        # line 96: F.interpolate(x_in, mode='nearest', scale_factor=...): nearest gathers, no record applies
    ],
    "pytorch-examples/word_language_model/model.py": [
        (13, "torch.embedding-backward", "nondeterministic"),
        (116, "torch.embedding-backward", "nondeterministic"),
    ],
    "jax-examples/mnist_classifier_fromscratch.py": [  # `import jax.numpy as jnp`, `from jax import jit`
        (38, "jax.xla-autotuning", "nondeterministic"),
        (38, "jax.xla-gemm-conv-attention", "nondeterministic"),
        (42, "jax.xla-autotuning", "nondeterministic"),
        (42, "jax.xla-gemm-conv-attention", "nondeterministic"),
        (78, "jax.xla-autotuning", "nondeterministic"),  # @jit
    ],
    "tensorflow-docs/beginner.ipynb": [
        # TensorFlow 2.20's tf.keras is Keras 3 (data/versions/tensorflow.yaml: keras>=3.10.0): Dense adds its
        # bias with ops.add (no BiasAddGrad) and draws its kernel initializer, like Dropout its mask, from
        # Keras's own unseeded generator
        ((12, 3), "keras.unseeded-random", "nondeterministic"),
        ((12, 4), "keras.unseeded-random", "nondeterministic"),  # Dropout without a seed
        ((12, 5), "keras.unseeded-random", "nondeterministic"),
        ((19, 1), "tf.sparse-softmax-xent", "nondeterministic"),
        # (25, 1) model.fit(x_train, y_train, epochs=5) asks for no workers: fit-runs-no-workers rules it out
    ],
}
EXPECTED_EXAMPLES = {  # in path order, as the scanner reports
    # the backend is chosen inside a helper (`with _flash()`), so every attention backend's record is possible
    "examples/probe/train_blocks.py": [
        (53, "torch.sdpa-cudnn-backward", "possible"), (53, "torch.sdpa-efficient-backward", "possible"),
        (53, "torch.sdpa-flash-backward", "possible"), (71, "torch.embedding-backward", "nondeterministic"),
        # line 106: F.cross_entropy(logits.float().reshape(-1, 100), target) is 2-D, not the nll_loss2d record
    ],
    # a module whose only array library is JAX: its `@` products are JAX matmuls
    "examples/probe/train_jax.py": [(24, "jax.segment-reductions", "nondeterministic"), (27, "jax.xla-autotuning", "nondeterministic"),
                                    (27, "jax.xla-gemm-conv-attention", "nondeterministic"), (28, "jax.xla-autotuning", "nondeterministic"),
                                    (28, "jax.xla-gemm-conv-attention", "nondeterministic"), (34, "jax.xla-autotuning", "nondeterministic")],
    "examples/probe/train_tf.py": [
        # tf.keras in 2.20 is Keras 3: the layers' initializers are unseeded Keras draws (tf.random.set_seed,
        # the SEED the script applies, does not seed them), and Dense runs no BiasAddGrad
        (25, "tf.unsorted-segment-sum", "nondeterministic"), (40, "keras.unseeded-random", "nondeterministic"),
        (40, "tf.gather-backprop", "nondeterministic"),
        (42, "keras.unseeded-random", "nondeterministic"), (43, "keras.unseeded-random", "nondeterministic"),
    ],
    # torch.use_deterministic_algorithms(True) is set only under `if DETERMINISTIC == "1"`: not counted
    "examples/probe/train_torch.py": [(46, "torch.index-add", "nondeterministic"), (54, "torch.embedding-backward", "nondeterministic")],
}


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["scan", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _key(f: dict) -> tuple:
    where = f["line"] if f["cell"] is None else (f["cell"], f["line"])
    return where, f["record"], f["level"]


@pytest.fixture(autouse=True)
def _root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _three_formats(capsys, paths: list[str], expected: dict[str, list]) -> None:
    """The same findings, in the same order, in JSON, text and SARIF."""
    code, out, _ = run_cli(capsys, *paths, "--versions", VERSIONS, "--format", "json")
    got: dict[str, list] = {}
    for f in json.loads(out)["findings"]:
        got.setdefault(f["path"], []).append(_key(f))
    assert got == expected
    assert code == (1 if expected else 0)
    flat = [(path, *item) for path, items in expected.items() for item in items]
    _, text, _ = run_cli(capsys, *paths, "--versions", VERSIONS)
    lines = [ln for ln in text.splitlines() if any(ln.startswith(p) for p in expected) and "]: note: " not in ln]
    assert len(lines) == len(flat)
    for line, (path, where, record, level) in zip(lines, flat):
        loc = f"{path}:{where}:" if isinstance(where, int) else f"{path}#cell{where[0]}:{where[1]}:"
        assert line.startswith(loc) and f"[{record}]: {level}: " in line
    _, sarif, _ = run_cli(capsys, *paths, "--versions", VERSIONS, "--format", "sarif")
    results = json.loads(sarif)["runs"][0]["results"]
    level = {"raises": "error", "nondeterministic": "warning", "possible": "note"}
    assert [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"], r["level"]) for r in results] == [
        (path, record, where if isinstance(where, int) else where[1], level[lv]) for path, where, record, lv in flat]


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_fixture_findings_in_all_three_formats(capsys, rel):
    path = f"tests/fixtures/scan/{rel}"
    _three_formats(capsys, [path], {path: EXPECTED[rel]})


def test_examples_folder_in_all_three_formats(capsys):
    _three_formats(capsys, ["examples"], EXPECTED_EXAMPLES)
    _, out, _ = run_cli(capsys, "examples", "--versions", VERSIONS, "--format", "json")
    conditional = [a for a in json.loads(out)["applied"] if a["code"] == "PT_DET"]
    assert conditional and conditional[0]["condition"] == 'os.environ.get("DETERMINISTIC") == "1"'


def test_sarif_validates_against_the_official_schema(capsys):
    from jsonschema import Draft4Validator

    schema = json.loads((FIX / "sarif-schema-2.1.0.json").read_text())
    Draft4Validator.check_schema(schema)
    bad = FIX.parent / "scan-bad"  # not a fixture folder: written by this test
    _, out, _ = run_cli(capsys, "tests/fixtures/scan", "examples", "--versions", VERSIONS, "--format", "sarif",
                        "--site-url", "https://example.org/kb")
    doc = json.loads(out)
    errors = sorted(Draft4Validator(schema).iter_errors(doc), key=str)
    assert not errors, errors[0]
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {r["ruleId"] for r in run["results"]}
    assert all(run["results"][i]["ruleIndex"] == [r["id"] for r in rules].index(run["results"][i]["ruleId"])
               for i in range(len(run["results"])))
    assert rules[0]["helpUri"].startswith("https://example.org/kb/sources/")
    assert not bad.exists()


def test_sarif_with_a_parse_error_still_validates(capsys, tmp_path):
    from jsonschema import Draft4Validator

    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n")
    (tmp_path / "ok.py").write_text("import torch\ntorch.index_add(x, 0, i, s)\n")
    code, out, _ = run_cli(capsys, str(tmp_path), "--versions", "torch=2.11", "--format", "sarif")
    doc = json.loads(out)
    assert not list(Draft4Validator(json.loads((FIX / "sarif-schema-2.1.0.json").read_text())).iter_errors(doc))
    notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "cannot parse" in notes[0]["message"]["text"]
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["torch.index-add"]
    assert code == 1


# --- resolution ---------------------------------------------------------------------------

WANTED, METHODS, _ = targets(index())


def _ops(source: str) -> list[tuple[int, str, bool]]:
    module = resolve.analyse(textwrap.dedent(source), "t.py", WANTED, METHODS, switches.WATCHED)
    return [(c.line, c.op, c.certain) for c in module.calls]


def test_aliases():
    assert _ops("""\
        import tensorflow as tf
        from torch import nn
        import torch.nn.functional as F
        from jax import numpy as jnp
        from torch.nn.functional import interpolate as up
        import torch.nn
        from tensorflow.keras import layers
        import numpy as np
        tf.nn.bias_add(x, b)
        nn.ReflectionPad2d(3)
        F.interpolate(x, mode="bilinear")
        jnp.bincount(x)
        up(x)
        torch.nn.Embedding(10, 3)
        layers.Conv2D(3, 3)
        np.bincount(x)
        unknown.bincount(x)
        """) == [
        (9, "tf.nn.bias_add", True), (10, "torch.nn.ReflectionPad2d", True),
        (11, "torch.nn.functional.interpolate", True), (12, "jax.numpy.bincount", True),
        (13, "torch.nn.functional.interpolate", True), (14, "torch.nn.Embedding", True),
        (15, "tf.keras.layers.Conv2D", True),
        # np.bincount is numpy's (a module), not a method; unknown.bincount may be a tensor's
        (17, "torch.Tensor.bincount", False),
    ]


def test_an_alias_that_shadows_another_library():
    """`import jax.numpy as np` makes np.dot JAX's, whatever the name usually means."""
    assert _ops("import jax.numpy as np\nnp.dot(a, b)\n") == [(2, "jax.numpy.dot", True)]
    assert _ops("import numpy as np\nnp.dot(a, b)\n") == []


def test_methods_possible_unless_the_receiver_is_visibly_a_tensor():
    assert _ops("""\
        import torch
        def f(x, i, v):
            y = torch.zeros(3)
            y.index_add_(0, i, v)
            x.index_add_(0, i, v)
            torch.zeros(3).cuda().index_add_(0, i, v)
        """) == [(4, "torch.Tensor.index_add_", True), (5, "torch.Tensor.index_add_", False),
                 (6, "torch.Tensor.index_add_", True)]
    # no torch import: a method of the same name is someone else's
    assert _ops("def f(x, i, v):\n    x.index_add_(0, i, v)\n") == []


def test_jax_at_and_decorators():
    assert _ops("""\
        import jax
        import jax.numpy as jnp
        @jax.jit
        def f(x, i):
            return x.at[i].add(1.0)
        """) == [(3, "jax.jit", True), (5, "jax.Array.at", False), (5, "jax.numpy.ndarray.at", False)]


FRAGMENTS = [
    "import torch", "import torch.nn.functional as F", "from torch import nn", "import tensorflow as tf", "import os",
    "import jax.numpy as jnp", "from jax import jit", "F.interpolate(x, mode='bilinear')", "x.index_add_(0, i, v)",
    "torch.use_deterministic_algorithms(True)", "os.environ['XLA_FLAGS'] = f'{a} --xla_gpu_deterministic_ops=true'",
    "os.environ.update({'A': 1, **b})", "os.environ.update(dict(a=1))", "os.putenv(k, v)", "@jit", "@torch.no_grad()",
    "def f(*a, **k):", "class M(nn.Module):", "if __name__ == '__main__':", "if flag:", "else:", "try:", "except E:",
    "with torch.no_grad():", "for i in range(3):", "lambda q: q.scatter_add_(0, i, v)", "y = torch.zeros(3).cuda()",
    "y.put_(i, v, accumulate=True)", "nn.Embedding(*shape, **kw)", "x.at[i].add(1.0)", "torch.bincount(x, -1e999)",
    "tf.keras.layers.Dense(units=float('nan'))", "match x:", "case 1:", "pass", "return F.nll_loss(a, b, reduction=r)",
    "torch.backends.cudnn.benchmark = flag", "a = b = torch.tensor([1]); a.index_put_((i,), v)",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(FRAGMENTS), st.integers(0, 3)), max_size=14))
def test_analysis_never_fails_on_odd_code(lines):
    """Any mix of the constructs the scanner reads: a module, or a SyntaxError; nothing else."""
    text = "\n".join("    " * indent + fragment for fragment, indent in lines) + "\n"
    try:
        module = resolve.analyse(text, "t.py", WANTED, METHODS, switches.WATCHED)
    except SyntaxError:
        return
    json.dumps([c._asdict() for c in module.calls], default=repr)
    for call in module.calls:
        assert call.op in WANTED and call.line >= 1 and call.col >= 1


def test_literal_and_non_literal_arguments():
    module = resolve.analyse('import torch.nn.functional as F\nF.interpolate(x, None, 2, mode=m, antialias=False)\n',
                             "t.py", WANTED, METHODS, switches.WATCHED)
    call = module.calls[0]
    assert call.kwargs == (("mode", resolve.Unknown("m")), ("antialias", False))
    assert call.args == (resolve.Unknown("x"), None, 2)
    facts, unknown = lookup.facts_of(call, ("input", "size", "scale_factor", "mode", "align_corners", "antialias"))
    assert facts == {"size": None, "scale_factor": 2, "antialias": False}
    assert unknown == {"input": "x", "mode": "m"}


def test_notebook_cells_magics_and_a_bad_cell(capsys, tmp_path):
    cells = [
        {"cell_type": "markdown", "source": ["# title"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n", "!pip install x"]},
        {"cell_type": "code", "source": "if True:\n    %time y = 1\n    torch.index_add(x, 0, i, s)\n"},
    ]
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5}))
    code, out, _ = run_cli(capsys, str(nb), "--versions", "torch=2.11", "--format", "json")
    doc = json.loads(out)
    assert [(f["cell"], f["line"], f["record"]) for f in doc["notes"]] == [(3, 3, "torch.index-add")]
    cells += [{"cell_type": "code", "source": "def broken(:\n"}, {"cell_type": "code", "source": "x = = 1\n"}]
    nb.write_text(json.dumps({"cells": cells}))
    code, out, _ = run_cli(capsys, str(nb), "--versions", "torch=2.11", "--format", "json")
    doc = json.loads(out)
    assert [e["message"][:22] for e in doc["errors"]] == ["cell 4: cannot parse: ", "cell 5: cannot parse: "]
    assert [(f["cell"], f["line"]) for f in doc["notes"]] == [(3, 3)]  # the other cells are still scanned
    (tmp_path / "nb.ipynb").write_text("{not json")
    code, out, _ = run_cli(capsys, str(nb), "--format", "json")
    assert "invalid JSON at line 1" in json.loads(out)["errors"][0]["message"]


def test_discovery_skips_environments_and_excluded_paths(tmp_path):
    from kb.scan import sources

    for rel in ("a.py", "nb.ipynb", ".venv/lib/x.py", "node_modules/y.py", ".hidden/z.py", "gen/big_pb2.py", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    found = sources.discover([str(tmp_path)], ("*_pb2.py",))
    assert [Path(p).relative_to(tmp_path).as_posix() for p, _ in found] == ["a.py", "nb.ipynb"]
    with pytest.raises(FileNotFoundError):
        sources.discover([str(tmp_path / "nope")])


def test_many_files_use_worker_processes(tmp_path):
    """Over PARALLEL_FROM files go to 2 workers; the answer is the same as in one process."""
    from kb.scan import run as scan_run

    for n in range(scan_run.PARALLEL_FROM + 6):
        (tmp_path / f"m{n}.py").write_text(f"import torch\nx = {n}\ntorch.index_add(x, 0, i, s)\n")
    given = pins.parse_versions("torch=2.11")
    one = scan([str(tmp_path)], given=given, jobs=1)
    two = scan([str(tmp_path)], given=given, jobs=2)
    assert one.findings == two.findings and len(one.findings) == scan_run.PARALLEL_FROM + 6


def test_unparseable_file_is_reported_not_fatal(capsys, tmp_path):
    (tmp_path / "a.py").write_text("import torch\ntorch.index_add(x, 0, i, s)\n")
    (tmp_path / "b.py").write_text("def (:\n")
    (tmp_path / "c.py").write_bytes(b"\xff\xfe\x00")
    code, out, err = run_cli(capsys, str(tmp_path), "--versions", "torch=2.11")
    assert f"{tmp_path}/b.py:1:5: error: cannot parse: invalid syntax" in out
    assert f"{tmp_path}/c.py:1:1: error: not UTF-8 (byte 0)" in out
    assert "[torch.index-add]" in out and code == 1
    (tmp_path / "a.py").write_text("import torch\n")
    assert run_cli(capsys, str(tmp_path), "--versions", "torch=2.11")[0] == 0
    assert run_cli(capsys, str(tmp_path), "--versions", "torch=2.11", "--fail-on", "any")[0] == 1


# --- switches, raises, suppression ------------------------------------------------------------

def _scan_text(tmp_path: Path, source: str, versions: str = "torch=2.11") -> list[lookup.Finding]:
    (tmp_path / "t.py").write_text(textwrap.dedent(source))
    return list(scan([str(tmp_path / "t.py")], given=pins.parse_versions(versions)).findings)


def test_switch_covers_and_makes_raise(tmp_path):
    source = """\
        import torch
        torch.use_deterministic_algorithms(True)
        def f(x, i, v):
            y = torch.zeros(3, device="cuda")  # made on the host (no device), it would be answered for the CPU
            y.index_add_(0, i, v)
        """
    assert _scan_text(tmp_path, source) == []  # 2.11: PT_DET covers index_add_
    found = _scan_text(tmp_path, source, "torch=1.8")  # 1.7-1.8: index_add_ raises in deterministic mode
    assert [(f.line, f.record, f.level) for f in found] == [(5, "torch.index-add", "raises")]
    assert "raises RuntimeError under PT_DET, which this code sets" in found[0].answer
    warn = source.replace("(True)", "(True, warn_only=True)")
    assert [f.level for f in _scan_text(tmp_path, warn, "torch=1.8")] == ["nondeterministic"]


def test_env_and_flags_set_in_code(tmp_path):
    jax_code = """\
        import os
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_deterministic_ops=true"
        import jax.numpy as jnp
        jnp.dot(a, b)
        """
    assert _scan_text(tmp_path, jax_code, "jax=0.7") == []
    tf_code = """\
        import tensorflow as tf
        tf.config.experimental.enable_op_determinism()
        tf.nn.bias_add(x, b)
        """
    assert _scan_text(tmp_path, tf_code, "tensorflow=2.20") == []
    tdo = 'import os\nos.environ.setdefault("TF_DETERMINISTIC_OPS", "1")\nimport tensorflow as tf\ntf.nn.bias_add(x, b)\n'
    assert _scan_text(tmp_path, tdo, "tensorflow=2.5") == []
    assert _scan_text(tmp_path, tdo.replace('"1"', '"0"'), "tensorflow=2.5")[0].record == "tf.bias-add-backprop"


def test_switch_codes_exist_in_the_kb():
    solutions = index()["solutions"]
    named = {c for fw in switches.RAISING.values() for c in fw} | set(switches.XLA_FLAGS.values()) | set(switches.DEFAULTS)
    for setting in [
        resolve.Setting("call", "torch.use_deterministic_algorithms", True, (), 1, 1, ""),
        resolve.Setting("call", "torch.use_deterministic_algorithms", True, (("warn_only", True),), 1, 1, ""),
        resolve.Setting("call", "torch.set_deterministic", True, (), 1, 1, ""),
        resolve.Setting("call", "tf.config.experimental.enable_op_determinism", None, (), 1, 1, ""),
        resolve.Setting("call", "tf.keras.utils.set_random_seed", 1, (), 1, 1, ""),
        resolve.Setting("attr", "torch.backends.cudnn.deterministic", True, (), 1, 1, ""),
        *[resolve.Setting("env", k, v, (), 1, 1, "") for k, v in (
            ("TF_DETERMINISTIC_OPS", "1"), ("TF_CUDNN_DETERMINISTIC", "true"), ("CUBLAS_WORKSPACE_CONFIG", ":4096:8"),
            ("HOROVOD_FUSION_THRESHOLD", "0"), ("NCCL_NVLS_ENABLE", "0"), ("TORCHINDUCTOR_DETERMINISTIC", "1"),
            ("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "0"), ("HOROVOD_DISABLE_GROUP_FUSION", "1"))],
        resolve.Setting("attr", "torch._inductor.config.deterministic", True, (), 1, 1, ""),
    ]:
        codes = switches.codes_of(setting)
        assert codes, setting
        named.update(codes)
    assert named <= set(solutions), named - set(solutions)
    combined = switches.applied([("t.py", resolve.Setting("call", f"tf.config.threading.set_{pool}_op_parallelism_threads",
                                                          1, (), 1, 1, "")) for pool in ("intra", "inter")]
                                + [("t.py", resolve.Setting("call", "torch.use_deterministic_algorithms", True, (), 2, 1, ""))],
                                {"tensorflow", "pytorch"})
    assert {"CPU1", "PT_DET", "PT_FILL", "PT_NOBENCH"} <= set(combined) <= set(solutions)
    fill_off = resolve.Setting("attr", "torch.utils.deterministic.fill_uninitialized_memory", False, (), 3, 1, "")
    assert "PT_FILL" not in switches.applied([("t.py", fill_off), ("t.py", resolve.Setting(
        "call", "torch.use_deterministic_algorithms", True, (), 2, 1, ""))], {"pytorch"})


def test_suppression_comments(tmp_path):
    source = """\
        import torch
        torch.index_add(x, 0, i, s)  # kb: ignore[torch.index-add]
        torch.index_add(x, 0, i, s)  # kb: ignore[torch.other-record]
        torch.index_add(x, 0, i, s)  # kb: ignore
        torch.index_add(
            x, 0, i, s)  # kb: ignore[torch.index-add]
        """
    (tmp_path / "t.py").write_text(textwrap.dedent(source))
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions("torch=2.11"))
    assert [f.line for f in report.findings] == [3]
    assert report.suppressed == 3


def test_fail_on_levels(capsys, tmp_path):
    (tmp_path / "t.py").write_text("import torch\ndef f(x, i, v):\n    x.index_add_(0, i, v)\n")
    args = (str(tmp_path), "--versions", "torch=2.11")
    assert run_cli(capsys, *args)[0] == 0  # only a possible finding
    assert run_cli(capsys, *args, "--fail-on", "any")[0] == 1
    (tmp_path / "t.py").write_text("import torch\ntorch.index_add(x, 0, i, s)\n")
    assert run_cli(capsys, *args)[0] == 1
    assert run_cli(capsys, *args, "--fail-on", "raises")[0] == 0


def test_recipe_for_the_whole_code_base(capsys):
    code, out, _ = run_cli(capsys, "tests/fixtures/scan/pytorch-examples", "--versions", VERSIONS, "--format", "json")
    recipes = json.loads(out)["recipes"]
    assert [(r["framework"], r["codes"]) for r in recipes] == [("pytorch", ["PT_DET", "PT_NOBENCH", "PT_DLSEED"])]
    # interpolate(mode='nearest') is ruled out by the call; ReflectionPad2d is fixed by PT_DET from 2.7;
    # mnist's F.nll_loss(output, target): output = model(data), and every call of train() passes a Net, whose
    # forward returns log_softmax of a Linear of torch.flatten(x, 1): 2-D, not the spatial kernel (kb/scan/rank.py)
    assert recipes[0]["unsolved"] == []
    assert json.loads(out)["notes"] == [] and "torch.nll-loss" not in out


# --- call-level answers (kb.status(call=...)) --------------------------------------------------

RESIZE = """\
id: tf.resize-sample
framework: tensorflow
title: Resize sample
ops: [tf.image.resize]
device: gpu
pass: backward
mechanism: cuda-atomics
summary: Bilinear and bicubic resize backprop add with atomics.
calls:
  - when:
      method: [bilinear, bicubic]
status:
  - versions: <2.1
  - versions: '>=2.1'
    solutions: [TDO]
references:
  - {kind: pr, repo: tensorflow/tensorflow, number: 31465}
"""


@pytest.fixture()
def calls_kb(tmp_path_factory):
    """The mini project plus one record with a call condition, swapped in as the index."""
    import shutil

    from kb import query
    from kb.catalog import load
    from kb.compile import build_index

    root = tmp_path_factory.mktemp("scan-calls") / "project"
    shutil.copytree(ROOT / "tests/fixtures/mini", root)
    (root / "data/sources/tensorflow/tf.resize-sample.yaml").write_text(RESIZE, encoding="utf-8")
    query.reset(build_index(load(root)))
    try:
        yield
    finally:
        query.reset()


@needs_calls
@pytest.mark.parametrize("call, expected", [
    ('tf.image.resize(x, (8, 8), method="nearest")', []),
    ('tf.image.resize(x, (8, 8), "nearest")', []),  # positional: the third parameter is `method`
    ('tf.image.resize(x, (8, 8), method="bilinear")', [("nondeterministic", ())]),
    ("tf.image.resize(x, (8, 8))", [("nondeterministic", ())]),  # method defaults to 'bilinear'
    ("tf.image.resize(x, (8, 8), method=m)", [("possible", ("method",))]),
    ("tf.image.resize(x, (8, 8), **options)", [("possible", ("method",))]),
])
def test_literal_arguments_decide_the_call(calls_kb, tmp_path, call, expected):
    found = _scan_text(tmp_path, f"import tensorflow as tf\ndef f(x, m, options):\n    return {call}\n", "tensorflow=2.3")
    assert [(f.level, f.depends_on) for f in found] == expected
    if expected and expected[0][1]:
        assert "depending on method" in found[0].answer


def test_sdpa_kernel_context_fixes_the_backend(tmp_path):
    """Inside `with sdpa_kernel(SDPBackend.X)` the attention call's `backend` is X; outside, unknown."""
    found = _scan_text(tmp_path, """\
        import torch.nn.functional as F
        from torch.nn.attention import sdpa_kernel, SDPBackend
        def attend(q, k, v):
            a = F.scaled_dot_product_attention(q, k, v)
            with sdpa_kernel(SDPBackend.MATH):
                b = F.scaled_dot_product_attention(q, k, v)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                c = F.scaled_dot_product_attention(q, k, v)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
                d = F.scaled_dot_product_attention(q, k, v)
        """)
    by_line: dict[int, set] = {}
    for f in found:
        by_line.setdefault(f.line, set()).add((f.record, f.level, f.depends_on))
    backends = {"torch.sdpa-cudnn-backward", "torch.sdpa-efficient-backward", "torch.sdpa-flash-backward"}
    assert by_line[4] == by_line[10] == {(r, "possible", ("backend",)) for r in backends}
    assert 6 not in by_line  # the math backend is deterministic
    assert by_line[8] == {("torch.sdpa-flash-backward", "nondeterministic", ())}


# --- versions -------------------------------------------------------------------------------------

def test_versions_sources(tmp_path):
    assert pins.parse_versions("torch=2.11, tf=2.20,jax=0.4.30") == {
        "pytorch": pins.Pin("pytorch", "2.11", "--versions"), "tensorflow": pins.Pin("tensorflow", "2.20", "--versions"),
        "jax": pins.Pin("jax", "0.4.30", "--versions")}
    with pytest.raises(pins.PinError, match="expected NAME=VERSION"):
        pins.parse_versions("torch")
    with pytest.raises(pins.PinError, match="unknown framework 'mxnet'"):
        pins.parse_versions("mxnet=1.9")
    req = tmp_path / "requirements.txt"
    req.write_text("# pins\nnumpy>=1\ntorch==2.11.0  # cuda\ntensorflow-cpu>=2.16\n-r other.txt\n")
    assert pins.from_lockfile(str(req)) == {"pytorch": pins.Pin("pytorch", "2.11.0", "requirements.txt line 3")}
    req.write_text("torch==2.11.0\nnot a requirement ==\n")
    with pytest.raises(pins.PinError, match=r"requirements.txt:2: not a requirement line"):
        pins.from_lockfile(str(req))
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["torch==2.9.1", "jax>=0.4"]\n'
                         '[tool.poetry.dependencies]\ntensorflow = "2.20.0"\njax = "^0.4"\n')
    assert pins.from_lockfile(str(pyproject)) == {
        "pytorch": pins.Pin("pytorch", "2.9.1", "pyproject.toml (project.dependencies)"),
        "tensorflow": pins.Pin("tensorflow", "2.20.0", "pyproject.toml (tool.poetry.dependencies)")}
    for name in ("uv.lock", "poetry.lock"):
        lock = tmp_path / name
        lock.write_text('version = 1\n[[package]]\nname = "torch"\nversion = "2.10.0"\n'
                        '[[package]]\nname = "tensorflow"\nversion = "2.19.1"\n')
        assert pins.from_lockfile(str(lock))["pytorch"] == pins.Pin("pytorch", "2.10.0", f"{name} (torch)")
    (tmp_path / "uv.lock").write_text("[[package]\n")
    with pytest.raises(pins.PinError, match="uv.lock: not valid TOML"):
        pins.from_lockfile(str(tmp_path / "uv.lock"))
    with pytest.raises(pins.PinError, match="unknown lockfile kind"):
        pins.from_lockfile(str(FIX / "SOURCES.md"))


def test_versions_said_in_the_report(capsys, tmp_path):
    (tmp_path / "t.py").write_text("import torch\ntorch.index_add(x, 0, i, s)\n")
    (tmp_path / "requirements.txt").write_text("torch==1.6.0\n")
    _, out, _ = run_cli(capsys, str(tmp_path / "t.py"), "--lockfile", str(tmp_path / "requirements.txt"), "--format", "json")
    assert json.loads(out)["versions"] == {"pytorch": {"version": "1.6.0", "from": "requirements.txt line 1"}}
    _, out, _ = run_cli(capsys, str(tmp_path / "t.py"), "--format", "json")
    origin = json.loads(out)["versions"]["pytorch"]["from"]
    assert origin.startswith(("installed here: torch ", "assumed"))


def test_bad_input_exits_2(capsys, tmp_path):
    code, _, err = run_cli(capsys, str(tmp_path / "missing"))
    assert code == 2 and "no such file or folder" in err
    code, _, err = run_cli(capsys, str(tmp_path), "--versions", "torch")
    assert code == 2 and "expected NAME=VERSION" in err
    (tmp_path / "t.py").write_text("import torch\ntorch.index_add(x, 0, i, s)\n")
    code, _, err = run_cli(capsys, str(tmp_path), "--versions", "torch=banana")
    assert code == 2 and "banana" in err
    code, _, err = run_cli(capsys, str(tmp_path), "--lockfile", str(tmp_path / "none.txt"))
    assert code == 2 and "none.txt: cannot read" in err


def test_never_imports_the_users_code_or_the_frameworks(tmp_path):
    (tmp_path / "evil.py").write_text("import torch\nraise SystemExit('imported!')\ntorch.index_add(x, 0, i, s)\n")
    probe = ("import sys, json; from kb.cli import main; code = main(['scan', sys.argv[1], '--format', 'json']); "
             "print(json.dumps(sorted(m for m in ('torch', 'tensorflow', 'jax', 'evil') if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr
    *_, last = done.stdout.strip().splitlines()
    assert json.loads(last) == []
    assert '"torch.index-add"' in done.stdout


# --- docs and integrations --------------------------------------------------------------------

def test_docs_page_shows_a_fresh_run():
    """docs/scan.md's example is the output of scripts/scan_doc.py's command, run now."""
    done = subprocess.run([sys.executable, "scripts/scan_doc.py", "--check"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    page = (ROOT / "docs/scan.md").read_text()
    assert "$ kb scan dcgan/main.py --versions torch=2.11\ndcgan/main.py:51:1: cudnn.benchmark = True [torch.cudnn-benchmark]" in page
    from kb.site import pages

    assert "scan.md" in pages.HAND_WRITTEN
    assert {"Code scanner (scan)": "guide/scan.md"} in pages.nav(index())[-1]["Reference"]


def test_pre_commit_hook_definition():
    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "kb-scan" and hook["entry"] == "kb scan" and hook["language"] == "python"
    assert set(hook["types_or"]) == {"python", "jupyter"}
    assert "id: kb-scan" in (ROOT / "docs/scan.md").read_text()
    assert "kb = \"kb.cli:main\"" in (ROOT / "pyproject.toml").read_text()  # the entry's console script


def test_a_plain_add_is_not_a_sparse_source(capsys, tmp_path):
    """torch.add's sparse records (a COO operand's duplicates, cuSPARSE matmuls) need a call that
    mentions sparse (their `scan.needs_word`): every `torch.add(x, y)` was a `possible` finding."""
    (tmp_path / "t.py").write_text(textwrap.dedent("""\
        import torch
        def dense(x, y, w):
            return torch.add(x, y) + x.add(y) + torch.mm(x, w)
        def sparse(x, y, w):
            return torch.add(x, y.to_sparse()) + torch.mm(w.to_sparse_csr(), x)
        """), encoding="utf-8")
    code, out, _ = run_cli(capsys, str(tmp_path / "t.py"), "--versions", "torch=2.11", "--format", "json")
    found = {(f["line"], f["record"]) for f in json.loads(out)["findings"]}
    assert not any(line == 3 and record.startswith("torch.sparse") for line, record in found), found
    assert (5, "torch.sparse-coo-duplicates") in found and (5, "torch.sparse-mm-cusparse") in found, found


def test_names_a_star_import_brings_in_are_calls_of_that_module(tmp_path):
    """Model files written `from keras.layers import *` then `Conv2D(...)` (102 of the third frozen
    corpus's 104 misses were one such repository): a bare name resolves through the star import to
    the module's op; a function the file defines under the same name is its own."""
    found = _scan_text(tmp_path, """\
        from keras.layers import *
        def build(x):
            return Dropout(0.5)(Conv2D(8, 3)(x))
        """, versions="tensorflow=2.20")
    assert {(f.line, f.op) for f in found} >= {(3, "keras.layers.Conv2D"), (3, "keras.layers.Dropout")}, found
    shadowed = _scan_text(tmp_path, """\
        from keras.layers import *
        def Conv2D(*args):
            return args
        def build(x):
            return Conv2D(8, 3)
        """, versions="tensorflow=2.20")
    assert not [f for f in shadowed if f.op == "keras.layers.Conv2D"], shadowed
