"""The shape of each GitHub API answer `kb links refresh` uses, checked before any of it is kept.

Why: an answer comes from the network (GitHub, a proxy's error page, a stand-in, an attacker
on a redirect). One with the wrong shape (`{"labels": 5}`, `[1, 2, 3]`, a number as title)
must never replace the facts already known, crash the run, or reach the index and the site;
it is a *malformed answer*: the link keeps its previous entry and the run exits 1.
Strings that are kept are cut to bounds well inside the state file reader's (kb/yamlio.py).
"""

from __future__ import annotations

from typing import Any

MAX_TEXT = 1024        # a title, label, state, tag or message line kept in the state file
MAX_LABELS = 100       # labels kept per issue/PR
MAX_RELEASES = 100     # releases read per page (the request asks for per_page=100)
GITHUB_WEB = "https://github.com/"


class Malformed(Exception):
    """An answer whose shape is not what the API documents for that request."""


def _expect(value: Any, types: type | tuple[type, ...], where: str, optional: bool = True) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise Malformed(f"{where}: expected {names}{' or null' if optional else ''}, got {type(value).__name__}")
    return value


def text(value: Any, where: str, optional: bool = True) -> str | None:
    """A string field, cut to MAX_TEXT characters (a title is at most 256 on GitHub)."""
    found = _expect(value, str, where, optional)
    return None if found is None else found[:MAX_TEXT]


def web_url(value: Any) -> str | None:
    """An html_url kept only when it is a plain https://github.com/ address (never javascript:)."""
    if isinstance(value, str) and value.startswith(GITHUB_WEB) and len(value) <= MAX_TEXT and value.isprintable() \
            and not any(c.isspace() for c in value):
        return value
    return None


def issue(data: Any) -> dict[str, Any]:
    """An issue or pull request (GET /repos/{owner}/{repo}/issues|pulls/{number})."""
    _expect(data, dict, "answer", optional=False)
    labels = _expect(data.get("labels"), list, "labels") or []
    names = []
    for i, label in enumerate(labels[:MAX_LABELS]):
        _expect(label, dict, f"labels[{i}]", optional=False)
        names.append(text(label.get("name"), f"labels[{i}].name", optional=False))
    milestone = _expect(data.get("milestone"), dict, "milestone")
    state = text(data.get("state"), "state", optional=False)
    if state not in ("open", "closed"):
        raise Malformed(f"state: expected 'open' or 'closed', got {(state or '')[:40]!r}")
    return {
        "title": text(data.get("title"), "title", optional=False),
        "state": state,
        "state_reason": text(data.get("state_reason"), "state_reason"),
        "labels": sorted(names),
        "merged_at": text(data.get("merged_at"), "merged_at"),
        "merge_commit_sha": text(data.get("merge_commit_sha"), "merge_commit_sha"),
        "milestone": text((milestone or {}).get("title"), "milestone.title"),
        "html_url": web_url(data.get("html_url")),
        "pull_request": data.get("pull_request") is not None,
    }


def commit(data: Any) -> dict[str, Any]:
    """A commit (GET /repos/{owner}/{repo}/commits/{sha})."""
    _expect(data, dict, "answer", optional=False)
    inner = _expect(data.get("commit"), dict, "commit", optional=False)
    message = text(inner.get("message"), "commit.message") or ""
    committer = _expect(inner.get("committer"), dict, "commit.committer") or {}
    return {
        "title": message.split("\n", 1)[0] or None,
        "date": text(committer.get("date"), "commit.committer.date"),
        "html_url": web_url(data.get("html_url")),
    }


def releases(data: Any) -> list[dict[str, Any]]:
    """A page of releases (GET /repos/{owner}/{repo}/releases)."""
    _expect(data, list, "answer", optional=False)
    out = []
    for i, release in enumerate(data[:MAX_RELEASES]):
        _expect(release, dict, f"[{i}]", optional=False)
        out.append({
            "tag_name": text(release.get("tag_name"), f"[{i}].tag_name", optional=False),
            "published_at": text(release.get("published_at"), f"[{i}].published_at"),
            "draft": bool(_expect(release.get("draft"), bool, f"[{i}].draft")),
        })
    return out


def compare(data: Any) -> str | None:
    """The status of a comparison (GET /repos/{owner}/{repo}/compare/{base}...{head})."""
    _expect(data, dict, "answer", optional=False)
    return text(data.get("status"), "status")
