"""Whether a PyTorch `DataLoader` that does not shuffle reads a dataset that draws random numbers.

`torch.data-loader-workers` needs randomness in the worker processes: shuffling, or random augmentation in
the dataset (its `__getitem__` or the collate function). A loader without `shuffle=True` and without a
sampler is listed as possible, depending on the dataset. This module reads the dataset where the code shows
it, and answers "draws none" only when it can read all of it:

- a dataset class of the code base (this file, or a module of the code base it imports it from): its
  `__getitem__` (or `__iter__`) and the methods and module functions that reaches, with no random draw
  (a name or attribute with `rand` in it: `random.random`, `np.random`, `torch.randint`; `shuffle`,
  `choice`, `sample`, `uniform`, `normal`, `bernoulli`, `dropout`, `permutation`), no call of a stored
  callable (`self.transform(x)`: whatever the caller passed), no function of another library named like
  an augmentation (`augment`, `transform`, `noise`, `jitter`, `crop`, `flip`, `mask`, `mix`...), and no
  base class other than torch's `Dataset` / `IterableDataset` / `object` that it cannot read;
- a torchvision dataset whose transforms are deterministic torchvision transforms (`ToTensor`,
  `Normalize`, `Resize` or its old name `Scale`, `CenterCrop`, `Compose` of such) or none; also when the
  class is called through a name every value of which is a torchvision dataset class
  (`dataloader = datasets.CIFAR10` or `datasets.CIFAR100`, then `dataloader(root, transform=...)`).
- nnmnkwii's `FileSourceDataset(source)`, whose items are `source.collect_features(path)`, over a data
  source of the code base whose `collect_features` is read as a `__getitem__` is.
Anything else (a dataset passed in as a parameter, a factory function, a transform from elsewhere) is not read: the
loader stays possible. The lookups of the code base's definitions are kb/scan/datasetdefs.py's, and the reading of
arguments that hold plain data kb/scan/plainargs.py's; a transform step handed in as a function is read by _readers.
"""

from __future__ import annotations

import ast

from kb.scan import flags, follow, handed, nodes, transforms
from kb.scan.context import Context
from kb.scan.datasetdefs import class_of, definition, imports_of, methods_of
from kb.scan.plainargs import passed_in, plain_argument
from kb.scan.syntax import NOT_LITERAL, plain_literal

_RANDOM = frozenset({"shuffle", "choice", "choices", "sample", "uniform", "normal", "bernoulli", "multinomial",
                     "poisson", "dropout", "Dropout", "permutation", "exponential_", "geometric_", "cauchy_",
                     "log_normal_", "normal_", "uniform_", "bernoulli_", "random_"})
_AUGMENT_WORDS = ("augment", "transform", "noise", "jitter", "perturb", "crop", "flip", "distort", "mix", "cutout",
                  "erase", "mask", "rotate", "warp", "spec_aug")
_ENTRIES = ("__getitem__", "__getitems__", "__iter__", "__next__")
_TV_DETERMINISTIC = frozenset(f"torchvision.transforms.{n}" for n in (
    "ToTensor", "PILToTensor", "ToPILImage", "Normalize", "Resize", "Scale", "CenterCrop", "Grayscale", "Pad",
    "ConvertImageDtype", "Compose")) | frozenset(f"torchvision.transforms.v2.{n}" for n in (
        "ToTensor", "PILToTensor", "ToPILImage", "Normalize", "Resize", "CenterCrop", "Grayscale", "Pad",
        "ToImage", "ToDtype", "Compose"))
_TV_NAMES = frozenset(n.rsplit(".", 1)[-1] for n in _TV_DETERMINISTIC)
_TV_TRANSFORM_ARGS = frozenset({"transform", "target_transform", "transforms"})
_DEPTH = 6
_FOLLOW = 12  # names, calls and returns followed from a loader's dataset to the constructions it may be


