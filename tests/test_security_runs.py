"""Run files and the link state are untrusted machine output: every problem is a coded
finding with file:line, never a traceback in `kb validate`, `kb build` or the merge."""

from __future__ import annotations

import copy
import datetime as dt
import shutil
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.cli import main
from kb.lint import run as lint_run
from kb.links import state
from kb.verify import merge, runfile
from bounds import BOUND_S

MINI = Path(__file__).parent / "fixtures" / "mini"
ENV = "cpu-x86-64-0000aaaa"
RUN = {
    "schema_version": 1, "created": "2026-01-02T03:04:05Z", "kind": "verify", "verifier_code": "abc",
    "environment": {"env_id": ENV, "gpu": {"name": None, "count": 0}, "driver": None, "cuda": None, "cudnn": None},
    "results": [{
        "source": "tf.sample", "verifier": "tensorflow.bias_add", "framework": "tensorflow", "version": "2.3.0",
        "device": "gpu", "n": 5,
        "modes": [{"mode": "default", "solutions": [], "outcome": "ok", "distinct": 3, "median_s": 0.01},
                  {"mode": "TDO", "solutions": ["TDO"], "outcome": "ok", "distinct": 1, "median_s": 0.02}],
    }],
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(MINI, tmp_path, dirs_exist_ok=True)
    return tmp_path


def put(root: Path, doc, rel: str = f"data/runs/{ENV}/2026-01-02T030405Z.yaml") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def findings(root: Path) -> list:
    return lint_run(root)[1]


def test_a_valid_run_merges(root: Path) -> None:
    put(root, RUN)
    catalog, found = lint_run(root)
    assert [f for f in found if f.code == "KB002"] == []
    assert merge.merged_runs(catalog)["runs"]["tf.sample"][0]["env_id"] == ENV


WRONG = [
    (("environment", "gpu"), "H100", "environment.gpu: expected a mapping"),
    (("results", 0, "source"), ["a", "b"], "results[0].source: expected text"),
    (("results", 0, "modes", 0, "solutions"), 5, "results[0].modes[0].solutions: expected a list"),
    (("results", 0, "modes", 0, "median_s"), "fast", "results[0].modes[0].median_s: expected a number"),
    (("results", 0, "n"), "five", "results[0].n: expected an integer"),
    (("results", 0, "version"), 2.3, "results[0].version: expected a version string"),
    (("environment", "env_id"), "../../etc", "environment.env_id: expected a name"),
    (("created",), "yesterday", "created: expected a UTC timestamp"),
]


@pytest.mark.parametrize("loc, value, message", WRONG, ids=[w[2].split(":")[0] for w in WRONG])
def test_wrong_typed_fields_are_coded_findings(root: Path, loc: tuple, value, message: str, capsys) -> None:
    doc = copy.deepcopy(RUN)
    target = doc
    for part in loc[:-1]:
        target = target[part]
    target[loc[-1]] = value
    put(root, doc)
    found = [f for f in findings(root) if f.code == "KB002"]
    assert any(message in f.message for f in found), found
    assert all(f.line > 1 or loc == () for f in found if message in f.message)
    for argv in (["validate"], ["build", "--check"], ["site", "--no-html"]):
        assert main(["--root", str(root), *argv]) == 1
    err = capsys.readouterr()
    assert "Traceback" not in err.out + err.err


def test_a_future_run_does_not_shadow_later_ones(root: Path) -> None:
    future = copy.deepcopy(RUN)
    future["created"] = (dt.datetime.now(dt.UTC) + dt.timedelta(days=400)).strftime("%Y-%m-%dT%H:%M:%SZ")
    future["results"][0]["modes"][1]["distinct"] = 4
    put(root, future, f"data/runs/{ENV}/2099-01-01T000000Z.yaml")
    put(root, RUN)
    catalog, found = lint_run(root)
    assert any("in the future" in f.message and f.code == "KB002" for f in found)
    kept = merge.merged_runs(catalog)["runs"]["tf.sample"]
    assert [e["date"] for e in kept] == [RUN["created"]]


@pytest.mark.parametrize("rel", ["data/runs/2026-01-02T030405Z.yaml", "data/runs/other-env/x.yaml",
                                 f"data/runs/{ENV}/deeper/x.yaml", f"data/runs/{ENV}/x.yml"])
def test_misplaced_run_files_are_reported(root: Path, rel: str) -> None:
    put(root, RUN, rel)
    found = [f for f in findings(root) if f.code == "KB002"]
    assert any(f.path == rel for f in found), found


def test_unknown_record_and_verifier_are_reported(root: Path) -> None:
    doc = copy.deepcopy(RUN)
    doc["results"][0]["source"] = "tf.no-such-record"
    doc["results"][0]["verifier"] = "tensorflow.no_such_verifier"
    put(root, doc)
    messages = [f.message for f in findings(root) if f.code == "KB015"]
    assert any("tf.no-such-record" in m and "not a record" in m for m in messages)
    assert any("no_such_verifier" in m and "not a registered verifier" in m for m in messages)


def test_validate_fails_without_data_sources(root: Path, capsys) -> None:
    shutil.rmtree(root / "data" / "sources")
    assert main(["--root", str(root), "validate"]) == 1
    assert "data/sources/ is missing" in capsys.readouterr().out


def test_validate_reads_the_link_state_as_build_does(root: Path, capsys) -> None:
    (root / state.STATE_FILE).write_text("schema_version: 1\nrefreshed: x\nlinks:\n  a/b#1:\n    kind: issue\n"
                                         "    labels: 5\n", encoding="utf-8")
    assert main(["--root", str(root), "validate"]) == 1
    out = capsys.readouterr().out
    assert "data/links-state.yaml:6: KB002" in out and "labels" in out
    assert main(["--root", str(root), "build", "--check"]) == 1


# --- properties ------------------------------------------------------------------------

_junk = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=8)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, prefix + (i,))


