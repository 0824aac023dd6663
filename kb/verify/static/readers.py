"""What each framework's wheel says about determinism, read from its members.

One reader per framework family; each takes an open wheel (a zip file) and returns
plain findings: `alerts` (a named refusal in the native code), `python` (checks in the
.py files), `docs` (the switch's own documented lists), `flags` (the switches a library
knows). The members read are listed per finding, so the evidence says where it was seen.
"""

from __future__ import annotations

import ast
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from kb.verify.static import pyscan
from kb.verify.static.callsites import string_arguments
from kb.verify.static.elf import Elf, ElfError
from kb.verify.static.strings import containing, names

Findings = dict[str, Any]  # what one wheel says, by kind (alerts, python, docs, flags, ...)

_SKIP_PY = re.compile(r"(^|/)(tests?|testing|kernel_tests|.*_test(_base)?\.py$|.*_test_util\.py$)")


def _shared_libraries(wheel: zipfile.ZipFile, pattern: str) -> Iterator[tuple[str, bytes]]:
    wanted = re.compile(pattern)
    for info in wheel.infolist():
        if wanted.search(info.filename) and not info.is_dir():
            yield info.filename, wheel.read(info)


def _python_files(wheel: zipfile.ZipFile, prefix: str) -> Iterator[tuple[str, str]]:
    for info in wheel.infolist():
        name = info.filename
        if name.startswith(prefix) and name.endswith(".py") and not _SKIP_PY.search(name):
            yield name, wheel.read(info).decode("utf-8", "replace")


def _python_checks(wheel: zipfile.ZipFile, prefix: str, readers: tuple[str, ...], alerts: tuple[str, ...]) -> list[dict]:
    out = []
    for member, source in _python_files(wheel, prefix):
        for check in pyscan.scan(member, source, readers, alerts):
            item = {"function": check.function, "member": member, "line": check.line, "effect": check.effect}
            if check.message:
                item["message"] = check.message
            if check.guard:
                item["guard"] = check.guard
            if check.cases:
                item["cases"] = check.cases
            out.append(item)
    return out


def pytorch(wheel: zipfile.ZipFile) -> Findings:
    """Alert call sites in libtorch*.so, Python checks, and use_deterministic_algorithms' lists."""
    alerts: dict[str, set[str]] = {}
    cublas: list[str] = []
    for member, data in _shared_libraries(wheel, r"^torch/lib/lib(torch|c10)[^/]*\.so$"):
        if b"CUBLAS_WORKSPACE_CONFIG" in data:
            cublas.append(member)
        try:
            elf = Elf(data)
        except ElfError:
            continue
        for name in string_arguments(elf, "alertNotDeterministic", exclude=("CuBLAS",)):
            alerts.setdefault(name, set()).add(member)
        del elf, data
    found: list[dict[str, object]] = [{"name": n, "members": sorted(m)} for n, m in sorted(alerts.items())]
    python = _python_checks(wheel, "torch/", ("are_deterministic_algorithms_enabled",), ("alert_not_deterministic",))
    for check in python:
        if check["effect"] == "alert" and check.get("message"):
            found.append({"name": check["message"], "members": [check["member"]], "python": check["function"]})
    flags = [{"name": "CUBLAS_WORKSPACE_CONFIG", "members": cublas}] if cublas else []
    return {"alerts": found, "python": python, "docs": _torch_doc_lists(wheel), "flags": flags}