def draws_no_random(ctx: Context, node: ast.Call) -> str | None:
    """Why a DataLoader call that does not shuffle reads no randomness in its workers (None: it may)."""
    shuffle = _given(node, "shuffle", 2)
    where = follow.Where(ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree, follow.top_level(ctx), False)
    if (shuffle is not None and plain_literal(shuffle) not in (False, None)) \
            or not _in_order(ctx, _given(node, "sampler", 3), where, _DEPTH) \
            or not _in_order(ctx, _given(node, "batch_sampler", 4), where, _DEPTH) or not _plain_star(ctx, node):
        return None
    collate = _given(node, "collate_fn", 6)
    if collate is not None and not _none(collate) and _collate_may_draw(ctx, collate):
        return None
    dataset = _given(node, "dataset", 0)
    latest = follow.latest(where.scope, node, dataset.id) if isinstance(dataset, ast.Name) else None
    reasons = _quiet(ctx, latest[0], where, latest[1], _FOLLOW) if latest is not None \
        else _quiet(ctx, dataset, where, None, _FOLLOW)
    if not reasons:
        return None
    return "the loader does not shuffle and " + "; ".join(dict.fromkeys(reasons))


def _quiet(ctx: Context, expr: ast.AST | None, where: follow.Where, index: int | None, depth: int) -> list[str] | None:
    """Why the dataset `expr` draws no random numbers, one reason per construction it may be (None: it may,
    or it cannot be read). Followed: a name through every value it is assigned (in each branch, appended to
    a list, unpacked from a tuple: `index` is the position taken) and, for a parameter, every caller's
    argument; a factory function of the code base through its returns; `ConcatDataset` / `Subset` through
    the datasets they hold; a class of the code base by its `__getitem__`; a torchvision dataset by its
    transforms."""
    if depth <= 0 or expr is None:
        return None
    if isinstance(expr, (ast.List, ast.Tuple)):
        if index is not None:
            return _quiet(ctx, expr.elts[index], where, None, depth - 1) if index < len(expr.elts) else None
        return _all(ctx, [(e, where, None) for e in expr.elts], depth)
    if isinstance(expr, ast.Name):
        values = follow.values_of(ctx, where, expr.id)
        if values is None or (index is not None and any(i is not None for _, _, i in values)):
            return None  # not shown, or an element of an element: not read
        return _all(ctx, [(v, w, i if index is None else index) for v, w, i in values], depth)
    if isinstance(expr, ast.IfExp):
        return _all(ctx, [(expr.body, where, index), (expr.orelse, where, index)], depth)
    if isinstance(expr, ast.Attribute) and expr.attr == "dataset" and isinstance(expr.value, ast.Name) and index is None:
        made = _loaders(ctx, where, expr.value.id, depth)  # `loader.dataset`: the dataset the loader was made with
        return None if made is None else _all(ctx, made, depth)
    if not isinstance(expr, ast.Call):
        return None
    dotted = None if where.foreign else ctx.dotted(expr.func)
    chosen = _chosen_classes(ctx, expr.func, where) if dotted is None or not dotted.startswith("torchvision.") else None
    if chosen:
        return ["its torchvision dataset's transforms are deterministic"] \
            if index is None and all(_torchvision_quiet(ctx, expr, name, where) for name in chosen) else None
    last = expr.func.attr if isinstance(expr.func, ast.Attribute) else expr.func.id if isinstance(expr.func, ast.Name) else ""
    if dotted is not None and dotted.startswith("torchvision.datasets."):
        return ["its torchvision dataset's transforms are deterministic"] \
            if index is None and _torchvision_quiet(ctx, expr, dotted, where) else None
    entries = _SOURCE_READERS.get(dotted or "")
    if entries is not None:  # a library dataset whose items are what the data source it holds collects
        held = _given(expr, "file_data_source", 0)
        return _source_quiet(ctx, held, where, entries, depth - 1) \
            if index is None and held is not None and len(expr.args) + len(expr.keywords) == 1 else None
    if last in _HOLDERS and index is None and (dotted is None or dotted.startswith("torch.utils.data.")):
        held = _given(expr, "datasets" if last == "ConcatDataset" else "dataset", 0)
        return _quiet(ctx, held, where, None, depth - 1)
    if last == "random_split" and (dotted is None or dotted.startswith("torch.utils.data.")):
        return _quiet(ctx, _given(expr, "dataset", 0), where, None, depth - 1)  # each part a Subset of the dataset
    found = definition(ctx, expr.func, where)
    if found is None:
        return None
    node, defs, foreign = found
    if isinstance(node, ast.ClassDef):
        base = _torchvision_base(ctx, node, expr, where) if not foreign else None
        if index is not None or _reads_random(ctx, node, defs, foreign, built=expr, where=where, base=base):
            return None
        if base is not None:
            return [f"{node.name}.__getitem__ draws no random numbers and its torchvision base's transforms are deterministic"]
        return [f"{node.name}.__getitem__ draws no random numbers"]
    returns = follow.returns(node)
    if not returns:
        return None
    inner = follow.Where(node, defs, foreign)
    return _all(ctx, [(r, inner, index) for r in returns], depth)


