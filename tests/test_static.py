"""`kb verify --static`: reading released wheels, on small wheels the tests build (never a download)."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import struct
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ALERT = b"_ZN2at7Context21alertNotDeterministicEN3c1017basic_string_viewIcEE"


def fake_library(alerts: list[str], decoys: list[str], via_got: list[str] = ()) -> bytes:
    """An x86-64 ELF shared library whose code passes each alert name to alertNotDeterministic.

    Direct calls go to the defined symbol; `via_got` names are called through a GOT slot
    (`call [rip+slot]`, as -fno-plt builds do). Decoy strings are loaded before a call to some
    other address, as dispatch labels are, and must not be read as alerts.
    """
    rodata = b"".join(s.encode() + b"\0" for s in [*alerts, *decoys, *via_got])
    dynstr = b"\0" + ALERT + b"\0"
    text_off, text_size = 0x1000, 0x1000
    rodata_off = 0x2000
    got_slot = 0x3000
    func = text_off  # the alert function's body: ret
    code = bytearray(b"\xc3")

    def lea(target: int) -> bytes:
        here = text_off + len(code)
        return b"\x48\x8d\x3d" + struct.pack("<i", target - (here + 7))

    def string_at(name: str) -> int:
        return rodata_off + rodata.index(name.encode() + b"\0")

    for name in alerts:
        code += lea(string_at(name)) + b"\x90\x90"
        here = text_off + len(code)
        code += b"\xe8" + struct.pack("<i", func - (here + 5))
    for name in decoys:
        code += lea(string_at(name))
        here = text_off + len(code)
        code += b"\xe8" + struct.pack("<i", func + 0x800 - (here + 5))
    for name in via_got:
        code += lea(string_at(name))
        here = text_off + len(code)
        code += b"\xff\x15" + struct.pack("<i", got_slot - (here + 6))
    assert len(code) < text_size
    dynsym = bytes(24) + struct.pack("<IBBHQQ", 1, 0x12, 0, 1, func, 1) + struct.pack("<IBBHQQ", 1, 0x12, 0, 0, 0, 0)
    rela = struct.pack("<QQq", got_slot, (2 << 32) | 6, 0)
    shstr = b"\0.text\0.rodata\0.dynsym\0.dynstr\0.rela.dyn\0.shstrtab\0"
    blobs = {".text": (text_off, bytes(code).ljust(text_size, b"\xcc")), ".rodata": (rodata_off, rodata)}
    out = bytearray(0x4000)
    out[text_off:text_off + text_size] = blobs[".text"][1]
    out[rodata_off:rodata_off + len(rodata)] = rodata
    tail = {}
    for name, blob in ((".dynsym", dynsym), (".dynstr", dynstr), (".rela.dyn", rela), (".shstrtab", shstr)):
        tail[name] = len(out)
        out += blob
    shoff = len(out)
    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0),
        (shstr.index(b".text"), 1, text_off, text_off, text_size, 0, 0, 16, 0),
        (shstr.index(b".rodata"), 1, rodata_off, rodata_off, len(rodata), 0, 0, 1, 0),
        (shstr.index(b".dynsym"), 11, tail[".dynsym"], tail[".dynsym"], len(dynsym), 4, 1, 8, 24),
        (shstr.index(b".dynstr"), 3, tail[".dynstr"], tail[".dynstr"], len(dynstr), 0, 0, 1, 0),
        (shstr.index(b".rela.dyn"), 4, tail[".rela.dyn"], tail[".rela.dyn"], len(rela), 3, 0, 8, 24),
        (shstr.index(b".shstrtab"), 3, 0, tail[".shstrtab"], len(shstr), 0, 0, 1, 0),
    ]
    for name, kind, addr, offset, size, link, info, align, entsize in sections:
        out += struct.pack("<IIQQQQIIQQ", name, kind, 0, addr, offset, size, link, info, align, entsize)
    out[0:16] = b"\x7fELF\x02\x01\x01" + bytes(9)
    struct.pack_into("<HHIQQQIHHHHHH", out, 16, 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, len(sections), len(sections) - 1)
    return bytes(out)


TORCH_INIT = '''
def use_deterministic_algorithms(mode, *, warn_only=False):
    r"""Sets whether PyTorch operations must use "deterministic" algorithms.

    The following normally-nondeterministic operations will act
    deterministically when ``mode=True``:

        * :class:`torch.nn.Conv1d` when called on CUDA tensor
        * :func:`torch.cumsum` when called on a CUDA tensor when dtype is floating
          point or complex

    The following normally-nondeterministic operations will throw a
    :class:`RuntimeError` when ``mode=True``:

        * :class:`torch.nn.AvgPool3d` when attempting to differentiate a CUDA tensor
        * :func:`torch.nn.functional.interpolate` when attempting to differentiate a CUDA tensor
          and one of the following modes is used:

          - ``linear``

        * :func:`torch.histc` when called on a CUDA tensor

    A handful of CUDA operations are nondeterministic if the CUDA version is
    10.2 or greater.
    """
'''

TORCH_FUNCTIONAL = '''
import torch

def interpolate(input, mode="nearest"):
    if input.dim() == 4 and mode == "bilinear":
        if input.is_cuda and torch.are_deterministic_algorithms_enabled():
            return input

def ctc_loss(x):
    if torch.are_deterministic_algorithms_enabled():
        raise RuntimeError("ctc_loss_backward_gpu " "does not have a deterministic implementation")
    return x
'''


def fake_torch_wheel(path: Path, alerts: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("torch/lib/libtorch_cuda.so", fake_library(alerts, ["dispatch_label_cuda"], ["index_reduce_cuda"]))
        wheel.writestr("torch/lib/libtorch_cpu.so", fake_library(["put_"], []) + b"CUBLAS_WORKSPACE_CONFIG\0")
        wheel.writestr("torch/__init__.py", TORCH_INIT)
        wheel.writestr("torch/nn/functional.py", TORCH_FUNCTIONAL)
        wheel.writestr("torch/testing/_internal/common.py", TORCH_FUNCTIONAL)
    return path


def test_call_site_scan_reads_alert_arguments_and_ignores_other_calls() -> None:
    from kb.verify.static.callsites import string_arguments
    from kb.verify.static.elf import Elf

    elf = Elf(fake_library(["histc_cuda", "kthvalue CUDA"], ["dispatch_label_cuda"], ["index_reduce_cuda"]))
    assert string_arguments(elf, "alertNotDeterministic") == ["histc_cuda", "index_reduce_cuda", "kthvalue CUDA"]
    assert string_arguments(elf, "noSuchFunction") == []


def test_not_an_elf_is_a_clear_error() -> None:
    from kb.verify.static.elf import Elf, ElfError

    with pytest.raises(ElfError, match="not an ELF64"):
        Elf(b"PK\x03\x04 a zip, not a library")


def test_pytorch_reader_finds_alerts_python_checks_and_the_docstring_lists(tmp_path) -> None:
    from kb.verify.static import readers

    with zipfile.ZipFile(fake_torch_wheel(tmp_path / "torch-9.9.9-cp311-cp311-linux_x86_64.whl", ["histc_cuda"])) as wheel:
        found = readers.pytorch(wheel)
    alerts = {a["name"]: a["members"] for a in found["alerts"]}
    assert alerts == {"histc_cuda": ["torch/lib/libtorch_cuda.so"], "index_reduce_cuda": ["torch/lib/libtorch_cuda.so"],
                      "put_": ["torch/lib/libtorch_cpu.so"]}
    checks = {(c["function"], c["effect"]) for c in found["python"]}
    assert checks == {("torch.nn.functional.interpolate", "branch"), ("torch.nn.functional.ctc_loss", "raise")}
    branch = next(c for c in found["python"] if c["effect"] == "branch")
    assert branch["guard"] == "input.dim() == 4 and mode == 'bilinear'"
    raised = next(c for c in found["python"] if c["effect"] == "raise")
    assert raised["message"] == "ctc_loss_backward_gpu does not have a deterministic implementation"
    assert found["docs"]["deterministic"][1] == ":func:`torch.cumsum` when called on a CUDA tensor when dtype is floating point or complex"
    assert [d.split()[0] for d in found["docs"]["raises"]] == [":class:`torch.nn.AvgPool3d`", ":func:`torch.nn.functional.interpolate`", ":func:`torch.histc`"]
    assert "``linear``" in found["docs"]["raises"][1]
    assert found["flags"] == [{"name": "CUBLAS_WORKSPACE_CONFIG", "members": ["torch/lib/libtorch_cpu.so"]}]


def test_tensorflow_messages_name_their_op() -> None:
    from kb.verify.static.readers import tf_alert_name

    assert tf_alert_name("Deterministic GPU implementation of CropAndResizeBackpropImage not available.") == "CropAndResizeBackpropImage"
    assert tf_alert_name("A deterministic GPU implementation of fused batch-norm backprop, when training is disabled, "
                         "is not currently available.") == "fused batch-norm backprop"
    assert tf_alert_name("Determinism is not yet supported in GPU implementation of Bincount.") == "Bincount"
    assert tf_alert_name("Timestamp cannot be called when determinism is enabled") == "Timestamp cannot be called when determinism is enabled"


def _offline(monkeypatch, wheels: dict[str, Path]) -> list[str]:
    """Replace pip with the test's own wheels; returns the list of downloads asked for."""
    from kb.verify.static import fetch, run

    asked: list[str] = []

    @contextlib.contextmanager
    def download(package: str, version: str, scratch=None, timeout=0, pythons=()):
        asked.append(f"{package}=={version}")
        if f"{package}=={version}" not in wheels:
            raise fetch.NotServed(f"{package}=={version}")
        path = wheels[f"{package}=={version}"]
        yield fetch.Wheel(path, hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size)

    monkeypatch.setattr(run, "download", download)
    return asked


