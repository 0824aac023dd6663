"""What a verifier child's failure was: the op's own answer, or the environment's.

Outcomes of a mode: `ok` (measured), `raised` (the op or its determinism switch raised:
evidence), `error` (a harness problem: an unknown code, an import error, a hang) and
`env-error` (the machine failed the run: the backend could not start, memory ran out, the
child was killed by a signal). An environment failure says nothing about the op, so it is
never counted as a raise or as evidence; the runner retries such a mode once alone.

One rule for the child (live exceptions), the runner (how a child ended) and the run-file
reader (messages recorded before this outcome existed). Standard library only.
"""

from __future__ import annotations

import re

ENV_ERROR = "env-error"
FAILED = frozenset({"error", ENV_ERROR})

# Messages of a backend that cannot start, memory that ran out, or a child killed from outside.
# None of them is an op's refusal to run deterministically (those say "deterministic").
_ENVIRONMENT = re.compile(
    r"Unable to initialize backend|no supported devices found|no CUDA-capable device|CUDA_ERROR_NO_DEVICE"
    r"|Found no NVIDIA driver|CUDA driver version is insufficient|cuInit|failed call to cuInit"
    r"|out of memory|OutOfMemory|RESOURCE_EXHAUSTED|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|MemoryError"
    r"|killed by signal",
    re.IGNORECASE,
)


def environment_failure(message: object) -> bool:
    """True when a failure's message says the environment failed, not the op."""
    return isinstance(message, str) and bool(_ENVIRONMENT.search(message))


def read_recorded(mode: dict) -> None:
    """A mode read from a run file written before `env-error` existed: a recorded `raised` or
    `error` whose message is an environment failure is read as `env-error` (the file itself
    is never edited; the rule is here, in code, and tested)."""
    if mode.get("outcome") in ("raised", "error") and environment_failure(mode.get("message")):
        mode["recorded_outcome"] = mode["outcome"]
        mode["outcome"] = ENV_ERROR
