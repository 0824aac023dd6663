"""The API inventories are gzip-compressed (data/api/<framework>.txt.gz) and read through one
reader, kb/apinames.py: written byte-for-byte reproducibly, read back whole, and refused with a
reason (never a traceback, never "no inventory") when corrupt, truncated or too large."""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from pathlib import Path

import pytest

from kb import apinames
from kb.bounds import MAX_INVENTORY
from kb.catalog import load

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = ("pytorch", "tensorflow", "torchvision", "keras", "jax")


def test_encode_is_deterministic_and_round_trips() -> None:
    text = "# jax 0.0 public API, 2 names\njax.numpy.add\njax.lax.scan\n"
    raw = apinames.encode(text)
    assert raw == apinames.encode(text)
    assert raw[4:8] == b"\0\0\0\0"  # mtime 0
    assert gzip.decompress(raw).decode("utf-8") == text
    assert apinames.decode(raw) == {"jax.numpy.add", "jax.lax.scan"}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_shipped_inventories_are_gzip_as_the_script_writes_them(framework: str) -> None:
    """Each data/api inventory is exactly what scripts/introspect_api.py would write for its
    names (so regenerating unchanged names changes no byte), and no plain .txt is left behind."""
    path = ROOT / "data" / "api" / f"{framework}.txt.gz"
    raw = path.read_bytes()
    text = gzip.decompress(raw).decode("utf-8")
    assert text.startswith(f"# {framework} ") and "scripts/introspect_api.py" in text.split("\n", 1)[0]
    assert apinames.encode(text) == raw
    names = apinames.read(str(path), str(ROOT / "data"))
    assert len(names) > 4000 and names == {ln for ln in text.split("\n") if ln and not ln.startswith("#")}
    assert not (ROOT / "data" / "api" / f"{framework}.txt").exists()


def _broken(kind: str) -> bytes:
    good = apinames.encode("# test\ntorch.abs\n")
    return {
        "plain": b"# test\ntorch.abs\n",
        "truncated": good[:-6],
        "corrupt": good[:12] + bytes([good[12] ^ 0xFF]) + good[13:],
        "trailing": good + b"junk",
        "not-utf8": gzip.compress(b"torch.\xff\n", mtime=0),
        "bomb": gzip.compress(b"torch.x\n" * (MAX_INVENTORY // 8 + 2), compresslevel=1, mtime=0),
    }[kind]


@pytest.mark.parametrize("kind, why", [
    ("plain", "not gzip data"), ("truncated", "truncated gzip data"), ("corrupt", "corrupt gzip data"),
    ("trailing", "bytes after the gzip stream"), ("not-utf8", "not UTF-8"), ("bomb", "once decompressed"),
])
def test_reader_refuses_a_broken_inventory_with_a_reason(tmp_path: Path, kind: str, why: str) -> None:
    path = tmp_path / "data" / "api" / "pytorch.txt.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(_broken(kind))
    with pytest.raises(ValueError, match=why):
        apinames.read(str(path), str(tmp_path / "data"))


@pytest.mark.parametrize("kind", ["truncated", "corrupt", "bomb"])
def test_validate_reports_a_corrupt_inventory_as_kb012(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "fixtures" / "mini", root)
    (root / "data" / "api" / "tensorflow.txt.gz").write_bytes(_broken(kind))
    catalog = load(root)
    [finding] = [f for f in catalog.findings if f.path.endswith("tensorflow.txt.gz")]
    assert finding.code == "KB012" and "the API inventory cannot be read" in finding.message


def test_introspect_api_writes_a_reproducible_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generator writes <framework>.txt.gz with mtime 0: twice over the same names, the same bytes."""
    spec = importlib.util.spec_from_file_location("introspect_api", ROOT / "scripts" / "introspect_api.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "TOP", {"jax": ("json", "json")})  # a small module stands in for the framework
    out = tmp_path / "jax.txt.gz"
    assert script.main(["jax", "--out", str(out)]) == 0
    first = out.read_bytes()
    assert script.main(["jax", "--out", str(out)]) == 0
    assert out.read_bytes() == first
    names = apinames.read(str(out))
    assert {"json.dumps", "json.JSONDecoder.decode"} <= names