def _project(tmp_path: Path) -> Path:
    from site_build import warm_lint_cache

    root = tmp_path / "kb"
    shutil.copytree(ROOT / "data", root / "data", ignore=shutil.ignore_patterns("runs"))
    return warm_lint_cache(root)


def test_pass_writes_one_evidence_file_per_release_and_resumes(tmp_path, monkeypatch) -> None:
    from kb.verify.static import run

    root = _project(tmp_path)
    wheel = fake_torch_wheel(tmp_path / "torch-2.4.1-cp311-cp311-manylinux1_x86_64.whl", ["_histc_cuda"])
    asked = _offline(monkeypatch, {"torch==2.4.1": wheel})
    outcome = run.run(root, ["pytorch"], only=["2.4.1", "2.4.0"], progress=False)
    assert outcome.written == ["pytorch 2.4.1"] and outcome.not_served == ["pytorch 2.4.0"] and not outcome.failed
    path = root / "data/runs/static-pytorch/2.4.1.yaml"
    text = path.read_text()
    assert text.startswith("# GENERATED by `kb verify --static`")
    doc = yaml.safe_load(text)
    assert doc["kind"] == "static" and doc["release"] == "2.4.1"
    assert doc["wheels"][0]["file"] == wheel.name
    assert doc["wheels"][0]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert isinstance(doc["wheels"][0]["python"], list) and "python_version" in doc["wheels"][0]  # the checks, and the CPython
    asked.clear()
    again = run.run(root, ["pytorch"], only=["2.4.1"], progress=False)
    assert asked == [] and again.skipped == ["pytorch 2.4.1"] and again.written == []


