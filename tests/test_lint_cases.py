"""KB024 (kb/lint/cases.py): every case names an op the KB knows and call keys the op has.

Planted in a copy of the mini fixture project: a verifier case with a misspelt parameter, one
with an op no inventory lists, a sweep special (a literal `Case`) with a misspelt fact, and a
`cases=` that cannot be read without running the module; each is reported at its file and line
by `kb validate`'s run of the checks. The cases built at run time (the PyTorch and JAX branch
units) are checked with the same `problems()` after building them on the CPU.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from kb import apinames
from kb.catalog import load
from kb.lint import CHECKS, cases, run

ROOT = Path(__file__).resolve().parents[1]

PLANTED = textwrap.dedent('''
    from verifiers import verifier

    CASES = (
        {"op": "torch.nn.functional.interpolate", "call": {"mode": "bilinear", "input.ndim": 4}},
        {"op": "torch.nn.functional.interpolate", "call": {"mdoe": "bilinear"}},
        {"op": "torch.nn.functional.interpolat", "call": {}},
    )


    @verifier("torch.planted", framework="pytorch", cases=CASES)
    def planted(ctx):
        return lambda: None


    @verifier("torch.unreadable", framework="pytorch", cases=tuple({"op": "torch.cumsum", "call": {}} for _ in range(2)))
    def unreadable(ctx):
        return lambda: None
''')

SPECIAL = textwrap.dedent('''
    from kb.case import Case

    GOOD = Case("torch.cumsum", {"dim": 0, "input.ndim": 1, "inputs.collide": "4096 values"}, passes="forward")
    BAD = Case("torch.cumsum", {"dim": 0, "input.ndmi": 1}, passes="forward")
''')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "fixtures" / "mini", root)
    api = root / "data" / "api"
    (api / "pytorch.txt.gz").write_bytes(apinames.encode("# test inventory\ntorch.nn.functional.interpolate\ntorch.cumsum\n"))
    (api / "pytorch.signatures.txt").write_text(
        "# test signatures\n"
        "torch.nn.functional.interpolate\tinput\tsize=None\tscale_factor=None\tmode='nearest'\talign_corners=None\n"
        "torch.cumsum\tinput\tdim\tdtype=None\tout=None\n", encoding="utf-8")
    (root / "verifiers").mkdir()
    shutil.copy(ROOT / "verifiers" / "__init__.py", root / "verifiers" / "__init__.py")
    (root / "verifiers" / "planted.py").write_text(PLANTED, encoding="utf-8")
    (root / "kb" / "sweep").mkdir(parents=True)
    (root / "kb" / "sweep" / "specials.py").write_text(SPECIAL, encoding="utf-8")
    return root


def test_kb_validate_reports_each_planted_case_at_its_line(project: Path) -> None:
    assert cases in CHECKS
    _, findings = run(project)
    got = sorted((f.path, f.line, f.message) for f in findings if f.code == cases.CODE)
    assert [(path, line) for path, line, _ in got] == [
        ("kb/sweep/specials.py", 5), ("verifiers/planted.py", 6), ("verifiers/planted.py", 7),
        ("verifiers/planted.py", 16)], got
    messages = [m for _, _, m in got]
    assert "call key 'input.ndmi'" in messages[0]
    assert "case 1" in messages[1] and "call key 'mdoe'" in messages[1] and "mode" in messages[1]
    assert "case 2" in messages[2] and "'torch.nn.functional.interpolat' is neither" in messages[2]
    assert "torch.unreadable" in messages[3] and "not a literal" in messages[3]


def test_the_shipped_cases_pass() -> None:
    catalog = load(ROOT)
    before = len(catalog.findings)
    cases.check(catalog)
    assert [str(f) for f in catalog.findings[before:]] == []


# Keys of branch units that are not the op's parameter names, found by this check when it came;
# each is recorded as written in committed sweep files (data/sweeps/), so renaming it would change
# what the sweep measured: the KB leaves such a key out of the case's call (sweepfile.case_call).
# A person renames it in the unit with the next sweep run and takes it off this list.
RECORDED = {
    ("torch.Tensor.index_put", "index"),  # the parameter is `indices`
    ("torch.Tensor.index_copy", "tensor"),  # the signature names it `tensor2`
    ("torch.Tensor.scatter", "value"),  # the value form's parameter, absent from the inventory's signature
    ("torch.Tensor.__setitem__", "index"),  # the signature (generated since the unit was written) names it `key`
    ("jax.lax.dot_general", "batch_dims"),  # a note on dimension_numbers, not a parameter
}


# Ops a branch unit calls by op_db's own spelling, which no public name and no record has: they are in the
# branch inventory (data/branches/pytorch-2.11.json) under this name, so the unit keeps it.
PRIVATE_OPS = {
    "torch.ops.aten._safe_softmax.default",  # op_db's entry for the private aten op (verifiers/sweep/torch_branches_more.py rest)
}


def _unrecorded(op: str | None, found: list[str]) -> list[str]:
    """The findings for `op` except those of RECORDED (a key and its `<key>.<fact>` forms) and PRIVATE_OPS'
    unknown-name finding."""
    out = []
    for message in found:
        if op in PRIVATE_OPS and "is neither an op of a record nor a name of" in message:
            continue
        key = message.split("call key '", 1)[-1].split("'", 1)[0] if "call key '" in message else None
        if key is None or (op, key.split(".")[0]) not in RECORDED:
            out.append(message)
    return out


def _known() -> cases.Known:
    catalog = load(ROOT)
    return cases.Known(ROOT, {op for r in catalog.sources.values() for op in (*r.ops, *r.aliases)})


def test_every_pytorch_branch_case_names_a_known_op_and_call_keys() -> None:
    torch = pytest.importorskip("torch", reason="the CPU build of PyTorch is not installed")
    from verifiers.sweep.torch_branches import UNITS

    known = _known()
    found = []
    for key, unit in UNITS.items():
        for case in unit(torch, "cpu", torch.float32, 0.05):
            found += [f"{key}: {case.branch}: {m}" for m in _unrecorded(case.op, cases.problems(case.op, case.call, known))]
    assert found == []


def test_every_jax_case_names_a_known_op_and_call_keys() -> None:
    pytest.importorskip("jax", reason="JAX is not installed")
    import os
    import types

    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from verifiers.sweep import jax_worker

    known = _known()
    found = []
    for branches in (False, True):
        args = types.SimpleNamespace(device="cpu", branches=branches, runs=2, mode="default", planted=False, list=False,
                                     dtypes="")
        worker = jax_worker.Worker(args)
        table = worker.branch or worker.special
        for unit, build in table.items():
            case = build(worker.jnp.float32)
            found += [f"{unit}: {m}" for m in _unrecorded(case.op, cases.problems(case.op, case.call, known))]
    assert found == []