_SOURCE_READERS = {"nnmnkwii.datasets.FileSourceDataset": ("collect_features",)}  # the source's methods an item runs


def _source_quiet(ctx: Context, held: ast.AST, where: follow.Where, entries: tuple[str, ...], depth: int) -> list[str] | None:
    """Why the data source a library dataset holds (nnmnkwii's `FileSourceDataset(source)`, whose
    `__getitem__` returns `source.collect_features(path)`) draws nothing: a construction of a class of the
    code base, read as a dataset's `__getitem__` is from the methods the library runs (None: it may, or
    it cannot be read)."""
    if depth <= 0:
        return None
    if isinstance(held, ast.Name):
        values = follow.values_of(ctx, where, held.id)
        if not values or any(i is not None for _, _, i in values):
            return None
        reasons: list[str] = []
        for value, at, _ in values:
            quiet = _source_quiet(ctx, value, at, entries, depth - 1)
            if quiet is None:
                return None
            reasons += quiet
        return reasons
    if not isinstance(held, ast.Call):
        return None
    found = definition(ctx, held.func, where)
    cls = found[0] if found is not None else None
    if found is None or not isinstance(cls, ast.ClassDef):
        return None
    if _reads_random(ctx, cls, found[1], found[2], entries, built=held, where=where):
        return None
    return [f"its data source {cls.name}.{entries[0]} draws no random numbers"]


def _chosen_classes(ctx: Context, func: ast.AST, where: follow.Where) -> list[str] | None:
    """The torchvision dataset classes a name called as a dataset's construction may hold, every value it is
    assigned being one (`dataloader = datasets.CIFAR10` in one branch, `datasets.CIFAR100` in the other, or a
    choice of two such;
    None: a name not so shown, or a value that is something else)."""
    if not isinstance(func, ast.Name) or where.foreign:
        return None
    values = follow.values_of(ctx, where, func.id)
    options = [o for v, _, i in values or () for o in ((v.body, v.orelse) if isinstance(v, ast.IfExp) else (v,))
               if i is None] if values and all(i is None for _, _, i in values) else []
    names = [ctx.dotted(o) or "" if isinstance(o, (ast.Name, ast.Attribute)) else "" for o in options]
    return names if names and all(n.startswith("torchvision.datasets.") for n in names) else None


def _loaders(ctx: Context, where: follow.Where, name: str, depth: int) -> list[tuple[ast.AST, follow.Where, int | None]] | None:
    """The dataset each DataLoader a name may hold was made with (through names and parameters; None: a value
    that is not visibly a DataLoader)."""
    values = follow.values_of(ctx, where, name) if depth > 0 else None
    if not values:
        return None
    out: list[tuple[ast.AST, follow.Where, int | None]] = []
    for value, at, position in values:
        if position is not None or at.foreign:
            return None
        if isinstance(value, ast.Name):
            more = _loaders(ctx, at, value.id, depth - 1)
            if more is None:
                return None
            out += more
            continue
        if not isinstance(value, ast.Call) or not (ctx.dotted(value.func) or "").endswith(".DataLoader"):
            return None
        dataset = _given(value, "dataset", 0)
        if dataset is None:
            return None
        out.append((dataset, at, None))
    return out