def fake_dist(folder: Path, project: str, version: str, tag: str, members: dict[str, bytes]) -> Path:
    """A wheel pip accepts from an index (dist-info with METADATA, WHEEL, RECORD) holding members."""
    dist = project.replace("-", "_")
    path = folder / project / f"{dist}-{version}-{tag}.whl"
    path.parent.mkdir(parents=True, exist_ok=True)
    info = f"{dist}-{version}.dist-info"
    files = {**members,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: kb-tests\nRoot-Is-Purelib: false\nTag: {tag}\n".encode()}
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    links = "".join(f'<a href="{w.name}">{w.name}</a>\n' for w in sorted(path.parent.glob("*.whl")))
    (path.parent / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n")  # a simple-API page
    return path


def _local_index(monkeypatch, index: Path) -> None:
    """pip reads only the test's folder of wheels: no network, no machine-wide configuration."""
    monkeypatch.setenv("PIP_INDEX_URL", index.as_uri())
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    for name in ("PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_TRUSTED_HOST"):
        monkeypatch.delenv(name, raising=False)


def test_a_release_with_no_wheel_for_the_preferred_python_is_read_from_a_fallback_python(tmp_path, monkeypatch) -> None:
    """jaxlib 0.11 ships no cp311 wheel: pip is asked again for CPython 3.12 (its usual manylinux tag
    preferred to a newer glibc's), the evidence says so, the plugin wheel is asked for with the same
    Python (and read though it has only a newer glibc's tag), and nothing stays on disk."""
    from kb.verify.static import fetch, load, run

    index = tmp_path / "simple"
    jaxlib = fake_dist(index, "jaxlib", "0.11.0", "cp312-cp312-manylinux_2_27_x86_64",
                       {"jaxlib/libjax_common.so": b"\0xla_gpu_deterministic_ops\0xla_gpu_autotune_level\0"})
    fake_dist(index, "jaxlib", "0.11.0", "cp313-cp313-manylinux_2_27_x86_64", {"jaxlib/libjax_common.so": b"\0"})
    fake_dist(index, "jaxlib", "0.11.0", "cp312-cp312-manylinux_2_34_x86_64", {"jaxlib/libjax_common.so": b"\0"})
    fake_dist(index, "jax-cuda13-pjrt", "0.11.0", "py3-none-manylinux_2_34_x86_64",  # only a newer glibc's tag
              {"jax_plugins/xla_cuda13/xla_cuda_plugin.so": b"\0xla_gpu_exclude_nondeterministic_ops\0"})
    _local_index(monkeypatch, index)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(fetch.NotServed, match=r"jaxlib==0\.11\.0: no Linux x86-64 wheel for CPython 3\.11"):
        with fetch.download("jaxlib", "0.11.0", scratch, pythons=("3.11",)):
            pass
    root = _project(tmp_path)
    outcome = run.run(root, ["jaxlib"], only=["0.11.0"], scratch=scratch, progress=False)
    assert outcome.written == ["jaxlib 0.11.0"] and not outcome.failed, outcome
    doc = yaml.safe_load((root / "data/runs/static-jaxlib/0.11.0.yaml").read_text())
    assert not load.problems(doc)  # the lint reads it as well-formed evidence (KB002)
    main, plugin = doc["wheels"]
    assert (main["file"], main["python_version"], main["tag"]) == (jaxlib.name, "3.12", "cp312-cp312-manylinux_2_27_x86_64")
    assert main["sha256"] == hashlib.sha256(jaxlib.read_bytes()).hexdigest()
    assert [f["name"] for f in main["flags"]] == ["xla_gpu_autotune_level", "xla_gpu_deterministic_ops"]
    assert (plugin["package"], plugin["python_version"], plugin["tag"]) == ("jax-cuda13-pjrt", "3.12", "py3-none-manylinux_2_34_x86_64")
    assert [f["name"] for f in plugin["flags"]] == ["xla_gpu_exclude_nondeterministic_ops"]
    assert list(scratch.iterdir()) == []  # each wheel deleted once read


def _status_and_findings(root: Path, op: str, version: str):
    import kb
    from kb import query
    from kb.compile import build_index
    from kb.lint import run

    catalog, findings = run(root)
    query.reset(build_index(catalog))
    try:
        return kb.status(op, version), findings
    finally:
        query.reset()


def _claim(root: Path, record: str, alerts: list[str]) -> None:
    path = root / "data/sources/pytorch" / f"{record}.yaml"
    import re

    text = re.sub(r"\n  alerts:(?: \[.*\]|(?:\n    - .*)+)", "", path.read_text())
    assert "\nverify:\n" in text
    path.write_text(text.replace("\nverify:\n", "\nverify:\n  alerts: [" + ", ".join(alerts) + "]\n", 1))


def test_evidence_shows_in_status_and_lint_compares_it_with_the_ranges(tmp_path, monkeypatch) -> None:
    from kb.verify.static import run

    root = _project(tmp_path)
    histc = tmp_path / "torch-2.4.1-cp311-cp311-manylinux1_x86_64.whl"
    fake_torch_wheel(histc, ["_histc_cuda", "brand_new_kernel_cuda"])
    _offline(monkeypatch, {"torch==2.4.1": histc})
    run.run(root, ["pytorch"], only=["2.4.1"], progress=False)
    _claim(root, "torch.histc", ["_histc_cuda"])
    status, findings = _status_and_findings(root, "torch.histc", "2.4")
    (evidence,) = [e for e in status.static if e.source == "torch.histc"]
    assert str(evidence) == "the 2.4.1 wheel's libtorch_cuda.so raises _histc_cuda"
    assert evidence.to_dict()["release"] == "2.4.1"
    kb018 = [f.message for f in findings if f.code == "KB018"]
    assert any("'brand_new_kernel_cuda' is in the wheels of 2.4.1, and no record claims it" in m for m in kb018)
    assert not [f for f in findings if f.code == "KB017" and "torch.histc" in f.message]
    # a claim the release does not hold, where the record says the switch raises: KB017
    _claim(root, "torch.histc", ["_histc_cuda_renamed"])
    _, findings = _status_and_findings(root, "torch.histc", "2.4")
    kb017 = [f for f in findings if f.code == "KB017" and "torch.histc" in f.message]
    assert kb017 and "raises, but the 2.4.1 wheel holds none of _histc_cuda_renamed" in kb017[0].message
    assert kb017[0].path.endswith("torch.histc.yaml")


def test_malformed_evidence_is_kb002_naming_the_field(tmp_path) -> None:
    from kb.lint import run

    root = _project(tmp_path)
    folder = root / "data/runs/static-pytorch"
    folder.mkdir(parents=True)
    (folder / "2.4.1.yaml").write_text("schema_version: 1\nkind: static\nframework: pytorch\nrelease: 2.4.1\nwheels: 3\n")
    _, findings = run(root)
    bad = [f for f in findings if f.code == "KB002" and "static-pytorch" in f.path]
    assert bad and "wheels: expected a non-empty list" in bad[0].message


def test_a_python_branch_before_the_alert_means_the_public_op_does_not_raise(tmp_path, monkeypatch) -> None:
    """bilinear interpolate: the alert stays in the library, but interpolate takes a deterministic
    path first; a range that says raises is then contradicted (KB017) and the answer says why."""
    from kb.verify.static import run

    root = _project(tmp_path)
    wheel = fake_torch_wheel(tmp_path / "torch-2.0.1-cp311-cp311-manylinux1_x86_64.whl", ["upsample_bilinear2d_backward_out_cuda"])
    _offline(monkeypatch, {"torch==2.0.1": wheel})
    run.run(root, ["pytorch"], only=["2.0.1"], progress=False)
    path = root / "data/sources/pytorch/torch.interpolate-bilinear-backward.yaml"
    assert "versions: '>=1.7,<2.1'\n    raises: RuntimeError" in path.read_text()  # the record: 2.0 raises
    status, findings = _status_and_findings(root, "torch.nn.functional.interpolate", "2.0.1")
    (evidence,) = [e for e in status.static if e.source == "torch.interpolate-bilinear-backward"]
    assert evidence.bypassed_by == ("torch.nn.functional.interpolate if mode == 'bilinear'",)
    assert str(evidence).startswith("the 2.0.1 wheel's torch.nn.functional.interpolate if mode == 'bilinear' avoids")
    kb017 = [f.message for f in findings if f.code == "KB017" and "interpolate-bilinear" in f.message]
    assert kb017 and "takes a deterministic path first" in kb017[0]
    # the trilinear record names its own mode: the bilinear branch does not bypass it
    assert not [f for f in findings if f.code == "KB017" and "interpolate-trilinear" in f.message and "path first" in f.message]
