"""Whether a code base's `tf.keras` is Keras 2, and the TensorFlow release its calls are answered as.

From TensorFlow 2.16, `tf.keras` loads Keras 3 unless `TF_USE_LEGACY_KERAS=1` and the `tf_keras`
package are set up (tensorflow/python/util/lazy_loader.py, KerasLazyLoader), so kb.status answers a
`tf.keras.*` name at 2.16 or later from the Keras 3 records. A code base that requires Keras 2 says
so in one of four ways, each read here: it imports `tf_keras`, it sets `TF_USE_LEGACY_KERAS=1`,
its packaging files require `keras<3` (or `tf-keras`), or its CI workflows
(`.github/workflows/*.yml`) install `tf-keras` or `keras<3` or set `TF_USE_LEGACY_KERAS` to 1 (a
code base tested that way runs that way: the workflow is where many set the variable, since it
must be set before TensorFlow is imported). Its `tf.keras.*` calls are then Keras 2
code running on TensorFlow's kernels, which the knowledge base describes for the releases whose own
`tf.keras` was Keras 2: they are answered as in the newest of those, and the answer says so.

The packaging files are looked for in the scanned folders and the folders above a scanned path
up to the repository root (the first folder holding `.git`), so a scan of chosen files reads the
same requirement as a scan of the whole repository. Untrusted: read with kb/untrusted.py's bounded
reader (regular files of at most MAX_BYTES, never a link out of the folder).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from kb import untrusted
from kb.versions import release_key

MAX_BYTES = 1_000_000
PACKAGING = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")
_LEVELS = 6
_KERAS = re.compile(r"(?<![\w.-])keras(?![\w-])\s*(?:\[[^\]\n]*\])?\s*((?:[<>=!~]=?\s*[0-9][0-9.*]*\s*,?\s*)+)")
_TF_KERAS = re.compile(r"(?<![\w.-])tf[-_]keras(?![\w-])")
_SPEC = re.compile(r"([<>=!~]=?)\s*([0-9][0-9.*]*)")
# In a workflow: `TF_USE_LEGACY_KERAS: 1` / `"true"` / `=1`, or `${{ matrix.NAME }}` whose matrix sets NAME to 1.
_LEGACY_ENV = re.compile(r"\bTF_USE_LEGACY_KERAS['\"]?\s*[:=]\s*(?:['\"]?(?:1|true|True)['\"]?(?![\w.])"
                         r"|\$\{\{\s*matrix\.([\w-]+)\s*\}\})")
WORKFLOWS = os.path.join(".github", "workflows")


class Keras2(NamedTuple):
    why: str  # "requirements.txt:3 requires keras<3", "train.py:2 imports tf_keras", ...
    version: str  # the TensorFlow release tf.keras calls are answered as ("2.15")
    first_keras3: tuple  # the release key from which tf.keras is Keras 3


def _major_two(specs: str) -> bool:
    """A specifier list that admits no Keras 3 (`<3`, `<3.0`, `<=2.15`, `==2.15.*`, `~=2.12`)."""
    for op, version in _SPEC.findall(specs):
        head = version.split(".")[0]
        if not head.isdigit():
            continue
        major = int(head)
        if (op == "<" and (major < 3 or version.rstrip(".0*") in ("3",))) or (op in ("<=", "==", "~=") and major < 3):
            return True
    return False


def _requires(text: str) -> int | None:
    """The line of a Keras 2 requirement in a packaging file's text, or None."""
    for pattern in (_KERAS, _TF_KERAS):
        for match in pattern.finditer(text):
            if pattern is _TF_KERAS or _major_two(match.group(1)):
                return text.count("\n", 0, match.start()) + 1
    return None


