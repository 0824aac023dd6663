"""Every release answered, and no "deterministic" without a basis (issue 47).

On fixture projects (tests/test_sweeps.py's mini PyTorch project with records, sweep files and a
kernel-class file written here), each direction of the answer:
- an op with no record, run or code read: deterministic None, basis unverified, on every release and device;
- an op the sweep ran with no record: "no difference seen" for the call that ran only;
- an op of an elementwise kernel class: True, basis static, the code read cited;
- a record range made by a sweep of 2.11: a sweep file of 2.12 extends it (or, seeing nothing, closes it).
Then the checkout's own data: the headlines, the static ranges of the sweep-made records, and the
nightly step that sweeps new releases.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import kb
from kb import query
from kb.catalog import load
from kb.compile import build_index
from kb.lint import run
from test_sweeps import CUMPROD, _case, _mode, make_project, sweep_doc

SWEEP_211 = "data/sweeps/h100-test/2026-11-25T230000Z-pytorch-eager.json"
SWEEP_212 = "data/sweeps/h100-test/2026-11-26T230000Z-pytorch-eager.json"
CUMSUM_CALL = {"args[0]": 0}  # dim=0 (torch.cumsum's second parameter), as the sweep records it
ELEMENTWISE = """\
framework: pytorch
release: 2.13.0
generated_by: a test
classes:
  - id: pytorch.test-elementwise
    title: an elementwise function
    what: each output element from the same-index input elements
    versions: '>=2.0'
    device: any
    listed_from: the test
    read:
      - release: 2.13.0
        repo: pytorch/pytorch
        tag: v2.13.0
        path: aten/src/ATen/native/cuda/Loops.cuh
        member: torch/include/ATen/native/cuda/Loops.cuh
        lines: [116]
        what: gpu_kernel, TensorIterator's CUDA loop
    ops: [torch.add]