def _all(ctx: Context, parts: list[tuple[ast.AST, follow.Where, int | None]], depth: int) -> list[str] | None:
    reasons: list[str] = []
    for expr, where, index in parts:
        found = _quiet(ctx, expr, where, index, depth - 1)
        if found is None:
            return None
        reasons += found
    return reasons


_HOLDERS = frozenset({"ConcatDataset", "Subset"})


def _torchvision_quiet(ctx: Context, made: ast.Call, name: str, where: follow.Where) -> bool:
    """A torchvision dataset whose transforms (by keyword, or by position for `ImageFolder` /
    `DatasetFolder`, whose second and third parameters are the transforms, and `FakeData`, whose fourth and
    fifth are: it draws each image from a generator seeded by the index) are deterministic."""
    start = _TV_TRANSFORM_AT.get(name.rsplit(".", 1)[-1])
    positional = made.args[start:start + 2] if start is not None else []
    rest = made.args[start + 2:] if start is not None else made.args[1:]
    return all(_deterministic_transform(ctx, k.value, _DEPTH, where) for k in made.keywords if k.arg in _TV_TRANSFORM_ARGS) \
        and all(_deterministic_transform(ctx, a, _DEPTH, where) for a in positional) \
        and not any(k.arg is None for k in made.keywords) \
        and all(plain_literal(a) is not NOT_LITERAL for a in rest)


_TV_TRANSFORM_AT = {"ImageFolder": 1, "DatasetFolder": 1, "FakeData": 3}  # the position of `transform`


def _torchvision_base(ctx: Context, cls: ast.ClassDef, made: ast.Call, where: follow.Where) -> ast.expr | None:
    """The torchvision dataset base of a class of the scanned file (`class ReturnIndexDataset(ImageFolder)`)
    that defines no `__init__`, so that its construction's arguments are the base's, when those give
    deterministic transforms (_torchvision_quiet): the base's `__getitem__` then loads and runs them, drawing
    nothing, and the class's own methods are read as a dataset's are (None: no such base)."""
    if any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__" for item in cls.body):
        return None
    for base in cls.bases:
        name = ctx.dotted(base) or ""
        if name.startswith("torchvision.datasets."):
            return base if _torchvision_quiet(ctx, made, name, where) else None
    return None


