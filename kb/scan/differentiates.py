"""Whether any code of the code base can differentiate (RULES R4's pass, T7 and Z4-1 of the frozen corpora).

A record of the backward pass needs a program that differentiates through the op. A script repository
(no installable package holds its files) runs only as far as its own entry points reach; if no scanned
file can start a backward pass (kb/scan/survey.py's words: `.backward(`, `jax.grad`, `value_and_grad`,
`tf.GradientTape`, `tf.gradients`, `.minimize(`, `fit(`, a trainer, an optimizer step ... and the
transforms and optimizers below) outside code no entry point runs (kb/scan/unreached.py: maskgit's gradient
penalty helper, which nothing live calls), none of its programs does, and the backward records of its files are
notes: sampling, decoding and evaluation code only, in PyTorch, TensorFlow and JAX alike. A library package
keeps them: its users may train its models with code of their own (R4), whatever it ships; so does a module at
the top of the code base, which users' own scripts and notebooks may import and train (as kb/scan/unreached.py
keeps its findings).
"""

from __future__ import annotations

import os

from kb.scan import scope, sources, unreached
from kb.scan.survey import trains
from kb.scan.syntax import Layout

Spans = dict[str, list[tuple[int, int, str]]]  # kb/scan/unreached.py's answer: path -> (first, last, why)

# What else starts, or prepares, a backward pass: JAX's other transforms that differentiate, a custom
# gradient (defined to be taken), and an optimizer library or class (its update takes a gradient).
_MORE_WORDS = ("vjp(", "jvp(", "jacrev(", "jacfwd(", "linearize(", "hessian(", "custom_vjp", "custom_jvp",
               "custom_gradient", "compute_gradients(", "apply_gradients", "optax.", "import optax", "optim.",
               "torch.optim", "optimizers.", "Optimizer(")

# ... less a PyTorch optimizer's construction, which trains nothing without a `.step(` (Layout.backward's words): a
# model file's unused `configure_optimizers` (BlinkDL/RWKV-LM's), which a comparison script imports beside it
_PROGRAM_WORDS = tuple(word for word in _MORE_WORDS if word not in ("optim.", "torch.optim", "Optimizer("))
_IMPORTS_BY_NAME = frozenset({*unreached.DYNAMIC_IMPORTS, "exec"})  # calls that import a module by a computed name
WHY_PROGRAMS = ("no program that runs this file differentiates (none of the files of any entry point that reaches it has "
                ".backward(), jax.grad, value_and_grad, tf.GradientTape, tf.gradients, an optimizer step or a trainer) and "
                "no installable package holds this file for its users to train: no program runs a backward pass through it")
WHY = ("no code in this code base differentiates (no .backward(), jax.grad, value_and_grad, vjp, "
       "tf.GradientTape, tf.gradients, optimizer or trainer in any scanned file, outside code no entry point runs) "
       "and no installable package "
       "holds this file for its users to train: no program runs a backward pass through it")


def never(layouts: dict[str, Layout], scripts: set[str], texts: sources.Texts, roots: list[str],
          dead: Spans, runs: list[scope.Run]) -> dict[str, str]:
    """Path -> why, for each script file (`scripts`: the files no installable package holds) below the top of
    the code base (`roots`: the folders scanned) none of whose files can differentiate; empty where any can,
    or where a file cannot be read again. `dead`: the code no entry point runs, whose words do not count. A
    code base with no entry point (`runs` all found by the fallback) has no program: its users run it, so
    nothing is claimed (as kb/scan/unreached.py claims nothing there)."""
    if not scripts or all(r.why == scope.FALLBACK for r in runs) or any(layout.backward and path not in dead for path, layout in layouts.items()):
        return {}
    every = texts.every(layouts)
    if every is None:
        return {}
    for path, text in every.items():
        live = _live(path, text, dead)
        if (layouts[path].backward and trains(live)) or any(word in live for word in _MORE_WORDS):
            return {}
    tops = {os.path.normpath(root) for root in roots}
    return {path: WHY for path in scripts if os.path.dirname(path) and os.path.dirname(path) not in tops}


def _live(path: str, text: str, dead: Spans) -> str:
    """The text's lines outside the code no entry point runs (a .py file's; a notebook's spans are its cells')."""
    spans = dead.get(path) if path.endswith(".py") else None
    if not spans:
        return text
    return "\n".join(line for n, line in enumerate(text.splitlines(), 1)
                     if not any(first <= n <= last for first, last, _ in spans))


def never_in_programs(layouts: dict[str, Layout], scripts: set[str], roots: list[str], runs: list[scope.Run],
                      reach: dict[str, tuple[int, ...]], texts: sources.Texts) -> dict[str, str]:
    """Path -> why, for each script file below the top of the code base that only programs which never start a
    backward pass run: every entry point that reaches it is a script (a `__main__` block, or module-level code
    nothing imports) none of whose files can differentiate (BlinkDL/RWKV-LM's run and demo scripts and the
    inference model files only they import, beside training scripts of their own). The code-base-wide answer
    (`never`) covers a code base with no training at all; this one, each file whose programs are known: none where
    the code imports a module by a computed name, nor a file that registers its classes with a framework's runner
    (microsoft/Graphormer's fairseq models, trained by `fairseq-train`, whose only program here evaluates)."""
    called = {name.rpartition(".")[2] for layout in layouts.values()
              for name in (*layout.top, *layout.in_main, *(n for _, names in layout.functions for n in names))}
    if called & _IMPORTS_BY_NAME or all(r.why == scope.FALLBACK for r in runs):
        return {}  # a program may reach any file by a computed name (pointnet's `importlib.import_module(FLAGS.model)`)
    tops = {os.path.normpath(root) for root in roots}
    trains: dict[int, bool] = {}
    more: dict[str, bool] = {}

    def _more(path: str) -> bool:  # a transform or optimizer that differentiates (`jax.vjp(f, x)`), or an unread file
        if path not in more:
            text = texts.get(path)
            more[path] = text is None or any(word in text for word in _PROGRAM_WORDS)
        return more[path]

    out: dict[str, str] = {}
    for path in scripts:
        folder = os.path.dirname(path)
        ids = reach.get(path, ())
        if not folder or folder in tops or not ids or any("register" in name.rpartition(".")[2].lower()
                                                            for name in layouts[path].top):
            continue  # a file that registers its classes with a framework (fairseq's `@register_model`): its runner trains
        for k in ids:
            if k not in trains:
                run = runs[k]
                scripted = run.why in (scope.SCRIPT, "notebook") or (layouts[run.entry].main and run.entry in scripts)
                trains[k] = not scripted or any(layouts[p].backward or p not in layouts or _more(p) for p in run.files)
        if not any(trains[k] for k in ids):
            out[path] = WHY_PROGRAMS
    return out

