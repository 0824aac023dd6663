"""Build the branch inventory: every catalog operator's CUDA dispatch branches, each with the
source line that selects it, from the framework's code at the release (docs/sweep.md, "Branches").

PyTorch (data/branches/pytorch-2.11.json), read from the release's own files (a torch wheel
of that version holds them: torchgen/packaged/ATen/native/native_functions.yaml and
torchgen/packaged/autograd/derivatives.yaml are copies of aten/src/ATen/native/native_functions.yaml
and tools/autograd/derivatives.yaml at the tag, and the Python files are the tag's):

- layout branches: each native function's `dispatch:` keys that run on CUDA (CUDA, SparseCUDA,
  SparseCsrCUDA, NestedTensorCUDA, QuantizedCUDA), through `structured_delegate:`, or one kernel
  for every device (CompositeExplicitAutograd), or a decomposition (CompositeImplicitAutograd);
- Python branches: each call a public Python function (torch/nn/functional.py,
  torch/functional.py) makes to a native function, with the `if` tests that lead to it
  (`if input.dim() == 4 and mode == "bilinear":` -> upsample_bilinear2d);
- backward branches: the functions derivatives.yaml calls for the native function's gradient;
- dtype branches: the dtypes op_db says the op takes on CUDA (a dump of the release's op_db by
  scripts/branch_dump.py), at the line of its OpInfo;
- value branches: the closed value sets of the signature inventory (data/api/pytorch.signatures.txt);
- hand-read branches (data/branches/pytorch-anchors.yaml): cuDNN or native, 1-D or N-D, memory
  formats, index dtypes, each with an anchor the script finds in the release's file (its line
  is then read, not typed) or, for C++ files the wheel lacks, the line read in the code index.

JAX (data/branches/jax-0.11.json): each function's primitives (forward and vjp) from a dump of
the release (scripts/branch_dump.py jax), each primitive's CUDA lowering (a CUDA-only rule or
the default, file:line), and the XLA GPU branches of data/branches/jax-anchors.yaml.

    python scripts/branch_inventory.py pytorch --src DIR --opdb DUMP.json [--out data/branches/pytorch-2.11.json]
    python scripts/branch_inventory.py jax --dump DUMP.json [--out data/branches/jax-0.11.json]
    python scripts/branch_inventory.py coverage [--missing [--detail FILE] | --units SPEC]   (scripts/branch_gap.py)
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA_KEYS = {"CUDA": "strided", "SparseCUDA": "sparse_coo", "SparseCsrCUDA": "sparse_csr", "NestedTensorCUDA": "nested",
             "QuantizedCUDA": "quantized", "CompositeExplicitAutograd": "any", "CompositeExplicitAutogradNonFunctional": "any",
             "CompositeImplicitAutograd": "decomposed", "CompositeImplicitAutogradNestedTensor": "nested"}
NATIVE = "aten/src/ATen/native/native_functions.yaml"
DERIVATIVES = "tools/autograd/derivatives.yaml"
DTYPE_GROUPS = (("int", ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")), ("bool", ("bool",)),
                ("float16", ("float16",)), ("bfloat16", ("bfloat16",)), ("float32", ("float32",)), ("float64", ("float64",)),
                ("complex", ("complex32", "complex64", "complex128")))


# --- PyTorch sources ------------------------------------------------------------------------


def parse_native(path: str) -> dict:
    """native function (with overload) -> {line, dispatch: [(keys, kernel, line)], delegate, composite}."""
    out: dict = {}
    cur = None
    in_dispatch = False
    with open(path, encoding="utf-8") as handle:
        for no, raw in enumerate(handle, 1):
            line = raw.rstrip("\n")
            m = re.match(r"- func: ([\w.]+)\(", line)
            if m:
                cur = out.setdefault(m.group(1), {"line": no, "dispatch": [], "delegate": None})
                in_dispatch = False
                continue
            if cur is None:
                continue
            if line.startswith("  dispatch:"):
                in_dispatch = True
                continue
            if in_dispatch and line.startswith("    ") and ":" in line:
                keys, kernel = line.strip().split(":", 1)
                cur["dispatch"].append(([k.strip() for k in keys.split(",")], kernel.strip(), no))
                continue
            in_dispatch = False
            m = re.match(r"  structured_delegate: ([\w.]+)", line)
            if m:
                cur["delegate"] = (m.group(1), no)
    return out


def parse_derivatives(path: str) -> dict:
    """native function (with overload) -> (line, [(line, formula text)])."""
    out: dict = {}
    cur = None
    with open(path, encoding="utf-8") as handle:
        for no, raw in enumerate(handle, 1):
            m = re.match(r"- name: ([\w.]+)\(", raw)
            if m:
                cur = out.setdefault(m.group(1), (no, []))
                continue
            if cur is not None and raw.startswith("  ") and ":" in raw and not raw.strip().startswith(("#", "output_differentiability", "dispatch", "result")):
                cur[1].append((no, raw.strip()))
    return out


HELPERS = {"floor", "ceil", "tensor", "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "arange",
           "is_grad_enabled", "is_tensor", "get_default_dtype", "result_type", "promote_types", "broadcast_tensors", "sym_int",
           "sym_float", "jit", "_assert", "tensor_split", "Size", "no_grad", "enable_grad", "device", "finfo", "iinfo",
           "sqrt", "log", "exp", "numel", "sym_max", "sym_min", "where", "clamp", "dtype"}
"""Calls a Python function makes for bookkeeping (sizes, constants), not the kernel it dispatches to."""


def guard_facts(guard: str | None) -> dict:
    """Call facts an `if` test states: `input.dim() == 4` -> input.ndim 4, `mode == "bilinear"` -> mode bilinear,
    `antialias` -> antialias True (a negated test states nothing)."""
    if not guard or guard.startswith("not ("):
        return {}
    out: dict = {}
    for m in re.finditer(r"\b(?:input|self)\.dim\(\) == (\d)", guard):
        out["input.ndim"] = int(m.group(1))
    for m in re.finditer(r"\b(\w+) == [\"']([\w-]+)[\"']", guard):
        out[m.group(1)] = m.group(2)
    for m in re.finditer(r"(?:^|\band )(antialias|align_corners)\b(?! ==)", guard):
        out[m.group(1)] = True
    return out


CALL_OWNERS = {"torch", "_VF", "torch._C._nn", "torch._C._VariableFunctions", "torch._C._special", "torch._C._linalg",
               "torch._C._fft", "torch._C._sparse", "torch.ops.aten"}


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def python_calls(path: str, rel: str) -> dict:
    """public function name -> [(native name, line, guard text, guard line)] for the calls a Python
    function of `path` makes to native functions, each with its innermost enclosing `if` test."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    tree = ast.parse(text)
    lines = text.split("\n")
    out: dict = {}

    def visit(node, guards, fname):
        for child in ast.iter_child_nodes(node):
            g = guards
            if isinstance(child, ast.If):
                test = ast.get_source_segment(text, child.test) or ""
                visit_list(child.body, guards + [(test, child.lineno)], fname)
                neg = [(f"not ({test})", child.lineno)]
                visit_list(child.orelse, guards + neg, fname)
                continue
            if isinstance(child, ast.Call):
                name = _dotted(child.func)
                if name:
                    owner, _, attr = name.rpartition(".")
                    if owner in CALL_OWNERS and not attr.startswith("_has") and attr not in HELPERS and attr not in ("handle_torch_function", "has_torch_function"):
                        guard = g[-1] if g else (None, None)
                        out.setdefault(fname, []).append({"native": attr, "line": child.lineno, "text": lines[child.lineno - 1].strip()[:160],
                                                          "guard": guard[0][:200] if guard[0] else None, "guard_line": guard[1]})
            visit(child, g, fname)

    def visit_list(nodes, guards, fname):
        for n in nodes:
            holder = ast.Module(body=[n], type_ignores=[])
            visit(holder, guards, fname)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            visit(node, [], node.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and _dotted(value.func) in ("_add_docstr", "torch._C._add_docstr") and value.args:
                inner = _dotted(value.args[0])
                if inner:
                    out.setdefault(node.targets[0].id, []).append({"native": inner.rsplit(".", 1)[-1], "line": node.lineno,
                                                                   "text": lines[node.lineno - 1].strip()[:160], "guard": None,
                                                                   "guard_line": None})
    return out


def opinfo_lines(src: str) -> dict:
    """(op_db name, variant) -> (file, line) of its *Info(...) definition."""
    files = ["torch/testing/_internal/common_methods_invocations.py"]
    folder = os.path.join(src, "torch/testing/_internal/opinfo/definitions")
    files += [f"torch/testing/_internal/opinfo/definitions/{f}" for f in sorted(os.listdir(folder)) if f.endswith(".py")]
    out: dict = {}
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (_dotted(node.func) or "").endswith("Info") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    variant = ""
                    for kw in node.keywords:
                        if kw.arg == "variant_test_name" and isinstance(kw.value, ast.Constant):
                            variant = kw.value.value
                    out.setdefault((first.value, variant), (rel, node.lineno))
    return out


def value_sets(signatures: str) -> dict:
    """public op -> {param: [values]} from the signature inventory's @name=v1|v2 fields."""
    out: dict = {}
    with open(signatures, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                continue
            name, *fields = line.rstrip("\n").split("\t")
            for f in fields:
                if f.startswith("@") and "=" in f:
                    param, values = f[1:].split("=", 1)
                    out.setdefault(name, {})[param] = [v for v in values.split("|") if v]
    return out


@functools.lru_cache(maxsize=8)
def _parsed(path: str):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return ast.parse(text), text.split("\n")


def literal_anywhere(path: str, func: str, value: str) -> bool:
    """Whether the function `func` of `path` names the literal `value` at all (in this release)."""
    tree, _ = _parsed(path)
    return any(isinstance(node, ast.FunctionDef) and node.name == func and any(
        isinstance(n, ast.Constant) and n.value == value for n in ast.walk(node)) for node in tree.body)


def literal_line(path: str, func: str, param: str, value: str) -> tuple[int, str] | None:
    """The line in `func` of `path` that compares `param` with the literal `value` (the branch's test)."""
    tree, lines = _parsed(path)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == func:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Compare):
                    names = {n.id for n in ast.walk(sub) if isinstance(n, ast.Name)}
                    consts = {n.value for n in ast.walk(sub) if isinstance(n, ast.Constant)}
                    if param in names and value in consts:
                        return sub.lineno, lines[sub.lineno - 1].strip()[:160]
    return None


# --- building -------------------------------------------------------------------------------


def src_ref(file: str, line: int, text: str, read: str = "wheel") -> dict:
    return {"file": file, "line": int(line), "text": text[:200], "read": read}


def native_branches(name: str, native: dict, derivs: dict, seen: set, depth: int = 0) -> list[dict]:
    """Dispatch branches of one native function (all its overloads), and of its gradient's functions."""
    out = []
    for full, entry in sorted(native.items()):
        if full.split(".")[0] != name or (full, depth) in seen:
            continue
        seen.add((full, depth))
        dispatch = entry["dispatch"]
        via = None
        if not dispatch and entry["delegate"]:
            via = entry["delegate"]
            dispatch = native.get(via[0], {}).get("dispatch", [])
        if not dispatch:
            out.append({"kind": "layout", "when": {}, "kernel": f"{full} (CompositeImplicitAutograd: decomposes into other ops)",
                        "source": src_ref(NATIVE, entry["line"], f"- func: {full}(...)")})
        for keys, kernel, line in dispatch:
            for key in keys:
                if key not in CUDA_KEYS:
                    continue
                layout = CUDA_KEYS[key]
                when = {"input.layout": layout} if layout in ("strided", "sparse_coo", "sparse_csr") else {}
                out.append({"kind": "layout", "when": when, "kernel": f"{full}: {key} -> {kernel}",
                            "source": src_ref(NATIVE, line, f"{', '.join(keys)}: {kernel}" + (f" (via structured_delegate {via[0]})" if via else ""))})
        if depth == 0 and full in derivs:
            dline, formulas = derivs[full]
            for fline, formula in formulas:
                called = sorted({re.sub(r"_symint$", "", c) for c in re.findall(r"\b([a-z_][a-z0-9_]*_backward[a-z0-9_]*)\(", formula)})
                for fn in called:
                    for b in native_branches(fn, native, derivs, seen, depth + 1):
                        b = dict(b, kind="backward", pass_="backward")
                        b["kernel"] = f"{full} gradient -> {b['kernel']}"
                        b["via"] = src_ref(DERIVATIVES, fline, formula)
                        out.append(b)
    return out


def aten_names_for(entry: dict) -> list[str]:
    names = [n for n in (entry.get("aten_name"), entry.get("aten_backward_name")) if n]
    base = entry["name"].rsplit(".", 1)[-1]
    return list(dict.fromkeys(names + [base]))


def build_pytorch(src: str, opdb: dict, evidence_ops: dict, anchors: list, sig_values: dict) -> dict:
    native = parse_native(os.path.join(src, "torchgen/packaged/ATen/native/native_functions.yaml"))
    derivs = parse_derivatives(os.path.join(src, "torchgen/packaged/autograd/derivatives.yaml"))
    py = {"torch.nn.functional.": ("torch/nn/functional.py", python_calls(os.path.join(src, "torch/nn/functional.py"), "torch/nn/functional.py")),
          "torch.": ("torch/functional.py", python_calls(os.path.join(src, "torch/functional.py"), "torch/functional.py"))}
    infos = opinfo_lines(src)
    ops = []
    for entry in opdb["ops"]:
        unit = f"{entry['name']}|{entry['variant']}"
        public = evidence_ops.get(unit) or ("torch." + entry["name"])
        branches: list[dict] = []
        prefix = "torch.nn.functional." if public.startswith("torch.nn.functional.") else "torch." if public.count(".") == 1 else None
        natives = aten_names_for(entry)
        if prefix is not None:
            file, table = py[prefix]
            fname = public[len(prefix):]
            for call in table.get(fname, []):
                b = {"kind": "python", "when": guard_facts(call["guard"]), "kernel": f"{fname} -> {call['native']}",
                     "source": src_ref(file, call["guard_line"] or call["line"], call["guard"] or call["text"])}
                if call["guard"]:
                    b["calls"] = src_ref(file, call["line"], call["text"])
                branches.append(b)
                natives.append(call["native"])
        seen: set = set()
        for name in dict.fromkeys(natives):
            branches += native_branches(name, native, derivs, seen)
        where = infos.get((entry["name"], entry["variant"])) or infos.get((entry["name"], ""))
        for group, members in DTYPE_GROUPS:
            have = [d for d in entry["dtypes_cuda"] if d in members]
            if not have:
                continue
            b = {"kind": "dtype", "when": {"input.dtype": group if group in ("int", "bool", "complex") else group},
                 "kernel": f"CUDA kernel instantiated for {', '.join(have)}"
                           + ("; backward too" if any(d in entry["backward_dtypes_cuda"] for d in have) else "; forward only")}
            if where:
                b["source"] = src_ref(where[0], where[1], f"op_db entry {entry['name']!r}" + (f" variant {entry['variant']!r}" if entry["variant"] else "") + " (its CUDA dtypes)")
            else:  # an entry built in a loop or a helper: no *Info('name', ...) call to point at
                b["source"] = {"file": None, "line": None, "text": f"op_db entry {entry['name']!r}: its CUDA dtypes (no literal definition)",
                               "read": "op_db"}
            branches.append(b)
        for param, values in sig_values.get(public, {}).items():
            for value in values:
                b = {"kind": "value", "when": {param: value}, "kernel": f"{param}={value!r}"}
                if prefix == "torch.nn.functional.":
                    path = os.path.join(src, "torch/nn/functional.py")
                    hit = literal_line(path, public[len(prefix):], param, value)
                    if hit:
                        b["source"] = src_ref("torch/nn/functional.py", hit[0], hit[1])
                    elif not literal_anywhere(path, public[len(prefix):], value):
                        continue  # the signature inventory (another release) has a value this release's function never names
                if "source" not in b:
                    b["source"] = {"file": None, "line": None, "text": "the value is passed to the native function, whose kernel decides",
                                   "read": "signature"}
                branches.append(b)
        ops.append({"op": public, "catalog": unit, "branches": branches})
    add_modules(ops, opdb.get("modules", []), src)
    add_anchors(ops, anchors, src)
    return finish(ops)


def module_calls(src: str) -> dict:
    """torch.nn class name -> [(functional or torch name, file, line, text)] its forward calls."""
    out: dict = {}
    folder = os.path.join(src, "torch/nn/modules")
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".py"):
            continue
        rel = f"torch/nn/modules/{fname}"
        tree, lines = _parsed(os.path.join(folder, fname))
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        for cname, node in classes.items():
            todo, seen = [node], set()
            while todo:  # the class and its bases in the same file (_ConvNd, _MaxPoolNd ...)
                cls = todo.pop()
                if cls.name in seen:
                    continue
                seen.add(cls.name)
                for item in cls.body:
                    if isinstance(item, ast.FunctionDef) and item.name in ("forward", "_conv_forward"):
                        for sub in ast.walk(item):
                            if isinstance(sub, ast.Call):
                                name = _dotted(sub.func) or ""
                                if name.startswith(("F.", "torch.")) and name.count(".") == 1:
                                    out.setdefault(cname, []).append((name.split(".")[1], name.startswith("F."), rel, sub.lineno,
                                                                      lines[sub.lineno - 1].strip()[:160]))
                todo += [classes[b.id] for b in cls.bases if isinstance(b, ast.Name) and b.id in classes]
    return out


