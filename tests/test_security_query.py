"""Hostile arguments to `kb.status()` and `kb status`: a ValueError or exit 2 in well under
a second, never a traceback, a hang, a file read from a name, or CPython's int-limit text."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kb
from kb import apinames, query
from kb.bounds import MAX_INVENTORY
from kb.query import names, state
from kb.cli import main
from bounds import BOUND_S

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kwargs", [
    {"op": []}, {"version": []}, {"framework": []}, {"device": []}, {"distribution": []},
    {"op": {"a": 1}}, {"framework": 3}, {"framework": ""}, {"version": b"1.15"},
])
def test_wrong_types_are_value_errors_not_unhashable(kwargs: dict) -> None:
    args = {"op": "tf.nn.bias_add", "version": "1.15"} | kwargs
    op, version = args.pop("op"), args.pop("version")
    with pytest.raises(ValueError) as info:
        kb.status(op, version, **args)
    assert "unhashable" not in str(info.value) and "UnknownOp" not in type(info.value).__name__


def test_a_framework_is_never_a_path(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("x.secret\nx.secreT\n", encoding="utf-8")
    hops = "../" * (len(Path(query.__file__).parents) + 2)
    relative = hops + str(secret.with_suffix(""))[1:]
    query.reset()
    with pytest.raises(ValueError, match="framework must be one of") as info:
        kb.status("x.secret", "1.0", framework=relative)
    assert "x.secreT" not in str(info.value)
    assert query.inventory(relative) == frozenset()  # not read, not cached
    assert not any(relative in found for found in state.memos())


@pytest.mark.parametrize("version", ["9" * 5000, "1." + "9" * 5000, "１.１５", "١.١٥", "2.1" + "\x00"])
def test_versions_are_short_ascii(version: str) -> None:
    with pytest.raises(ValueError) as info:
        kb.status("tf.nn.bias_add", version)
    assert "set_int_max_str_digits" not in str(info.value) and "4300" not in str(info.value)
    assert len(str(info.value)) < 300


def test_huge_name_is_refused_at_once_and_not_echoed() -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match="too long") as info:
        kb.status("x" * 10_000_000, "1.15")
    assert time.perf_counter() - start < BOUND_S / 2
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("op", ["foo", "x" * 256, "torch." + "a." * 125, "torch.index_ad", "tf.compat.v1." + "c" * 240])
def test_unknown_names_answer_fast(op: str) -> None:
    for fw in (None, "pytorch", "tensorflow"):  # the first miss loads the inventory: timed after
        with pytest.raises(kb.UnknownOpError):
            kb.status(op, "2.1", framework=fw)
        start = time.perf_counter()
        with pytest.raises(kb.UnknownOpError):
            kb.status(op, "2.1", framework=fw)
        assert time.perf_counter() - start < BOUND_S / 2, (op[:20], fw)


def test_suggestions_survive_the_bounds() -> None:
    with pytest.raises(kb.UnknownOpError) as info:
        kb.status("torch.index_ad", "2.11")
    assert "torch.index_add" in info.value.suggestions
    with pytest.raises(kb.UnknownOpError) as info:
        kb.status("bias_add", "2.1", framework="tensorflow")
    assert "tf.nn.bias_add" in info.value.suggestions


@pytest.mark.parametrize("argv", [
    ["status", "x.secret", "1.0", "--framework", "../../../../tmp/secret"],
    ["status", "tf.nn.bias_add", "1.15", "--framework", ""],
    ["status", "tf.nn.bias_add", "9" * 5000],
    ["status", "tf.nn.bias_add", "１.１５"],
])
def test_cli_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb: error:") and "Traceback" not in err and "4300" not in err


_any = st.one_of(st.none(), st.integers(), st.lists(st.text(max_size=3), max_size=2), st.binary(max_size=5),
                 st.text(max_size=40), st.text(max_size=3000), st.sampled_from(["tf.nn.bias_add", "1.15", "gpu", "ngc",
                                                                               "tensorflow", "", "..", "../x"]))


_call = st.one_of(st.none(), _any, st.dictionaries(st.one_of(st.sampled_from(["mode", "accumulate", "input.ndim", "backend",
                                                                              "input.dtype", "reduce"]),
                                                                st.text(max_size=300), st.integers(), st.none()),
                                                   _any, max_size=3))


@FUZZ
@given(op=st.one_of(_any, st.sampled_from(["torch.nn.functional.interpolate", "torch.Tensor.index_add_"])),
       version=_any, framework=_any, device=_any, distribution=_any, call=_call)
def test_status_fuzz(op, version, framework, device, distribution, call) -> None:
    start = time.perf_counter()
    try:
        kb.status(op, version, framework=framework, device=device, distribution=distribution, call=call)
    except (ValueError, kb.UnknownOpError) as exc:
        assert len(str(exc)) < 2000 and "set_int_max_str_digits" not in str(exc)
    assert time.perf_counter() - start < BOUND_S


_arg = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=300)


@settings(max_examples=60, deadline=None)
@given(op=_arg, version=_arg, framework=st.one_of(st.none(), _arg))
def test_cli_status_fuzz(op: str, version: str, framework: str | None) -> None:
    argv = ["status", "--", op, version] if framework is None else ["status", f"--framework={framework}", "--", op, version]
    start = time.perf_counter()
    code = main(argv)
    assert code in (0, 2)
    assert time.perf_counter() - start < BOUND_S


# --- issue 33 M8 and Low items ---------------------------------------------------------------


def test_m8_parameters_bounds_the_name_like_status() -> None:
    import kb

    with pytest.raises(ValueError) as info:
        kb.parameters("x" * 10**6)
    assert len(str(info.value)) < 300


def test_query_cache_does_not_change_what_is_valid() -> None:
    """call={'input.ndim': 4.0} is refused the same before and after 4 was asked (4.0 == 4)."""
    import subprocess
    import sys

    code = ("import kb\n"
            "def ask():\n"
            "    try:\n"
            "        kb.status('torch.nn.functional.nll_loss', '2.5', call={'input.ndim': 4.0}); return 'answer'\n"
            "    except ValueError: return 'refused'\n"
            "first = ask()\n"
            "kb.status('torch.nn.functional.nll_loss', '2.5', call={'input.ndim': 4})\n"
            "print(first, ask())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["refused", "refused"], out.stderr[-500:]


def test_a_call_value_whose_hash_raises_is_a_value_error() -> None:
    import kb

    class Evil:
        def __hash__(self):
            raise RuntimeError("boom")

        def __eq__(self, other):
            raise RuntimeError("boom")

    with pytest.raises(ValueError):
        kb.status("torch.nn.functional.nll_loss", "2.5", call={"input.ndim": Evil()})
    with pytest.raises(ValueError):
        kb.status(Evil(), "2.5")  # type: ignore[arg-type]


@pytest.mark.parametrize("version", ["0", "0.0", "99"])
def test_status_of_no_release_says_so(version: str) -> None:
    import kb

    notes = kb.status("tf.nn.bias_add", version).notes
    assert any("not a known" in n for n in notes), notes


@pytest.mark.parametrize("version", ["2", "2.1", "1.15.0"])
def test_status_of_a_series_or_release_has_no_such_note(version: str) -> None:
    import kb

    assert not any("not a known" in n for n in kb.status("tf.nn.bias_add", version).notes)


@pytest.mark.parametrize("value", ["9**9**9", "(" * 150 + ")" * 150, "[" * 99 + "]" * 99, "1e400", "9" * 199,
                                   "x" * 1_000_000, "{'a': " * 60 + "1" + "}" * 60, "'\\x1b[2J'", "__import__('os')"])
def test_call_literals_are_parsed_within_bounds(value: str, capsys) -> None:
    """Issue 31 item 6: `--call KEY=VALUE` never evaluates, recurses without bound or echoes
    a megabyte: an answer or exit 2, fast, one line of error."""
    start = time.perf_counter()
    code = main(["status", "torch.nn.functional.interpolate", "2.10", "--call", f"mode={value}"])
    assert time.perf_counter() - start < BOUND_S
    out, err = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in out + err
    assert len(out + err) < 20_000 and "\x1b[2J" not in out + err


class _Raising(dict):
    def items(self):
        raise RuntimeError("a hostile mapping")


def _raising_pairs():
    yield ("mode", "bilinear")
    raise RuntimeError("a generator that fails half way")


@pytest.mark.parametrize("call", [_Raising(mode="bilinear"), _raising_pairs()])
def test_r4_l16_a_call_mapping_whose_methods_raise_is_a_value_error(call) -> None:
    """docs/security.md: bad arguments are ValueError; a dict subclass whose items() raised let its
    RuntimeError through."""
    with pytest.raises(ValueError, match="call"):
        kb.status("torch.nn.functional.interpolate", "2.5", call=call)


NO_RECORD = "torch.abs"  # in data/api/pytorch.txt.gz, in no record: only the inventory tells it from a typo


def _broken_inventory(folder: Path, kind: str) -> Path:
    """data/api/pytorch.txt.gz under `folder`, broken the way R4-L14 found it (or as gzip can be)."""
    api = folder / "data" / "api"
    api.mkdir(parents=True)
    path = api / "pytorch.txt.gz"
    good = apinames.encode(f"# pytorch test inventory\n{NO_RECORD}\n")
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "outside":
        (folder / "names.txt").write_text(f"{NO_RECORD}\n", encoding="utf-8")
        path.symlink_to(folder / "names.txt")
    elif kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this system")
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "not-utf8":
        path.write_bytes(gzip.compress(b"torch.\xff\xfe\n", mtime=0))
    elif kind == "plain":  # the inventory as it was before it was compressed
        path.write_text(f"{NO_RECORD}\n", encoding="utf-8")
    elif kind == "truncated":
        path.write_bytes(good[:len(good) // 2])
    elif kind == "corrupt":  # a flipped byte in the deflate data: the CRC or the stream breaks
        path.write_bytes(good[:12] + bytes([good[12] ^ 0xFF]) + good[13:])
    elif kind == "trailing":
        path.write_bytes(good + b"junk")
    elif kind == "bomb":  # 65 MiB of names in a few KB of gzip: refused once over the bound, not inflated whole
        path.write_bytes(gzip.compress(b"torch.x\n" * (MAX_INVENTORY // 8 + 2), compresslevel=1, mtime=0))
    elif kind == "unreadable":
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            pytest.skip("root reads a file whatever its permissions")
        path.write_bytes(good)
        path.chmod(0)
    return path


@pytest.fixture()
def api_at(monkeypatch: pytest.MonkeyPatch):
    """Point the query's inventory at a folder of the test's (the checkout's again afterwards)."""
    def point(folder: Path) -> None:
        data = str(folder / "data")
        monkeypatch.setattr(names, "api_folders", lambda: ((os.path.join(data, "api"), data),))
        query.reset()
    yield point
    monkeypatch.undo()
    query.reset()


@pytest.mark.parametrize("kind", ["dev-zero", "outside", "fifo", "folder", "not-utf8", "unreadable", "plain", "truncated",
                                  "corrupt", "trailing", "bomb"])
def test_r4_l14_an_unreadable_inventory_is_named_not_the_op(tmp_path: Path, kind: str, api_at, capsys) -> None:
    """A data/api/pytorch.txt.gz replaced by a link to /dev/zero or a FIFO read as "no inventory":
    `kb status torch.add 2.5` answered "unknown op", exit 2, blaming the op for the file."""
    _broken_inventory(tmp_path, kind)
    api_at(tmp_path)
    start = time.perf_counter()
    with pytest.raises(OSError, match=r"the API inventory data/api/pytorch.txt.gz could not be read: ") as info:
        kb.status(NO_RECORD, "2.5")
    assert time.perf_counter() - start < BOUND_S  # a FIFO or /dev/zero is never waited on or read
    assert not isinstance(info.value, LookupError) and "unknown op" not in str(info.value)
    assert kb.status("torch.cumsum", "2.5").sources  # a name records list needs no inventory
    assert main(["status", NO_RECORD, "2.5"]) == 3
    out, err = capsys.readouterr()
    assert "data/api/pytorch.txt.gz could not be read" in err and "unknown op" not in err and "Traceback" not in err


def test_r4_l14_no_inventory_file_is_still_no_inventory(tmp_path: Path, api_at) -> None:
    (tmp_path / "data" / "api").mkdir(parents=True)
    api_at(tmp_path)
    with pytest.raises(kb.UnknownOpError):
        kb.status(NO_RECORD, "2.5")


def test_r4_l14_the_report_reproduction(tmp_path: Path) -> None:
    """As the report ran it: the package beside a data/ whose pytorch.txt.gz links to /dev/zero."""
    (tmp_path / "kb").symlink_to(Path(kb.__file__).parent)  # abspath, not realpath: data/ is tmp_path's
    _broken_inventory(tmp_path, "dev-zero")
    out = subprocess.run([sys.executable, "-m", "kb", "status", NO_RECORD, "2.5"], cwd=tmp_path, capture_output=True,
                         text=True, env=os.environ | {"PYTHONPATH": str(tmp_path)}, timeout=60)
    assert out.returncode == 3, out.stderr
    assert out.stderr.startswith("kb: error: the API inventory data/api/pytorch.txt.gz could not be read: it is a link that leads "
                                 "out of data/")


def test_r4_l15_the_report_case_offers_not_the_name_itself(capsys) -> None:
    """`kb status torch.cumsum 2.5 --framework jax` answered "did you mean: torch.cumsum, ...";
    the shipped data has a torch.cumsum record, which the fixture projects do not."""
    query.reset()
    assert main(["status", "torch.cumsum", "2.5", "--framework", "jax"]) == 2
    err = capsys.readouterr().err
    assert "'torch.cumsum' is a pytorch name, not jax's: ask with framework pytorch" in err
    assert "did you mean" not in err