def _given_transforms(ctx: Context, methods: dict[str, ast.AST], made: ast.Call, where: follow.Where) -> frozenset[str]:
    """The attributes a dataset keeps from a transform its construction gives (`self.transform = transform`,
    the only assignment of that attribute, in `__init__`, of a parameter `__init__` does not rebind) when
    that transform draws nothing: a deterministic torchvision transform or a Compose of such, through the
    names that hold it where the construction is (`where`), or None (also as the parameter's default)."""
    init = methods.get("__init__")
    if not isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(isinstance(a, ast.Starred) for a in made.args) \
            or any(k.arg is None for k in made.keywords):
        return frozenset()
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    given: dict[str, ast.AST] = {**dict(zip(positional, made.args)), **{k.arg: k.value for k in made.keywords if k.arg}}
    defaults = dict(zip(positional[len(positional) - len(init.args.defaults):], init.args.defaults))
    defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None})
    rebound = {n.id for n in nodes.iwalk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    kept: dict[str, str] = {}
    others: set[str] = set()
    for method in methods.values():
        for sub in nodes.iwalk(method):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] \
                if isinstance(sub, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for node in nodes.iwalk(target):
                    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                        continue
                    if method is init and isinstance(sub, ast.Assign) and target is node and len(sub.targets) == 1 \
                            and isinstance(sub.value, ast.Name) and node.attr not in kept:
                        kept[node.attr] = sub.value.id
                    else:
                        others.add(node.attr)
    quiet = set()
    for attr, param in kept.items():
        if attr in others or param in rebound or param not in (*positional, *(a.arg for a in init.args.kwonlyargs)):
            continue
        if param in given:
            if _quiet_transform(ctx, given[param], where, _DEPTH):
                quiet.add(attr)
        elif param in defaults:
            default = defaults[param]
            if _none(default) or (isinstance(default, ast.Call) and _deterministic_name(default)):
                quiet.add(attr)
    return frozenset(quiet)


def _quiet_transform(ctx: Context, node: ast.AST, where: follow.Where, depth: int) -> bool:
    """A transform, read where it is given, that draws nothing: None, a deterministic torchvision transform or
    a Compose of such (kb/scan/transforms.py), or a name every value of which is one."""
    if depth <= 0:
        return False
    if _none(node):
        return True
    if isinstance(node, ast.Name):
        values = follow.values_of(ctx, where, node.id)
        return bool(values) and all(i is None and _quiet_transform(ctx, v, w, depth - 1) for v, w, i in values or ())
    if isinstance(node, ast.IfExp):
        return _quiet_transform(ctx, node.body, where, depth - 1) and _quiet_transform(ctx, node.orelse, where, depth - 1)
    return isinstance(node, ast.Call) and _made_quiet(ctx, node, where, depth - 1)


_ORDERED = frozenset({"SequentialSampler"})  # samplers that never shuffle
_MAY_ORDER = frozenset({"DistributedSampler"})  # samplers that shuffle unless shuffle=False (their 4th parameter)
_BATCHING = frozenset({"BatchSampler"})  # batches of the sampler it is given (its first parameter)


def _in_order(ctx: Context, sampler: ast.AST | None, where: follow.Where, depth: int) -> bool:
    """The sampler visits the dataset in a fixed order: none, torch's `SequentialSampler`, a
    `DistributedSampler(..., shuffle=False)`, a `BatchSampler` of such, or a name every value of which is one
    (`sampler_val = DistributedSampler(ds, shuffle=False) if distributed else SequentialSampler(ds)`)."""
    if _none(sampler):
        return True
    if depth <= 0:
        return False
    if isinstance(sampler, ast.Name):
        values = follow.values_of(ctx, where, sampler.id)
        return values is not None and all(i is None and _in_order(ctx, v, w, depth - 1) for v, w, i in values)
    if isinstance(sampler, ast.IfExp):
        return _in_order(ctx, sampler.body, where, depth - 1) and _in_order(ctx, sampler.orelse, where, depth - 1)
    if not isinstance(sampler, ast.Call) or where.foreign or not (ctx.dotted(sampler.func) or "").startswith("torch.utils.data."):
        return False
    last = (ctx.dotted(sampler.func) or "").rsplit(".", 1)[-1]
    if last in _ORDERED:
        return True
    if last in _MAY_ORDER:
        shuffle = _given(sampler, "shuffle", 3)
        return shuffle is not None and plain_literal(shuffle) is False
    return last in _BATCHING and _in_order(ctx, _given(sampler, "sampler", 0), where, depth - 1) \
        and _given(sampler, "sampler", 0) is not None


def _collate_may_draw(ctx: Context, collate: ast.expr) -> bool:
    """A collate function: an instance of a class of the code base (its `__call__` is read as a dataset's
    `__getitem__` is), else a function the module can read (Context.may_draw_randomness), or a name only ever
    assigned such functions (`collate = collate_offset if ... else collate_length`, or in branches)."""
    chosen = _assigned(ctx, collate.id) if isinstance(collate, ast.Name) and collate.id not in ctx.defs else []
    if chosen and all(isinstance(c, ast.Name) and c.id in ctx.defs for c in chosen):
        return any(ctx.may_draw_randomness(c) for c in chosen)
    made = _made(ctx, collate)
    found = class_of(ctx, made.func) if made is not None else None
    if found is not None:
        return _reads_random(ctx, *found, entries=("__call__",))
    return ctx.may_draw_randomness(collate)


def _given(node: ast.Call, name: str, position: int) -> ast.expr | None:
    """The argument a parameter is given, by keyword or position (None: not given)."""
    value = next((k.value for k in node.keywords if k.arg == name), None)
    if value is None and len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
        value = node.args[position]
    return value


def _none(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _plain_star(ctx: Context, node: ast.Call) -> bool:
    """No `*args`, and every `**kwargs` is a name only ever assigned dict literals or `dict(key=value, ...)`
    calls (or a choice of two) that give no sampler, shuffle or collate function."""
    if any(isinstance(a, ast.Starred) for a in node.args):
        return False
    for k in node.keywords:
        if k.arg is not None:
            continue
        if not isinstance(k.value, ast.Name):
            return False
        values = _assigned(ctx, k.value.id)
        if not values or _changed(ctx, k.value.id):
            return False
        for value in values:
            options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
            for option in options:
                if isinstance(option, ast.Call) and isinstance(option.func, ast.Name) and option.func.id == "dict" \
                        and not option.args:
                    option = ast.Dict(keys=[ast.Constant(k.arg) if k.arg else None for k in option.keywords],
                                      values=[k.value for k in option.keywords])
                if not isinstance(option, ast.Dict) or any(
                        key is None or not isinstance(key, ast.Constant)
                        or key.value in ("sampler", "batch_sampler", "shuffle", "collate_fn", "dataset")
                        for key in option.keys):
                    return False
    return True


def _changed(ctx: Context, name: str) -> bool:
    """The name's dict is changed after it is made (`kwargs.update(...)`, `kwargs["shuffle"] = True`, `|=`)
    somewhere in the enclosing function or module: its literal does not say what it holds."""
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    for sub in nodes.iwalk(scope) if scope is not None else ():
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name) \
                and sub.func.value.id == name:
            return True
        if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name) \
                and sub.value.id == name:
            return True
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id == name:
            return True
    return False


