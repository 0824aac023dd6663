"""Knowledge base on run-to-run non-determinism in deep learning.

    >>> import kb
    >>> s = kb.status("tf.nn.bias_add", "1.15")
    >>> s.deterministic, s.solutions, s.recipe
    (False, ('TDP',), ('TDP',))

Only the standard library is imported here and by `kb.status()`; validation, building
and docs (Pydantic, PyYAML, Jinja) live in modules that the query path never touches.
"""

from kb.errors import UnknownOpError
from kb.model import Reference, SourceStatus, Status
from kb.query import parameters, status

__all__ = [
    "NO_DEFAULT", "UNKNOWN_DEFAULT", "Reference", "SourceStatus", "Status", "UnknownOpError", "parameters", "status",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """NO_DEFAULT and UNKNOWN_DEFAULT (kb/signatures.py), imported when first asked for: a lookup
    without `call=` never needs the signatures module (each module costs start-up time)."""
    if name in ("NO_DEFAULT", "UNKNOWN_DEFAULT"):
        from kb import signatures

        return getattr(signatures, name)
    raise AttributeError(f"module 'kb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
