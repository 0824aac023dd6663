"""The first line of an answer, in words that say how it is known: the same text in `str(Status)` (which
writes "NOT deterministic" in capitals, for emphasis),
`kb status` (text and --json, `headline`), the site's lookup (site/assets/stack-core.js `headline`,
which mirrors this module) and the scan's summary.

One of:
- "not deterministic" (with "when ...; deterministic otherwise" where the call decides);
- "deterministic, verified": a run of this call on this release and device, and the records;
- "no difference seen ...": only an operator sweep ran the call (no record): a run that saw nothing,
  weaker than a code read, and said so;
- "deterministic by the code read": the kernel's code read at this release (an elementwise kernel, or
  a record's range read at the release's tag or in its wheel); "...; when <condition>: no known source,
  not verified" where records about some calls have no range for the release;
- "documented deterministic": the records' sources;
- "no known source, not verified": nothing covers the op on this release and device
  (`deterministic=None`), with the framework's documented guarantee under its switch where it has one.
"""

NO_SOURCE = "no known source, not verified"


def _runs(evidence: tuple) -> str:
    """"0 of 4 runs differed" for the cases that saw nothing (in every mode: a `same` case)."""
    counts = sorted({e.n for e in evidence if isinstance(e.n, int)})
    return f"0 of {'/'.join(str(c) for c in counts) or 'N'} runs differed"


def _where(evidence: tuple) -> str:
    first = evidence[0]
    gpu = (first.gpu or "GPU").replace("NVIDIA ", "") if first.device == "gpu" else "CPU"
    return f"{gpu}, {first.framework} {first.version}"


def headline(*, deterministic: bool | None, basis: str, sources: tuple, depends_on_call: bool, seen: tuple,
             guarantee: dict | None, call_given: bool, version: str) -> str:
    """The answer's first line (see the module docstring). `seen`: the sweep cases of an op no record
    covers that saw no difference, when they are what the answer rests on."""
    if deterministic is False:
        text = "not deterministic"
        conditions = [s.condition for s in sources if s.deterministic is False]
        if depends_on_call and conditions and all(conditions):
            text += " when " + "; or when ".join(dict.fromkeys(conditions)) + "; deterministic otherwise"
        return text
    if deterministic is True:
        if basis == "verified" and seen:
            what = "this call" if call_given else f"the {len(seen)} call(s) an operator sweep ran"
            text = (f"no difference seen in {what} ({_where(seen)}: {_runs(seen)}); a run, weaker than a code read")
            if not call_given:
                text += "; other calls: " + NO_SOURCE
            return text
        text = {"verified": "deterministic, verified", "static": "deterministic by the code read",
                "documented": "documented deterministic"}.get(basis, "deterministic")
        open_calls = [s.condition for s in sources if s.deterministic is None and s.condition]
        if depends_on_call and open_calls:  # records about some calls, with no range for this release
            text += "; when " + "; or when ".join(dict.fromkeys(open_calls)) + ": " + NO_SOURCE
        return text
    if sources and any(s.deterministic is not None for s in sources):
        unknown = [s.id for s in sources if s.deterministic is None]
        return f"unknown: {', '.join(unknown)} {'has' if len(unknown) == 1 else 'have'} no range for {version}, not verified"
    text = NO_SOURCE if not sources else f"no known source for {version}, not verified (the records cover other releases)"
    if guarantee is not None:
        text += (f"; documented deterministic under {guarantee['code']} ({guarantee['claim']})")
    return text
