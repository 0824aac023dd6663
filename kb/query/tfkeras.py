"""`tf.keras.*` in TensorFlow 2.16 and later is Keras 3: which Keras release a TensorFlow release
answers for, and the `keras.*` name and records a `tf.keras.*` name then stands for.

Why: from 2.16, TensorFlow's `tf.keras` loads the `keras` package (Keras 3) unless
TF_USE_LEGACY_KERAS=1 and tf_keras are set (tensorflow/python/util/lazy_loader.py,
KerasLazyLoader, read in the 2.16.1 to 2.21.0 wheels). Keras 3 layers draw random numbers from
Keras's own seed generator and call other TensorFlow kernels than Keras 2 did, so a `tf.keras.*`
question is answered from the Keras records at the Keras release the TensorFlow release admits.

The data: each TensorFlow release's `keras` requirement, read from its wheel's METADATA
(data/versions/tensorflow.yaml), compiled by kb/compile.py `keras_requirements` into
`registries["tensorflow"]["keras"]`: rows (key, version, requirement, newest known Keras release it
admits, whether it admits only Keras 3 or later), sorted by key.
"""

from kb import versions
from kb.errors import UnknownOpError
from kb.query.names import resolve
from kb.query.state import LIMIT, memo

PREFIX = "tf.keras."
KERAS_PREFIX = "keras."
_bases: dict[tuple, tuple | None] = memo()


def keras_name(op: str) -> str:
    """`tf.keras.layers.Dropout` -> `keras.layers.Dropout` (Keras 3 exports the same path)."""
    return KERAS_PREFIX + op[len(PREFIX):]


def row_for(key: tuple, rows: tuple) -> tuple | None:
    """The requirement row a release key answers with: the release itself, or the newest release of
    a series ('2.16' -> 2.16.2); None for a key with no row (not read, or not a release)."""
    if len(key) < 3:  # a bare major version ('2') names no single Keras requirement
        return None
    found = None
    for row in rows:
        if row[0][:len(key)] == key:
            found = row
    return found


def basis(op: str, key: tuple, idx: dict) -> tuple | None:
    """For a `tf.keras.*` op at TensorFlow release key `key`: None where tf.keras is not known to be
    Keras 3 there (answer as the TensorFlow records say); else (keras op, Keras version, its release
    key, TensorFlow release, requirement, Keras record ids, whether the name is a Keras 3 name the KB
    knows). After Keras 3 began, a release whose wheel was not read has Keras version, key and
    requirement None, and names the first release whose wheel requires Keras 3 instead."""
    if not op.startswith(PREFIX):
        return None
    memo_key = (op, key)
    if memo_key in _bases:
        return _bases[memo_key]
    rows = idx["registries"].get("tensorflow", {}).get("keras", ())
    first = next((row for row in rows if row[4]), None)
    row = row_for(key, rows)
    found = None
    if row is not None and row[4]:
        found = _make(op, row[3], row[1], row[2], idx)
    elif row is None and first is not None and key > first[0]:
        found = _make(op, None, first[1], None, idx)
    if len(_bases) < LIMIT:
        _bases[memo_key] = found
    return found


def _make(op: str, keras_version: str | None, tf_release: str, requires: str | None, idx: dict) -> tuple:
    name = keras_name(op)
    try:
        _, ids = resolve(name, "keras", idx)
        known = True
    except UnknownOpError:
        ids, known = (), False
    key = versions.release_key(keras_version) if keras_version is not None else None
    return (name, keras_version, key, tf_release, requires, ids, known)


def note(op: str, version: str, found: tuple) -> str:
    """The answer's note saying its Keras basis."""
    name, keras_version, _, tf_release, requires, ids, known = found
    legacy = ("; with TF_USE_LEGACY_KERAS=1 and tf_keras installed, tf.keras is Keras 2 (tf_keras) instead, "
              "which this answer does not cover")
    if keras_version is None:
        head = (f"tf.keras in TensorFlow {version} is taken to be Keras 3 (as in {tf_release}, the first release whose "
                f"wheel requires it), but the keras requirement of this release was not read from its wheel: the "
                f"Keras records of {name} are unknown here")
    else:
        same = versions.release_key(tf_release) == versions.release_key(version)
        shown = version if same else f"{version} ({tf_release})"  # a series answers with its newest release
        head = (f"tf.keras in TensorFlow {shown} is Keras 3 (keras{requires}, "
                f"from the wheel's METADATA); answered for Keras {keras_version}, the newest known Keras release "
                f"it admits, from the records of {name}")
    if not known:
        head += f" ({name} is not a Keras 3 name the KB knows: no Keras record applies)"
    elif not ids:
        head += f" (no Keras record names {name})"
    return head + legacy
