"""The site's Markdown pages (mkdocs sources), rendered from kb/templates/site/.

Returns relative path -> text; kb/site/build.py writes them. Record text reaches the pages
only through the templates' escaping (see kb/render.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from collections.abc import Callable

from kb import calls
from kb.catalog import Catalog
from kb.compile import reference
from kb.entries import DETERMINISTIC, SOLUTIONS, SWITCH, VERSIONS, range_fields
from kb.site import api, matrix, model, nightly, recipes, words
from kb.render import environment, render
from markupsafe import Markup, escape

HAND_WRITTEN = ("api.md", "calls.md", "records.md", "versions.md", "lint.md", "probe.md", "scan.md", "check.md", "verification.md", "sweep.md",
                "architecture.md", "security.md", "sweep-tensorflow.md")


def _ranges(ranges: tuple) -> list[dict]:
    out = []
    for entry in ranges:
        r = range_fields(entry)
        codes, note = r["solutions"], r["note"]
        state = "ok" if r["deterministic"] else ("fix" if codes else "ns")
        if r["when"]:
            only = f"Only for calls where {calls.text((r['when'],))}."
            note = f"{only} {note}" if note else only
        varying = r["varies_with"] if r["varies"] == "configuration" else ()
        out.append({"versions": r["versions"], "state": state, "state_text": words.sentence(state, codes, {}, varying),
                    "solutions": codes, "raises": r["raises"], "note": note, "switch": r["switch"]})
    return out


OUTCOME = {"ok": "completed", "raised": "raised", "error": "failed", "env-error": "the machine failed (not evidence)"}


def machine(run: dict) -> str:
    """What an environment id stands for, in words: the GPU, CUDA and driver (or the CPU)."""
    if run.get("device") != "gpu" or not run.get("gpu"):
        return "CPU"
    count = run["gpu_count"]
    text = f"{run['gpu']}" + (f" × {count}" if count is not None and count > 1 else "")
    if run.get("cuda"):
        text += f", CUDA {run['cuda']}"
    if run.get("driver"):
        text += f", driver {run['driver']}"
    return text


def call_conditions(source: dict) -> list[dict]:
    """The record's `calls:` patterns as lines a reader can scan: which ops, under which call."""
    out = []
    for ops, when in source["calls"]:
        out.append({"ops": list(ops) or list(source["ops"]), "text": calls.text((when,)) if when else "any call"})
    return out


def _runs_for(index: dict, source_id: str) -> list[dict]:
    """Runs of a source from the index's `runs`, flattened for tables, in words.

    "completed" is whether the run finished; whether its results differed is its own column,
    so a row never reads "ok" while 4 of 5 runs differed.
    """
    out = []
    for run in index["runs"].get(source_id, ()):
        modes = []
        for mode in run["modes"]:
            n = run["n"]
            median = mode["median_s"]
            ratio = mode["time_ratio"]
            outcome = OUTCOME.get(mode["outcome"], str(mode["outcome"]))
            if mode["message"] and mode["outcome"] != "ok":
                outcome += f": {mode['message']}"
            result = words.runs_text(mode["distinct"], n) if mode["outcome"] == "ok" else "–"
            modes.append({"mode": mode["mode"], "outcome": outcome, "differed": result,
                          "state": "ok" if mode["distinct"] == 1 else ("ns" if mode["outcome"] == "ok" else "unknown"),
                          "median": f"{median:.3g} s" if median is not None else "",
                          "ratio": f"{ratio:g}×" if ratio is not None else ""})
        out.append({
            "source": source_id,
            "env": run["env_id"],
            "machine": machine(run),
            "date": run["date"],
            "version": f"{words.name(run['framework'])} {run['version']}".strip(),
            "device": run["device"], "modes": modes,
        })
    return out


def silent_sources(index: dict, framework: str | None = None) -> list[dict]:
    """Sources the framework's determinism switch does not fix (a range with `switch: silent`):
    what a setup that set the switch still leaks, listed first on the home page and on each
    framework's status page."""
    out = []
    for sid, source in index["sources"].items():
        if framework is not None and source["framework"] != framework:
            continue
        for entry in source["status"]:
            if entry[SWITCH] == "silent" and not entry[DETERMINISTIC]:
                conditions = [c["text"] for c in call_conditions(source) if c["text"] != "any call"]
                out.append({"id": sid, "title": source["title"], "framework": source["framework"],
                            "framework_name": words.name(source["framework"]), "versions": entry[VERSIONS],
                            "solutions": list(entry[SOLUTIONS]), "condition": "; or ".join(conditions)})
    return sorted(out, key=lambda x: (words.ORDER.index(x["framework"]) if x["framework"] in words.ORDER else 99, x["id"]))


