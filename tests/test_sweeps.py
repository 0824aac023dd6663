"""Sources the determinism switch does not fix, compiled calls, and sweep evidence (issues 26, 36).

A small PyTorch project (the mini fixture plus the records, solutions, signatures and sweep
file written inline here) is linted and compiled into an index that is swapped in, so each
test states exactly which record, range or sweep case it exercises.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import kb
from kb import query
from kb.catalog import load
from kb.compile import build_index
from kb.lint import run

MINI = Path(__file__).parent / "fixtures" / "mini"
SWEEP = "data/sweeps/h100-test/2026-11-25T230000Z-pytorch-eager.json"
COMPILED = "data/sweeps/h100-test/2026-11-25T231000Z-pytorch-compiled.json"

REGISTRY = """\
# yaml-language-server: $schema=../../schema/versions.schema.json
name: pytorch
framework: pytorch
source: test fixture
releases:
  - version: 2.10.0
  - version: 2.11.0
  - version: 2.12.0
"""

SIGNATURES = """\
# pytorch test signatures
torch.cumprod\tinput\tdim\tdtype=None\tout=None
torch.cumsum\tinput\tdim\tdtype=None\tout=None
torch.index_add\tinput\tdim\tindex\tsource\t*\talpha=1\tout=None
torch.Tensor.index_add_\tdim\tindex\tsource\t*\talpha=1
torch.compile\tmodel=None\tfullgraph=False\tdynamic=None\tbackend=None\tmode=None
torch.undocumented\tinput\tdim
"""

SOLUTIONS = """\
- code: PT_DET
  title: torch.use_deterministic_algorithms(True)
  frameworks: [pytorch]
  kind: call
  how: Call torch.use_deterministic_algorithms(True).
  phase: 30
  preference: 10
- code: PT_EAGER_OP
  title: Keep the op eager inside torch.compile
  frameworks: [pytorch]
  kind: practice
  how: Wrap the op in torch.compiler.disable.
  phase: 40
  preference: 30
"""

HEAD = "# yaml-language-server: $schema=../../../schema/source.schema.json\n"
REF = "references:\n  - kind: doc\n    url: https://example.org/sweep\n    title: A sweep file\n"

CUMPROD = HEAD + """\
id: torch.cumprod-sample
framework: pytorch
title: cumprod sample
ops:
  - torch.cumprod
device: gpu
pass: forward
mechanism: reduction-order
summary: The scan groups float products differently from run to run, under the switch too.
calls:
  - when:
      input.dtype: [float]
status:
  - versions: '>=2.11,<2.12'
    switch: silent
""" + REF

CUMSUM_COMPILED = HEAD + """\
id: torch.cumsum-compiled-sample
framework: pytorch
title: compiled cumsum sample
ops:
  - torch.cumsum
  - torch.compile
device: gpu
pass: forward
mechanism: reduction-order
summary: Inductor's scan differs under the switch.
calls:
  - ops:
      - torch.cumsum
    when:
      compiled: [inductor]
status:
  - versions: '>=2.11,<2.12'
    solutions: [PT_EAGER_OP]
    switch: silent
""" + REF

INDEX_ADD = HEAD + """\
id: torch.index-add-sample
framework: pytorch
title: index_add sample
ops:
  - torch.index_add
  - torch.Tensor.index_add_
device: gpu
pass: forward
mechanism: cuda-atomics
summary: Atomic adds.
status:
  - versions: '>=2.10'
    solutions: [PT_DET]