def _assigned(ctx: Context, name: str) -> list[ast.expr]:
    """The values `name = value` takes in the enclosing function, else at module level."""
    fn = ctx.fn_nodes[-1] if ctx.fn_nodes else None
    values = ctx.assigned_in(fn).get(name, []) if fn is not None else []
    if not values and ctx.tree is not None:
        values = ctx.assigned_in(ctx.tree).get(name, [])
    return values


def _made(ctx: Context, dataset: ast.AST | None) -> ast.Call | None:
    """The construction the dataset is: a call, or a name every assignment of which is a call of one class."""
    if isinstance(dataset, ast.Call):
        return dataset
    if isinstance(dataset, ast.Name):
        values = _assigned(ctx, dataset.id)
        calls = [v for v in values if isinstance(v, ast.Call)]
        if calls and len(calls) == len(values) and len({ast.dump(c.func) for c in calls}) == 1:
            return calls[0] if len(calls) == 1 else None
    return None


def _reads_random(ctx: Context, cls: ast.ClassDef, defs: dict, foreign: bool, entries: tuple[str, ...] = _ENTRIES,
                  depth: int = 3, made: ast.Call | None = None, built: ast.Call | None = None,
                  where: follow.Where | None = None, base: ast.expr | None = None) -> bool:
    """Whether what the class's `__getitem__` (or `__iter__`; `entries`) runs may draw random numbers (True:
    cannot tell); `built`, the dataset's construction, rules out the branches its arguments turn off
    (kb/scan/flags.py: `if self.split:` of a dataset made with split=False) and vouches for the transforms it
    gives (`self.transform = transform`, given a Compose of deterministic steps); `base`, a torchvision
    dataset base already checked (_torchvision_base)."""
    methods = methods_of(ctx, cls, defs, foreign, checked=base)
    if methods is None:
        return True
    todo = [methods[name] for name in entries if name in methods]
    if not todo:
        return True
    at = where
    quiet = _given_transforms(ctx, methods, built, at) if built is not None and at is not None else frozenset()
    given = passed_in(methods, made) if built is None or at is None \
        else passed_in(methods, built, lambda value: plain_argument(ctx, value, at, _DEPTH))  # as `where` reads it
    given -= quiet
    fixed = flags.fixed(cls, methods, defs, made or built)
    imports = imports_of(ctx, defs, foreign)
    seen: set[int] = set()
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if len(seen) > 40:
            return True  # too much to read: cannot tell
        for sub in flags.live(fn, fixed):
            if isinstance(sub, ast.Attribute) and _random_word(sub.attr):
                return True
            if isinstance(sub, ast.Name) and _random_word(sub.id) and sub.id not in _locals(fn):
                return True  # a function named so (`sample(items, k)`); a local `sample = self.ids[i]` is data
            if given and any(_own(part, given) and not (isinstance(sub, ast.Call) and handed.as_data(
                    sub, part, defs, imports, methods)) for part in _used(sub)):
                return True  # an object the caller passed in, indexed, called or handed on (a dataset it wraps)
            if isinstance(sub, ast.Call) and _may_draw(sub.func, methods, defs, todo) and not _own(sub.func, quiet) \
                    and not _quiet_callable(ctx, sub.func, fn, methods, defs, foreign, depth):
                return True
    return False


