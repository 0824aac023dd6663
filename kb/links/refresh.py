"""`kb links refresh`: ask the GitHub REST API what every link in data/links.yaml looks like today.

Why it is built this way:
- Conditional requests: each response's ETag is kept in an on-disk cache (.cache/kb-links/)
  and sent back as If-None-Match; GitHub answers 304 without counting it against the rate
  limit, so a nightly refresh of an unchanged KB costs (almost) nothing.
- Transient failures (5xx, connection errors, read timeouts) are retried by urllib3's `Retry`
  mounted on the session, with exponential backoff; no hand-written retry loop.
- Rate limits (403/429 with `x-ratelimit-remaining: 0`, or `retry-after`) are waited out from
  the reset headers, up to a bound; past it the refresh stops asking and keeps what it had.
- Nothing is lost: a 404/410 (deleted) or 301 (moved/transferred) keeps the entry and flags
  it; an error keeps the previous entry and notes the error. The state file is written once,
  atomically, at the end, so an interrupted refresh leaves the previous file intact.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable
from urllib.parse import quote, urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from kb import jsonio
from kb.atomic import write_atomic
from kb.links import answers
from kb.links import state as state_file

API = "https://api.github.com"
CACHE_DIR = ".cache/kb-links"
RETRY_STATUS = (500, 502, 503, 504)
REDIRECTS = (301, 302, 307, 308)
MAX_BODY = 8 * 1024 * 1024   # bytes of one answer (a page of 100 TensorFlow releases is ~2 MB)
MAX_ROUNDS = 5               # rate-limit waits per request: a Retry-After of 0 cannot loop
MAX_REDIRECTS = 5            # hops, each within the API host
DEFAULT_WAIT = 60.0          # a Retry-After that is not a finite number of seconds (GitHub's advice)
RUN_DEADLINE = 1800.0        # seconds for a whole refresh; links not reached keep their facts
BREAKER = 3                  # consecutive failed connections before the rest of the run is skipped


class FetchError(Exception):
    """A request that failed after every retry (or a rate limit longer than the allowed wait)."""


class RateLimitExhausted(FetchError):
    """The rate limit resets later than the caller is willing to wait."""


class Unreachable(FetchError):
    """No answer at all (connection refused, timed out, deadline): counts toward the breaker."""


@dataclass
class Fetched:
    status: int                      # final HTTP status (200, 304 answered from the cache, 404...)
    data: Any = None                 # decoded JSON body (from the cache on 304)
    moved_to: str | None = None      # final URL when the API redirected (301: moved/transferred)
    from_cache: bool = False


@dataclass
class Stats:
    requests: int = 0
    not_modified: int = 0
    rate_limit_waits: list[float] = field(default_factory=list)


def _now_iso(clock: Callable[[], float]) -> str:
    return _dt.datetime.fromtimestamp(clock(), _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitHub:
    """A small GitHub REST client: ETag cache, urllib3 retries, rate-limit waits.

    `clock` and `sleep` are injectable so tests never really sleep; `backoff` is urllib3's
    backoff factor (0 disables the retry sleeps, for tests).
    """

    def __init__(
        self,
        base_url: str = API,
        token: str | None = None,
        cache_dir: Path | None = None,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_wait: float = 900.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        deadline: float = 60.0,
        max_body: int = MAX_BODY,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.origin = _origin(self.base_url)
        self.cache_dir = cache_dir
        self.timeout = timeout
        self.max_wait = max_wait
        self.deadline = deadline      # seconds for one request's answer, however slowly it trickles
        self.max_body = max_body
        self.clock = clock
        self.sleep = sleep
        self.stats = Stats()
        self.session = requests.Session()
        self.session.headers.update({
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "kb-determinism-links-refresh",
        })
        if token and self.origin[0] != "https" and not _loopback(self.base_url):
            print(f"kb links refresh: warning: {self.origin[0]}:// to {self.origin[1]} is plain http: "
                  "GITHUB_TOKEN is not sent (use https)", file=sys.stderr)
            token = None
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        retry = Retry(
            total=retries, connect=retries, read=retries, status=retries,
            status_forcelist=RETRY_STATUS, allowed_methods=frozenset({"GET"}),
            backoff_factor=backoff, raise_on_status=False,
            # Retry-After is honoured in get() against max_wait and the injectable sleep; left to
            # urllib3 it would retry a 429 by sleeping for as long as the header says, unbounded.
            respect_retry_after_header=False,
        )
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    # --- cache ------------------------------------------------------------------------

    def _cache_path(self, path: str) -> Path | None:
        if self.cache_dir is None:
            return None
        digest = hashlib.sha256(f"{self.base_url}{path}".encode()).hexdigest()[:32]
        return self.cache_dir / f"{digest}.json"

    def _cached(self, path: str) -> dict[str, Any] | None:
        file = self._cache_path(path)
        if file is None or not file.exists():
            return None
        try:
            entry = jsonio.loads(file.read_bytes(), str(file), limits=jsonio.Limits(max_bytes=2 * self.max_body))
        except (OSError, ValueError):  # jsonio.JsonError is a ValueError
            return None  # a damaged cache entry only costs one unconditional request
        return entry if isinstance(entry, dict) and "etag" in entry else None

    def _store(self, path: str, etag: str, data: Any, url: str) -> None:
        file = self._cache_path(path)
        if file is not None:
            write_atomic(file, json.dumps({"etag": etag, "url": url, "data": data}))

    # --- requests ---------------------------------------------------------------------

    def _rate_limit_wait(self, response: requests.Response) -> float | None:
        """Seconds to wait before asking again, or None when the 403/429 is not a rate limit.

        A Retry-After of 0, a negative, `nan` or `inf` is not a usable wait: it counts as
        DEFAULT_WAIT, so a server that keeps answering 429 cannot make the client ask again
        at once, forever; each round also counts against MAX_ROUNDS and max_wait.
        """
        headers = response.headers
        if "retry-after" in headers:
            try:
                wait = float(headers["retry-after"])
            except ValueError:
                return DEFAULT_WAIT
            return wait if math.isfinite(wait) and wait >= 1.0 else DEFAULT_WAIT
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            try:
                reset = float(headers["x-ratelimit-reset"])
            except ValueError:
                return DEFAULT_WAIT
            return max(0.0, reset - self.clock()) + 1.0 if math.isfinite(reset) else DEFAULT_WAIT
        return None

    def _send(self, path: str, params: dict[str, Any] | None, headers: dict[str, str]) -> tuple[requests.Response, str | None]:
        """One GET, following redirects only within the API host; (response, where it moved)."""
        url, moved = self.base_url + path, None
        for _ in range(MAX_REDIRECTS + 1):
            try:
                response = self.session.get(url, params=params, headers=headers, timeout=self.timeout,
                                            stream=True, allow_redirects=False)
            except requests.RequestException as exc:
                raise Unreachable(f"GET {path}: {type(exc).__name__} after retries") from None
            if response.status_code not in REDIRECTS:
                return response, moved
            location = urljoin(response.url, response.headers.get("location", ""))
            response.close()
            if _origin(location) != self.origin:
                raise FetchError(f"GET {path}: redirected off the API host (to {location[:200]!r}): not followed")
            url, params, moved = location, None, location
        raise FetchError(f"GET {path}: more than {MAX_REDIRECTS} redirects")

    def _body(self, path: str, response: requests.Response, started: float) -> Any:
        """The JSON of an answer read in pieces: at most max_body bytes and `deadline` seconds."""
        chunks, size = [], 0
        try:
            while True:
                if time.monotonic() - started > self.deadline:
                    raise Unreachable(f"GET {path}: no complete answer within {self.deadline:g} s")
                chunk = response.raw.read1(65536, decode_content=True)
                if not chunk:
                    break
                size += len(chunk)
                if size > self.max_body:
                    raise FetchError(f"GET {path}: malformed answer: over {self.max_body:,} bytes")
                chunks.append(chunk)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise Unreachable(f"GET {path}: {type(exc).__name__} while reading the answer") from None
        finally:
            response.close()
        try:  # bounded: a 400 KB body of nested brackets was a RecursionError that lost every answer
            return jsonio.loads(b"".join(chunks), f"GET {path}", limits=jsonio.Limits(max_bytes=self.max_body))
        except jsonio.JsonError as exc:
            if exc.code:  # over a bound (depth, values, one string): a malformed answer, whatever the status
                raise FetchError(f"GET {path}: malformed answer: {exc.message}") from None
            return _NOT_JSON

    def get(self, path: str, params: dict[str, Any] | None = None) -> Fetched:
        key = path + ("?" + "&".join(f"{k}={v}" for k, v in sorted(params.items())) if params else "")
        cached = self._cached(key)
        waited = 0.0
        for _ in range(MAX_ROUNDS + 1):  # each round either returns or waits out a rate limit
            headers = {"If-None-Match": cached["etag"]} if cached else {}
            self.stats.requests += 1
            started = time.monotonic()
            response, moved = self._send(path, params, headers)
            if response.status_code in (403, 429):
                wait = self._rate_limit_wait(response)
                if wait is None:
                    return Fetched(response.status_code, self._body(path, response, started))
                response.close()
                if waited + wait > self.max_wait:
                    raise RateLimitExhausted(
                        f"GET {path}: rate limited for {wait:.0f}s more (limit {self.max_wait:.0f}s); "
                        "set GITHUB_TOKEN for a higher limit"
                    )
                self.stats.rate_limit_waits.append(wait)
                self.sleep(wait)
                waited += wait
                continue
            break
        else:
            raise RateLimitExhausted(f"GET {path}: still rate limited after {MAX_ROUNDS} waits")
        if response.status_code == 304 and cached:
            response.close()
            self.stats.not_modified += 1
            return Fetched(304, cached["data"], moved_to=moved or _moved(cached, self.base_url + path), from_cache=True)
        if response.status_code == 304:
            response.close()
            raise FetchError(f"GET {path}: 304 Not Modified but no cached copy (cache cleared mid-run?)")
        data = self._body(path, response, started)
        if response.status_code == 200 and data is _NOT_JSON:
            raise FetchError(f"GET {path}: malformed answer: the body is not JSON")
        if data is _NOT_JSON:
            data = None
        if response.status_code == 200 and response.headers.get("etag"):
            self._store(key, response.headers["etag"], data, moved or self.base_url + path)
        return Fetched(response.status_code, data, moved_to=moved)


_NOT_JSON = object()


def _loopback(url: str) -> bool:
    """A server on this machine (the tests' fake GitHub): nothing crosses a network."""
    return (urlsplit(url).hostname or "").lower() in ("localhost", "127.0.0.1", "::1")


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _moved(cached: dict[str, Any], asked: str) -> str | None:
    url = cached.get("url")
    return url if url and url.split("?")[0] != asked else None


# --- link entries ---------------------------------------------------------------------


def _date(value: str | None) -> str | None:
    return value[:10] if value else None


def _repo_path(repo: str) -> str:
    """`owner/name` with each part quoted; the schema already refuses `.`/`..` segments."""
    owner, _, name = repo.partition("/")
    if not owner or not name or {owner, name} & {".", ".."}:
        raise FetchError(f"{repo!r} is not a GitHub repository name")
    return f"{quote(owner, safe='')}/{quote(name, safe='')}"


def api_path(link: Any) -> str:
    if link.kind == "commit":
        return f"/repos/{_repo_path(link.repo)}/commits/{quote(str(link.sha), safe='')}"
    return f"/repos/{_repo_path(link.repo)}/{'pulls' if link.kind == 'pr' else 'issues'}/{int(link.number)}"


def _release_of(client: GitHub, repo: str, data: dict[str, Any], max_compare: int) -> tuple[str | None, str | None]:
    """First release containing a merged PR, where the API can tell; (tag, how it was found).

    A milestone on the PR names the release directly. Otherwise the releases published after
    the merge are asked, oldest first, whether they contain the merge commit (compare API:
    `tag...sha` is "behind" or "identical" when the tag contains it); at most `max_compare`.
    `data` is an issue answer already checked by kb/links/answers.py; the answers asked here
    are checked too, and a malformed one is a FetchError (the link keeps its previous facts).
    """
    if data["milestone"]:
        return data["milestone"], "milestone"
    sha, merged_at = data["merge_commit_sha"], data["merged_at"]
    if not sha or not merged_at:
        return None, None
    fetched = client.get(f"/repos/{_repo_path(repo)}/releases", {"per_page": 100})
    if fetched.status not in (200, 304):
        return None, None
    try:
        listed = answers.releases(fetched.data)
    except answers.Malformed as exc:
        raise FetchError(f"GET /repos/{repo}/releases: malformed answer: {exc}") from None
    after = sorted(
        (r for r in listed if not r["draft"] and (r["published_at"] or "") >= merged_at),
        key=lambda r: r["published_at"] or "",
    )
    for release in after[:max_compare]:
        tag = release["tag_name"]
        compared = client.get(f"/repos/{_repo_path(repo)}/compare/{quote(tag, safe='')}...{quote(sha, safe='')}")
        if compared.status not in (200, 304):
            continue
        try:
            status = answers.compare(compared.data)
        except answers.Malformed as exc:
            raise FetchError(f"GET /repos/{repo}/compare: malformed answer: {exc}") from None
        if status in ("behind", "identical"):
            return tag, "compare"
    return None, None


def entry_from(link: Any, fetched: Fetched, client: GitHub, now: str, max_compare: int) -> dict[str, Any]:
    """The state entry of one link from its answer; a malformed answer is a FetchError."""
    entry: dict[str, Any] = {"kind": link.kind, "http": fetched.status, "checked": now}
    try:
        data = answers.commit(fetched.data) if link.kind == "commit" else answers.issue(fetched.data)
    except answers.Malformed as exc:
        raise FetchError(f"malformed answer: {exc}") from None
    if link.kind == "commit":
        entry.update(title=data["title"], date=_date(data["date"]))
    else:
        entry["title"] = data["title"]
        entry["labels"] = data["labels"]
        state = data["state"]
        if link.kind == "pr" and data["merged_at"]:
            state = "merged"
            entry["merged"] = _date(data["merged_at"])
            entry["release"], entry["release_basis"] = _release_of(client, link.repo, data, max_compare)
        elif link.kind == "issue" and data["pull_request"]:
            entry["note"] = "the API says this number is a pull request; data/links.yaml calls it an issue"
        entry["state"] = state
        if data["state_reason"]:
            entry["state_reason"] = data["state_reason"]
        entry["html_url"] = data["html_url"]
    if fetched.moved_to:
        moved_to = data["html_url"] or answers.web_url(fetched.moved_to)
        entry["flag"] = "moved"
        if moved_to:
            entry["moved_to"] = moved_to
    return {k: v for k, v in entry.items() if v is not None}


@dataclass
class Outcome:
    links: dict[str, dict[str, Any]]
    refreshed: int = 0
    unchanged: int = 0               # answered 304 (no rate limit used)
    flagged: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def refresh(
    links: list[Any],
    previous: dict[str, dict[str, Any]],
    client: GitHub,
    now: str,
    max_compare: int = 3,
    progress: Callable[[str], None] | None = None,
    deadline: float | None = None,
) -> Outcome:
    """The new state of every link; failures keep the previous entry, so nothing is dropped.

    The run stops asking (every remaining link keeps its previous facts) when a rate limit
    outlasts the allowed wait, after BREAKER requests in a row got no answer (GitHub or the
    network is down: asking 200 more times costs minutes each), or past `deadline` seconds.
    """
    out = Outcome(links={})
    stop: str | None = None
    failed_in_a_row = 0
    repositories: dict[str, str | None] = {}
    started = time.monotonic()
    for link in links:
        key = link.key
        old = dict(previous.get(key, {}))
        if progress:
            progress(key)

        def keep(error: str) -> None:
            """A failed link keeps its previous facts, with the error beside them."""
            out.links[key] = {**old, "kind": link.kind, "error": error}
            out.errors.append(f"{key}: {error}")

        if not stop and deadline is not None and time.monotonic() - started > deadline:
            stop = f"not refreshed: the run's deadline of {deadline:g} s passed"
        if stop:
            keep(stop)
            continue
        try:
            fetched = client.get(api_path(link))
            failed_in_a_row = 0 if fetched.status < 500 else failed_in_a_row + 1
        except RateLimitExhausted as exc:
            stop = f"not refreshed: {exc}"
            keep(stop)
            continue
        except Unreachable as exc:
            failed_in_a_row += 1
            keep(str(exc))
            if failed_in_a_row >= BREAKER:
                stop = f"not refreshed: {BREAKER} requests in a row got no answer (last: {exc})"
            continue
        except FetchError as exc:
            keep(str(exc))
            continue
        if fetched.status >= 500:  # past urllib3's retries: GitHub (or what stands in for it) is failing
            keep(f"HTTP {fetched.status}")
            if failed_in_a_row >= BREAKER:
                stop = f"not refreshed: {BREAKER} requests in a row got no answer but a server error (last: HTTP {fetched.status})"
            continue
        if fetched.status in (404, 410) and (why := _repository_missing(client, link.repo, repositories)):
            keep(f"HTTP {fetched.status}, not flagged as deleted: {why}")
            continue
        if fetched.status in (404, 410):
            # Deleted (or made private): keep every known fact, flag it, never drop it.
            out.links[key] = {**old, "kind": link.kind, "http": fetched.status, "checked": now, "flag": "deleted"}
            out.links[key].pop("error", None)
            out.flagged.append(f"{key}: deleted ({fetched.status})")
            continue
        if fetched.status not in (200, 304):
            keep(f"HTTP {fetched.status}")
            continue
        try:
            entry = entry_from(link, fetched, client, now, max_compare)
        except RateLimitExhausted as exc:
            stop = f"not refreshed: {exc}"
            keep(stop)
            continue
        except FetchError as exc:
            keep(str(exc))
            continue
        out.links[key] = entry
        if entry.get("flag") == "moved":
            out.flagged.append(f"{key}: moved to {entry.get('moved_to', 'another address')}")
        if fetched.from_cache:
            out.unchanged += 1
        else:
            out.refreshed += 1
    return out


def _repository_missing(client: GitHub, repo: str, seen: dict[str, str | None]) -> str | None:
    """Why a 404 for an issue, PR or commit cannot be read as "deleted": its repository does not
    answer either (a wrong --base-url, proxy or token answers 404 to everything, which flagged
    every link deleted); None when the repository answers. Asked once per repository and run."""
    if repo not in seen:
        try:
            status = client.get(f"/repos/{_repo_path(repo)}").status
        except FetchError as exc:
            seen[repo] = f"its repository could not be asked ({exc})"
        else:
            seen[repo] = None if status in (200, 304) else (
                f"its repository {repo} answers HTTP {status} too (a wrong --base-url or token, or the repository is gone)")
    return seen[repo]


class BadInput(Exception):
    """data/links.yaml (or the state file) cannot be read: exit 2, nothing written."""


def load_links(root: Path) -> list[Any]:
    """The curated links, validated; any bad entry stops the refresh before a request is made."""
    from pydantic import ValidationError

    from kb import schema
    from kb.catalog import LINKS_FILE
    from kb.yamlio import YamlError, read

    path = root / LINKS_FILE
    try:
        doc = read(path)
    except FileNotFoundError:
        raise BadInput(f"{LINKS_FILE}: missing") from None
    except YamlError as exc:
        raise BadInput(f"{LINKS_FILE}:{exc.line}: {exc.message}") from None
    if not isinstance(doc.data, list):
        raise BadInput(f"{LINKS_FILE}:1: expected a list of links")
    links, problems = [], []
    for index, entry in enumerate(doc.data):
        try:
            links.append(schema.Link.model_validate(entry))
        except ValidationError as exc:
            problems.append(f"{LINKS_FILE}:{doc.line_of((index,))}: {exc.errors()[0]['msg']}")
    if problems:
        raise BadInput("; ".join(problems) + " (run `kb validate`)")
    return links


def run(
    root: Path,
    base_url: str = API,
    token: str | None = None,
    client: GitHub | None = None,
    quiet: bool = False,
    deadline: float | None = RUN_DEADLINE,
) -> tuple[Outcome, dict[str, dict[str, Any]]]:
    """Refresh every link of data/links.yaml into data/links-state.yaml; (outcome, previous).

    Raises OSError before the first request when the state file cannot be written.
    """
    links = load_links(root)
    previous = state_file.load(root)
    state_file.check_writable(root)
    if client is None:
        client = GitHub(base_url, token=token if token is not None else os.environ.get("GITHUB_TOKEN"),
                        cache_dir=root / CACHE_DIR)
    now = _now_iso(client.clock)
    if quiet:
        outcome = refresh(links, previous, client, now, deadline=deadline)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(TextColumn("links"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                      transient=False) as bar:
            task = bar.add_task("", total=len(links))

            def tick(key: str) -> None:
                bar.update(task, description=key)
                bar.advance(task)

            outcome = refresh(links, previous, client, now, progress=tick, deadline=deadline)
    state_file.save(root, outcome.links, now)
    return outcome, previous