def source_page(catalog: Catalog, index: dict, source: dict) -> str:
    source = words.public(source, words.machines(index))
    row = matrix.matrix(catalog, index, source["framework"], only=source["id"])
    codes = {c for r in source["status"] for c in r[SOLUTIONS]}
    codes |= {c for rs in source["distributions"].values() for r in rs for c in r[SOLUTIONS]}
    switches = [c for c in index["order"] if c in codes]
    return render(
        "site/source.md.j2", s=source, ranges=_ranges(source["status"]),
        distributions=[(n, _ranges(r)) for n, r in source["distributions"].items()],
        row=row, switches=switches, solutions=index["solutions"], runs=_runs_for(index, source["id"]),
        framework_name=words.name(source["framework"]),
        call_conditions=call_conditions(source),
    )


def _solutions(catalog: Catalog, index: dict) -> list[tuple[str, dict]]:
    by_code = {s.code: s for s in catalog.solutions}
    # The codes any record of a framework needs in each series, worked out once for every code.
    needed = {
        fw: [(col.label, {c for s in model.sources_of(index, fw) for c in model.source_answer(s["id"], fw, col.label).solutions})
             for col in model.series(catalog, fw)]
        for fw in model.frameworks(index)
    }
    out = []
    for code in index["order"]:
        sol = by_code[code]
        where = []
        for fw, columns in needed.items():
            for label, codes in columns:
                if code in codes:
                    where.append((fw, label))
                    break
        out.append((code, {
            "title": sol.title, "kind": sol.kind, "how": sol.how, "snippet": sol.snippet,
            "frameworks": sol.frameworks, "implies": sol.implies, "where": where,
            "references": [reference(r, catalog.links) for r in sol.references],
        }))
    return out


def _links(catalog: Catalog, index: dict) -> list[dict]:
    cited: dict[tuple, list[str]] = {}
    for sid, s in index["sources"].items():
        refs = list(s["references"]) + [r for d in s["disputes"] for r in d["references"]]
        for r in refs:
            if r.get("kind") in ("issue", "pr", "commit"):
                cited.setdefault((r.get("repo"), r.get("number"), r.get("sha")), []).append(sid)
    out = []
    for link in sorted(catalog.links, key=lambda k: (k.repo, k.kind, k.number or 0, k.sha or "")):
        if link.kind == "commit":
            url, label = f"https://github.com/{link.repo}/commit/{link.sha}", f"{link.repo}@{(link.sha or '')[:10]}"
        else:
            part = "pull" if link.kind == "pr" else "issues"
            url, label = f"https://github.com/{link.repo}/{part}/{link.number}", f"{link.repo}#{link.number}"
        out.append({
            "url": url, "label": label, "kind": link.kind, "title": link.title,
            "opened": link.opened, "state": link.state, "merged": link.merged, "version": link.version,
            "cited": sorted(set(cited.get((link.repo, link.number, link.sha), []))),
        })
    return out


def _verification(index: dict) -> dict[str, Any]:
    runs = [r for sid in sorted(index.get("runs") or {}) for r in _runs_for(index, sid)]
    envs: dict[str, list[str]] = {}
    machines: dict[str, str] = {}
    for r in runs:
        envs.setdefault(r["env"], []).append(r["date"])
        machines[r["env"]] = r["machine"]
    environments = [{"env": e, "machine": machines[e], "count": len(d), "first": min(d), "last": max(d)}
                    for e, d in sorted(envs.items())]

    def item(flag: dict) -> dict:
        return {"source": flag.get("source"), "date": str(flag.get("date") or ""), "env": flag.get("env_id"),
                "version": flag.get("version"), "device": flag.get("device"),
                "reasons": list(flag.get("reasons") or ()), "note": flag.get("note")}

    known = words.machines(index)
    return {"runs": runs, "environments": environments,
            "review": [words.public(item(f), known) for f in index.get("flagged") or ()],
            "reviewed": [words.public(item(f), known) for f in index.get("reviewed") or ()]}


def heading(text: object) -> Markup:
    """Text for a Markdown heading: like the `md` filter, but quotes stay quotes.

    The table of contents escapes a heading's text once more, so an escaped quote (&#39;)
    in a heading showed as "&#39;" in the page's navigation. `&`, `<` and `>` are still
    escaped, and Markdown's inline syntax backslash-escaped, so record text stays text.
    """
    plain = " ".join(str("" if text is None else text).split())
    plain = plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return Markup("".join("\\" + ch if ch in _MARKDOWN_INLINE else ch for ch in plain))


_MARKDOWN_INLINE = "\\`*_{}[]()#+-.!|~"
environment().filters.setdefault("heading", heading)


def _solution_groups(solutions: list[tuple[str, dict]]) -> list[tuple[str, list[tuple[str, dict]]]]:
    """Solutions by the framework they belong to (TensorFlow, PyTorch, JAX, then libraries)."""
    groups: dict[str, list] = {}
    for code, sol in solutions:
        if code == "NS":
            continue
        fws = words.ordered(list(sol["frameworks"] or ["other"]))
        groups.setdefault(fws[0], []).append((code, sol))
    return [(words.name(fw), groups[fw]) for fw in words.ordered(list(groups))]


