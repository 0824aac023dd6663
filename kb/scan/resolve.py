"""From a module's text to the framework calls it makes and the switches it sets (`analyse`).

The steps, each its own module: kb/scan/survey.py (one pass for the layout, the nodes and the
lines worth visiting), kb/scan/prepare.py (facts about the whole module), kb/scan/visitor.py (the
walk, asking kb/scan/context.py and the named rules of kb/scan/resolvers.py), with the shapes and
literal reading of kb/scan/syntax.py. This module runs them in order, and is where the rest of the
scanner (run, scope, lookup, reports) finds those shapes.
"""

from __future__ import annotations

import ast

from kb.scan import fixedflags, gradcontexts, graphreset, hostcode, injected, keptrees, oldsyntax, quietfunctions
from kb.scan.inference import GUARD_TEXT, inference_only
from kb.scan.rules import CodeRules, code_rules
from kb.scan.prepare import (
    TF_SET_SEED, buffer_parameters, compiled_scopes, literal_parameters, parsed_before, subclasses, tf_global_seed,
    value_aliases,
)
from kb.scan.survey import MARKERS, Survey, hit_lines, layout, method_names, suppressions, survey
from kb.scan.syntax import (
    Call, Layout, Module, Setting, Unknown, aliases_of, called, canonical, literal, never_taken, public_name,
    star_aliases,
)
from kb.scan.visitor import Visitor

# Which framework's import makes a method name worth matching (class-qualified KB names).
METHOD_OWNERS = {"torch": "torch", "tf": "tf", "jax": "jax"}


def default_rules() -> CodeRules:
    """The code rules of each op, from the index kb.query answers from now."""
    from kb.query import scan_index as index  # kb/_seen.py unloaded (kb/query/state.py)

    return code_rules(index())


_ROOTS: dict[tuple[int, int], tuple[frozenset, frozenset, frozenset[str]]] = {}


def _roots(wanted: frozenset[str], watched: frozenset[str]) -> frozenset[str]:
    """The first parts of every name a finding or a switch can be spelled with (and `os`, for the
    environment): the only aliases that make a line worth visiting."""
    key = (id(wanted), id(watched))
    found = _ROOTS.get(key)
    if found is None or found[0] is not wanted or found[1] is not watched:
        roots = frozenset(n.split(".", 1)[0] for n in (*wanted, *watched)) | {"os"}
        found = _ROOTS[key] = (wanted, watched, roots)
    return found[2]


def _base(node: ast.ClassDef) -> str:
    """The class's first base as written (`nn.Embedding`, `ScaledEmbedding`), or ""."""
    for base in node.bases:
        name = called(base)
        if name is not None:
            return name
    return ""


def _own_signature(node: ast.ClassDef) -> bool:
    """The class defines `__init__` (or `__new__`): its construction's arguments are its own, not its base's."""
    return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in ("__init__", "__new__")
               for s in node.body)


def _classes(classes: list[ast.ClassDef], resolved: dict[str, str],
             own: frozenset[str] = frozenset()) -> tuple[tuple[str, str, str, bool], ...]:
    return tuple((n.name, base, resolved.get(n.name, ""), n.name in own or _own_signature(n))
                 for n in classes if (base := _base(n)))


def _own_signatures(classes: list[ast.ClassDef], resolved: dict[str, str], given: frozenset[str]) -> frozenset[str]:
    """The subclasses of KB classes here whose construction's arguments are not the KB class's: they, or a
    class of the code base between them and it, define `__init__` (`given`: such names imported)."""
    by_name = {n.name: n for n in classes}
    out: set[str] = set()
    for first in resolved:
        name, seen = first, set()
        while name in by_name and name not in seen:
            seen.add(name)
            if _own_signature(by_name[name]):
                out.add(first)
                break
            name = _base(by_name[name])
        else:
            if name in given:
                out.add(first)
    return frozenset(out) | given


def _reset(tree: ast.Module, aliases: dict[str, str], setting: Setting) -> Setting:
    """A TensorFlow graph seed that a later `tf.reset_default_graph()` of its scope drops holds only for the
    ops built before the reset: conditional."""
    if setting.kind != "call" or setting.name not in TF_SET_SEED:
        return setting
    dropped = graphreset.dropped_condition(tree, aliases, setting.line)
    if dropped is None:
        return setting
    return setting._replace(condition=f"{setting.condition} and {dropped}" if setting.condition else dropped)