"""


def _sweep(version: str, cases: list[dict], started: str) -> dict:
    doc = sweep_doc("pytorch-eager", cases)
    doc["environment"]["frameworks"] = {"pytorch": version}
    doc["started"] = started
    return doc


def _index(root: Path) -> dict:
    _, findings = run(root)
    assert [f.message for f in findings if f.code not in ("KB021",)] == [], findings
    return build_index(load(root))


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    cases = [_case("torch.cumprod", "silent", {"default": _mode(4), "switch": _mode(4)}, call=CUMSUM_CALL),
             _case("torch.cumsum", "same", {"default": _mode(1), "switch": _mode(1)}, call=CUMSUM_CALL),
             _case("torch.cumsum", "same", {"default": _mode(1), "switch": _mode(1)}, call=CUMSUM_CALL, pass_="backward")]
    root = make_project(tmp_path_factory.mktemp("releases") / "p", {"torch.cumprod-sample": CUMPROD},
                        {SWEEP_211: _sweep("2.11.0", cases, "2026-11-25T23:00:00Z")})
    (root / "data/basis").mkdir()
    (root / "data/basis/elementwise-pytorch.yaml").write_text(ELEMENTWISE, encoding="utf-8")
    return _index(root)


@pytest.fixture()
def kbq(index: dict):
    query.reset(index)
    try:
        yield kb
    finally:
        query.reset()


# --- an op nothing covers ---------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["1.13", "2.0", "2.11", "2.12"])
@pytest.mark.parametrize("device", ["gpu", "cpu", "any"])
def test_an_op_with_no_record_run_or_code_read_is_never_deterministic(kbq, version: str, device: str) -> None:
    s = kbq.status("torch.index_add", version, device=device)  # a real name (data/api/pytorch.txt), no record here
    assert (s.deterministic, s.basis, s.sources, s.solutions) == (None, "unverified", (), ())
    assert s.headline == "no known source, not verified"
    assert str(s).endswith(": no known source, not verified")
    plain = json.loads(json.dumps(s.to_dict()))
    assert next(iter(plain)) == "headline" and plain["deterministic"] is None  # the JSON's first key says it


def test_records_without_a_range_for_the_release_are_not_documented(kbq) -> None:
    s = kbq.status("torch.cumprod", "2.10", call={"input.dtype": "float"})  # the record covers 2.11 only
    assert (s.deterministic, s.basis) == (None, "unverified")
    assert s.headline.startswith("no known source for 2.10, not verified")


# --- what the sweep saw, for an op with no record -----------------------------------------------------

def test_a_swept_op_answers_no_difference_seen_for_the_call_that_ran(kbq) -> None:
    s = kbq.status("torch.cumsum", "2.11", call={"dim": 0, "input.dtype": "float", "input.ndim": 1})
    assert (s.deterministic, s.basis, s.sources) == (True, "verified", ())
    assert s.headline.startswith("no difference seen in this call") and "weaker than a code read" in s.headline
    assert {e.sweep["pass"] for e in s.verified} == {"forward", "backward"}
    assert all(e.source is None and e.call["dim"] == 0 and e.version == "2.11.0" and e.device == "gpu" for e in s.verified)
    assert all("4000000" in (e.sweep["inputs"] or "") for e in s.verified)  # the inputs that ran


@pytest.mark.parametrize("call,device,version", [
    ({"dim": 1, "input.dtype": "float"}, "gpu", "2.11"),     # another dim: not the call that ran
    ({"dim": 0, "input.dtype": "int"}, "gpu", "2.11"),       # another dtype kind
    ({"dim": 0, "input.dtype": "float64"}, "gpu", "2.11"),   # an exact dtype that did not run (float32 did)
    ({"dim": 0, "input.ndim": 2}, "gpu", "2.11"),            # another rank
    ({"dim": 0, "compiled": "inductor"}, "gpu", "2.11"),     # compiled: the eager sweep says nothing
    ({"dim": 0}, "cpu", "2.11"),                             # another device
    ({"dim": 0}, "gpu", "2.10"),                             # another release
])
def test_a_call_the_sweep_did_not_run_has_no_known_source(kbq, call: dict, device: str, version: str) -> None:
    s = kbq.status("torch.cumsum", version, device=device, call=call)
    assert (s.deterministic, s.basis, s.verified) == (None, "unverified", ()), s
    assert s.headline == "no known source, not verified"


def test_an_unknown_call_lists_the_calls_that_ran(kbq) -> None:
    s = kbq.status("torch.cumsum", "2.11")
    assert (s.deterministic, s.basis, s.depends_on_call) == (True, "verified", True)
    assert "other calls: no known source, not verified" in s.headline and len(s.verified) == 2


def test_an_elementwise_kernel_is_deterministic_by_the_code_read(kbq) -> None:
    for version in ("2.0", "2.5", "2.11"):
        s = kbq.status("torch.add", version, device="cpu")
        assert (s.deterministic, s.basis, s.headline) == (True, "static", "deterministic by the code read")
        assert [(r.tag, r.path, r.lines) for r in s.read] == [("v2.13.0", "aten/src/ATen/native/cuda/Loops.cuh", (116,))]
        assert s.read[0].url == "https://github.com/pytorch/pytorch/blob/v2.13.0/aten/src/ATen/native/cuda/Loops.cuh#L116"
    assert kbq.status("torch.add", "1.12", device="cpu").deterministic is None  # before the class's releases: nothing read


def test_records_about_some_calls_with_no_range_leave_the_other_calls_to_the_kernel_class() -> None:
    """torch.add's sparse-operand records cover 2.11 only: on another release a dense call is still
    answered by the elementwise class, and the sparse calls are said to be unknown (issue 47: torch.add
    stays True with a basis on any release). The live data."""
    query.reset()
    for version in ("1.13", "2.5", "2.12"):
        s = kb.status("torch.add", version)
        assert (s.deterministic, s.basis, s.depends_on_call) == (True, "static", True), version
        assert s.headline == ("deterministic by the code read; when other.layout is 'sparse_coo': "
                              "no known source, not verified"), s.headline
        assert any("torch.sparse-coo-duplicates has no range for" in n for n in s.notes)
    sparse = kb.status("torch.add", "2.5", call={"other.layout": "sparse_coo"})
    assert (sparse.deterministic, sparse.basis) == (None, "unverified")
    dense = kb.status("torch.add", "2.5", call={"other.layout": "strided"})
    assert (dense.deterministic, dense.basis, dense.headline) == (True, "static", "deterministic by the code read")
    assert kb.status("torch.add", "2.11").deterministic is False  # the swept release: the sparse record decides


# --- a new sweep file extends or closes a range ----------------------------------------------------------

@pytest.mark.parametrize("klass,expected", [("silent", (False, "verified")), ("same", (True, "verified"))])
def test_a_sweep_of_a_new_release_extends_or_closes_the_range(tmp_path: Path, klass: str, expected: tuple) -> None:
    before = [_case("torch.cumprod", "silent", {"default": _mode(4), "switch": _mode(4)}, call=CUMSUM_CALL)]
    modes = {"default": _mode(4), "switch": _mode(4)} if klass == "silent" else {"default": _mode(1), "switch": _mode(1)}
    after = [_case("torch.cumprod", klass, modes, call=CUMSUM_CALL)]
    root = make_project(tmp_path / "p", {"torch.cumprod-sample": CUMPROD},
                        {SWEEP_211: _sweep("2.11.0", before, "2026-11-25T23:00:00Z")})
    query.reset(_index(root))
    try:  # without the new file, 2.12 is not covered
        assert kb.status("torch.cumprod", "2.12", call={"input.dtype": "float"}).deterministic is None
    finally:
        query.reset()
    (root / SWEEP_212).write_text(json.dumps(_sweep("2.12.0", after, "2026-11-26T23:00:00Z")), encoding="utf-8")
    query.reset(_index(root))
    try:
        s = kb.status("torch.cumprod", "2.12", call={"input.dtype": "float"})
        assert (s.deterministic, s.basis) == expected, s
        source = s.sources[0]
        assert source.versions == "==2.12.0" and source.basis == "verified" and SWEEP_212 in source.note
        if klass == "silent":
            assert "extends this record to 2.12.0" in source.note and source.switch == "silent"
            assert s.headline.startswith("not deterministic")
        else:
            assert "closes before 2.12.0" in source.note and "weaker than a code read" in source.note
            assert s.headline == "deterministic, verified"
        assert kb.status("torch.cumprod", "2.11", call={"input.dtype": "float"}).sources[0].versions == ">=2.11,<2.12"
        assert kb.status("torch.cumprod", "2.10", call={"input.dtype": "float"}).deterministic is None
    finally:
        query.reset()


# --- the checkout's data ------------------------------------------------------------------------------------

EXAMPLES = [  # (op, release before the swept one, call): a sweep finding answered there from the code read
    ("torch.cumprod", "2.10", {"input.ndim": 1, "input.dtype": "float32"}),
    ("torch.logcumsumexp", "2.5", {"input.dtype": "float"}),
    ("torch.inductor-scan", "2.6", None),
    ("torch.inductor-logcumsumexp", "2.9", None),
    ("torch._upsample_bilinear2d_aa", "2.0", None),
    ("torch.nn.functional.interpolate", "2.4", {"mode": "bilinear", "antialias": True, "input.ndim": 4}),
    ("torch.nn.functional.adaptive_avg_pool1d", "1.13", None),
    ("torch.take", "2.3", {"input.dtype": "float"}),
    ("jax.numpy.ndarray.__getitem__", "0.6.0", {"input.dtype": "float"}),
    ("keras.ops.empty", "3.8.0", {"backend": "torch"}),
    ("keras.random.normal", "3.10.0", None),
]


@pytest.mark.parametrize("op,version,call", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_sweep_findings_answer_releases_before_the_swept_one_from_the_code(op: str, version: str, call) -> None:
    s = kb.status(op, version, call=call)
    assert s.deterministic is False and s.basis == "static", s
    assert s.read and all(r.tag and r.path for r in s.read)


def test_every_sweep_made_record_reaches_past_its_release_or_says_why_not() -> None:
    from shared import repo_lint

    catalog, _ = repo_lint()
    narrow = (">=2.11,<2.12", ">=0.11.2,<0.12", "==3.15.*")
    checked = 0
    for record in catalog.sources.values():
        swept = [r for r in record.status if r.versions in narrow]
        if not swept or record.withdrawn is not None:
            continue
        checked += 1
        beyond = [r for r in record.status if r.versions not in narrow]
        assert beyond or "Not extended" in (swept[0].note or ""), record.id
        for item in beyond:
            if item.basis == "static":
                assert item.read and all((read.tag or read.commit) and read.path for read in item.read), record.id
    assert checked >= 20


def test_the_framework_guarantee_is_documented_and_elementwise_ops_are_static() -> None:
    for op in ("tf.add", "torch.add", "jax.numpy.add"):
        # torch.add with a sparse COO operand has a record of its own (torch.sparse-coo-duplicates, 2.11
        # only): the dense call is the elementwise kernel
        call = {"other.layout": "strided"} if op == "torch.add" else None
        s = kb.status(op, {"tf.add": "2.15", "torch.add": "2.4", "jax.numpy.add": "0.4.30"}[op], call=call)
        assert (s.deterministic, s.basis, s.headline) == (True, "static", "deterministic by the code read"), op
        assert s.read and s.read[0].path
    s = kb.status("tf.nn.softmax", "2.15")
    assert (s.deterministic, s.basis) == (None, "documented")
    assert s.headline.startswith("no known source, not verified; documented deterministic under EOD")
    assert kb.status("tf.nn.softmax", "2.5").basis == "unverified"  # enable_op_determinism came in 2.8
    s = kb.status("torch.utils.checkpoint.checkpoint", "2.11")
    assert (s.deterministic, s.basis, s.headline) == (None, "unverified", "no known source, not verified")


def test_the_cli_first_line_says_how_it_is_known(capsys: pytest.CaptureFixture[str]) -> None:
    from kb.cli import main

    assert main(["status", "torch.nn.functional.layer_norm", "2.11"]) == 0
    out = capsys.readouterr().out
    assert "no difference seen" in out.splitlines()[0] and "nobody ran it" not in out
    assert main(["status", "torch.utils.checkpoint.checkpoint", "2.11", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].strip() == '"headline": "no known source, not verified",'


# --- the nightly sweeps new releases ----------------------------------------------------------------------

def test_the_nightly_plans_and_sweeps_each_new_release_in_its_own_environment(tmp_path: Path) -> None:
    from kb.nightly import sweep as nightly_sweep

    root = make_project(tmp_path / "p", {"torch.cumprod-sample": CUMPROD},
                        {SWEEP_211: _sweep("2.11.0", [], "2026-11-25T23:00:00Z"),
                         SWEEP_211.replace("eager", "compiled"): {**_sweep("2.11.0", [], "2026-11-25T23:10:00Z"),
                                                                  "suite": "pytorch-compiled"}})
    due = nightly_sweep.releases_due(root, root / "data/sweeps")
    assert due == [("pytorch", "2.12.0")]  # newer than the swept 2.11.0; 2.10.0 is older
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        if "--sweep" in cmd:
            out = root / "data/sweeps/h100-test" / f"2026-11-27T000000Z-{cmd[cmd.index('--sweep') + 1]}.json"
            out.write_text("{}", encoding="utf-8")
        return subprocess.CompletedProcess(cmd, 0, "", None)

    step, written = nightly_sweep.step_release_sweeps(root, root / "data/sweeps", due, 1, {}, lambda text: None, 60,
                                                      tmp_path / "envs", run=fake_run)
    assert step["status"] == "ok" and len(written) == 2, step
    assert calls[0][1:3] == ["-m", "venv"] and "torch==2.12.0" in calls[1]
    assert [c[c.index("--sweep") + 1] for c in calls if "--sweep" in c] == ["pytorch-eager", "pytorch-compiled"]
    assert all(c[0] == str(tmp_path / "envs/pytorch-2.12.0/bin/python") for c in calls[1:])

    def no_wheel(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1 if "install" in cmd else 0, "", None)

    step, written = nightly_sweep.step_release_sweeps(root, root / "data/sweeps", due, 1, {}, lambda text: None, 60,
                                                      tmp_path / "envs2", run=no_wheel)
    assert step["status"] == "failed" and "does not install here" in step["detail"] and written == []
    assert nightly_sweep.step_release_sweeps(root, root / "data/sweeps", due, 0, {}, print, 60, tmp_path)[0]["status"] == "skipped"


# --- the site's lookup says the same first line ------------------------------------------------------------

LOOKUPS = [
    ("torch.nn.functional.layer_norm", "2.11", None), ("torch.nn.functional.layer_norm", "2.11", "input.dtype=float"),
    ("torch.nn.functional.layer_norm", "2.11", "input.dtype=float, eps=0.5"), ("torch.add", "2.4", None),
    ("tf.add", "2.15", None), ("tf.nn.softmax", "2.15", None), ("tf.nn.softmax", "2.5", None),
    ("torch.utils.checkpoint.checkpoint", "2.11", None), ("torch.cumprod", "2.10", "input.ndim=1, input.dtype=float32"),
    ("jax.numpy.add", "0.4.30", None), ("torch.cumprod", "2.9", None), ("jax.numpy.sort", "0.11.2", None),
]


def test_the_site_lookup_gives_kb_status_headline_and_basis(tmp_path: Path) -> None:
    import shutil

    from kb.calls import normalize
    from kb.site import api
    from shared import repo_lint
    from site_build import ROOT

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's JS cannot run outside a browser here")
    catalog, _ = repo_lint()
    path = tmp_path / "all.json"
    path.write_text(json.dumps(api.all_json(catalog, query.index())), encoding="utf-8")
    names = {"pytorch": sorted({op for op, _, _ in LOOKUPS if op.startswith("torch.")}),
             "tensorflow": ["tf.add", "tf.nn.softmax"], "jax": ["jax.numpy.add", "jax.numpy.sort"]}
    runner = """
