"""`kb links refresh` against a local stand-in for the GitHub API (pytest-httpserver).

No test talks to api.github.com and none really sleeps: the client's `sleep` and `clock`
are injected and urllib3's backoff factor is 0.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from pytest_httpserver import HTTPServer
from werkzeug import Response

from kb.links import refresh, state

LINKS = """\
- repo: tensorflow/tensorflow
  kind: issue
  number: 2652
  title: Backward pass of broadcasting on GPU is non-deterministic
  state: open
- repo: tensorflow/tensorflow
  kind: pr
  number: 31465
  title: Add deterministic bias_add
- repo: pytorch/pytorch
  kind: issue
  number: 99
  title: A deleted issue
  state: open
"""

ISSUE = {"title": "Backward pass of broadcasting on GPU is non-deterministic", "state": "closed",
         "state_reason": "completed", "labels": [{"name": "type:bug"}, {"name": "comp:gpu"}],
         "html_url": "https://github.com/tensorflow/tensorflow/issues/2652"}
PR = {"title": "Add deterministic bias_add", "state": "closed", "merged_at": "2019-08-20T17:00:00Z",
      "merge_commit_sha": "abc123", "labels": [], "milestone": None,
      "html_url": "https://github.com/tensorflow/tensorflow/pull/31465"}
RELEASES = [
    {"tag_name": "v2.0.0", "published_at": "2019-09-30T00:00:00Z", "draft": False},
    {"tag_name": "v1.15.0", "published_at": "2019-10-16T00:00:00Z", "draft": False},
    {"tag_name": "v1.14.0", "published_at": "2019-06-18T00:00:00Z", "draft": False},
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "links.yaml").write_text(LINKS, encoding="utf-8")
    return tmp_path


class FakeTime:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def client(server: HTTPServer, root: Path, fake: FakeTime, **kw) -> refresh.GitHub:
    options = dict(cache_dir=root / refresh.CACHE_DIR, timeout=2.0, backoff=0, clock=fake.clock, sleep=fake.sleep)
    options.update(kw)
    return refresh.GitHub(server.url_for("/").rstrip("/"), **options)


def serve_all(server: HTTPServer, etag: str = '"v1"') -> None:
    server.expect_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_json(ISSUE, headers={"ETag": etag})
    server.expect_request("/repos/tensorflow/tensorflow/pulls/31465").respond_with_json(PR, headers={"ETag": '"p1"'})
    server.expect_request("/repos/tensorflow/tensorflow/releases").respond_with_json(RELEASES, headers={"ETag": '"r1"'})
    # v2.0.0 (oldest published after the merge) contains the merge commit; v1.15.0 is not asked.
    server.expect_request("/repos/tensorflow/tensorflow/compare/v2.0.0...abc123").respond_with_json({"status": "behind"})
    server.expect_request("/repos/pytorch/pytorch/issues/99").respond_with_json({"message": "Not Found"}, status=404)
    server.expect_request("/repos/pytorch/pytorch").respond_with_json({"full_name": "pytorch/pytorch"})


def paths(server: HTTPServer) -> list[str]:
    return [request.path for request, _ in server.log]


def test_200_then_304_with_etag_costs_nothing_new(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    serve_all(httpserver)
    outcome, previous = refresh.run(root, client=client(httpserver, root, fake), quiet=True)
    assert previous == {}
    saved = state.load(root)
    issue = saved["tensorflow/tensorflow#2652"]
    assert issue["state"] == "closed" and issue["state_reason"] == "completed"
    assert issue["labels"] == ["comp:gpu", "type:bug"] and issue["http"] == 200
    pr = saved["tensorflow/tensorflow#31465"]
    assert pr["state"] == "merged" and pr["merged"] == "2019-08-20"
    assert (pr["release"], pr["release_basis"]) == ("v2.0.0", "compare")
    assert outcome.refreshed == 2

    # Second run: the server answers 304 when the ETag matches; the cached body is used.
    httpserver.clear()
    seen: list[str | None] = []

    def conditional(request):
        seen.append(request.headers.get("If-None-Match"))
        return Response(status=304) if request.headers.get("If-None-Match") == '"v1"' else Response(json.dumps(ISSUE))

    httpserver.expect_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_handler(conditional)
    httpserver.expect_request("/repos/tensorflow/tensorflow/pulls/31465").respond_with_data("", status=304)
    httpserver.expect_request("/repos/tensorflow/tensorflow/releases").respond_with_data("", status=304)
    httpserver.expect_request("/repos/tensorflow/tensorflow/compare/v2.0.0...abc123").respond_with_json({"status": "behind"})
    httpserver.expect_request("/repos/pytorch/pytorch/issues/99").respond_with_json({}, status=404)
    httpserver.expect_request("/repos/pytorch/pytorch").respond_with_json({"full_name": "pytorch/pytorch"})
    outcome2, previous2 = refresh.run(root, client=client(httpserver, root, fake), quiet=True)
    assert seen == ['"v1"']
    assert outcome2.unchanged == 2 and outcome2.refreshed == 0
    again = state.load(root)
    assert again["tensorflow/tensorflow#2652"]["labels"] == ["comp:gpu", "type:bug"]
    assert again["tensorflow/tensorflow#31465"]["release"] == "v2.0.0"
    assert previous2["tensorflow/tensorflow#2652"]["state"] == "closed"


def test_404_is_kept_and_flagged_never_dropped(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    state.save(root, {"pytorch/pytorch#99": {"kind": "issue", "title": "A deleted issue", "state": "open"}}, "x")
    serve_all(httpserver)
    outcome, _ = refresh.run(root, client=client(httpserver, root, fake), quiet=True)
    entry = state.load(root)["pytorch/pytorch#99"]
    assert entry["flag"] == "deleted" and entry["http"] == 404
    assert entry["title"] == "A deleted issue" and entry["state"] == "open"   # old facts kept
    assert any("pytorch/pytorch#99" in f for f in outcome.flagged)
    assert set(state.load(root)) == {"tensorflow/tensorflow#2652", "tensorflow/tensorflow#31465", "pytorch/pytorch#99"}


def test_301_moved_is_followed_and_flagged(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    serve_all(httpserver)
    httpserver.clear_all_handlers()
    httpserver.expect_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_data(
        "", status=301, headers={"Location": httpserver.url_for("/repositories/45717250/issues/2652")})
    moved = dict(ISSUE, html_url="https://github.com/tensorflow/newhome/issues/2652")
    httpserver.expect_request("/repositories/45717250/issues/2652").respond_with_json(moved)
    httpserver.expect_request("/repos/tensorflow/tensorflow/pulls/31465").respond_with_json(dict(PR, merged_at=None, state="open"))
    httpserver.expect_request("/repos/pytorch/pytorch/issues/99").respond_with_json(ISSUE)
    refresh.run(root, client=client(httpserver, root, fake), quiet=True)
    entry = state.load(root)["tensorflow/tensorflow#2652"]
    assert entry["flag"] == "moved" and entry["moved_to"] == "https://github.com/tensorflow/newhome/issues/2652"
    assert entry["state"] == "closed" and entry["title"] == ISSUE["title"]


def test_403_rate_limit_waits_for_reset(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    reset = int(fake.now) + 30
    httpserver.expect_oneshot_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_json(
        {"message": "API rate limit exceeded"}, status=403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)})
    serve_all(httpserver)
    outcome, _ = refresh.run(root, client=client(httpserver, root, fake), quiet=True)
    assert fake.slept == [31.0]                     # reset - now, plus one second
    assert state.load(root)["tensorflow/tensorflow#2652"]["state"] == "closed"
    assert outcome.errors == []


def test_429_beyond_max_wait_keeps_previous_for_every_remaining_link(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    before = {"tensorflow/tensorflow#2652": {"kind": "issue", "title": "t", "state": "open"},
              "tensorflow/tensorflow#31465": {"kind": "pr", "title": "p", "state": "open"}}
    state.save(root, before, "x")
    httpserver.expect_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_json(
        {"message": "secondary rate limit"}, status=429, headers={"retry-after": "3600"})
    outcome, _ = refresh.run(root, client=client(httpserver, root, fake, max_wait=60), quiet=True)
    saved = state.load(root)
    assert fake.slept == []
    assert saved["tensorflow/tensorflow#2652"]["state"] == "open" and "rate limited" in saved["tensorflow/tensorflow#2652"]["error"]
    assert saved["tensorflow/tensorflow#31465"]["state"] == "open"          # not asked, kept
    assert "pytorch/pytorch#99" in saved                                    # never had state, still listed
    assert paths(httpserver) == ["/repos/tensorflow/tensorflow/issues/2652"]  # stopped asking
    assert len(outcome.errors) == 3


def test_500s_then_success_are_retried_by_urllib3(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    for _ in range(2):
        httpserver.expect_oneshot_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_data("boom", status=502)
    serve_all(httpserver)
    outcome, _ = refresh.run(root, client=client(httpserver, root, fake), quiet=True)
    assert paths(httpserver).count("/repos/tensorflow/tensorflow/issues/2652") == 3
    assert state.load(root)["tensorflow/tensorflow#2652"]["state"] == "closed"
    assert outcome.errors == []


def test_500s_past_the_retries_keep_the_previous_entry(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    state.save(root, {"tensorflow/tensorflow#2652": {"kind": "issue", "title": "t", "state": "open", "labels": ["x"]}}, "x")
    httpserver.expect_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_data("boom", status=500)
    serve_all(httpserver)
    outcome, _ = refresh.run(root, client=client(httpserver, root, fake, retries=2), quiet=True)
    assert paths(httpserver).count("/repos/tensorflow/tensorflow/issues/2652") == 3  # first try + 2 retries
    entry = state.load(root)["tensorflow/tensorflow#2652"]
    assert entry["state"] == "open" and entry["labels"] == ["x"] and entry["error"] == "HTTP 500"
    assert state.load(root)["tensorflow/tensorflow#31465"]["state"] == "merged"


def test_timeout_is_retried(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()

    def slow(request):
        time.sleep(0.4)   # the server is slow; the client gives up at 0.15 s and retries
        return Response(json.dumps({"title": "late"}))

    httpserver.expect_oneshot_request("/repos/tensorflow/tensorflow/issues/2652").respond_with_handler(slow)
    serve_all(httpserver)
    outcome, _ = refresh.run(root, client=client(httpserver, root, fake, timeout=0.15), quiet=True)
    # The stand-in serves one request at a time, so the retry may also wait behind the slow
    # handler and time out once more; either way it is retried, within Retry's budget of 3.
    assert 2 <= paths(httpserver).count("/repos/tensorflow/tensorflow/issues/2652") <= 4
    assert state.load(root)["tensorflow/tensorflow#2652"]["title"] == ISSUE["title"]   # not the slow "late"
    assert outcome.errors == []


def test_interrupted_refresh_leaves_previous_file_intact(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    state.save(root, {"tensorflow/tensorflow#2652": {"kind": "issue", "title": "t", "state": "open"}}, "before")
    original = (root / state.STATE_FILE).read_bytes()
    serve_all(httpserver)
    github = client(httpserver, root, fake)
    calls = []

    def boom(key: str) -> None:
        calls.append(key)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        refresh.refresh(refresh.load_links(root), state.load(root), github, "now", progress=boom)
    assert (root / state.STATE_FILE).read_bytes() == original
    assert sorted(p.name for p in (root / "data").iterdir()) == ["links-state.yaml", "links.yaml"]


def test_token_is_sent(httpserver: HTTPServer, root: Path) -> None:
    fake = FakeTime()
    httpserver.expect_request("/repos/a/b/issues/1", headers={"Authorization": "Bearer sekrit"}).respond_with_json(ISSUE)
    github = client(httpserver, root, fake, token="sekrit")
    assert github.get("/repos/a/b/issues/1").data["state"] == "closed"


def test_cli_bad_links_file_is_exit_2(tmp_path: Path, capsys) -> None:
    from kb.cli import main

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "links.yaml").write_text("- repo: a/b\n  kind: issue\n", encoding="utf-8")
    assert main(["--root", str(tmp_path), "links", "refresh", "--base-url", "http://127.0.0.1:9", "--quiet"]) == 2
    assert "data/links.yaml:1:" in capsys.readouterr().err
    assert not (tmp_path / state.STATE_FILE).exists()


def test_build_merges_refreshed_state_into_index(root: Path) -> None:
    from kb import compile as kb_compile
    from kb import schema

    link = schema.Link.model_validate(yaml.safe_load(LINKS)[0])
    ref = schema.IssueRef.model_validate({"kind": "issue", "repo": "tensorflow/tensorflow", "number": 2652})
    live = {link.key: {"state": "closed", "labels": ["type:bug"], "checked": "2026-01-01T00:00:00Z", "etag": "x"}}
    data = kb_compile.reference(ref, [link], live)
    assert data["state"] == "closed" and data["curated_state"] == "open"
    assert data["github"]["labels"] == ["type:bug"] and "etag" not in data["github"]
