"""The site's "Nightly report" page, rendered from the newest `kb nightly` report (nightly.json).

Where the report is comes from kb/nightly/report.py (`default_dir`, `paths`), so the writer
and this reader cannot drift apart. The page is built by `kb site` only, like every other
site page: it is never committed, and `kb build --check` does not look at it (the report
itself is machine-written evidence; the nightly workflow commits it beside the run files).

Three outcomes, none of which fails the build:
- no report: the page says so and how to produce one (`kb nightly`);
- a report that kb.jsonio refuses (invalid JSON, over a bound) or whose shape is not what
  kb/nightly/report.py writes: the page says it could not be read and why, naming the file,
  and the same message goes to `warn` (stderr for `kb site`). The nightly workflow deploys
  the site after writing the report; a bad report must not take the whole site down;
- a readable report: every section of it.

Report text reaches the page only through the template's autoescape (kb/render.py):
GitHub titles and verifier messages can hold `|`, `<` and backticks. Record ids are linked
only when this build has a page for them, GitHub links only when the key has the shape of
one; anything else is shown as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from kb import jsonio
from kb.nightly import report as nightly_report
from kb.render import render

SCHEMA_VERSION = 1
PAGE = "nightly.md"

# (report key, columns); the first column of each is shown as a record or link cell.
ROW_SECTIONS: dict[str, tuple[str, ...]] = {
    "new_silent": ("op", "suite", "version", "pass", "dtype", "call", "covered_by", "file"),
    "steps": ("step", "status", "detail"),
    "regressions": ("source", "env", "mode", "kind", "detail", "run"),
    "newly_differ": ("source", "env", "version", "device", "detail"),
    "newly_confirmed": ("source", "env", "version", "device", "detail"),
    "first_outcomes": ("source", "env", "mode", "outcome", "detail"),
    "link_changes": ("link", "from", "to", "merged", "release", "title"),
    "stale": ("source", "newest", "age_days"),
    "compared": ("env", "run", "previous", "differ", "confirmed", "raised"),
}
REQUIRED = ("created", "environment", "steps", "regressions", "newly_differ", "newly_confirmed", "link_changes",
            "stale", "wall_s")
TEXT_LISTS = ("skipped", "never_verified", "problems")
# Step status -> the site's existing colour classes (kb.css): a colour always comes with its text.
STEP_CLASS = {"ok": "ok", "partial": "fix", "failed": "ns"}
_LINK_KEY = re.compile(r"(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?:#(?P<number>[0-9]+)|@(?P<sha>[0-9a-f]{7,40}))")


class ReportError(ValueError):
    """The report exists but cannot be shown; str() reads "<file>[:<line>]: <what is wrong>"."""


@dataclass(frozen=True)
class Loaded:
    """What `load` found: `report` when readable, else `error` (None for both: no report)."""

    shown_path: str
    report: dict[str, Any] | None = None
    error: str | None = None


def report_path(root: Path, report_dir: Path | None = None) -> Path:
    """nightly.json where `kb nightly` writes it (or in `report_dir`, as `kb nightly --report-dir`)."""
    return nightly_report.paths(report_dir or nightly_report.default_dir(root))[0]


def _shown(path: Path, root: Path) -> str:
    """The path as the page shows it: relative to the project, so the page is the same on every checkout."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


