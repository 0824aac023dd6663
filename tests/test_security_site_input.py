"""The JSON the site reads (the nightly report, reports/nightly.json) is machine output from
another run: any mutation of a real report is shown or named on the page, never a crash."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.site import nightly
from bounds import BOUND_S

REPO = Path(__file__).resolve().parents[1]
REPORT = json.loads((REPO / "reports" / "nightly.json").read_text(encoding="utf-8"))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            yield from _paths(item, prefix + (i,))


PATHS = [p for p in _paths(REPORT) if p]
_junk = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.lists(st.sampled_from(PATHS), min_size=1, max_size=3), junk=st.lists(_junk, min_size=3, max_size=3))
def test_nightly_report_fuzz(tmp_path_factory, where: list[tuple], junk: list) -> None:
    doc = copy.deepcopy(REPORT)
    for loc, value in zip(where, junk):
        target = doc
        try:
            for part in loc[:-1]:
                target = target[part]
            target[loc[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    root = tmp_path_factory.mktemp("r")
    (root / "reports").mkdir()
    (root / "reports" / "nightly.json").write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")
    warnings: list[str] = []
    start = time.perf_counter()
    text = nightly.page(root, {"tf.bias-add-backprop"}, warn=warnings.append)
    assert time.perf_counter() - start < BOUND_S
    assert isinstance(text, str) and text
    assert "<script" not in text
    if warnings:
        assert "reports/nightly.json" in warnings[0]


def test_r3_l14_search_separator_never_splits_an_html_entity() -> None:
    """mkdocs-material's index holds titles HTML-escaped; a separator with ';' split "&lt;" in two,
    and a result for a "<script>" title showed "XSS1<;script>..." (round-3 L14)."""
    import html
    import re

    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # mkdocs.yml's !!python/name tags
    config = yaml.load((Path(__file__).resolve().parents[1] / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    [search] = [p["search"] for p in config["plugins"] if isinstance(p, dict) and "search" in p]
    separator = re.compile(search["separator"])
    title = html.escape("XSS1 <script>alert(1)</script> & tf.nn.bias_add", quote=False)
    tokens = [t for t in separator.split(title) if t]
    assert tokens == ["XSS1", "script", "alert", "1", "script", "tf", "nn", "bias_add"]
