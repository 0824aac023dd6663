"""Reading and writing data files: safe YAML with line numbers, canonical output, atomic writes.

Why not plain `yaml.safe_load`: lint messages must name the line of the offending field,
PyYAML silently keeps the last of two duplicate keys (a lost fact), and `kb fix` must
write one canonical form so diffs stay small.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kb.atomic import write_atomic  # noqa: F401  (re-exported for writers of data files)

PathKey = tuple  # tuple[str | int, ...]: a location inside a document


class YamlError(Exception):
    """A file that is not acceptable YAML; carries the 1-based line of the problem."""

    def __init__(self, message: str, line: int, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.hint = hint


@dataclass
class Document:
    """A parsed data file: its Python value and where each value starts."""

    path: Path
    data: Any
    lines: dict[PathKey, int] = field(default_factory=dict)
    text: str = ""

    def line_of(self, loc: PathKey) -> int:
        """Line of the deepest known prefix of `loc` (a missing key reports its parent)."""
        loc = tuple(loc)
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return self.lines.get((), 1)


def _walk(node: yaml.Node, loc: PathKey, lines: dict[PathKey, int]) -> None:
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                raise YamlError(
                    f"duplicate key {key!r} (first at line {seen[key]})",
                    key_node.start_mark.line + 1,
                    "YAML keeps only the last value of a repeated key: merge the two entries",
                )
            seen[key] = key_node.start_mark.line + 1
            _walk(value_node, loc + (key,), lines)
            lines[loc + (key,)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, loc + (index,), lines)


def parse(text: str, path: Path) -> Document:
    """Parse one YAML document safely; raise YamlError with the line on any problem."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise YamlError("the file is empty", 1, "a data file holds one YAML document")
        lines: dict[PathKey, int] = {}
        _walk(node, (), lines)
        data = loader.construct_document(node)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark or exc.context_mark
        tag = getattr(exc, "problem", "") or ""
        raise YamlError(
            f"unsupported YAML: {tag}",
            (mark.line + 1) if mark else 1,
            "only plain YAML is read (safe loader); remove tags such as !!python/object",
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        context = ""
        if exc.context and exc.context_mark is not None and exc.context_mark is not mark:
            context = f" ({exc.context}, line {exc.context_mark.line + 1})"
        raise YamlError(
            f"invalid YAML: {exc.problem or exc.context}{context}",
            (mark.line + 1) if mark else 1,
            "check indentation, quotes and colons on this line",
        ) from None
    finally:
        loader.dispose()
    return Document(path=path, data=data, lines=lines, text=text)


def read(path: Path) -> Document:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError(f"not UTF-8 text: {exc.reason}", 1, "save the file as UTF-8") from None
    return parse(text, path)


# --- canonical output ---------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Indented block sequences; short dot-free scalar lists in flow style ([TDO, EOD])."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    # Codes and names without dots ([TDO, EOD], [tensorflow]) read best inline; op names
    # and versions get one line each so that adding one is a one-line diff.
    flow = bool(data) and all(isinstance(x, (str, int)) and "." not in str(x) and len(str(x)) <= 16 for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow or not data)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(_dt.date, yaml.SafeDumper.represent_date)


def dump(data: Any, header: str = "") -> str:
    """The canonical text of a data file: what `kb fix` writes and KB009 compares with."""
    body = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
        indent=2,
    )
    return (header + "\n" if header else "") + body


class _CommentScanner(yaml.SafeLoader):
    """A loader whose scanner records the line of every comment it skips."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.comment_lines: list[int] = []

    def scan_to_next_token(self) -> None:  # mirrors yaml.scanner.Scanner's loop
        if self.index == 0 and self.peek() == "\uFEFF":
            self.forward()
        found = False
        while not found:
            while self.peek() == " ":
                self.forward()
            if self.peek() == "#":
                self.comment_lines.append(self.line + 1)
                while self.peek() not in "\0\r\n\x85\u2028\u2029":
                    self.forward()
            if self.scan_line_break():
                if not self.flow_level:
                    self.allow_simple_key = True
            else:
                found = True


def has_comments(text: str) -> list[int]:
    """Lines holding a comment other than the schema header (comments can't survive `kb fix`)."""
    scanner = _CommentScanner(text)
    try:
        while scanner.check_token():
            scanner.get_token()
    except yaml.YAMLError:
        pass
    finally:
        scanner.dispose()
    lines = text.splitlines()
    return [
        n for n in scanner.comment_lines
        if not (n <= len(lines) and lines[n - 1].lstrip().startswith("# yaml-language-server:"))
    ]
