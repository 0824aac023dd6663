"""Write data/basis/elementwise-<framework>.yaml: the ops whose kernels are elementwise, read from the
framework's own code, so that `kb.status` answers them `deterministic=True`, basis `static`.

An elementwise kernel computes each output element from the same-index input elements (after
broadcasting): no reduction, no atomics, no random state, so scheduling cannot change its result. The
list of ops comes from the framework, never typed here:

- PyTorch: the OpInfo catalog's universal functions (`unary_ufuncs`, `binary_ufuncs` of
  torch.testing._internal.common_methods_invocations; UnaryUfuncInfo/BinaryUfuncInfo, whose docstrings
  say "they are elementwise functions"), their public names in data/api/pytorch.txt.gz, less any name
  with another OpInfo that is not a ufunc (torch.max's reductions) and any ATen op tagged
  `nondeterministic_seeded` or `nondeterministic_bitwise` (native_functions.yaml: random ops such as
  rrelu). Their kernels run through TensorIterator's loops (gpu_kernel in ATen/native/cuda/Loops.cuh,
  cpu_kernel_vec in ATen/native/cpu/Loops.h), read with line numbers in the wheels.
- JAX: every public function of jax.numpy, jax.lax and jax.nn whose jaxpr on float32 arrays (inner
  jaxprs of pjit, custom_jvp and custom_vjp inlined) holds only primitives made by lax's `unop`/`naryop`
  (jax/_src/lax/lax.py, special.py: one element in, one element out, lowered to one StableHLO
  elementwise op), read with line numbers in the installed jax and at the tags of --jax-repo.
- TensorFlow: every public tf.* / tf.math.* / tf.nn.* function whose graph on float32 tensors is one
  op whose kernel is a BinaryOp or UnaryOp (data/static/tensorflow-cwise.yaml, registrations read in
  the kernel files), the kernel classes read in the installed wheel's cwise_ops_common.h.

    python scripts/elementwise.py pytorch --wheel /tmp/torch-1.13.0-...whl
    python scripts/elementwise.py jax --jax-repo /path/to/jax.git --tag jax-v0.4.13
    python scripts/elementwise.py tensorflow

Needs the framework installed (the shared environment has all three, CPU builds); a wheel given with
--wheel is read (never installed) for the same anchors at its release.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kb import apinames, atomic  # noqa: E402

def inventory(framework: str) -> set[str]:
    return {line.strip() for line in apinames.read(apinames.path_of(str(ROOT / "data/api"), framework))}


def find(lines: list[str], pattern: str) -> int | None:
    rx = re.compile(pattern)
    for number, line in enumerate(lines, start=1):
        if rx.search(line):
            return number
    return None


# --- PyTorch --------------------------------------------------------------------------------------

TORCH_ANCHORS = (
    # (repository path, path inside the wheel, pattern, what)
    ("torch/testing/_internal/opinfo/core.py", "torch/testing/_internal/opinfo/core.py",
     r"^class UnaryUfuncInfo\(OpInfo\)", "UnaryUfuncInfo: 'universal unary functions'; its docstring: they are elementwise functions"),
    ("torch/testing/_internal/opinfo/core.py", "torch/testing/_internal/opinfo/core.py",
     r"^class BinaryUfuncInfo\(OpInfo\)", "BinaryUfuncInfo: 'universal binary functions'; its docstring: they are elementwise functions"),
    ("aten/src/ATen/native/cuda/Loops.cuh", "torch/include/ATen/native/cuda/Loops.cuh",
     r"^void gpu_kernel\(TensorIteratorBase& iter, const func_t& f\)",
     "gpu_kernel: the CUDA loop of TensorIterator; each thread computes output elements from the inputs at the same index"),
    ("aten/src/ATen/native/cpu/Loops.h", "torch/include/ATen/native/cpu/Loops.h",
     r"^void cpu_kernel_vec\(TensorIteratorBase& iter",
     "cpu_kernel_vec: the CPU loop of TensorIterator; each output element from the same-index inputs"),
    ("aten/src/ATen/native/cuda/Reduce.cuh", "torch/include/ATen/native/cuda/Reduce.cuh",
     r"atomicAdd\(&semaphores\[blockIdx\.x\], 1\)",
     "the sum over broadcast dimensions in a gradient (sum_to_size) runs this reduce kernel, whose only atomic "
     "counts finished blocks; the last block combines the partial sums in a fixed order"),
)


def torch_reads(release: str, commit: str | None, files: dict[str, list[str]]) -> list[dict]:
    out = []
    for path, member, pattern, what in TORCH_ANCHORS:
        lines = files.get(member)
        number = find(lines, pattern) if lines is not None else None
        if number is None:
            print(f"  {release}: {member}: {pattern!r} not found", file=sys.stderr)
            continue
        read = {"release": release, "repo": "pytorch/pytorch", "tag": f"v{release}", "path": path, "member": member,
                "lines": [number], "what": what}
        if commit:
            read["commit"] = commit
        out.append(read)
    return out


def _wheel_files(wheel: Path) -> tuple[str, str | None, dict[str, list[str]]]:
    members = {m for _, m, _, _ in TORCH_ANCHORS} | {"torch/version.py"}
    files = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name in members:
                files[name] = z.read(name).decode("utf-8", "replace").splitlines()
    version = next(line.split("=", 1)[1].strip().strip("'\"") for line in files["torch/version.py"]
                   if line.startswith("__version__"))
    commit = next((line.split("=", 1)[1].strip().strip("'\"") for line in files["torch/version.py"]
                   if line.startswith("git_version")), None)
    return version.split("+")[0], commit, files


def _function(torch, public: str) -> bool:
    """A callable op, not a dtype (torch.bfloat16 is one; its conversion is torch.Tensor.bfloat16) or a property."""
    obj = torch
    for part in public.split(".")[1:]:
        obj = getattr(obj, part, None)
    return callable(obj) and not isinstance(obj, torch.dtype)


def pytorch(wheels: list[Path]) -> dict:
    import types
    import unittest

    if "expecttest" not in sys.modules:  # a test-only import of torch.testing that the catalog does not need
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stub
    import torch
    from torch.testing._internal import common_methods_invocations as cmi

    names = inventory("pytorch")
    others = {op.name for op in cmi.op_db if type(op).__name__ not in ("UnaryUfuncInfo", "BinaryUfuncInfo")}
    random_tags = {torch.Tag.nondeterministic_seeded, torch.Tag.nondeterministic_bitwise}
    ops = set()
    for info in (*cmi.unary_ufuncs, *cmi.binary_ufuncs):
        name = info.name
        if name in others or name.startswith(("_refs.", "jiterator_", "__")):
            continue
        packet = getattr(torch.ops.aten, (info.aten_name or name).split(".")[-1], None)
        if packet is not None and any(random_tags & set(getattr(packet, o).tags) for o in packet.overloads()):
            continue
        for public in (f"torch.{name}", f"torch.Tensor.{name}", f"torch.Tensor.{name}_",
                       *(f"torch.{a.name}" for a in info.aliases)):
            if public in names and _function(torch, public):
                ops.add(public)
    release = torch.__version__.split("+")[0]
    site = Path(torch.__file__).parent
    here = {member: (site.parent / member).read_text(encoding="utf-8").splitlines()
            for _, member, _, _ in TORCH_ANCHORS if (site.parent / member).is_file()}
    reads = torch_reads(release, torch.version.git_version, here)
    for wheel in wheels:
        version, commit, files = _wheel_files(wheel)
        reads = torch_reads(version, commit, files) + reads
    oldest = min(r["release"] for r in reads)
    return {
        "framework": "pytorch", "release": release, "generated_by": "scripts/elementwise.py pytorch",
        "classes": [{
            "id": "pytorch.elementwise-ufunc", "title": "an elementwise function (a PyTorch universal function)",
            "what": "TensorIterator computes each output element from the input elements at the same index "
                    "(after broadcasting): no reduction, no atomics, no random state, so the order in which "
                    "threads run cannot change the result",
            "versions": f">={oldest}", "device": "any", "read": reads,
            "listed_from": f"PyTorch {release}'s OpInfo unary_ufuncs and binary_ufuncs, less names with a "
                           "non-ufunc OpInfo and ops tagged nondeterministic_seeded or nondeterministic_bitwise",
            "ops": sorted(ops),
        }],
    }


# --- JAX ------------------------------------------------------------------------------------------

PRIM = re.compile(r"^(\w+)_p(?:\s*:\s*[\w.\[\]]+)?\s*=\s*(?:standard_)?(?:unop|naryop)\(")


def _prims(text: str) -> dict[str, int]:
    return {m.group(1): n for n, line in enumerate(text.splitlines(), start=1) if (m := PRIM.match(line))}


def jax_(repo: Path | None, tags: list[str]) -> dict:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    from jax._src.lax import lax as laxsrc

    names = inventory("jax")
    src = Path(inspect.getsourcefile(laxsrc))
    special = src.with_name("special.py")
    defined = {**_prims(src.read_text(encoding="utf-8"))}
    special_defined = _prims(special.read_text(encoding="utf-8")) if special.is_file() else {}
    elementwise = set(defined) | set(special_defined)
    unop = find(src.read_text(encoding="utf-8").splitlines(), r"^def unop\(")
    naryop = find(src.read_text(encoding="utf-8").splitlines(), r"^def naryop\(")
    x = jnp.linspace(0.1, 0.9, 8, dtype=jnp.float32)

    def flat(jaxpr) -> list[str]:
        out = []
        for eqn in jaxpr.eqns:
            inner = [v for v in eqn.params.values() if hasattr(v, "jaxpr") or hasattr(v, "eqns")]
            if eqn.primitive.name in ("pjit", "jit", "closed_call", "custom_jvp_call", "custom_vjp_call",
                                      "custom_vjp_call_jaxpr") and inner:
                for sub in inner:
                    out += flat(sub.jaxpr if hasattr(sub, "jaxpr") else sub)
            else:
                out.append(eqn.primitive.name)
        return out

    ops: dict[str, list[str]] = {}
    for name in sorted(n for n in names if n.startswith(("jax.numpy.", "jax.lax.", "jax.nn.")) and n.count(".") == 2):
        obj = jax
        try:
            for part in name.split(".")[1:]:
                obj = getattr(obj, part)
        except AttributeError:
            continue
        if not callable(obj) or inspect.isclass(obj):
            continue
        for args in ((x,), (x, x)):
            try:
                prims = flat(jax.make_jaxpr(obj)(*args).jaxpr)
            except Exception:
                continue
            body = [p for p in prims if p != "convert_element_type"]
            if body and all(p in elementwise for p in body):
                ops[name] = sorted(set(body))
            break
    release = jax.__version__
    used = sorted({p for prims in ops.values() for p in prims})
    reads = []
    late: set[str] = set()
    for tag_release, tag, text_of in [(release, f"jax-v{release}", None)] + [
            (t.removeprefix("jax-v"), t, t) for t in tags]:
        if text_of is None:
            lax_text, special_text = src.read_text(encoding="utf-8"), special.read_text(encoding="utf-8")
        else:
            show = lambda p: subprocess.run(["git", "--git-dir", str(repo), "show", f"{text_of}:{p}"],  # noqa: E731
                                            capture_output=True, text=True).stdout
            lax_text, special_text = show("jax/_src/lax/lax.py"), show("jax/_src/lax/special.py")
        lax_prims, special_prims = _prims(lax_text), _prims(special_text)
        lines_of = lax_text.splitlines()
        for what, pattern in (("unop: a primitive of one array whose shape rule keeps the shape and whose batching "
                               "rule is vectorized (one element in, one element out)", r"^def unop\("),
                              ("naryop: a primitive of arrays of one broadcast shape, computed element by element",
                               r"^def naryop\(")):
            number = find(lines_of, pattern)
            if number:
                reads.append({"release": tag_release, "repo": "jax-ml/jax", "tag": tag, "path": "jax/_src/lax/lax.py",
                              "lines": [number], "what": what})
        in_lax = [lax_prims[p] for p in used if p in lax_prims]
        if in_lax:
            reads.append({"release": tag_release, "repo": "jax-ml/jax", "tag": tag, "path": "jax/_src/lax/lax.py",
                          "lines": sorted(in_lax), "what": "the primitives the listed ops trace to, each made by "
                          "standard_unop or standard_naryop: " + ", ".join(p for p in used if p in lax_prims)})
        in_special = [special_prims[p] for p in used if p in special_prims]
        if in_special:
            reads.append({"release": tag_release, "repo": "jax-ml/jax", "tag": tag, "path": "jax/_src/lax/special.py",
                          "lines": sorted(in_special), "what": "special-function primitives made by standard_naryop "
                          "or standard_unop: " + ", ".join(p for p in used if p in special_prims)})
        missing = [p for p in used if p not in lax_prims and p not in special_prims]
        if missing:
            print(f"  {tag}: not made by unop/naryop there: {', '.join(missing)}", file=sys.stderr)
            late.update(missing)
    del unop, naryop
    oldest = min((r["release"] for r in reads), key=lambda v: tuple(int(p) for p in v.split(".")))
    what = ("every primitive of its jaxpr is an elementwise lax primitive, lowered to one StableHLO elementwise op "
            "that XLA computes element by element: no reduction, no atomics, no random state")
    listed = f"the jaxpr of each public jax.numpy, jax.lax and jax.nn function on float32 arrays, jax {release}"
    early = sorted(op for op, prims in ops.items() if not late & set(prims))
    later = sorted(op for op, prims in ops.items() if late & set(prims))
    classes = [{"id": "jax.elementwise-primitive", "title": "an elementwise function (lax unop/naryop primitives only)",
                "what": what, "versions": f">={oldest}", "device": "any", "read": reads, "listed_from": listed,
                "ops": early}]
    if later:
        classes.append({
            "id": "jax.elementwise-primitive-recent",
            "title": "an elementwise function (lax unop/naryop primitives only, read at the installed release)",
            "what": what + f"; some of its primitives ({', '.join(sorted(late))}) are not unop/naryop primitives at "
                    "the older tags read, so earlier releases are left out",
            "versions": f">={release}", "device": "any", "read": [r for r in reads if r["release"] == release],
            "listed_from": listed, "ops": later})
    return {"framework": "jax", "release": release, "generated_by": "scripts/elementwise.py jax", "classes": classes}


# --- TensorFlow -----------------------------------------------------------------------------------

def tensorflow() -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import yaml

    names = inventory("tensorflow")
    curated = yaml.safe_load((ROOT / "data/static/tensorflow-cwise.yaml").read_text(encoding="utf-8"))
    cwise = {op for entry in curated for op in entry["ops"]}
    skip = {"Placeholder", "Identity", "NoOp", "Const", "IdentityN"}
    x = tf.constant([[0.5, 1.5], [2.0, 3.0]], tf.float32)
    ops = set()
    for name in sorted(n for n in names if n.startswith(("tf.math.", "tf.nn.")) or n.count(".") == 1):
        obj = tf
        try:
            for part in name.split(".")[1:]:
                obj = getattr(obj, part)
        except AttributeError:
            continue
        if not callable(obj) or inspect.isclass(obj) or not getattr(obj, "__module__", "").startswith("tensorflow"):
            continue
        for n in (1, 2):
            try:
                graph = tf.function(lambda *a, f=obj: f(*a)).get_concrete_function(
                    *[tf.TensorSpec(x.shape, x.dtype)] * n).graph
            except Exception:
                continue
            kinds = [o.type for o in graph.get_operations() if o.type not in skip]
            if len(kinds) == 1 and kinds[0] in cwise:
                ops.add(name)
            break
    release = tf.__version__
    header = Path(tf.__file__).parent / "include/tensorflow/core/kernels/cwise_ops_common.h"
    lines = header.read_text(encoding="utf-8").splitlines()
    reads = []
    for pattern, what in ((r"^class BinaryOp : public BinaryOpShared", "BinaryOp: a coefficient-wise binary operation; "
                           "each output element from the same-index (broadcast) input elements"),
                          (r"^class UnaryOp : public OpKernel", "UnaryOp: a coefficient-wise unary operation")):
        number = find(lines, pattern)
        if number:
            reads.append({"release": release, "repo": "tensorflow/tensorflow", "tag": f"v{release}",
                          "path": "tensorflow/core/kernels/cwise_ops_common.h",
                          "member": "tensorflow/include/tensorflow/core/kernels/cwise_ops_common.h",
                          "lines": [number], "what": what})
    for entry in curated:
        reads.append({"release": release, "repo": "tensorflow/tensorflow", "commit": entry["commit"], "path": entry["file"],
                      "what": f"{', '.join(entry['ops'])} registered as {entry['anchor']}"})
    return {
        "framework": "tensorflow", "release": release, "generated_by": "scripts/elementwise.py tensorflow",
        "classes": [{
            "id": "tensorflow.cwise", "title": "a coefficient-wise op (TensorFlow BinaryOp/UnaryOp kernel)",
            "what": "its graph is one op whose kernel is a BinaryOp or UnaryOp: each output element from the "
                    "same-index input elements, no reduction, no atomics, no random state",
            "device": "any", "read": reads,
            "listed_from": f"the graph of each public tf, tf.math and tf.nn function on float32 tensors, TensorFlow {release}",
            "ops": sorted(ops),
        }],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("framework", choices=("pytorch", "jax", "tensorflow"))
    parser.add_argument("--wheel", type=Path, action="append", default=[], help="a PyTorch wheel to read too")
    parser.add_argument("--jax-repo", type=Path, help="a git directory of jax-ml/jax, for --tag")
    parser.add_argument("--tag", action="append", default=[], help="a jax tag to read too (jax-v0.4.13)")
    args = parser.parse_args()
    import yaml

    data = (pytorch(args.wheel) if args.framework == "pytorch" else jax_(args.jax_repo, args.tag)
            if args.framework == "jax" else tensorflow())
    out = ROOT / "data/basis" / f"elementwise-{args.framework}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    class _NoAliases(yaml.SafeDumper):  # data files hold no YAML anchors (lint KB012)
        def ignore_aliases(self, data):
            return True

    text = yaml.dump(data, Dumper=_NoAliases, sort_keys=False, width=110, allow_unicode=True)
    atomic.write_atomic(out, text)
    print(f"wrote {out.relative_to(ROOT)}: {sum(len(c['ops']) for c in data['classes'])} ops", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