def _torch_doc_lists(wheel: zipfile.ZipFile) -> dict[str, list[str]]:
    """The two lists in torch.use_deterministic_algorithms' docstring: made deterministic, and raising.

    An item is a `* ` line at the list's indentation; deeper lines (wrapped text, sub-items,
    after blank lines too) continue it; a line indented no deeper than the list's heading ends it.
    """
    try:
        tree = ast.parse(wheel.read("torch/__init__.py").decode("utf-8", "replace"))
    except (KeyError, SyntaxError):
        return {}
    doc = next((ast.get_docstring(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "use_deterministic_algorithms"), None)
    if not doc:
        return {}
    heads = {"The following normally-nondeterministic operations will act": "deterministic",
             "The following normally-nondeterministic operations will throw": "raises"}
    lists: dict[str, list[str]] = {}
    current: list[str] | None = None
    head_indent = item_indent = 0
    for line in doc.splitlines():
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        head = next((name for prefix, name in heads.items() if text.startswith(prefix)), None)
        if head:
            current, head_indent, item_indent = lists.setdefault(head, []), indent, -1
        elif current is None or not text or (item_indent < 0 and not text.startswith("* ")):
            continue  # outside a list, a blank line, or the heading's own wrapped text
        elif indent <= head_indent and not text.startswith("* "):
            current = None
        elif text.startswith("* ") and (item_indent < 0 or indent == item_indent):
            item_indent = indent
            current.append(text[2:])
        elif current:
            current[-1] += " " + text
    return lists


_TF_KEYWORDS = (b"eterministic GPU implementation", b"is not deterministic", b"determinism is enabled",
                b"op determinism", b"eterministic implementation", b"not yet supported in GPU implementation")
_TF_NAME = (
    re.compile(r"[Dd]eterministic GPU implementation of (.+?)(?:,| is not| not available)"),
    re.compile(r"GPU implementation of (\w+) that would have been executed is not deterministic"),
    re.compile(r"not yet supported in GPU implementation of (.+?)\."),
)


def tf_alert_name(message: str) -> str:
    """The op a TensorFlow refusal names, or the message itself when it names none."""
    for pattern in _TF_NAME:
        match = pattern.search(message)
        if match:
            return match.group(1)
    return message


def tensorflow(wheel: zipfile.ZipFile) -> Findings:
    """Refusal messages in the shared libraries, and the Python raises behind is_op_determinism_enabled()."""
    messages: dict[str, set[str]] = {}
    env: dict[str, set[str]] = {}
    for member, data in _shared_libraries(wheel, r"^tensorflow/.*\.so(\.\d+)?$"):
        for keyword in _TF_KEYWORDS:
            for text in containing(data, keyword):
                if len(text) < 600 and not text.startswith("_Z"):
                    messages.setdefault(text, set()).add(member)
        for name in (b"TF_DETERMINISTIC_OPS", b"TF_CUDNN_DETERMINISTIC", b"TF_USE_CUDNN_AUTOTUNE"):
            if name + b"\0" in data:
                env.setdefault(name.decode(), set()).add(member)
        if b"OpDeterminismRequired" in data:
            env.setdefault("OpDeterminismRequired", set()).add(member)
        del data
    alerts = [{"name": tf_alert_name(t), "message": t, "members": sorted(m)} for t, m in sorted(messages.items())]
    python = _python_checks(wheel, "tensorflow/", ("is_op_determinism_enabled",), ())
    return {"alerts": alerts, "python": python, "flags": [{"name": n, "members": sorted(m)} for n, m in sorted(env.items())]}


_XLA_FLAG = re.compile(rb"xla_gpu_[a-z0-9_]*(?:determin|scatter|atomic|autotune_level)[a-z0-9_]*")


def jaxlib(wheel: zipfile.ZipFile) -> Findings:
    """The XLA determinism and scatter flags the build knows (jaxlib, or the CUDA PJRT plugin)."""
    flags: dict[str, set[str]] = {}
    for member, data in _shared_libraries(wheel, r"\.so(\.\d+)?$"):
        for name in names(data, _XLA_FLAG):
            flags.setdefault(name, set()).add(member)
        del data
    return {"flags": [{"name": n, "members": sorted(m)} for n, m in sorted(flags.items())]}


_ENV = {
    "nccl": re.compile(rb"NCCL_[A-Z0-9_]{2,}"),
    "cublas": re.compile(rb"CUBLAS(?:LT)?_[A-Z0-9_]*(?:WORKSPACE|DETERMIN|EMULAT|LOG|HEURISTICS|ALLOW|DISABLE|FORCE)[A-Z0-9_]*"),
    "cudnn": re.compile(rb"CUDNN_[A-Z0-9_]*(?:DETERMIN|LOG|DBG|ALLOW|DISABLE|FORCE|WORKSPACE|HEUR|AUTOTUNE)[A-Z0-9_]*"),
}


def nvidia(library: str):
    """A reader for one NVIDIA library: the environment switches (and determinism names) its binaries hold."""
    pattern = _ENV[library]

    def read(wheel: zipfile.ZipFile) -> Findings:
        flags: dict[str, set[str]] = {}
        for member, data in _shared_libraries(wheel, r"\.so(\.\d+)*$"):
            for name in names(data, pattern):
                flags.setdefault(name, set()).add(member)
            del data
        return {"flags": [{"name": n, "members": sorted(m)} for n, m in sorted(flags.items())]}

    return read
