"""The call facts (input.ndim, input.dtype, ...) are listed once, in kb/calls.py FACTS, and every
other place that names them reads that list (docs/calls.md; the outside review of 2026-11-27
found four spellings, one of them stale in KB016's title)."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from kb import calls, schema
from kb.lint import calls as lint_calls
from kb.probe import kbask

ROOT = Path(__file__).resolve().parent.parent


def test_the_schema_takes_every_fact_from_kb_calls() -> None:
    assert schema.CALL_FACTS is calls.FACTS
    pattern = re.compile(typing.get_args(schema.CallKey)[1].pattern)
    for fact in calls.FACTS:
        assert pattern.fullmatch(fact), fact
    assert not pattern.fullmatch("input.rank")  # a fact that does not exist is no parameter name either


def test_kb016_title_names_every_fact() -> None:
    for fact in calls.FACTS:
        assert fact in lint_calls.TITLE, fact
    assert (ROOT / "docs" / "lint.md").read_text(encoding="utf-8").count(", ".join(calls.FACTS)) >= 1


def test_the_probe_falls_back_within_the_kbs_facts() -> None:
    assert set(kbask.FACTS) < set(kbask.RECORDED_FACTS) <= set(calls.FACTS)


def test_no_other_module_spells_the_list() -> None:
    """A tuple literal naming two or more facts outside kb/calls.py is a second copy (the
    probe's fallbacks in kb/probe/kbask.py are checked against it above)."""
    quoted = "|".join(re.escape(f'"{fact}"') for fact in calls.FACTS)
    spelled = re.compile(rf"(?:{quoted}),\s*(?:{quoted})")
    found = []
    for path in sorted((ROOT / "kb").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("kb/calls.py", "kb/probe/kbask.py", "kb/_index.py", "kb/_details.py", "kb/_seen.py"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if spelled.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert found == [], "call facts spelled again (import kb.calls.FACTS instead):\n" + "\n".join(found)