""" + REF


def _mode(distinct, raised=None, ms=1.0):
    return {"runs": 4, "distinct": distinct, "max_abs": 0.0 if distinct == 1 else 1e-3, "median_ms": ms, "raised": raised}


def _case(op, klass, modes, dtype="float32", pass_="forward", call=None, fixes=None, variant=""):
    return {"op": op, "variant": variant, "case": f"{op}|{variant}|{dtype}|{pass_}", "pass": pass_, "dtype": dtype,
            "call": {"input.ndim": 1, "input.dtype": dtype, "input.shape": [4000000], "inputs.enlarged": "tile-all",
                     **(call or {})},
            "numel": 4000000, "modes": modes, "class": klass, "error": None, "fixes": fixes or []}


def sweep_doc(suite: str, cases: list[dict]) -> dict:
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["class"]] = counts.get(c["class"], 0) + 1
    return {
        "kind": "sweep", "suite": suite, "framework": "pytorch",
        "environment": {"env_id": "h100-test", "gpu": {"name": "NVIDIA H100 80GB HBM3", "count": 1}, "driver": "580",
                        "cuda": "13.0", "cudnn": "91900", "frameworks": {"pytorch": "2.11.0"}, "triton": "3.5.0",
                        "python": "3.12.3"},
        "started": "2026-11-25T23:00:00Z" if suite == "pytorch-eager" else "2026-11-25T23:10:00Z",
        "wall_s": 100.0, "runs_per_mode": 4, "device": "cuda",
        "modes": {"default": "no switch", "switch": "torch.use_deterministic_algorithms(True)"},
        "counts": counts, "cases": cases,
    }


EAGER_CASES = [
    _case("torch.cumprod", "silent", {"default": _mode(4), "switch": _mode(4)}, call={"args[0]": 0}),
    _case("torch.cumprod", "same", {"default": _mode(1), "switch": _mode(1)}, dtype="int64"),
    _case("torch.index_add", "fixed", {"default": _mode(3), "switch": _mode(1, ms=2.0)}, call={"args[0]": 0}),
    _case("torch.undocumented", "silent", {"default": _mode(2), "switch": _mode(2)}),
    _case("torch.cumsum", "error", {"default": _mode(None, raised="CUDA error: out of memory")}),
]
COMPILED_CASES = [
    _case("torch.cumsum", "silent", {"default": _mode(4), "switch": _mode(4)}, call={"args[0]": 0},
          fixes=[{"fix": "torch.compiler.disable around the op", "distinct": 1, "runs": 4, "time_ratio": 1.3,
                  "raised": None}]),
]


def make_project(root: Path, records: dict[str, str], sweeps: dict[str, dict | str] | None = None) -> Path:
    shutil.copytree(MINI, root)
    (root / "data/versions/pytorch.yaml").write_text(REGISTRY, encoding="utf-8")
    (root / "data/api/pytorch.signatures.txt").write_text(SIGNATURES, encoding="utf-8")
    with (root / "data/solutions.yaml").open("a", encoding="utf-8") as handle:
        handle.write(SOLUTIONS)
    (root / "data/sources/pytorch").mkdir(parents=True)
    for name, text in records.items():
        (root / "data/sources/pytorch" / f"{name}.yaml").write_text(text, encoding="utf-8")
    for rel, doc in (sweeps or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1), encoding="utf-8")
    return root


RECORDS = {"torch.cumprod-sample": CUMPROD, "torch.cumsum-compiled-sample": CUMSUM_COMPILED,
           "torch.index-add-sample": INDEX_ADD}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory):
    root = make_project(tmp_path_factory.mktemp("sweeps") / "project", RECORDS,
                        {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES), COMPILED: sweep_doc("pytorch-compiled", COMPILED_CASES)})
    _, findings = run(root)
    return root, findings, build_index(load(root))


@pytest.fixture()
def kbq(project):
    query.reset(project[2])
    try:
        yield kb
    finally:
        query.reset()


# --- the silent state ------------------------------------------------------------------------

def test_a_silent_source_never_offers_the_switch(kbq) -> None:
    s = kbq.status("torch.cumprod", "2.11", call={"input.dtype": "float"})
    assert s.deterministic is False
    assert s.silent == ("torch.cumprod-sample",)
    assert s.recipe is None and s.solutions == ()  # NS: none known, and never PT_DET
    (source,) = s.sources
    assert source.switch == "silent"
    assert "NOT fixed by the deterministic switch: torch.cumprod-sample" in str(s)
    assert any("NOT fixed by the deterministic switch (PT_DET)" in n and "no known fix (NS)" in n for n in s.notes)
    data = json.loads(json.dumps(s.to_dict()))
    assert data["silent"] == ["torch.cumprod-sample"] and data["sources"][0]["switch"] == "silent"


def test_a_fixed_source_says_the_switch_fixes_it(kbq) -> None:
    s = kbq.status("torch.index_add", "2.11")
    assert s.silent == () and s.recipe == ("PT_DET",) and s.sources[0].switch == "fixes"
    assert "NOT fixed" not in str(s)


def test_a_silent_source_with_a_replacement_gives_it_as_the_recipe(kbq) -> None:
    s = kbq.status("torch.cumsum", "2.11", call={"compiled": "inductor"})
    assert s.silent == ("torch.cumsum-compiled-sample",)
    assert s.recipe == ("PT_EAGER_OP",) and "PT_DET" not in s.solutions
    assert any("what does: PT_EAGER_OP" in n for n in s.notes)


# --- the compiled call fact ------------------------------------------------------------------

def test_an_eager_call_excludes_a_compiled_source(kbq) -> None:
    for call in ({}, {"input.dtype": "float"}, {"compiled": None}):
        s = kbq.status("torch.cumsum", "2.11", call=call)
        assert s.deterministic is True and s.excluded == ("torch.cumsum-compiled-sample",)
        assert any("the call runs eagerly" in n for n in s.notes)


def test_an_unknown_call_keeps_the_compiled_condition(kbq) -> None:
    s = kbq.status("torch.cumsum", "2.11")
    assert s.deterministic is False and s.depends_on_call is True
    assert s.sources[0].condition == "compiled with inductor"


def test_compiled_is_accepted_for_any_op(kbq) -> None:
    s = kbq.status("torch.index_add", "2.11", call={"compiled": "inductor"})
    assert s.deterministic is False and s.recipe == ("PT_DET",)
    with pytest.raises(ValueError, match="compiled"):
        kbq.status("torch.index_add", "2.11", call={"compiled": "xla"})


def test_torch_compile_lists_what_the_switch_leaves(kbq) -> None:
    s = kbq.status("torch.compile", "2.11")
    assert [x.id for x in s.sources] == ["torch.cumsum-compiled-sample"]
    assert s.silent == ("torch.cumsum-compiled-sample",) and s.recipe == ("PT_EAGER_OP",)
    assert kbq.status("torch.compile", "2.10").deterministic is None  # no range measured there


# --- sweep evidence -------------------------------------------------------------------------

def test_sweep_cases_are_evidence_for_the_call_that_ran(kbq) -> None:
    s = kbq.status("torch.cumprod", "2.11", call={"input.dtype": "float"})
    (evidence,) = s.verified
    assert evidence.verifier == "sweep:pytorch-eager" and evidence.file == SWEEP
    assert evidence.sweep["class"] == "silent" and evidence.sweep["dtype"] == "float32"
    # args[0] named, the exact dtype, the shape as its element count (a condition may state a range of it)
    assert evidence.call == {"dim": 0, "input.dtype": "float32", "input.ndim": 1, "input.numel": 4_000_000}
    assert [(m.mode, m.solutions, m.distinct) for m in evidence.modes] == [("default", (), 4), ("switch", ("PT_DET",), 4)]
    assert evidence.contradicts == ()


def test_sweep_evidence_is_only_for_the_version_and_call_measured(kbq) -> None:
    assert kbq.status("torch.index_add", "2.10").verified == ()  # measured on 2.11 only
    assert kbq.status("torch.index_add", "2.11", call={"dim": 1}).verified == ()  # the sweep ran dim=0
    assert len(kbq.status("torch.index_add", "2.11", call={"dim": 0}).verified) == 1
    # the eager index_add case says nothing about a compiled call
    assert kbq.status("torch.index_add", "2.11", call={"compiled": "inductor"}).verified == ()


def test_compiled_evidence_shows_for_compiled_calls_only(kbq) -> None:
    (evidence,) = kbq.status("torch.cumsum", "2.11", call={"compiled": "inductor"}).verified
    assert evidence.call["compiled"] == "inductor" and evidence.sweep["fixes"][0]["distinct"] == 1


def test_error_cases_are_never_evidence(project) -> None:
    runs = project[2]["runs"]
    assert all(e["sweep"]["class"] != "error" for evs in runs.values() for e in evs if e.get("sweep"))
    assert not any("out of memory" in str(e) for evs in runs.values() for e in evs)


def test_lint_flags_the_undocumented_source_only(project) -> None:
    findings = project[1]
    assert [(f.path, f.code) for f in findings] == [(SWEEP, "KB021")]
    (finding,) = findings
    assert "torch.undocumented" in finding.message and "undocumented source" in finding.message
    assert finding.hint


def test_a_case_reviewed_as_misstated_is_not_an_undocumented_source(tmp_path: Path) -> None:
    """verify.reviewed[].cases names cases a person read as stated wrongly by their file (the sparse
    operand of torch.add given as the input): KB021 stops flagging those cases, and only those."""
    review = (f"verify:\n  unverifiable: 'the sweep checks it'\n  reviewed:\n    - run: {SWEEP}\n      note: 'case 3 states the operand wrongly'\n"
              "      cases: [3]\n")
    records = dict(RECORDS, **{"torch.cumprod-sample": CUMPROD + review})
    root = make_project(tmp_path / "p", records, {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES)})
    assert [f.code for f in run(root)[1] if f.code != "KB009"] == []  # KB009: the appended block's field order
    other = dict(RECORDS, **{"torch.cumprod-sample": CUMPROD + review.replace("[3]", "[2]")})
    root = make_project(tmp_path / "q", other, {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES)})
    assert [f.code for f in run(root)[1] if f.code != "KB009"] == ["KB021"]


def test_a_withdrawn_records_reviewed_cases_are_neither_a_source_nor_seen(tmp_path: Path) -> None:
    """A record withdrawn because its sweep cases broke the op's contract (lu_solve given 0/1 pivots) keeps
    those cases in verify.reviewed: KB021 stops flagging them and the index stops answering from them."""
    withdrawn = HEAD + """\
