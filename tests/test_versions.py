"""The one range evaluator (kb/versions.py): semantics, agreement with packaging, order independence."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from kb.versions import compile_range, contains, key_to_str, overlaps, release_key

releases = st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=4)


@pytest.mark.parametrize("text", ["2.1", "2.1.0", "2.1.0.0", "2.1.0rc1", "2.1.0.dev3", "2.1.0.post1", "2.1.0+cu118", " 2.1 "])
def test_release_forms_share_a_key(text: str) -> None:
    assert release_key(text) == release_key("2.1") == (0, 2, 1)


@pytest.mark.parametrize("text", ["", "2.x", "two", "2..1", ".2", "2.", "latest", "1.15-gpu?"])
def test_non_versions_raise_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="not a version|must be a string"):
        release_key(text)


def test_non_string_raises_value_error() -> None:
    with pytest.raises(ValueError):
        release_key(2.1)  # type: ignore[arg-type]


@given(releases)
def test_fast_path_agrees_with_packaging(parts: list[int]) -> None:
    text = ".".join(map(str, parts))
    release = list(Version(text).release)
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    assert release_key(text) == (0, *release)
    # ordering of keys matches PEP 440 ordering of the releases
    other = ".".join(map(str, parts[::-1]))
    assert (release_key(text) < release_key(other)) == (Version(text) < Version(other))


@pytest.mark.parametrize(
    "spec, inside, outside",
    [
        (">=2.1", ["2.1", "2.1.0", "2.1.4", "2.1.0rc1", "2.21.0"], ["2.0", "2.0.4", "1.15.5"]),
        (">=1.14,<2.1", ["1.14", "1.15.5", "2.0.4"], ["1.13.2", "2.1", "2.1.0rc1"]),
        ("<2.2", ["0.12", "2.1.4"], ["2.2", "2.2.0rc0"]),
        ("~=2.2", ["2.2", "2.9.1"], ["2.1", "3.0"]),
        ("==2.9.*", ["2.9", "2.9.3"], ["2.8", "2.10"]),
        ("==2.3", ["2.3", "2.3.0"], ["2.3.1", "2.4"]),
        ("<=2.3", ["2.3", "2.2"], ["2.3.1"]),
        (">2.3", ["2.3.1", "2.4"], ["2.3", "2.3.0"]),
    ],
)
def test_range_membership(spec: str, inside: list[str], outside: list[str]) -> None:
    lo, hi = compile_range(spec)
    for version in inside:
        assert contains(lo, hi, release_key(version)), (spec, version)
    for version in outside:
        assert not contains(lo, hi, release_key(version)), (spec, version)


@given(releases, st.sampled_from([">=", "<", "==", "~=", "<=", ">"]), releases)
def test_compiled_range_matches_packaging_on_releases(bound: list[int], op: str, probe: list[int]) -> None:
    if op == "~=" and len(bound) < 2:
        return
    spec = f"{op}{'.'.join(map(str, bound))}"
    version = ".".join(map(str, probe))
    lo, hi = compile_range(spec)
    assert contains(lo, hi, release_key(version)) == (Version(version) in SpecifierSet(spec))


@pytest.mark.parametrize("spec", ["!=2.1", "===2.1", ">=2.1rc1", "=>2.1", ">=2.1,<2.0", "", "2.1"])
def test_bad_ranges_are_rejected(spec: str) -> None:
    with pytest.raises(ValueError):
        compile_range(spec)


def test_overlap_is_symmetric_and_exact() -> None:
    ranges = [compile_range(s) for s in ["<1.14", ">=1.14,<2.1", ">=2.1,<2.8", ">=2.8"]]
    for a, b in itertools.combinations(ranges, 2):
        assert not overlaps(a, b) and not overlaps(b, a)
    assert overlaps(compile_range("<2.2"), compile_range(">=2.1"))
    assert overlaps(compile_range(">=2.1"), compile_range("<2.2"))


@given(st.permutations(["<1.14", ">=1.14,<2.1", ">=2.1,<2.8", ">=2.8"]), releases)
def test_answer_does_not_depend_on_range_order(order: list[str], probe: list[int]) -> None:
    key = release_key(".".join(map(str, probe)))
    matches = [spec for spec in order if contains(*compile_range(spec), key)]
    assert len(matches) == 1  # the four ranges tile every version
    canonical = [spec for spec in sorted(order) if contains(*compile_range(spec), key)]
    assert matches == canonical


def test_key_to_str() -> None:
    assert key_to_str(release_key("2.10.0")) == "2.10"
    assert key_to_str(None) == ""
