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
from kb.signatures import NO_DEFAULT, UNKNOWN_DEFAULT

__all__ = [
    "NO_DEFAULT", "UNKNOWN_DEFAULT", "Reference", "SourceStatus", "Status", "UnknownOpError", "parameters", "status",
]
__version__ = "0.1.0"
