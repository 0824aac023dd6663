"""Fault injection for `kb links refresh` (pytest-httpserver): every bad status, body and
network behaviour keeps the known facts, ends, and says so; the state file is checked after each.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from werkzeug import Response

from kb.cli import main
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
"""
ISSUE_PATH = "/repos/tensorflow/tensorflow/issues/2652"
PR_PATH = "/repos/tensorflow/tensorflow/pulls/31465"
KNOWN = {
    "tensorflow/tensorflow#2652": {"kind": "issue", "title": "Known title", "state": "closed",
                                   "labels": ["type:bug"], "checked": "2026-01-01T00:00:00Z"},
    "tensorflow/tensorflow#31465": {"kind": "pr", "title": "Known PR", "state": "merged", "merged": "2019-08-20",
                                    "release": "v2.0.0", "labels": [], "checked": "2026-01-01T00:00:00Z"},
}
ISSUE = {"title": "Fresh title", "state": "open", "labels": [{"name": "a"}],
         "html_url": "https://github.com/tensorflow/tensorflow/issues/2652"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "links.yaml").write_text(LINKS, encoding="utf-8")
    state.save(tmp_path, KNOWN, "2026-01-01T00:00:00Z")
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


def github(server: HTTPServer, root: Path, fake: FakeTime | None = None, **kw) -> refresh.GitHub:
    fake = fake or FakeTime()
    options = dict(cache_dir=root / refresh.CACHE_DIR, timeout=2.0, backoff=0, clock=fake.clock, sleep=fake.sleep,
                   retries=0)
    options.update(kw)
    return refresh.GitHub(server.url_for("/").rstrip("/"), **options)


def assert_known_kept(root: Path, key: str = "tensorflow/tensorflow#2652") -> dict:
    entry = state.load(root)[key]
    for field, value in KNOWN[key].items():
        assert entry[field] == value, (field, entry)
    assert entry["error"]
    return entry


MALFORMED_200 = [
    ("not json", "{not json"),
    ("a list", json.dumps([1, 2, 3])),
    ("a number", "5"),
    ("labels a number", json.dumps(dict(ISSUE, labels=5))),
    ("label name a number", json.dumps(dict(ISSUE, labels=[{"name": 5}]))),
    ("label a string", json.dumps(dict(ISSUE, labels=["a"]))),
    ("merged_at a number", json.dumps(dict(ISSUE, merged_at=5))),
    ("milestone a string", json.dumps(dict(ISSUE, milestone="v1"))),
    ("title a list", json.dumps(dict(ISSUE, title=["x"]))),
    ("state a mapping", json.dumps(dict(ISSUE, state={"x": 1}))),
    ("state unknown", json.dumps(dict(ISSUE, state="exploded"))),
    ("empty", ""),
]


@pytest.mark.parametrize("name, body", MALFORMED_200, ids=[m[0] for m in MALFORMED_200])
def test_malformed_200_keeps_known_facts_and_fails(httpserver: HTTPServer, root: Path, name: str, body: str) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_data(body, status=200, content_type="application/json")
    httpserver.expect_request(PR_PATH).respond_with_data(body, status=200, content_type="application/json")
    outcome, _ = refresh.run(root, client=github(httpserver, root), quiet=True)
    entry = assert_known_kept(root)
    assert "malformed answer" in entry["error"]
    assert outcome.refreshed == 0 and len(outcome.errors) == 2
    assert_known_kept(root, "tensorflow/tensorflow#31465")


def test_commit_with_wrong_shape_is_malformed(httpserver: HTTPServer, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "links.yaml").write_text(
        "- repo: pytorch/pytorch\n  kind: commit\n  sha: abcdef1\n  title: t\n", encoding="utf-8")
    httpserver.expect_request("/repos/pytorch/pytorch/commits/abcdef1").respond_with_json({"commit": {"message": 5}})
    outcome, _ = refresh.run(tmp_path, client=github(httpserver, tmp_path), quiet=True)
    assert "malformed answer" in outcome.errors[0]


def test_releases_and_compare_with_wrong_shape_keep_the_pr(httpserver: HTTPServer, root: Path) -> None:
    pr = dict(ISSUE, state="closed", merged_at="2019-08-20T17:00:00Z", merge_commit_sha="abc123", milestone=None)
    httpserver.expect_request(ISSUE_PATH).respond_with_json(ISSUE)
    httpserver.expect_request(PR_PATH).respond_with_json(pr)
    httpserver.expect_request("/repos/tensorflow/tensorflow/releases").respond_with_json({"releases": "no"})
    outcome, _ = refresh.run(root, client=github(httpserver, root), quiet=True)
    assert_known_kept(root, "tensorflow/tensorflow#31465")
    assert state.load(root)["tensorflow/tensorflow#2652"]["title"] == "Fresh title"
    assert outcome.refreshed == 1


