"""Write data/api/<framework>.signatures.txt: the parameters of a framework's public callables.

A record's `calls:` conditions name an op's own parameters (`mode`, `accumulate`,
`reduction`); lint checks those names against this file, `kb build` compiles the defaults
of every op a record names into the index (a parameter left out of `call=` takes its
default), and `kb.status(..., call=...)` reads it for other ops to reject unknown keys.
It is generated here, never typed:

    python scripts/introspect_signatures.py pytorch      # torch CPU build is enough
    python scripts/introspect_signatures.py tensorflow jax

Which names: every name of the framework's API inventory (data/api/<framework>.txt.gz) under
the namespaces people call ops from (NAMESPACES), plus every op and alias of a record.
C builtins without an inspectable signature (most of torch's) are read from the first
`name(...)` line of their docstring, which is how PyTorch documents them.

Line format (tab-separated, one callable a line, sorted):
`name<TAB>param<TAB>param=default<TAB>*args<TAB>**kwargs`; a default is a Python literal
(None, True, 1, 0.5, 'nearest') or `?` when it is not a plain literal.

Overloads: a docstring that documents further forms as `.. function:: name(...)` (PyTorch's
way: `torch.median(input)` and `torch.median(input, dim=-1, keepdim=False, *, out=None)`)
gives one line per form, the same name on each (kb/signatures.py joins them).

Closed value sets: a str parameter whose docstring entry lists its values as literals
(``'nearest'`` | ``'linear'`` ..., or :obj:`"sum"`, :obj:`"prod"` ...) gets a field
`@name=v1|v2|...` on the op's first line; kb.status refuses a value outside it. Only
entries with at least two literals, one of them the default where the default is a string,
count, so prose that quotes one example is not read as a closed set.

Forwarding: a PyTorch module whose forward() calls exactly one functional op gets a field
`>torch.nn.functional.<op>` (ReflectionPad1d forwards to F.pad): lint KB022 asks a record
that names the module to name that spelling too.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = {"tensorflow": ("tensorflow", "tf"), "pytorch": ("torch", "torch"), "jax": ("jax", "jax"), "keras": ("keras", "keras"),
       "torchvision": ("torchvision", "torchvision")}
NAMESPACES = {
    "pytorch": (
        "torch.", "torch.nn.functional.", "torch.Tensor.", "torch.nn.", "torch.nn.attention.",
        "torch.special.", "torch.linalg.", "torch.fft.", "torch.sparse.", "torch.utils.data.",
        "torch.backends.", "torch.cuda.", "torch.compile",
    ),
    "tensorflow": (
        "tf.", "tf.nn.", "tf.math.", "tf.image.", "tf.keras.layers.", "tf.keras.losses.", "tf.linalg.",
        "tf.sparse.", "tf.data.", "tf.random.", "tf.config.", "tf.raw_ops.", "tf.compat.v1.", "tf.signal.",
        "tf.experimental.numpy.", "tf.strings.", "tf.debugging.",
    ),
    "jax": ("jax.", "jax.numpy.", "jax.nn.", "jax.lax.", "jax.ops.", "jax.random.", "jax.scipy.", "jax.image."),
    "keras": ("keras.", "keras.layers.", "keras.initializers.", "keras.random.", "keras.ops.", "keras.utils.",
              "keras.config.", "keras.backend."),
    "torchvision": ("torchvision.ops.", "torchvision.transforms.", "torchvision.transforms.v2.",
                    "torchvision.transforms.functional.", "torchvision.transforms.v2.functional.",
                    "torchvision.models.", "torchvision.io.", "torchvision.utils."),
}
MAX_DEPTH = {"pytorch": 4, "tensorflow": 4, "jax": 4, "keras": 3, "torchvision": 4}


def _resolve(name: str, top: object, prefix: str) -> object:
    obj = top
    for part in name[len(prefix) + 1:].split(".") if name != prefix else ():
        obj = getattr(obj, part)
    return obj


def _literal(node: ast.expr | None) -> str:
    if node is None:
        return ""
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return "?"
    return _text(value)


def _text(value: object) -> str:
    if value is None or isinstance(value, (bool, int, float, str)):
        text = repr(value)
        if "\t" in text or "\n" in text or len(text) > 200:
            return "?"
        return text
    return "?"


def _arguments(doc: str, start: int) -> str | None:
    """The text from `start` (just past an opening parenthesis) to its matching close, on one line."""
    depth = 1
    for i in range(start, min(len(doc), start + 2000)):
        if doc[i] in "([{":
            depth += 1
        elif doc[i] in ")]}":
            depth -= 1
            if depth == 0:
                return " ".join(doc[start:i].split())
    return None


def _doc_signature(doc: str, short: str) -> str | None:
    """The argument text of the first `short(...)` that starts a line, across line breaks."""
    for match in re.finditer(rf"^\s*(?:[\w.]+\.)?{re.escape(short)}\(", doc[:4000], re.M):
        found = _arguments(doc, match.end())
        if found is not None:
            return found
    return None


def _doc_forms(doc: str, short: str) -> list[str]:
    """The argument text of each further form a docstring gives as `.. function:: short(...)`."""
    pattern = rf"^\s*\.\. function:: (?:[\w.]+\.)?{re.escape(short)}\("
    return [found for match in re.finditer(pattern, doc, re.M) if (found := _arguments(doc, match.end())) is not None]


_ENTRY = re.compile(r"^(\s+)(\w+)(?: \(([^)]*)\))?:(.*)$")
_QUOTED = re.compile(r"``'([^'`]+)'``|``\"([^\"`]+)\"``|:obj:`\"([^\"`]+)\"`")


def choices(doc: str | None, fields: list[str]) -> list[str]:
    """`@name=v1|v2` fields for the str parameters whose docstring entry lists their values."""
    if not isinstance(doc, str):
        return []
    defaults = {f.split("=", 1)[0]: f.split("=", 1)[1] for f in fields if "=" in f}
    lines = doc.splitlines()
    out = []
    for i, line in enumerate(lines):
        entry = _ENTRY.match(line)
        if not entry or entry.group(2) not in defaults and entry.group(2) not in fields:
            continue
        name, kind, indent = entry.group(2), entry.group(3), len(entry.group(1))
        if kind is not None and "str" not in kind:
            continue
        text = [entry.group(4)]
        for follow in lines[i + 1:]:
            if follow.strip() and len(follow) - len(follow.lstrip()) <= indent:
                break
            text.append(follow)
        found = list(dict.fromkeys(next(g for g in m.groups() if g) for m in _QUOTED.finditer(" ".join(text))))
        default = defaults.get(name, "")
        if default[:1] in "'\"" and default[1:-1] not in found:
            continue
        if len(found) >= 2 and all("|" not in v and "\t" not in v for v in found):
            out.append(f"@{name}=" + "|".join(found))
    return list(dict.fromkeys(out))


def _parse_args(args: str) -> list[str] | None:
    try:
        tree = ast.parse(f"def f({args}): pass")
    except SyntaxError:
        return None
    fn = tree.body[0].args  # type: ignore[attr-defined]
    out: list[str] = []
    positional = fn.posonlyargs + fn.args
    defaults = [None] * (len(positional) - len(fn.defaults)) + list(fn.defaults)
    for arg, default in zip(positional, defaults):
        out.append(arg.arg + ("=" + _literal(default) if default is not None else ""))
    if fn.vararg:
        out.append("*" + fn.vararg.arg)
    for arg, default in zip(fn.kwonlyargs, fn.kw_defaults):
        if default is None and arg.arg == "out":  # documented without its default, which is None
            out.append("out=None")
            continue
        out.append(arg.arg + ("=" + _literal(default) if default is not None else ""))
    if fn.kwarg:
        out.append("**" + fn.kwarg.arg)
    return [p for p in out if p.split("=")[0] not in ("self", "cls")]


def _from_doc(obj: object, short: str) -> list[str] | None:
    """`index_add(input, dim, index, source, *, alpha=1, out=None) -> Tensor` -> params."""
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return None
    args = _doc_signature(doc, short)
    if args is None:
        return None
    return _parse_args(args)


def forms(obj: object, short: str) -> list[list[str]]:
    """The further forms (overloads) the docstring documents, each as params."""
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return []
    return [p for p in (_parse_args(a) for a in _doc_forms(doc, short)) if p is not None]


def params(obj: object, short: str) -> list[str] | None:
    """Parameters of a callable (a class: its constructor), or None when unknowable."""
    target = obj
    if inspect.isclass(obj):
        target = obj.__init__
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return _from_doc(obj, short)
    out: list[str] = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls") and not out:
            continue
        if p.kind is p.VAR_POSITIONAL:
            out.append("*" + p.name)
        elif p.kind is p.VAR_KEYWORD:
            out.append("**" + p.name)
        elif p.default is p.empty:
            out.append(p.name)
        else:
            out.append(f"{p.name}={_text(p.default)}")
    if out == ["*args", "**kwargs"]:  # a wrapper that hides the real signature
        return _from_doc(obj, short) or out
    return out


def _forwarded(obj: object, sets: list[str], top: object, framework: str) -> list[str]:
    """A module whose forward() passes a parameter on to a functional op (`nn.Upsample` ->
    `F.interpolate(..., self.mode, ...)`) takes every value that op documents: the module's
    own docstring may list fewer (Upsample's omits 'nearest-exact')."""
    if framework != "pytorch" or not sets or not inspect.isclass(obj) or not hasattr(obj, "forward"):
        return sets
    try:
        source = inspect.getsource(obj.forward)
    except (OSError, TypeError):
        return sets
    out = []
    for field in sets:
        name, _, values = field[1:].partition("=")
        merged = values.split("|")
        for called in re.findall(r"\bF\.(\w+)\(", source):
            target = getattr(top.nn.functional, called, None)  # type: ignore[attr-defined]
            if target is None or f"self.{name}" not in source:
                continue
            for other in choices(getattr(target, "__doc__", None), params(target, called) or []):
                if other.startswith(f"@{name}="):
                    merged += [v for v in other.partition("=")[2].split("|") if v not in merged]
        out.append(f"@{name}=" + "|".join(merged))
    return out


def _forwards(obj: object, top: object, framework: str) -> list[str]:
    """`>torch.nn.functional.pad` for a module whose forward() calls exactly one functional op
    (ReflectionPad1d -> F.pad): the module is another spelling of that op's kernels, which lint
    KB022 holds records to."""
    if framework != "pytorch" or not inspect.isclass(obj) or not hasattr(obj, "forward"):
        return []
    try:
        source = inspect.getsource(obj.forward)
    except (OSError, TypeError):
        return []
    called = sorted({c for c in re.findall(r"\bF\.(\w+)\(", source) if hasattr(top.nn.functional, c)})  # type: ignore[attr-defined]
    return [f">torch.nn.functional.{called[0]}"] if len(called) == 1 else []


def wanted(framework: str, names: set[str], record_ops: set[str]) -> list[str]:
    spaces = NAMESPACES[framework]
    depth = MAX_DEPTH[framework]
    out = set(record_ops)
    for name in names:
        if name.count(".") > depth:
            continue
        head = name.rsplit(".", 1)[0] + "."
        if head in spaces or name in spaces:
            out.add(name)
    return sorted(out)


def record_ops(framework: str) -> set[str]:
    sys.path.insert(0, str(ROOT))
    try:
        from kb.catalog import load
    except ImportError as exc:  # a GPU machine with the framework but not the project's dependencies
        print(f"warning: records not read ({exc}): only the namespaces' names get signatures", file=sys.stderr)
        return set()

    catalog = load(ROOT)
    return {n for r in catalog.sources.values() if r.framework == framework for n in (*r.ops, *r.aliases)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("frameworks", nargs="+", choices=sorted(TOP))
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.path.insert(0, str(ROOT))
    from kb import apinames
    from kb.atomic import write_atomic

    for framework in args.frameworks:
        package, prefix = TOP[framework]
        try:
            top = importlib.import_module(package)
        except ImportError as exc:
            print(f"error: cannot import {package} ({exc}); install it first (see --help)", file=sys.stderr)
            return 2
        names = set(apinames.read(apinames.path_of(str(ROOT / "data" / "api"), framework)))
        lines = []
        for name in wanted(framework, names, record_ops(framework)):
            try:
                obj = _resolve(name, top, prefix)
            except Exception:  # lazy modules, deprecated attributes, names of another version
                continue
            if not callable(obj) or inspect.ismodule(obj):
                continue
            short = name.rsplit(".", 1)[-1]
            found = params(obj, short)
            if found is None:
                continue
            more = [f for f in forms(obj, short) if f != found]
            every = [p for form in (found, *more) for p in form]
            sets = _forwarded(obj, choices(getattr(obj, "__doc__", None), every), top, framework)
            lines.append("\t".join([name, *found, *sets, *_forwards(obj, top, framework)]))
            lines.extend("\t".join([name, *form]) for form in more)
        version = getattr(top, "__version__", "unknown")
        out = ROOT / "data" / "api" / f"{framework}.signatures.txt"
        header = (f"# {framework} {version} signatures, {len(lines)} callables, generated by "
                  "scripts/introspect_signatures.py\n")
        write_atomic(out, header + "".join(line + "\n" for line in lines))
        print(f"{out.relative_to(ROOT)}: {len(lines)} signatures from {package} {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