def add_modules(ops: list, modules: list, src: str) -> None:
    """A torch.nn module's branches are those of the functional ops its forward calls, each marked with that call."""
    calls = module_calls(src)
    by_op: dict = {}
    for o in ops:
        by_op.setdefault(o["op"], o)
    for m in modules:
        cname = m["name"].rsplit(".", 1)[-1]
        rows = []
        for name, functional, rel, line, text in calls.get(cname, []):
            target = by_op.get(("torch.nn.functional." if functional else "torch.") + name)
            if target is None:
                rows.append({"kind": "python", "when": {}, "kernel": f"{cname}.forward -> {name}", "source": src_ref(rel, line, text)})
                continue
            for b in target["branches"]:
                rows.append(dict(b, via=src_ref(rel, line, text)))
        for group, members in DTYPE_GROUPS:
            have = [d for d in m["dtypes_cuda"] if d in members]
            if have:
                rows.append({"kind": "dtype", "when": {"input.dtype": group}, "kernel": f"module_db: {', '.join(have)} on CUDA",
                             "source": {"file": None, "line": None, "text": f"module_db entry {m['name']}", "read": "op_db"}})
        ops.append({"op": m["name"], "catalog": f"module:{m['name']}|{m.get('variant') or ''}", "branches": rows})


def add_anchors(ops: list, anchors: list, src: str | None) -> None:
    """Hand-read branches: a wheel file's anchor is found here and its line read; a C++ line read in the code index is kept."""
    by_op = {o["op"]: o for o in ops}
    for a in anchors:
        b = {"kind": a["kind"], "when": a.get("when", {}), "kernel": a["kernel"]}
        if a.get("read") == "wheel":
            path = os.path.join(src, a["file"])
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().split("\n")
            hits = [i for i, ln in enumerate(lines, 1) if a["anchor"] in ln]
            if not hits:
                raise SystemExit(f"anchor not found in {a['file']}: {a['anchor']!r} (branch {a['kernel']!r})")
            b["source"] = src_ref(a["file"], hits[0], lines[hits[0] - 1].strip())
        else:
            b["source"] = {"file": a["file"], "line": a.get("line"), "text": a["anchor"], "read": a["read"], "commit": a.get("commit")}
        if a.get("pass"):
            b["pass_"] = a["pass"]
        for op in a["ops"]:
            target = by_op.get(op)
            if target is None:
                target = {"op": op, "catalog": None, "branches": []}
                ops.append(target)
                by_op[op] = target
            target["branches"].append(dict(b))