@pytest.mark.parametrize("retry_after", ["0", "nan", "-5", "inf", "-inf", "soon", "1e400"])
def test_retry_after_that_is_no_wait_ends(httpserver: HTTPServer, root: Path, retry_after: str) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_json({"message": "slow down"}, status=429,
                                                             headers={"Retry-After": retry_after})
    fake = FakeTime()
    start = time.monotonic()
    outcome, _ = refresh.run(root, client=github(httpserver, root, fake, max_wait=0), quiet=True)
    assert time.monotonic() - start < 5
    assert len(httpserver.log) == 1  # max_wait 0: asked once, then stopped asking
    assert_known_kept(root)
    assert "rate limited" in outcome.errors[0]


def test_retry_rounds_are_bounded_even_with_a_long_max_wait(httpserver: HTTPServer, root: Path) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_json({}, status=429, headers={"Retry-After": "0"})
    fake = FakeTime()
    refresh.run(root, client=github(httpserver, root, fake, max_wait=10**9), quiet=True)
    assert len(httpserver.log) == refresh.MAX_ROUNDS + 1
    assert all(wait >= 1.0 for wait in fake.slept)
    assert_known_kept(root)


@pytest.mark.parametrize("status", [400, 401, 403, 418, 422, 451, 500, 502, 503, 504])
def test_error_statuses_keep_known_facts(httpserver: HTTPServer, root: Path, status: int) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_data("<html>proxy error</html>", status=status)
    httpserver.expect_request(PR_PATH).respond_with_data("<html>proxy error</html>", status=status)
    outcome, _ = refresh.run(root, client=github(httpserver, root), quiet=True)
    assert assert_known_kept(root)["error"] == f"HTTP {status}"
    assert len(outcome.errors) == 2


def test_redirect_off_the_api_host_is_not_followed(httpserver: HTTPServer, root: Path) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_data(
        "", status=301, headers={"Location": "http://evil.example/repos/x/y/issues/1"})
    httpserver.expect_request(PR_PATH).respond_with_data("", status=302, headers={"Location": "javascript:alert(1)"})
    refresh.run(root, client=github(httpserver, root), quiet=True)
    assert "off the API host" in assert_known_kept(root)["error"]
    assert "off the API host" in assert_known_kept(root, "tensorflow/tensorflow#31465")["error"]


def test_html_url_is_kept_only_on_github(httpserver: HTTPServer, root: Path) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_data(
        "", status=301, headers={"Location": httpserver.url_for("/repositories/1/issues/2652")})
    httpserver.expect_request("/repositories/1/issues/2652").respond_with_json(dict(ISSUE, html_url="javascript:alert(1)"))
    httpserver.expect_request(PR_PATH).respond_with_json(dict(ISSUE, html_url="https://github.com.evil/x"))
    refresh.run(root, client=github(httpserver, root), quiet=True)
    saved = state.load(root)
    moved = saved["tensorflow/tensorflow#2652"]
    assert moved["flag"] == "moved" and "moved_to" not in moved and "html_url" not in moved
    assert "html_url" not in saved["tensorflow/tensorflow#31465"]


def test_huge_answer_is_refused_and_the_state_file_stays_readable(httpserver: HTTPServer, root: Path) -> None:
    big = dict(ISSUE, title="t" * (10 * 1024 * 1024))
    httpserver.expect_request(ISSUE_PATH).respond_with_json(big)
    httpserver.expect_request(PR_PATH).respond_with_json(dict(ISSUE, title="x" * 500_000, labels=[{"name": "l" * 60_000}] * 500))
    refresh.run(root, client=github(httpserver, root), quiet=True)
    assert "over" in assert_known_kept(root)["error"]
    pr = state.load(root)["tensorflow/tensorflow#31465"]
    assert len(pr["title"]) <= 1024 and len(pr["labels"]) <= 100 and all(len(label) <= 1024 for label in pr["labels"])
    assert (root / state.STATE_FILE).stat().st_size < 1024 * 1024