def _locals(fn: ast.AST) -> frozenset[str]:
    """The names a function binds itself (its parameters and assignment targets): variables, not draws."""
    params = {a.arg for a in nodes.iwalk(fn.args) if isinstance(a, ast.arg)} if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else set()
    return frozenset(params | {n.id for n in nodes.iwalk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})


def _quiet_callable(ctx: Context, callee: ast.AST, fn: ast.AST, methods: dict[str, ast.AST], defs: dict, foreign: bool,
                    depth: int) -> bool:
    """A callable object the class made itself that draws nothing: a name the function, or an attribute
    (`self.to_tensor`) the class's methods, only ever assign an instance of a class of the module whose
    `__call__` draws nothing (read as `__getitem__` is), or a deterministic torchvision transform
    (`ToTensor()`, `Normalize(...)`; in another file, whose imports are not read, by its name)."""
    if depth <= 0:
        return False
    if isinstance(callee, ast.Name):
        values = [s.value for s in follow.own_statements(fn) if isinstance(s, ast.Assign)
                  and any(follow.binds(t, callee.id) for t in s.targets)]
        if any(not (len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)) for s in follow.own_statements(fn)
               if isinstance(s, ast.Assign) and any(follow.binds(t, callee.id) for t in s.targets)):
            return False
    elif isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) and callee.value.id == "self":
        values = []
        for method in methods.values():
            for s in nodes.iwalk(method):
                targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, (ast.AugAssign, ast.AnnAssign)) else []
                for t in targets:
                    if any(isinstance(n, ast.Attribute) and n.attr == callee.attr and isinstance(n.value, ast.Name)
                           and n.value.id == "self" for n in nodes.iwalk(t)):
                        if not (isinstance(s, ast.Assign) and t is s.targets[0] and len(s.targets) == 1 and t is not None
                                and isinstance(t, ast.Attribute)):
                            return False
                        values.append(s.value)
    else:
        return False
    if not values:
        return False
    for value in values:
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Name) and isinstance(defs.get(func.id), ast.ClassDef):
            if _reads_random(ctx, defs[func.id], defs, foreign, ("__call__",), depth - 1, value):
                return False
        elif not (_deterministic_transform(ctx, value, _DEPTH) if not foreign else _deterministic_name(value)):
            return False
    return True


def _deterministic_name(value: ast.Call) -> bool:
    """A call of a torchvision transform that draws nothing, known by its name alone (`transforms.ToTensor()`)."""
    func = value.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last in _TV_NAMES and last != "Compose"