def analyse(text: str, filename: str, wanted: frozenset[str], methods: dict[str, tuple[str, ...]],
            watched: frozenset[str], rules: CodeRules | None = None,
            imported: dict[str, tuple[str, bool]] | None = None, starred: dict[str, str] | None = None) -> Module:
    """The module's calls of `wanted` names (and `methods`), and its calls of / assignments to
    `watched` names and its environment settings; raises SyntaxError for unparseable text.
    `rules`: the code rules (kb/scan/resolvers.py) each op's records name (default: the index's).
    `imported`: names this module imports that are another file's subclasses of a KB class
    (local name -> (the KB name, the subclass's signature is its own)), as kb/scan/run.py finds them.
    `starred`: local name -> dotted name, the imports of the scanned modules this one star-imports (its
    own bindings win)."""
    tree = parsed_before(filename, text) or oldsyntax.parse(text, filename=filename)  # once, if local_module read it
    found = survey(tree, text)
    hostcode.keep(filename, tree, text, found.layout.spans)  # settle's Graph of a file with a forward, from this tree
    dead = never_taken(tree, text) + fixedflags.never_taken(tree, text, filename.endswith(".ipynb"))
    if not imported and not starred and not any(marker in text for marker in MARKERS):
        return Module((), (), found.layout, _classes(found.classes, {}), never_taken=dead)
    aliases = aliases_of(tree)
    for name, (op, _) in (imported or {}).items():
        aliases[name] = op
    if starred:
        bound = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        for name, dotted in starred.items():
            if name not in bound:
                aliases.setdefault(name, dotted)
    if "import *" in text:
        bound = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        for name, op in star_aliases(tree, wanted).items():
            if name not in bound:
                aliases.setdefault(name, op)
    if injected.HELPER in text:  # `backend, layers, models, keras_utils = get_submodules_from_kwargs(kwargs)`
        for name, module in injected.injected(tree).items():
            aliases.setdefault(name, module)
    resolved = subclasses(found.classes, aliases, wanted)
    for name, base in resolved.items():
        aliases.setdefault(name, base)
    own = _own_signatures(found.classes, resolved, frozenset(n for n, (_, mine) in (imported or {}).items() if mine))
    for name, op in value_aliases(found, aliases, wanted).items():
        aliases.setdefault(name, op)
    owners = frozenset(v.split(".")[0] for v in aliases.values()) & frozenset(METHOD_OWNERS)
    visitor = Visitor(aliases, wanted, methods, set(owners), watched, default_rules() if rules is None else rules)
    visitor.lines = text.split("\n")
    visitor.filename, visitor.tree = filename, tree
    visitor.default_device = "set_default_device" in text
    if "set_seed" in text:
        visitor.tf_seeded = tf_global_seed(tree, aliases)
    visitor.compiled = compiled_scopes(found, aliases, text)
    visitor.defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    visitor.bound = literal_parameters(found.calls, visitor.defs)
    visitor.all_calls = found.calls
    if "register_buffer" in text:
        visitor.buffer_params = buffer_parameters(found, visitor.defs, aliases)
    if ".map(" in text or ".interleave(" in text:  # nested functions too, for the mapped functions of tf.data
        for node in found.functions:
            visitor.defs.setdefault(node.name, node)
        visitor.classes = {node.name: node for node in found.classes}
    visitor.hits = hit_lines(text, aliases, method_names(methods, owners), _roots(wanted, watched))
    visitor.statements(tree.body)
    if "reset_default_graph" in text:  # a seed the graph loses before the ops are built (kb/scan/graphreset.py)
        visitor.settings = [_reset(tree, aliases, s) for s in visitor.settings]
    calls = visitor.calls
    if own:  # a subclass that takes its own arguments: what they mean for the KB class is unknown
        calls = [c._replace(args=(), kwargs=(), star=True) if c.text.split("(", 1)[0] in own else c for c in calls]
    if dead and calls:  # a block a constant test never takes: its calls never run
        calls = [c._replace(never_runs=next((why for a, b, why in dead if a <= c.line <= b), None)) for c in calls]
    if calls and "training" in text and GUARD_TEXT.search(text) and (spans := inference_only(tree)):  # after `if self.training: raise`
        calls = [c._replace(no_grad=True) if any(a <= c.line <= b for a, b in spans) else c for c in calls]
    no_grad = gradcontexts.with_own_contexts(tree, visitor._no_grad) if "contextmanager" in text else visitor._no_grad
    quiet: tuple = ()
    if calls and any(word in text for word in ("no_grad", "inference_mode", ".map(", ".interleave(", ".flat_map(", ".filter(", "map_and_batch(")):
        try:
            quiet = quietfunctions.quiet_functions(tree, no_grad, visitor.dotted)
        except RecursionError:
            quiet = ()
    host = None
    if any(word in text for word in hostcode.ROOT_WORDS):  # other files' Graphs are read as kb/scan/run.py needs them
        try:
            host = hostcode.build(tree, visitor.lines, no_grad, visitor.dotted)
        except RecursionError:
            host = None
        if host is not None:
            hostcode.heard(host, found.layout.bindings)  # the later files that define what it calls quietly: kept
    if calls:
        keptrees.keep(filename, text, tree)  # a script file's, which kb/scan/callers.py reads again
    return Module(tuple(calls), tuple(visitor.settings), found.layout, _classes(found.classes, resolved, own), quiet,
                  tuple(visitor.defaults), host, dead)


__all__ = ["Call", "Layout", "METHOD_OWNERS", "Module", "Setting", "Survey", "Unknown", "aliases_of", "analyse",
           "canonical", "layout", "literal", "public_name", "suppressions", "survey"]
