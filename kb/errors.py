"""Exceptions of the public API (standard library only: imported on the query path)."""


class UnknownOpError(LookupError):
    """An op name that is neither in a record nor in the framework's API inventory."""

    def __init__(self, op: str, framework: str | None, suggestions: tuple[str, ...] = (), reason: str = "") -> None:
        self.op = op
        self.framework = framework
        self.suggestions = suggestions
        where = f" in {framework}" if framework else ""
        text = reason or f"unknown op {op!r}{where}"
        if suggestions:
            text += "; did you mean: " + ", ".join(suggestions) + "?"
        super().__init__(text)