def pages(catalog: Catalog, index: dict, api_files: dict[str, str] | Callable[[], dict[str, str]],
          report_dir: Path | None = None, warn: Callable[[str], None] | None = None) -> dict[str, str]:
    """Every page; `report_dir` and `warn` are for the nightly page (kb/site/nightly.py).

    `api_files` (kb/site/api.py) may be a function returning them, called for the last page
    only (the JSON API page shows an example and sizes), so the API can be built meanwhile.
    """
    fws = words.ordered(model.frameworks(index))
    out: dict[str, str] = {}
    blocks = {fw: recipes.blocks(catalog, index, fw) for fw in fws if catalog.registries.get(fw)}
    latest = [blocks[fw][0] for fw in fws if blocks.get(fw) and fw in words.ORDER]
    names = {fw: words.name(fw) for fw in fws}
    out["index.md"] = render(
        "site/home.md.j2", latest=latest, as_of=model.latest_date(catalog), frameworks=fws, names=names,
        n_sources=len(index["sources"]), n_solutions=len(index["solutions"]), n_links=len(catalog.links),
        silent=silent_sources(index), solutions=index["solutions"],
    )
    out["stack.md"] = render("site/stack.md.j2", frameworks=fws, names=names)
    for fw in fws:
        ngc = matrix.matrix(catalog, index, fw, model.DISTRIBUTION)
        out[f"frameworks/{fw}.md"] = render(
            "site/framework.md.j2", framework=fw, fw_name=words.name(fw), matrix=matrix.matrix(catalog, index, fw),
            ngc=ngc if ngc["rows"] and ngc["columns"] else None, recipes=blocks.get(fw, []),
            silent=silent_sources(index, fw), solutions=index["solutions"],
        )
    groups = [(words.name(fw), sorted(model.sources_of(index, fw), key=lambda s: s["title"].lower())) for fw in fws]
    out["sources/index.md"] = render("site/sources.md.j2", groups=groups)
    for sid, source in index["sources"].items():
        out[f"sources/{sid}.md"] = source_page(catalog, index, source)
    out["solutions.md"] = render("site/solutions.md.j2", groups=_solution_groups(_solutions(catalog, index)))
    out["links.md"] = render("site/links.md.j2", links=_links(catalog, index))
    out["verification.md"] = render("site/verification.md.j2", **_verification(index))
    out[nightly.PAGE] = nightly.page(catalog.root, set(index["sources"]), report_dir, warn)
    if callable(api_files):
        api_files = api_files()
    ops = sorted(k for k in api_files if k.startswith(f"{api.PREFIX}/ops/"))
    example_op: str | None = f"{api.PREFIX}/ops/tf.nn.bias_add.json"
    if example_op not in api_files:
        example_op = ops[0] if ops else None
    example = ""
    if example_op:
        data = json.loads(api_files[example_op])
        data["series"] = data["series"][-1:]
        data.pop("ngc", None)
        example = json.dumps(data, indent=2, sort_keys=True).replace("`", "\\u0060")
    sizes = {k: len(v.encode()) for k, v in api_files.items()}
    out["json-api.md"] = render(
        "site/json-api.md.j2", schema_version=api.SCHEMA_VERSION, example=example,
        example_name=example_op.split("/", 2)[-1] if example_op else "",
        n_ops=sum(1 for k in sizes if "/ops/" in k), n_sources=sum(1 for k in sizes if "/sources/" in k),
        all_kb=round(sizes[f"{api.PREFIX}/all.json"] / 1024), total_kb=round(sum(sizes.values()) / 1024),
    )
    return out


def nav(index: dict) -> list:
    """The mkdocs nav: tabs Home, Check my stack, Status, Sources, Reference.

    Titles are HTML-escaped here: the theme writes them into the page as they are.
    """
    fws = words.ordered(model.frameworks(index))
    sources: list[dict[str, object]] = [{"Overview": "sources/index.md"}]
    for fw in fws:
        sources.append({words.name(fw): [{str(escape(" ".join(s["title"].split()))): f"sources/{s['id']}.md"}
                                         for s in sorted(model.sources_of(index, fw), key=lambda s: s["title"].lower())]})
    return [
        {"Home": "index.md"},
        {"Check my stack": "stack.md"},
        {"Status": [{words.name(fw): f"frameworks/{fw}.md"} for fw in fws]},
        {"Sources": sources},
        {"Reference": [
            {"Solutions": "solutions.md"}, {"Issues and PRs": "links.md"}, {"Verification": "verification.md"},
            {"Nightly report": nightly.PAGE}, {"JSON API": "json-api.md"}, {"Query API": "guide/api.md"}, {"Calls": "guide/calls.md"}, {"Records": "guide/records.md"},
            {"Version semantics": "guide/versions.md"}, {"Lint checks": "guide/lint.md"}, {"Debug tool (probe)": "guide/probe.md"},
            {"Code scanner (scan)": "guide/scan.md"}, {"Check a training run (check)": "guide/check.md"},
            {"Verifying records": "guide/verification.md"}, {"Operator sweeps": "guide/sweep.md"},
            {"CPU sweep (TensorFlow, Keras)": "guide/sweep-tensorflow.md"}, {"Architecture": "guide/architecture.md"},
            {"Security": "guide/security.md"},
        ]},
    ]