def finish(ops: list) -> dict:
    out = []
    for o in sorted(ops, key=lambda o: (o["op"], o["catalog"] or "")):
        rows, ids = [], set()
        for b in o["branches"]:
            when = b.get("when", {})
            bid = f"{o['op']}|{b['kind']}|" + ";".join(f"{k}={v}" for k, v in sorted(when.items())) + "|" + b["kernel"][:80]
            if bid in ids:
                continue
            ids.add(bid)
            row = {"id": bid, "kind": b["kind"], "pass": b.get("pass_", "forward")}
            if when:
                row["when"] = dict(sorted(when.items()))
            row["kernel"] = b["kernel"]
            row["source"] = b["source"]
            for k in ("calls", "via"):
                if k in b:
                    row[k] = b[k]
            rows.append(row)
        out.append({"op": o["op"], "catalog": o["catalog"], "branches": rows})
    return {"ops": out}


# --- JAX --------------------------------------------------------------------------------------


def build_jax(dump: dict, anchors: list) -> dict:
    ops = []
    low = dump["lowerings"]
    for name, entry in sorted(dump["functions"].items()):
        op = name.split("|")[0]
        branches = []
        for pass_ in ("forward", "backward"):
            for prim in entry.get(pass_, []):
                lw = low.get(prim) or {}
                cuda = lw.get("cuda") or lw.get("gpu")
                where = cuda or lw.get("default")
                if where is None:
                    continue
                kernel = f"{prim}: " + ("CUDA-only lowering " if cuda else "default lowering ") + where["name"]
                branches.append({"kind": "lowering", "pass_": pass_, "when": {}, "kernel": kernel,
                                 "source": src_ref(where["file"], where["line"], f"lowering rule of {prim}: {where['name']}", "installed")})
        for group in ("float32", "bfloat16", "float16", "float64"):
            branches.append({"kind": "dtype", "when": {"input.dtype": group}, "kernel": f"the same HLO in {group}",
                             "source": {"file": None, "line": None, "text": "XLA compiles each dtype; no separate Python branch",
                                        "read": "none"}})
        ops.append({"op": op, "catalog": name, "branches": branches})
    for a in anchors:
        for op in a["ops"]:
            hit = next((o for o in ops if o["op"] == op), None)
            if hit is None:
                hit = {"op": op, "catalog": None, "branches": []}
                ops.append(hit)
            b = {"kind": a["kind"], "when": a.get("when", {}), "kernel": a["kernel"],
                 "source": {"file": a["file"], "line": a.get("line"), "text": a["anchor"], "read": a["read"], "commit": a.get("commit")}}
            if a.get("pass"):
                b["pass_"] = a["pass"]
            hit["branches"].append(b)
    return finish(ops)