def _used(node: ast.AST) -> list[ast.AST]:
    """The expressions a node reads an object through: what it indexes, iterates, calls a method of, or
    hands to a call (a flag read in an `if` is none of these)."""
    if isinstance(node, ast.Subscript):
        return [node.value]
    if isinstance(node, (ast.For, ast.comprehension)):
        return [node.iter]
    if isinstance(node, ast.Call):
        owner = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        return [*owner, *node.args, *(k.value for k in node.keywords)]
    return []


def _own(node: ast.AST, given: frozenset[str]) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in given and isinstance(node.value, ast.Name) and node.value.id == "self"


def _may_draw(callee: ast.AST, methods: dict[str, ast.AST], defs: dict, todo: list) -> bool:
    """A call's function: a method or module function is read next (queued); a stored callable
    (`self.transform`) or a function named like an augmentation may draw; another plain function does not."""
    if isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) and callee.value.id == "self":
        if callee.attr not in methods:
            return True  # a stored callable (a transform the caller passed): cannot tell
        todo.append(methods[callee.attr])
        return False
    if isinstance(callee, ast.Name) and isinstance(defs.get(callee.id), (ast.FunctionDef, ast.AsyncFunctionDef)):
        todo.append(defs[callee.id])
        return False
    if not isinstance(callee, (ast.Attribute, ast.Name)):
        return True  # a call of a call's result: cannot tell
    last = callee.attr if isinstance(callee, ast.Attribute) else callee.id
    return any(word in last.lower() for word in _AUGMENT_WORDS)


def _random_word(name: str) -> bool:
    return "rand" in name.lower() or name in _RANDOM


def _deterministic_transform(ctx: Context, node: ast.AST, depth: int, where: follow.Where | None = None) -> bool:
    """A torchvision transform that draws nothing: ToTensor, Normalize, Resize, ... or a Compose of such; given
    `where` the call is, also one a function of the code base makes (kb/scan/transforms.py)."""
    if depth <= 0:
        return False
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    if isinstance(node, ast.Name):  # every value it takes (`normalize` set in each dataset's branch)
        values = _assigned(ctx, node.id)
        return bool(values) and all(_deterministic_transform(ctx, v, depth - 1, where) for v in values)
    if isinstance(node, ast.Call) and where is not None and ctx.dotted(node.func) not in _TV_DETERMINISTIC:
        return _made_quiet(ctx, node, where, depth - 1)
    if not isinstance(node, ast.Call) or ctx.dotted(node.func) not in _TV_DETERMINISTIC:
        return False
    if (ctx.dotted(node.func) or "").endswith(".Compose"):
        steps = node.args[0] if node.args else None
        return isinstance(steps, (ast.List, ast.Tuple)) and all(
            _deterministic_transform(ctx, s, depth - 1, where) or (where is not None and not isinstance(s, ast.Call)
                                                                  and transforms.plain_step(s, where, *_readers(ctx)[::2]))
            for s in steps.elts)
    return True


def _made_quiet(ctx: Context, node: ast.Call, where: follow.Where, depth: int) -> bool:
    """kb/scan/transforms.py's reading of a transform a call makes, with this module's lookups."""
    imports, lookup, quiet_function = _readers(ctx)
    return transforms.made_quiet(node, where, imports, lookup, lambda cls, defs, foreign, made:
                                 not _reads_random(ctx, cls, defs, foreign, ("__call__",), made=made), depth, quiet_function)


def _readers(ctx: Context) -> tuple[transforms.Imports, transforms.Definition, transforms.QuietFunction]:
    """kb/scan/transforms.py's lookups: imports, a call's definition, and whether a step handed in as a function draws nothing."""
    def quiet_function(step: ast.expr, where: follow.Where) -> bool:
        found = (step, where.defs, False) if isinstance(step, ast.Lambda) else definition(ctx, step, where)
        return found is not None and isinstance(found[0], (ast.Lambda, ast.FunctionDef)) and not ctx.may_draw_randomness(found[0], defs=found[1])
    return (lambda defs, foreign: imports_of(ctx, defs, foreign)), (lambda func, at: definition(ctx, func, at)), quiet_function
