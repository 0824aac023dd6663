"""The change report: one JSON document for machines and the site, a Markdown page for people.

The Markdown (one H1, pipe tables) is for the job summary, the regression issue and a
terminal; it escapes only `|`. The site does not include it: `kb site` renders its "Nightly
report" page from the JSON (kb/site/nightly.py), with the site's own escaping and links to
the record pages. Both files are written atomically, the JSON first, so a reader never sees
half a report. Where they go is decided here once (`default_dir`, `paths`) for writer and reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb import jsonio
from kb.atomic import write_atomic

REPORT_DIR = "reports"
NAME = "nightly"


def default_dir(root: Path) -> Path:
    """Where `kb nightly` writes the report and `kb site` looks for it unless told otherwise."""
    return root / REPORT_DIR


def paths(out_dir: Path) -> tuple[Path, Path]:
    """The report's JSON (what the site reads) and Markdown files in `out_dir`."""
    return out_dir / f"{NAME}.json", out_dir / f"{NAME}.md"


def link_changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]],
                 curated: dict[str, str | None]) -> list[dict[str, Any]]:
    """State transitions (open -> closed, open -> merged) and new flags since the previous state.

    Before the first refresh the curated state of data/links.yaml is the "before".
    """
    out = []
    for key, entry in sorted(after.items()):
        old = before.get(key) or {}
        was = old.get("state") or curated.get(key)
        now = entry.get("state")
        if now and was and now != was and not entry.get("error"):
            out.append({"link": key, "from": was, "to": now, "merged": entry.get("merged"),
                        "release": entry.get("release"), "title": entry.get("title")})
        if entry.get("flag") and entry.get("flag") != old.get("flag"):
            out.append({"link": key, "from": old.get("flag") or "ok", "to": entry["flag"],
                        "moved_to": entry.get("moved_to"), "title": entry.get("title")})
    return out


def _cell(value: Any) -> str:
    return str(value if value not in (None, "") else "-").replace("|", "\\|").replace("\n", " ")


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    if not rows:
        return "None.\n"
    head = "| " + " | ".join(columns) + " |\n| " + " | ".join("---" for _ in columns) + " |\n"
    return head + "".join("| " + " | ".join(_cell(r.get(c)) for c in columns) + " |\n" for r in rows)


def markdown(report: dict[str, Any]) -> str:
    env = report["environment"]
    gpu = env["gpu"]
    fw = ", ".join(f"{k} {v}" for k, v in sorted(env["frameworks"].items())) or "none"
    lines = [
        "# Nightly report\n",
        f"Run {report['created']} on {env.get('env_id') or env['platform']}: "
        f"GPU {gpu['name'] + ' x' + str(gpu['count']) if gpu['count'] else 'none'}; {fw}. "
        f"Wall time {report['wall_s']:.1f} s.\n",
        f"**{len(report['regressions'])} regression(s).**" + (" Exit code 1." if report["regressions"] else "") + "\n",
    ]
    if report.get("new_silent"):
        lines += [
            f"## New silent sources ({len(report['new_silent'])})\n",
            "Found by tonight's sweep: results differ **under the determinism switch, without an error**, and no "
            "earlier sweep of the suite had found it. A user who set the switch is not protected from these.\n",
            _table(report["new_silent"], ["op", "suite", "version", "pass", "dtype", "call", "covered_by", "file"]),
        ]
    if report.get("range_changes"):
        lines += [
            f"## Ranges the sweeps extend, change or close ({len(report['range_changes'])})\n",
            "A sweep of a release that no range of the record covers: the compiled index adds that release "
            "(basis verified); write it into the record, with the code read at the release, to keep it.\n",
            _table(report["range_changes"], ["record", "version", "kind", "what", "nearest", "files"]),
        ]
    lines += [
        "## Steps\n",
        _table(report["steps"], ["step", "status", "detail"]),
    ]
    if report["skipped"]:
        lines += ["## Not verified on this machine\n", "".join(f"- {s}\n" for s in report["skipped"])]
    lines += [
        "## Regressions\n",
        "A solution that no longer gives identical runs, or an outcome that became `error`/`raised` "
        "against the previous run of the same environment.\n",
        _table(report["regressions"], ["source", "env", "mode", "kind", "detail", "run"]),
        "## Newly shown to differ by default\n",
        _table(report["newly_differ"], ["source", "env", "version", "device", "detail"]),
        "## Newly confirmed\n",
        "Differs by default, and every solution mode gave 0 of n differing runs.\n",
        _table(report["newly_confirmed"], ["source", "env", "version", "device", "detail"]),
        "## Link state changes\n",
        _table(report["link_changes"], ["link", "from", "to", "merged", "release", "title"]),
        f"## Evidence older than {report['stale_days']} days\n",
        _table(report["stale"], ["source", "newest", "age_days"]),
    ]
    if report["never_verified"]:
        lines += ["Records with a verifier and no run yet: " + ", ".join(f"`{s}`" for s in report["never_verified"]) + "\n"]
    if report["first_outcomes"]:
        lines += ["## First runs that raised or errored\n",
                  _table(report["first_outcomes"], ["source", "env", "mode", "outcome", "detail"])]
    if report["problems"]:
        lines += ["## Unreadable run files\n", "".join(f"- {p}\n" for p in report["problems"])]
    lines += ["## Run files compared\n",
              "An environment's first run (no previous) is counted here, not listed above: differing by default, "
              "confirmed by every solution, raised.\n",
              _table(report["compared"], ["env", "run", "previous", "differ", "confirmed", "raised"])]
    return "\n".join(lines)


def write(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    json_path, md_path = paths(out_dir)
    write_atomic(json_path, jsonio.dumps(report, indent=2, sort_keys=True, default=str) + "\n")  # strict JSON
    write_atomic(md_path, markdown(report))
    return json_path, md_path
