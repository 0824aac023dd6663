"""Write data/api/<framework>.signatures.txt: the parameters of a framework's public callables.

A record's `calls:` conditions name an op's own parameters (`mode`, `accumulate`,
`reduction`); lint checks those names against this file, `kb build` compiles the defaults
of every op a record names into the index (a parameter left out of `call=` takes its
default), and `kb.status(..., call=...)` reads it for other ops to reject unknown keys.
It is generated here, never typed:

    python scripts/introspect_signatures.py pytorch      # torch CPU build is enough
    python scripts/introspect_signatures.py tensorflow jax

Which names: every name of the framework's API inventory (data/api/<framework>.txt) under
the namespaces people call ops from (NAMESPACES), plus every op and alias of a record.
C builtins without an inspectable signature (most of torch's) are read from the first
`name(...)` line of their docstring, which is how PyTorch documents them.

Line format (tab-separated, one callable a line, sorted):
`name<TAB>param<TAB>param=default<TAB>*args<TAB>**kwargs`; a default is a Python literal
(None, True, 1, 0.5, 'nearest') or `?` when it is not a plain literal.
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
TOP = {"tensorflow": ("tensorflow", "tf"), "pytorch": ("torch", "torch"), "jax": ("jax", "jax"), "keras": ("keras", "keras")}
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
}
MAX_DEPTH = {"pytorch": 4, "tensorflow": 4, "jax": 4, "keras": 3}


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


def _doc_signature(doc: str, short: str) -> str | None:
    """The argument text of the first `short(...)` that starts a line, across line breaks."""
    for match in re.finditer(rf"^\s*(?:[\w.]+\.)?{re.escape(short)}\(", doc[:4000], re.M):
        depth, start = 1, match.end()
        for i in range(start, min(len(doc), start + 2000)):
            if doc[i] in "([{":
                depth += 1
            elif doc[i] in ")]}":
                depth -= 1
                if depth == 0:
                    return " ".join(doc[start:i].split())
    return None


def _from_doc(obj: object, short: str) -> list[str] | None:
    """`index_add(input, dim, index, source, *, alpha=1, out=None) -> Tensor` -> params."""
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return None
    args = _doc_signature(doc, short)
    if args is None:
        return None
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
    from kb.catalog import load

    catalog = load(ROOT)
    return {n for r in catalog.sources.values() if r.framework == framework for n in (*r.ops, *r.aliases)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("frameworks", nargs="+", choices=sorted(TOP))
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.path.insert(0, str(ROOT))
    from kb.atomic import write_atomic

    for framework in args.frameworks:
        package, prefix = TOP[framework]
        try:
            top = importlib.import_module(package)
        except ImportError as exc:
            print(f"error: cannot import {package} ({exc}); install it first (see --help)", file=sys.stderr)
            return 2
        inventory = ROOT / "data" / "api" / f"{framework}.txt"
        names = {line.rstrip("\n") for line in inventory.open(encoding="utf-8") if not line.startswith("#")}
        lines = []
        for name in wanted(framework, names, record_ops(framework)):
            try:
                obj = _resolve(name, top, prefix)
            except Exception:  # lazy modules, deprecated attributes, names of another version
                continue
            if not callable(obj) or inspect.ismodule(obj):
                continue
            found = params(obj, name.rsplit(".", 1)[-1])
            if found is None:
                continue
            lines.append("\t".join([name, *found]))
        version = getattr(top, "__version__", "unknown")
        out = ROOT / "data" / "api" / f"{framework}.signatures.txt"
        header = (f"# {framework} {version} signatures, {len(lines)} callables, generated by "
                  "scripts/introspect_signatures.py\n")
        write_atomic(out, header + "".join(line + "\n" for line in lines))
        print(f"{out.relative_to(ROOT)}: {len(lines)} signatures from {package} {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