_RUN_PATHS = [p for p in _paths(RUN) if p]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.lists(st.sampled_from(_RUN_PATHS), min_size=1, max_size=3), junk=st.lists(_junk, min_size=3, max_size=3))
def test_run_file_fuzz(root: Path, where: list[tuple], junk: list) -> None:
    """Replace up to three fields of a valid run file with anything: problems, never a crash."""
    doc = copy.deepcopy(RUN)
    for loc, value in zip(where, junk):
        target = doc
        try:
            for part in loc[:-1]:
                target = target[part]
            target[loc[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    start = time.perf_counter()
    found = runfile.problems(doc, f"data/runs/{ENV}/x.yaml")
    catalog = lint_run(root)[0]
    catalog.runs = [runfile.RunFile(Path("x"), "x", doc, [(1, m) for _, m in found])]
    merge.merged_runs(catalog)  # only clean files are merged; a clean one merges without error
    assert time.perf_counter() - start < BOUND_S
    assert all(isinstance(m, str) and len(m) < 400 for _, m in found)


_entry = st.dictionaries(st.sampled_from(["kind", "title", "state", "labels", "http", "flag", "moved_to", "html_url",
                                          "merged", "checked", "release", "etag"]), _junk, max_size=6)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.one_of(_junk, st.fixed_dictionaries({"schema_version": st.just(1), "refreshed": _junk,
                                                    "links": st.dictionaries(_junk.filter(lambda k: isinstance(k, (str, int))) , _entry, max_size=3)})))
def test_link_state_fuzz(root: Path, doc) -> None:
    """Any state file: `state.load` returns entries of the right types or a StateFileError with a line."""
    try:
        text = yaml.safe_dump(doc)
    except yaml.YAMLError:
        return
    (root / state.STATE_FILE).write_text(text, encoding="utf-8")
    try:
        links = state.load(root)
    except state.StateFileError as exc:
        assert str(exc).startswith(f"{state.STATE_FILE}:")
        return
    for entry in links.values():
        assert entry.get("kind") in ("issue", "pr", "commit")
        assert all(isinstance(label, str) for label in entry.get("labels", []))
        assert all(isinstance(entry[k], str) for k in ("title", "state", "moved_to") if k in entry)
