"""Work done beside the caller, in a forked child process, on a second core.

`kb site` has two pieces of work that need only what is already in memory when they start
(the lint checks, the JSON API) and take seconds each; on a machine of two cores they run in
a child while the parent renders the pages. A child is a fork (Linux), so it starts at once
with the parent's memory, imports and caches; its result comes back pickled through a pipe.
Where the OS does not fork, the process runs other threads (a fork copies only the calling
thread, and a lock another thread held stays held in the child: JAX or TensorFlow loaded in
the same process, say), or a child fails (killed, out of memory, an exception), the work runs
in this process when its result is asked for: a fork only ever saves time.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Any
from collections.abc import Callable

FORKS = hasattr(os, "fork") and sys.platform.startswith("linux")


def single_threaded() -> bool:
    """True when this process has one thread, native ones included (Linux: /proc/self/task)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class Aside:
    """`fn()` started in a child; `result()` waits for it (or runs `again()` here when the child failed)."""

    def __init__(self, fn: Callable[[], Any], again: Callable[[], Any] | None = None) -> None:
        self.fn, self.again = fn, again or fn
        self.pid = 0
        self.done: list[Any] = []
        self.forked = FORKS and single_threaded()
        if not self.forked:
            return
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: work, send the result, leave without running the parent's exit code
            status = 1
            try:
                os.close(read_end)
                value = fn()
                with os.fdopen(write_end, "wb") as out:
                    pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        self.pid, self.read_end = pid, read_end

    def result(self) -> Any:
        if not self.done:
            value, ok = None, False
            if not self.forked:
                value, ok = self.fn(), True
            elif self.pid:
                with os.fdopen(self.read_end, "rb") as incoming:
                    data = incoming.read()
                _, status = os.waitpid(self.pid, 0)
                self.pid = 0
                if status == 0:
                    try:
                        value, ok = pickle.loads(data), True
                    except Exception:  # noqa: BLE001 - a damaged answer: the work is done here instead
                        pass
            self.done.append(value if ok else self.again())
        return self.done[0]

    def cancel(self) -> None:
        """Stop a child whose result nobody will ask for."""
        if self.pid:
            os.close(self.read_end)
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = 0
