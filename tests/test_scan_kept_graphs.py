"""The Graphs the first pass builds for hostcode.settle (kb/scan/hostcode.py's keep): a file with no root that
defines a `forward` is read by settle whenever a held module is called under no_grad, and parsing it a second
time after the first pass cost a large code base about a second. The kept Graph must be the one settle would
build: a scan with them and one without give the same findings, and none is left after the scan."""

from __future__ import annotations

import textwrap
from contextlib import contextmanager
from pathlib import Path

from test_scan_held_modules import _EVALUATOR, _METRIC, _TRAIN

from kb.scan import hostcode, pins
from kb.scan.run import scan


def _scan(folder: Path) -> list[tuple]:
    report = scan([str(folder)], given=pins.parse_versions("torch=2.11"), jobs=1)
    return [(f.path, f.line, f.record, f.level) for f in report.findings]


def test_settle_answers_the_same_with_the_graphs_the_first_pass_kept(tmp_path, monkeypatch):
    for name, source in {"metric.py": _METRIC, "evaluator.py": _EVALUATOR, "train.py": _TRAIN}.items():
        (tmp_path / name).write_text(textwrap.dedent(source), encoding="utf-8")
    kept: list[str] = []
    keep = hostcode.keep

    def spy(path: str, *args: object) -> None:
        keep(path, *args)  # type: ignore[arg-type]
        if path in hostcode._KEPT:
            kept.append(path.rsplit("/", 1)[-1])

    monkeypatch.setattr(hostcode, "keep", spy)
    with_kept = _scan(tmp_path)
    assert kept == ["metric.py"]  # evaluator.py and train.py name no_grad: their Graphs are the scan's own
    assert not hostcode._KEPT  # one scan's: dropped when settle is done

    @contextmanager
    def never():  # type: ignore[no-untyped-def]
        yield

    monkeypatch.setattr(hostcode, "keeping", never)
    assert _scan(tmp_path) == with_kept
    assert any(record.endswith("-backward") for _, _, record, _ in with_kept)