const core = require(process.argv[1]);
const data = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(cases.map(c => {
  const r = core.lookup(data, c.names, c.op, c.version, null, 'gpu', null, core.parseCall(c.call));
  return [r.status.deterministic, r.status.basis, r.status.headline];
})));
"""
    cases = [{"op": op, "version": version, "call": call or "", "names": names} for op, version, call in LOOKUPS]
    done = subprocess.run([node, "-e", runner, str(ROOT / "site/assets/stack-core.js"), str(path)],
                          input=json.dumps(cases), capture_output=True, text=True, check=True)
    got = json.loads(done.stdout)
    for (op, version, call), (det, basis, text) in zip(LOOKUPS, got):
        given = None if not call else normalize({k.strip(): _value(v.strip()) for k, v in
                                                (item.split("=") for item in call.split(","))})
        s = kb.status(op, version, call=given)
        assert (det, basis, text) == (s.deterministic, s.basis, s.headline), (op, version, call)


def _value(text: str):
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


# --- the scan counts the calls nothing covers ------------------------------------------------------------

def test_the_scan_summary_counts_calls_answered_only_with_no_known_source(tmp_path: Path) -> None:
    import textwrap

    from kb.scan import pins
    from kb.scan.report_json import document
    from kb.scan.report_text import summary_lines
    from kb.scan.run import scan

    (tmp_path / "t.py").write_text(textwrap.dedent("""\
        import torch
        def f(a, x):
            y = torch.masked.sum(a)          # its record covers 2.11 only: at 2.10 nothing covers it, counted
            return torch.cumprod(x, 0)       # read in the 2.10 code: answered, not counted
        """))
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions("torch=2.10"))
    assert report.unverified == 1, report
    assert any('1 call(s) answered only with "no known source, not verified"' in line
               for line in summary_lines(report, query.index()["solutions"]))
    assert document(report)["summary"]["no_known_source"] == 1