def test_a_state_file_the_reader_refuses_is_never_written(root: Path) -> None:
    before = (root / state.STATE_FILE).read_bytes()
    huge = {f"a/b#{i}": {"kind": "issue", "title": "t" * 1000} for i in range(2000)}
    with pytest.raises(state.StateFileError, match="not written"):
        state.save(root, huge, "now")
    with pytest.raises(state.StateFileError, match="not written"):
        state.save(root, {"a/b#1": {"kind": "issue", "labels": 5}}, "now")
    assert (root / state.STATE_FILE).read_bytes() == before


def _trickle(request):
    def body():
        for _ in range(30):
            time.sleep(0.2)
            yield b" "
    return Response(body(), status=200, content_type="application/json")


def test_a_trickling_answer_meets_the_request_deadline(httpserver: HTTPServer, root: Path) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_handler(_trickle)
    httpserver.expect_request(PR_PATH).respond_with_json(ISSUE)
    start = time.monotonic()
    refresh.run(root, client=github(httpserver, root, timeout=1.0, deadline=1.0), quiet=True)
    assert time.monotonic() - start < 4
    assert "within 1 s" in assert_known_kept(root)["error"]


@pytest.fixture
def silent_server():
    """A socket that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(50)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    sock.close()


def test_circuit_breaker_after_consecutive_silences(silent_server: str, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    links = "".join(f"- repo: a/b\n  kind: issue\n  number: {n}\n  title: t\n" for n in range(1, 8))
    (tmp_path / "data" / "links.yaml").write_text(links, encoding="utf-8")
    client = refresh.GitHub(silent_server, cache_dir=None, timeout=0.3, retries=0, backoff=0)
    start = time.monotonic()
    outcome, _ = refresh.run(tmp_path, client=client, quiet=True)
    assert time.monotonic() - start < 1.0 * refresh.BREAKER + 1
    assert client.stats.requests == refresh.BREAKER
    assert len(outcome.errors) == 7 and sum("in a row" in e for e in outcome.errors) == 7 - refresh.BREAKER


def test_run_deadline_stops_asking(httpserver: HTTPServer, root: Path) -> None:
    def slow(request):
        time.sleep(0.3)
        return Response(json.dumps(ISSUE), content_type="application/json")

    httpserver.expect_request(ISSUE_PATH).respond_with_handler(slow)
    httpserver.expect_request(PR_PATH).respond_with_json(ISSUE)
    outcome, _ = refresh.run(root, client=github(httpserver, root), quiet=True, deadline=0.1)
    assert "deadline" in assert_known_kept(root, "tensorflow/tensorflow#31465")["error"]


def test_dot_segments_in_a_repo_are_refused_before_any_request(tmp_path: Path, capsys) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "links.yaml").write_text("- repo: ../..\n  kind: issue\n  number: 1\n  title: t\n", encoding="utf-8")
    assert main(["--root", str(tmp_path), "links", "refresh", "--base-url", "http://127.0.0.1:9", "--quiet"]) == 2
    assert "data/links.yaml:1:" in capsys.readouterr().err


def test_api_paths_quote_their_parts() -> None:
    class Link:
        kind, repo, number, sha = "commit", "a/b", None, "abc/../../x"

    assert refresh.api_path(Link()) == "/repos/a/b/commits/abc%2F..%2F..%2Fx"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions, so a read-only data/ cannot be made")
def test_read_only_data_fails_before_any_request(httpserver: HTTPServer, root: Path, capsys) -> None:
    httpserver.expect_request(ISSUE_PATH).respond_with_json(ISSUE)
    (root / "data").chmod(0o555)
    try:
        code = main(["--root", str(root), "links", "refresh", "--base-url", httpserver.url_for("/").rstrip("/"),
                     "--quiet", "--no-cache"])
    finally:
        (root / "data").chmod(0o755)
    err = capsys.readouterr().err
    assert code == 3 and err.startswith("kb: error: cannot write") and "Traceback" not in err
    assert httpserver.log == []


def test_unwritable_state_fails_before_any_request(httpserver: HTTPServer, root: Path, capsys, monkeypatch) -> None:
    """Where permissions cannot be dropped (root), the disk is made to fail the same way."""
    httpserver.expect_request(ISSUE_PATH).respond_with_json(ISSUE)

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device", str(root / "data"))

    monkeypatch.setattr(state.tempfile, "NamedTemporaryFile", no_space)
    code = main(["--root", str(root), "links", "refresh", "--base-url", httpserver.url_for("/").rstrip("/"),
                 "--quiet", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 3 and "cannot write" in err and "No space left on device" in err and "Traceback" not in err
    assert httpserver.log == []


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=12)
_issue_like = st.fixed_dictionaries({}, optional={k: _json for k in
                                                  ("title", "state", "labels", "merged_at", "milestone", "html_url",
                                                   "merge_commit_sha", "state_reason", "pull_request")})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=st.one_of(_json, _issue_like))
def test_any_answer_is_kept_or_refused_never_a_crash(httpserver: HTTPServer, root: Path, body) -> None:
    httpserver.clear()
    httpserver.expect_request(ISSUE_PATH).respond_with_json(body)
    httpserver.expect_request(PR_PATH).respond_with_json(body)
    httpserver.expect_request("/repos/tensorflow/tensorflow/releases").respond_with_json(body)
    state.save(root, KNOWN, "2026-01-01T00:00:00Z")
    outcome, _ = refresh.run(root, client=github(httpserver, root, cache_dir=None), quiet=True)
    saved = state.load(root)  # the file written is one the reader takes
    for key in KNOWN:
        if any(e.startswith(key) for e in outcome.errors):
            assert saved[key]["title"] == KNOWN[key]["title"]
        else:
            assert isinstance(saved[key]["title"], str)


def test_token_is_never_sent_over_plain_http_to_another_host(capsys) -> None:
    """Issue 33 (Low): `--base-url http://...` would send GITHUB_TOKEN in clear text."""
    from kb.links.refresh import GitHub

    client = GitHub("http://api.example.invalid", token="secret-token")
    assert "Authorization" not in client.session.headers
    assert "plain http" in capsys.readouterr().err
    local = GitHub("http://127.0.0.1:9", token="secret-token")  # the tests' local server
    assert local.session.headers["Authorization"] == "Bearer secret-token"
    assert GitHub("https://api.github.com", token="t").session.headers["Authorization"] == "Bearer t"


# --- issue 43 (round 4 and the round-3 L12) ---------------------------------------------------


def test_r4_m3_a_deeply_nested_answer_is_malformed_and_the_other_answers_are_kept(httpserver: HTTPServer,
                                                                                  root: Path) -> None:
    """A 400 KB body of nested brackets was a RecursionError traceback, and the state file was not
    written: every other link's answer was lost."""
    httpserver.expect_request(ISSUE_PATH).respond_with_data("[" * 200_000 + "]" * 200_000, status=200)
    httpserver.expect_request(PR_PATH).respond_with_json(dict(ISSUE, title="Fresh PR title", state="closed",
                                                              merged_at=None, merge_commit_sha=None, milestone=None,
                                                              html_url="https://github.com/tensorflow/tensorflow/pull/31465"))
    outcome, _ = refresh.run(root, client=github(httpserver, root), quiet=True)
    entry = assert_known_kept(root)
    assert "malformed answer" in entry["error"] and "nested deeper" in entry["error"]
    assert state.load(root)["tensorflow/tensorflow#31465"]["title"] == "Fresh PR title"  # written, kept
    assert outcome.refreshed == 1