id: torch.undocumented-sample
framework: pytorch
title: a source that was not one
ops:
  - torch.undocumented
device: gpu
pass: forward
mechanism: other
summary: The sweep's inputs broke the op's contract.
status:
  - versions: '>=2.11,<2.12'
    solutions: [PT_DET]
""" + REF + f"""\
verify:
  unverifiable: withdrawn
  reviewed:
    - run: {SWEEP}
      note: case 3 broke the contract
      cases: [3]
withdrawn:
  date: 2026-11-28
  reason: valid inputs gave one result
"""
    root = make_project(tmp_path / "p", dict(RECORDS, **{"torch.undocumented-sample": withdrawn}),
                        {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES)})
    _, findings = run(root)
    assert [f.code for f in findings if f.code != "KB009"] == []
    assert "torch.undocumented" not in build_index(load(root))["seen_marks"].get("pytorch", {})
    root = make_project(tmp_path / "q", dict(RECORDS, **{"torch.undocumented-sample": withdrawn.replace("[3]", "[2]")}),
                        {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES)})
    assert "torch.undocumented" in build_index(load(root))["seen_marks"]["pytorch"]


def test_lint_flags_a_record_the_sweep_contradicts(tmp_path: Path) -> None:
    wrong = CUMPROD.replace("    switch: silent\n", "    solutions: [PT_DET]\n")
    root = make_project(tmp_path / "p", {"torch.cumprod-sample": wrong},
                        {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES[:2])})
    _, findings = run(root)
    assert [f.code for f in findings] == ["KB021"]
    assert "differs under the switch without an error" in findings[0].message
    assert "fixed by PT_DET" in findings[0].message
    index = build_index(load(root))
    (evidence,) = index["runs"]["torch.cumprod-sample"]
    assert evidence["contradicts"] and index["flagged"] == ()  # KB015 stays about run files


def test_a_silent_range_listing_the_switch_is_kb020(tmp_path: Path) -> None:
    wrong = CUMPROD.replace("    switch: silent\n", "    solutions: [PT_DET]\n    switch: silent\n")
    root = make_project(tmp_path / "p", {"torch.cumprod-sample": wrong})
    _, findings = run(root)
    assert [(f.code, f.line) for f in findings] == [("KB020", 16)]  # the solutions line
    assert "PT_DET" in findings[0].message


@pytest.mark.parametrize("text, code, where", [
    ("{not json", "KB002", "invalid json"),
    (json.dumps({"kind": "sweep"}), "KB002", "missing"),
    (json.dumps({**sweep_doc("pytorch-eager", EAGER_CASES[:1]), "counts": {"silent": 5}}), "KB002", "counts"),
    (json.dumps(sweep_doc("pytorch-eager", [{**EAGER_CASES[0], "class": "weird"}])), "KB002", "cases[0].class"),
    (json.dumps(sweep_doc("pytorch-eager", [{**EAGER_CASES[0], "modes": {"default": {"distinct": "many"}}}])),
     "KB002", "cases[0].modes.default.distinct"),
    ("[" * 100 + "]" * 100, "KB012", "nested deeper"),
])
def test_a_malformed_sweep_file_is_a_coded_finding(tmp_path: Path, text: str, code: str, where: str) -> None:
    root = make_project(tmp_path / "p", RECORDS, {SWEEP: text})
    _, findings = run(root)
    assert [(f.path, f.code) for f in findings] == [(SWEEP, code)]
    assert where in findings[0].message.lower() or where in findings[0].message
    index = build_index(load(root))  # the build leaves the file out, no traceback
    assert not any(e.get("sweep") for evs in index["runs"].values() for e in evs)


# --- the site ----------------------------------------------------------------------------------

def test_the_site_lists_silent_sources_first(project, kbq) -> None:
    from kb.site import pages

    root, _, index = project
    listed = pages.silent_sources(index)
    assert [(x["id"], x["solutions"]) for x in listed] == [
        ("torch.cumprod-sample", []), ("torch.cumsum-compiled-sample", ["PT_EAGER_OP"])]
    assert pages.silent_sources(index, "tensorflow") == []
    out = pages.pages(load(root), index, {"api/v1/all.json": "{}\n"})
    home, status = out["index.md"], out["frameworks/pytorch.md"]
    for page, link in ((home, 'href="sources/torch.cumprod-sample.html"'), (status, 'href="../sources/torch.cumprod-sample.html"')):
        assert "Not fixed by the deterministic switch" in page and link in page
    assert status.index("Not fixed by the deterministic switch") < status.index('class="kb-matrix"')
    assert "no known fix" in home and "PT_EAGER_OP" in home and "compiled with inductor" in home
    assert home.index("Not fixed by the deterministic switch") < home.index("## The newest recipe")
    assert "Not fixed by the deterministic switch" not in out["frameworks/tensorflow.md"]


# --- the nightly sweep step ------------------------------------------------------------------------

def test_nightly_sweep_is_not_available_without_the_sweep_command(tmp_path: Path) -> None:
    from kb.nightly import sweep as nightly_sweep

    step, written = nightly_sweep.step_sweep(tmp_path, tmp_path / "data/sweeps", {"pytorch": "2.12.0"}, 1, {},
                                             lambda text: None, 10, available=lambda root, env: False)
    assert step == {"step": "sweep", "status": "not available",
                    "detail": "sweep not available: this build's `kb verify` has no --sweep; no sweep run"}
    assert written == []
    step, _ = nightly_sweep.step_sweep(tmp_path, tmp_path / "data/sweeps", {"pytorch": "2.12.0"}, 0, {},
                                       lambda text: None, 10, available=lambda root, env: True)
    assert step["status"] == "skipped" and "no GPU" in step["detail"]


def test_nightly_sweeps_new_releases_only(project) -> None:
    from kb.nightly import sweep as nightly_sweep

    root = project[0]
    done = nightly_sweep.swept(root, root / "data/sweeps")
    assert done == {("pytorch-eager", "2.11.0"), ("pytorch-compiled", "2.11.0")}
    assert nightly_sweep.due({"pytorch": "2.11.0", "jax": "0.11.2", "tensorflow": "2.20.0"}, done) == [("jax", "0.11.2")]
    assert nightly_sweep.due({"pytorch": "2.12.0"}, done) == [("pytorch-eager", "2.12.0"), ("pytorch-compiled", "2.12.0")]


def test_nightly_reports_new_silent_sources_first(tmp_path: Path, monkeypatch) -> None:
    """A stand-in for `kb verify --sweep` writes tonight's file for 2.12: its silent cases that the
    2.11 file did not have are new, listed first in the report with the records that cover them."""
    import subprocess

    from kb.nightly import report
    from kb.nightly import sweep as nightly_sweep

    root = make_project(tmp_path / "p", RECORDS, {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES)})
    tonight = sweep_doc("pytorch-eager", [
        *EAGER_CASES[:1],  # cumprod: silent on 2.11 already
        _case("torch.cumsum", "silent", {"default": _mode(4), "switch": _mode(3)}),
        _case("torch.undocumented", "silent", {"default": _mode(2), "switch": _mode(2)}, pass_="backward"),
    ])
    tonight["environment"]["frameworks"]["pytorch"] = "2.12.0"
    tonight["started"] = "2026-11-26T01:00:00Z"
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        if "--sweep" in cmd and cmd[cmd.index("--sweep") + 1] == "pytorch-eager":
            out = root / "data/sweeps/h100-test/2026-11-26T010000Z-pytorch-eager.json"
            out.write_text(json.dumps(tonight), encoding="utf-8")
        return subprocess.CompletedProcess(cmd, 0, "", None)

    monkeypatch.setattr(nightly_sweep.subprocess, "run", fake_run)
    step, written = nightly_sweep.step_sweep(root, root / "data/sweeps", {"pytorch": "2.12.0"}, 1, {},
                                             lambda text: None, 10, available=lambda r, e: True)
    assert [c[c.index("--sweep") + 1] for c in calls] == ["pytorch-eager", "pytorch-compiled"]
    assert step["status"] == "ok" and len(written) == 1, step
    found = nightly_sweep.new_silent(root, root / "data/sweeps", written)
    assert [(f["op"], f["pass"]) for f in found] == [("torch.cumsum", "forward"), ("torch.undocumented", "backward")]
    assert found[1]["covered_by"].startswith("none")
    body = {"created": "2026-11-26T01:00:00Z", "environment": {"gpu": {"name": "H100", "count": 1}, "frameworks": {},
                                                             "platform": "Linux"},
            "wall_s": 1.0, "regressions": [], "steps": [step], "new_silent": found, "skipped": [], "newly_differ": [],
            "newly_confirmed": [], "link_changes": [], "stale_days": 90, "stale": [], "never_verified": [],
            "first_outcomes": [], "problems": [], "compared": []}
    text = report.markdown(body)
    assert text.index("## New silent sources (2)") < text.index("## Steps") < text.index("## Regressions")
    assert "torch.undocumented" in text


# --- how an answer is known (issue 34, item 1) -----------------------------------------------------

def test_basis_says_how_the_answer_is_known(kbq) -> None:
    assert kbq.status("torch.cumprod", "2.11", call={"input.dtype": "float"}).basis == "verified"  # the sweep ran it
    assert kbq.status("torch.cumprod", "2.11", call={"input.dtype": "float", "dim": 1}).basis == "documented"
    assert kbq.status("torch.compile", "2.11").basis == "verified"  # call unknown: every case of its record counts
    s = kbq.status("tf.nn.bias_add", "2.1")
    assert s.basis == "documented"
    s = kbq.status("torch.add", "2.11")  # a real op (data/api/pytorch.txt) with no record, no run, no code read here
    assert s.deterministic is None and s.sources == ()  # DESIGN.md: never "deterministic" without a basis
    assert s.basis == "unverified" and "no known source, not verified" in str(s)
    assert json.loads(json.dumps(s.to_dict()))["basis"] == "unverified"


def test_a_compiled_only_record_without_a_range_leaves_the_eager_answer(tmp_path: Path) -> None:
    """The compiled record is measured on 2.11 only: on 2.12 an unknown call (None) still gets the
    eager answer, while a compiled call is unknown there (no range)."""
    eager = INDEX_ADD.replace("torch.index-add-sample", "torch.cumsum-eager-sample").replace(
        "  - torch.index_add\n  - torch.Tensor.index_add_\n", "  - torch.cumsum\n")
    root = make_project(tmp_path / "p", {"torch.cumsum-compiled-sample": CUMSUM_COMPILED,
                                         "torch.cumsum-eager-sample": eager})
    assert run(root)[1] == []
    query.reset(build_index(load(root)))
    try:
        s = kb.status("torch.cumsum", "2.12")
        assert s.recipe == ("PT_DET",) and s.deterministic is False
        assert any("compiled" in n and "no range for 2.12" in n for n in s.notes)
        c = kb.status("torch.cumsum", "2.12", call={"compiled": "inductor"})
        assert c.recipe is None  # unknown for a compiled call
        s11 = kb.status("torch.cumsum", "2.11")  # 2.11: both apply, the compiled one with its replacement
        assert s11.recipe == ("PT_DET", "PT_EAGER_OP") and s11.silent == ("torch.cumsum-compiled-sample",)
    finally:
        query.reset()


def test_nightly_merges_the_gpu_jobs_sweep_files(tmp_path: Path) -> None:
    """CI: GPU jobs sweep into an artifact folder; the report job merges the files into data/sweeps
    (byte copies, never over an existing file) and reports their new silent sources."""
    from kb.nightly import sweep as nightly_sweep

    root = make_project(tmp_path / "p", RECORDS, {SWEEP: sweep_doc("pytorch-eager", EAGER_CASES)})
    tonight = sweep_doc("pytorch-eager", [_case("torch.cumsum", "silent", {"default": _mode(4), "switch": _mode(4)})])
    tonight["environment"]["frameworks"]["pytorch"] = "2.12.0"
    artifacts = tmp_path / "artifacts" / "h100-test"
    artifacts.mkdir(parents=True)
    text = json.dumps(tonight)
    (artifacts / "2026-11-26T010000Z-pytorch-eager.json").write_text(text, encoding="utf-8")
    (artifacts / "2026-11-26T010500Z-pytorch-compiled.json").write_text("{broken", encoding="utf-8")
    step, written = nightly_sweep.merge_from(root, tmp_path / "artifacts")
    target = root / "data/sweeps/h100-test/2026-11-26T010000Z-pytorch-eager.json"
    assert written == [str(target)] and target.read_text(encoding="utf-8") == text
    assert step["status"] == "partial" and "refused" in step["detail"]
    assert [f["op"] for f in nightly_sweep.new_silent(root, root / "data/sweeps", written)] == ["torch.cumsum"]
    assert nightly_sweep.merge_from(root, tmp_path / "artifacts")[1] == []  # never copied twice
    # a GPU job writing to its artifact folder skips releases the checkout already swept
    done = nightly_sweep.swept(root, root / "data/sweeps")
    assert ("pytorch-eager", "2.12.0") in done


def test_case_call_keeps_keywords_of_an_open_ended_signature() -> None:
    """An op documented only as (*args, **kwargs) (private aten ops) takes any keyword: the sweep's
    keyword arguments are call facts, so a record's condition on them can cover the case."""
    from kb.verify import sweepfile

    case = {"op": "torch.ops.aten._flash_attention_forward", "dtype": "bfloat16",
            "call": {"dropout_p": 0.0, "is_causal": True, "args[0]": {"tensor": [2, 2], "dtype": "bfloat16"}}}
    open_ended = (("*args", None), ("**kwargs", None))
    call = sweepfile.case_call(case, "pytorch-eager", open_ended)
    assert call["dropout_p"] == 0.0 and call["is_causal"] is True
    closed = (("input", None), ("is_causal", None))
    assert "dropout_p" not in sweepfile.case_call(case, "pytorch-eager", closed)


def test_case_call_states_the_jax_at_method() -> None:
    """The JAX sweep names each indexed update (jax.numpy.ndarray.at.set): kb_op keeps the `.at`
    name, and the case says the method (at.method) and unique_indices at JAX's default, since the
    sweep passes no keywords; `.set` and `.add` cases then meet different records."""
    from kb.verify import sweepfile

    case = {"op": "jax.numpy.ndarray.at.set", "dtype": "float32", "call": {"input.ndim": 1, "input.dtype": "float32"}}
    assert sweepfile.kb_op(case["op"]) == "jax.numpy.ndarray.at"
    call = sweepfile.case_call(case, "jax", None)
    assert call["at.method"] == "set" and call["unique_indices"] is False
    other = sweepfile.case_call({**case, "op": "jax.numpy.cumsum"}, "jax", None)
    assert "at.method" not in other and "unique_indices" not in other