def evidence_names(paths: list[str]) -> dict:
    """op_db unit (name|variant) -> the public name the release's sweep gave it."""
    out = {}
    for p in paths:
        with open(p, encoding="utf-8") as handle:
            doc = json.load(handle)
        for c in doc["cases"]:
            unit = c["case"].rsplit("|", 2)[0]
            if unit not in out or not out[unit].startswith("torch."):
                out[unit] = c["op"]  # a unit-error case may spell the op_db name (nn.functional.X): a case that ran wins
    return out


NOTE = "GENERATED by scripts/branch_inventory.py ({what}); do not edit: regenerate (docs/sweep.md, \"Branches\")"


def write(doc: dict, out: str, what: str) -> None:
    """JSON, one operator per line (a diff shows the operators that changed); read back by
    kb/verify/sweepbranches.py within the project's JSON bounds."""
    sys.path.insert(0, ROOT)
    from pathlib import Path

    from kb.atomic import write_atomic

    head = {"generated": NOTE.format(what=what).replace('\\"', '"'), **{k: v for k, v in doc.items() if k != "ops"}}
    lines = [json.dumps(op, ensure_ascii=False, separators=(",", ":")) for op in doc["ops"]]
    text = json.dumps(head, ensure_ascii=False, indent=1)[:-2] + ',\n "ops": [\n' + ",\n".join(lines) + "\n ]\n}\n"
    json.loads(text)
    write_atomic(Path(out), text)
    n = sum(len(o["branches"]) for o in doc["ops"])
    print(f"wrote {out}: {len(doc['ops'])} operators, {n} branches")