def _legacy_env(text: str) -> int | None:
    """The line of a workflow's `TF_USE_LEGACY_KERAS` set to 1, literally or through a matrix value
    that some matrix entry sets to 1 (`use-legacy-keras: "1"`), or None."""
    for match in _LEGACY_ENV.finditer(text):
        key = match.group(1)
        if key is None or re.search(rf"(?m)^\s*-?\s*{re.escape(key)}\s*:\s*['\"]?(?:1|true|True)['\"]?\s*(?:#.*)?$", text):
            return text.count("\n", 0, match.start()) + 1
    return None


def _read(path: str, folder: str) -> str:
    """The file's text, or "" when kb/untrusted.py refuses it (a link out of `folder`, not a regular
    file, larger than MAX_BYTES) or it cannot be read."""
    try:
        return untrusted.read_bytes(Path(path), MAX_BYTES, within=Path(folder)).decode("utf-8", errors="replace")
    except (OSError, untrusted.Refused):
        return ""


def folders(paths: list[str]) -> list[str]:
    """The scanned folders and, above each scanned path, the folders up to the repository root."""
    out: list[str] = []
    for path in paths:
        folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        chain = [folder]
        for _ in range(_LEVELS):
            if os.path.exists(os.path.join(folder, ".git")):
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                chain = chain[:1]  # no repository root above: the scanned folder alone
                break
            folder = parent
            chain.append(folder)
        else:
            chain = chain[:1]
        out += [f for f in chain if f not in out]
    return out


def _listed(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _packaging_files(folder: str) -> list[str]:
    return [os.path.join(folder, n) for n in _listed(folder)
            if n in PACKAGING or (n.startswith("requirements") and n.endswith((".txt", ".in")))]


def _workflow_files(folder: str) -> list[str]:
    workflows = os.path.join(folder, WORKFLOWS)
    return [os.path.join(workflows, n) for n in _listed(workflows) if n.endswith((".yml", ".yaml"))]


def detect(paths: list[str], modules: dict, idx: dict, keras_pin: str | None = None) -> Keras2 | None:
    """Keras2 when the scanned code base requires Keras 2 (None: tf.keras follows the TensorFlow release)."""
    rows = idx["registries"].get("tensorflow", {}).get("keras", ())
    first = next((row for row in rows if row[4]), None)
    keys = idx["registries"].get("tensorflow", {}).get("keys", ())
    if first is None:
        return None
    older = [k for k in keys if k < first[0]]
    if not older:
        return None
    newest = max(older)
    version = ".".join(str(p) for p in newest[1:3])  # a release key starts with its kind (0: a release)
    why = _why(paths, modules, keras_pin)
    return Keras2(why, version, first[0]) if why else None


def _why(paths: list[str], modules: dict, keras_pin: str | None) -> str:
    for path, module in sorted(modules.items()):
        for name, _, _ in module.layout.imports:
            if name.split(".")[0] == "tf_keras":
                return f"{path} imports tf_keras"
        for setting in module.settings:
            if setting.kind == "env" and setting.name == "TF_USE_LEGACY_KERAS" \
                    and str(setting.value).strip().lower() in ("1", "true", "yes"):
                return f"{path}:{setting.line} sets TF_USE_LEGACY_KERAS=1"
    for folder in folders(paths):
        for name in _packaging_files(folder):
            line = _requires(_read(name, folder))
            if line is not None:
                return f"{os.path.relpath(name)}:{line} requires Keras 2"
        for name in _workflow_files(folder):
            text = _read(name, folder)
            line = _requires(text)
            if line is not None:
                return f"{os.path.relpath(name)}:{line} installs Keras 2"
            line = _legacy_env(text)
            if line is not None:
                return f"{os.path.relpath(name)}:{line} sets TF_USE_LEGACY_KERAS=1"
    if keras_pin is not None and release_key(keras_pin)[1:2] < (3,):
        return f"keras {keras_pin} is pinned"
    return ""


def applies(found: Keras2 | None, op: str, version: str) -> bool:
    """Whether a call of `op` answered for TensorFlow `version` is Keras 2 code answered as `found.version`."""
    return found is not None and op.startswith("tf.keras.") and release_key(version) >= found.first_keras3
