"""Whether a code base's standalone Keras 3 (`import keras`, `from keras.layers import *`) runs on
TensorFlow, read from its code; and so whether TensorFlow's records of `tf.keras.X` apply to its
`keras.X` calls.

Keras 3 chooses its backend once, when it is imported (keras/src/backend/config.py at v3.15.1):
`_BACKEND = "tensorflow"` unless `keras.json` in the Keras home folder (`~/.keras`, or
`$KERAS_HOME`) names another, and the environment variable `KERAS_BACKEND`, when set, wins over
both; `keras.config.set_backend(name)` sets `KERAS_BACKEND` and reloads Keras
(keras/src/utils/backend_utils.py). keras/src/backend/__init__.py then imports the chosen backend's
functions, and those of the TensorFlow backend run TensorFlow ops: keras/src/backend/tensorflow/nn.py's
`conv` is `tf.nn.convolution`, its `max_pool` `tf.nn.max_pool`. And from TensorFlow 2.16 `tf.keras`
is this same `keras` package (tensorflow/python/util/lazy_loader.py, KerasLazyLoader; see
kb/scan/keras2.py), so `keras.layers.Conv2D` on the TensorFlow backend is `tf.keras.layers.Conv2D`,
and the knowledge base's TensorFlow-kernel records of the latter (cuDNN convolution, max-pool) are
its records too. Read in
https://github.com/keras-team/keras/blob/v3.15.1/keras/src/backend/config.py and
https://github.com/keras-team/keras/blob/v3.15.1/keras/src/backend/tensorflow/nn.py.

Only the code is read: `KERAS_BACKEND` set in code (`os.environ[...]`, `setdefault`, `putenv`) and
`keras.config.set_backend(...)` calls. A `keras.json` lives in the user's home folder and a shell's
`KERAS_BACKEND` outside the code, so neither is seen; as for the other settings, the scan answers
for what the code leaves at its default.
"""

from __future__ import annotations

from typing import NamedTuple

SET_BACKEND = "keras.config.set_backend"
DEFAULT = "tensorflow"  # keras/src/backend/config.py: _BACKEND = "tensorflow"


class Backend(NamedTuple):
    tensorflow: bool  # False: the code chooses another backend in every run (no TensorFlow record applies)
    certain: bool  # True: nothing in the code chooses another backend
    why: str  # what the code sets ("" when it sets nothing)


def choice(modules: dict) -> Backend:
    """The Keras backend the code base chooses, from every module's settings (a process-wide choice:
    one set anywhere counts for all, as the fixes do in kb/scan/switches.py)."""
    chosen: list[tuple[object, str, bool]] = []  # (value or None when not a literal, where, conditional)
    for path, module in sorted(modules.items()):
        for setting in module.settings:
            if (setting.kind == "env" and setting.name == "KERAS_BACKEND") or \
                    (setting.kind == "call" and setting.name == SET_BACKEND):
                value = setting.value if isinstance(setting.value, str) else None
                chosen.append((value, f"{path}:{setting.line} sets the Keras backend to "
                                      f"{value if value is not None else setting.text}", setting.condition is not None))
    if not chosen:
        return Backend(True, True, "")
    values = {value for value, _, _ in chosen}
    why = "; ".join(where for _, where, _ in chosen[:2])
    if values == {DEFAULT}:
        return Backend(True, True, why)
    if DEFAULT not in values and None not in values and not any(conditional for _, _, conditional in chosen):
        return Backend(False, True, why)
    return Backend(True, False, why)
