"""Does a record apply to one verified case (an op called one way)?

To add a call case to a verifier:
1. Add `{"op": ..., "call": {...}}` to the verifier's `cases=` constant (verifiers/<area>/):
   the op one of its record's `ops`, the call's keys the op's parameters with literal values,
   or the call facts (kb/calls.py FACTS).
2. Make the verifier build that call: it is called once per case, with `ctx.op` and
   `ctx.call` set to the case's.
3. Run `python -m kb validate` (lint KB024 names a case whose op the KB does not know or whose
   call key is neither a parameter of the op nor a call fact), `python -m kb verify --verifier
   <name> --dry-run` (the plan lists `case <op>(<call>)` for each case), then
   `pytest tests/test_verify_cases.py`.

A verifier checks calls, not names (docs/calls.md): each case is `{op, call}`, and the merge
must know what the record predicts for that exact call before it can say a run contradicts
it. A case whose call the record's `calls:` (or its range's `when:`) excludes is a
complementary case: the record predicts nothing differs by default and nothing raises
under the switch. Works on plain data (the record's `calls` as dicts or models), so the
planner on the GPU machine (no pydantic) and the merge share it.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from kb.calls import DEFAULT_FACTS, value_holds

RAN = {**DEFAULT_FACTS, "input.layout": "strided"}
"""What a case that ran leaves out: eager, and a dense (strided) first tensor unless it says
otherwise (a query's missing `input.layout` is unknown instead: kb/calls.py). A condition on
any other call fact (FACTS) a case leaves out cannot be decided. A value is matched as a
query's is (kb.calls.value_holds): an exact dtype satisfies its kind, `given` any value but None."""


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def holds(when: Mapping[str, list] | None, call: Mapping[str, Any]) -> bool | None:
    """True when every key of `when` holds for `call`; False when one fails; None when none
    fails but some key is missing from the call (the case cannot decide it)."""
    if not when:
        return True
    unknown = False
    for key, values in when.items():
        if key not in call and key not in RAN:
            unknown = True
            continue
        found = value_holds(call[key] if key in call else RAN[key], tuple(values))
        if found is False:
            return False
        unknown = unknown or found is None
    return None if unknown else True


def applies(calls: list | tuple | None, range_when: Mapping[str, list] | None, op: str | None,
            call: Mapping[str, Any] | None) -> bool | None:
    """Whether a record with these `calls` patterns (and the range's `when`) applies to `op`
    called as `call`: True, False, or None (the case does not say enough). A case with no op
    (a verifier written before cases existed) is taken as the record's claim: None."""
    if op is None or call is None:
        return None
    call = dict(call)
    patterns = [p for p in (calls or ()) if not _get(p, "ops") or op in _get(p, "ops")]
    if not patterns:
        # An op of the record that no pattern names applies to every call.
        record: bool | None = True
    else:
        outcomes = [holds(_get(p, "when"), call) for p in patterns]
        record = True if True in outcomes else None if None in outcomes else False
    if record is False:
        return False
    ranged = holds(range_when, call)
    if ranged is False:
        return False
    return None if None in (record, ranged) else True


def label(op: str | None, call: Mapping[str, Any] | None) -> str:
    """One readable line for a case: `F.interpolate(mode='bilinear', input.ndim=4)`."""
    if op is None:
        return "(every call)"
    args = ", ".join(f"{k}={v!r}" for k, v in (call or {}).items())
    return f"{op}({args})"