def check(data: Any, where: str) -> dict[str, Any]:
    """The report if it has the shape kb/nightly/report.py writes; else ReportError naming what is wrong.

    Only what the page relies on is checked (types of sections, rows and their key columns),
    so a newer report with extra keys still shows.
    """
    def bad(what: str) -> ReportError:
        return ReportError(f"{where}: {what}; not what `kb nightly` writes")

    if not isinstance(data, dict):
        raise bad(f"the report is {_kind(data)}, not an object")
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise ReportError(f"{where}: schema_version is {version}; this kb reads version {SCHEMA_VERSION}: "
                          "build the site with the kb that wrote the report")
    if version != SCHEMA_VERSION:
        raise bad(f"schema_version is {json.dumps(version)}, not {SCHEMA_VERSION}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise bad("missing " + ", ".join(missing))
    if not isinstance(data["created"], str):
        raise bad(f"created is {_kind(data['created'])}, not a string")
    if isinstance(data["wall_s"], bool) or not isinstance(data["wall_s"], (int, float)):
        raise bad(f"wall_s is {_kind(data['wall_s'])}, not a number")
    env = data["environment"]
    if not isinstance(env, dict):
        raise bad(f"environment is {_kind(env)}, not an object")
    for key in ("gpu", "frameworks"):
        if key in env and env[key] is not None and not isinstance(env[key], dict):
            raise bad(f"environment.{key} is {_kind(env[key])}, not an object")
    for key, columns in ROW_SECTIONS.items():
        rows = data.get(key, [])
        if not isinstance(rows, list):
            raise bad(f"{key} is {_kind(rows)}, not a list")
        for n, row in enumerate(rows):
            if not isinstance(row, dict):
                raise bad(f"{key}[{n}] is {_kind(row)}, not an object")
            if not isinstance(row.get(columns[0]), str):
                raise bad(f"{key}[{n}].{columns[0]} is {_kind(row.get(columns[0]))}, not a string")
    for key in TEXT_LISTS:
        items = data.get(key, [])
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise bad(f"{key} must be a list of strings")
    return data


def load(root: Path, report_dir: Path | None = None) -> Loaded:
    """Find and read the report: bounded (kb.jsonio), shape-checked; never raises for a bad file."""
    path = report_path(root, report_dir)
    shown = _shown(path, root)
    if not path.exists() and not path.is_symlink():
        return Loaded(shown)
    try:
        data = jsonio.load(path, within=path.parent)
    except jsonio.JsonError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        return Loaded(shown, error=f"{shown}:{exc.line}: {exc.message}{hint}")
    try:
        return Loaded(shown, report=check(data, shown))
    except ReportError as exc:
        return Loaded(shown, error=str(exc))


def _text(value: Any) -> str:
    """One table cell's text; whitespace runs (newlines too) become one space, nothing becomes "–"."""
    if value is None or value == "":
        return "–"
    if isinstance(value, (dict, list)):
        value = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return " ".join(str(value).split())


def _link_url(key: str) -> str | None:
    """GitHub's page for a link key ("owner/repo#N" or "owner/repo@sha", kb.schema.Link.key); else None."""
    match = _LINK_KEY.fullmatch(key)
    if not match:
        return None
    if match["sha"]:
        return f"https://github.com/{match['repo']}/commit/{match['sha']}"
    return f"https://github.com/{match['repo']}/issues/{match['number']}"  # GitHub redirects a PR's number


def _rows(report: dict[str, Any], key: str, sources: set[str]) -> list[dict[str, Any]]:
    """A section's rows as {"first": {text, href}, "cells": [text, ...], "status": class} for the template."""
    columns = ROW_SECTIONS[key]
    out = []
    for row in report.get(key, []):
        first = row[columns[0]]
        if columns[0] == "source":
            href = f"sources/{first}.html" if first in sources else None
        elif columns[0] == "link":
            href = _link_url(first)
        else:
            href = None
        out.append({"first": {"text": _text(first), "href": href}, "cells": [_text(row.get(c)) for c in columns[1:]],
                    "status": STEP_CLASS.get(str(row.get("status")), "unknown")})
    return out


def context(loaded: Loaded, sources: set[str]) -> dict[str, Any]:
    """Everything the template shows, precomputed here so the template only lays it out."""
    out: dict[str, Any] = {"path": loaded.shown_path, "error": loaded.error, "report": None}
    report = loaded.report
    if report is None:
        return out
    env = report["environment"]
    gpu = env.get("gpu") or {}
    count = gpu.get("count")
    frameworks = env.get("frameworks") or {}
    out["report"] = {
        "created": _text(report["created"]),
        "env_id": _text(env.get("env_id")) if env.get("env_id") else None,
        "platform": _text(env.get("platform")), "cpu": _text(env.get("cpu")), "python": _text(env.get("python")),
        "gpu": f"{_text(gpu.get('name'))} × {_text(count)}" if count else "none",
        "gpu_via": _text(gpu.get("via")) if count and gpu.get("via") else None,
        "driver": _text(env.get("driver")) if env.get("driver") else None,
        "frameworks": [(_text(name), _text(version)) for name, version in sorted(frameworks.items())],
        "wall": f"{report['wall_s']:.1f}",
        "stale_days": _text(report.get("stale_days", "?")),
        "columns": {key: columns[1:] for key, columns in ROW_SECTIONS.items()},
        **{key: _rows(report, key, sources) for key in ROW_SECTIONS},
        **{key: [_text(item) for item in report.get(key, [])] for key in TEXT_LISTS},
        "never_verified_links": [
            {"text": _text(sid), "href": f"sources/{sid}.html" if sid in sources else None}
            for sid in report.get("never_verified", [])
        ],
    }
    return out


def page(root: Path, sources: set[str], report_dir: Path | None = None,
         warn: Callable[[str], None] | None = None) -> str:
    """The page's Markdown; an unreadable report is shown on the page and passed to `warn`."""
    loaded = load(root, report_dir)
    if loaded.error and warn:
        warn(f"nightly report not shown: {loaded.error}")
    return render("site/nightly.md.j2", **context(loaded, sources))