def report_coverage() -> int:
    """How many branches of each committed inventory have sweep evidence (GPU sweeps of that release)."""
    from collections import Counter
    from pathlib import Path

    sys.path.insert(0, ROOT)
    from kb.verify import sweepbranches, sweepfile

    sweeps = [s.data for s in sweepfile.load_sweeps(Path(ROOT)) if s.data and s.data.get("device") != "cpu"]
    status = 0
    for name in sorted(os.listdir(os.path.join(ROOT, "data/branches"))):
        if not name.endswith(".json"):
            continue
        inv = sweepbranches.load(os.path.join(ROOT, "data/branches", name))
        reasons = sweepbranches.load_reasons(sweepbranches.reasons_path(os.path.join(ROOT, "data/branches", name)), inv)
        mine = [d for d in sweeps if d["framework"] == inv["framework"] and sweepfile.version_of(d).split("+")[0] == inv["version"]]
        cov = sweepbranches.coverage(inv, mine, Path(ROOT), reasons)
        kinds, swept, stated = Counter(), Counter(), Counter()
        lines = sum(1 for o in inv["ops"] for b in o["branches"] if b["source"].get("line"))
        for o in inv["ops"]:
            for b in o["branches"]:
                kinds[b["kind"]] += 1
                key = f"{o['op']}|{o.get('catalog')}|{b['id']}"
                swept[b["kind"]] += bool(cov["per_branch"][key])
                stated[b["kind"]] += key in reasons and not cov["per_branch"][key]
        print(f"{name}: {len(inv['ops'])} operators, {cov['branches']} branches ({lines} with a source line), "
              f"{cov['with_evidence']} with sweep evidence from {len(mine)} file(s), {cov['unrunnable']} with a stated reason "
              f"they cannot run on the device, {cov['without']} without either; cases by class {cov['by_class']}")
        for k in sorted(kinds):
            print(f"  {k:14} {kinds[k]:5} branches, {swept[k]:5} with evidence, {stated[k]:4} cannot run")
        for key in cov["conflicts"]:
            print(f"  ERROR: {key} has sweep evidence and a stated reason it cannot run ({reasons[key][0]})")
            status = 1
    return status


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("framework", choices=("pytorch", "jax", "coverage"))
    ap.add_argument("--src", help="PyTorch: a folder holding the release wheel's files (torchgen/, torch/)")
    ap.add_argument("--opdb", help="PyTorch: scripts/branch_dump.py torch's output for the release")
    ap.add_argument("--dump", help="JAX: scripts/branch_dump.py jax's output for the release")
    ap.add_argument("--evidence", nargs="*", default=[], help="the release's pytorch-eager sweep files (public names)")
    ap.add_argument("--out")
    ap.add_argument("--missing", action="store_true", help="coverage: the branches without evidence, by kind and cause (scripts/branch_gap.py)")
    ap.add_argument("--detail", metavar="FILE", help="coverage --missing: one JSON line per branch without evidence")
    ap.add_argument("--units", metavar="SPEC", help="coverage: the units to sweep for them, e.g. pytorch-eager:int,bool or jax-branches")
    args = ap.parse_args(argv)
    if args.framework == "coverage" and (args.missing or args.units):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import branch_gap

        return branch_gap.main((["--missing"] if args.missing else []) + (["--detail", args.detail] if args.detail else [])
                               + (["--units", args.units] if args.units else []))
    if args.framework == "coverage":
        return report_coverage()
    if args.framework == "pytorch":
        with open(args.opdb, encoding="utf-8") as handle:
            opdb = json.load(handle)
        with open(os.path.join(ROOT, "data/branches/pytorch-anchors.yaml"), encoding="utf-8") as handle:
            anchors = yaml.safe_load(handle)
        doc = build_pytorch(args.src, opdb, evidence_names(args.evidence), anchors,
                            value_sets(os.path.join(ROOT, "data/api/pytorch.signatures.txt")))
        version = opdb["version"].split("+")[0]
        doc = {"framework": "pytorch", "version": version, "tag": f"v{version}",
               "read": {"native_functions": f"{NATIVE} at v{version} (the torch {version} wheel's torchgen/packaged copy)",
                        "derivatives": f"{DERIVATIVES} at v{version} (the wheel's torchgen/packaged copy)",
                        "python": f"torch/nn/functional.py, torch/functional.py, torch/testing/_internal/ at v{version} (the wheel's files)",
                        "dtypes": f"op_db of torch {opdb['version']} (scripts/branch_dump.py torch)"},
               **doc}
        write(doc, args.out or os.path.join(ROOT, f"data/branches/pytorch-{'.'.join(version.split('.')[:2])}.json"),
              f"pytorch {version}")
    else:
        with open(args.dump, encoding="utf-8") as handle:
            dump = json.load(handle)
        with open(os.path.join(ROOT, "data/branches/jax-anchors.yaml"), encoding="utf-8") as handle:
            anchors = yaml.safe_load(handle)
        doc = build_jax(dump, anchors)
        version = dump["version"]
        doc = {"framework": "jax", "version": version, "tag": f"jax-v{version}",
               "read": {"primitives": f"jaxprs of jax {version} (scripts/branch_dump.py jax)",
                        "lowerings": f"jax {version}'s registered MLIR lowering rules (file:line of the installed package)"},
               **doc}
        write(doc, args.out or os.path.join(ROOT, f"data/branches/jax-{'.'.join(version.split('.')[:2])}.json"), f"jax {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