def test_r3_l12_404_for_everything_flags_nothing_deleted(httpserver: HTTPServer, root: Path, monkeypatch) -> None:
    """A wrong base URL or proxy that answers 404 to every request flagged every link deleted, exit 0."""
    monkeypatch.setattr(httpserver, "no_handler_status_code", 404)  # the server outlives the test
    outcome, _ = refresh.run(root, client=github(httpserver, root), quiet=True)
    assert outcome.flagged == []
    for key in KNOWN:
        entry = assert_known_kept(root, key)
        assert "not flagged as deleted" in entry["error"] and entry.get("flag") != "deleted"


def test_r4_l19_server_errors_count_toward_the_breaker(tmp_path: Path, httpserver: HTTPServer, monkeypatch) -> None:
    """500 to everything was retried per link and never stopped the run (518 requests in 400 s)."""
    (tmp_path / "data").mkdir()
    links = "".join(f"- repo: a/b\n  kind: issue\n  number: {n}\n  title: t\n" for n in range(1, 9))
    (tmp_path / "data" / "links.yaml").write_text(links, encoding="utf-8")
    monkeypatch.setattr(httpserver, "no_handler_status_code", 500)
    client = github(httpserver, tmp_path)
    outcome, _ = refresh.run(tmp_path, client=client, quiet=True)
    assert client.stats.requests == refresh.BREAKER
    assert len(outcome.errors) == 8 and sum("in a row" in e for e in outcome.errors) == 8 - refresh.BREAKER
