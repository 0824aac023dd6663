"""`kb.status()`: answer from the compiled index with the standard library only.

How an answer is formed (docs/api.md has the user-facing version):

1. The op resolves to source records: a record id names one record; otherwise the name
   (or alias) is looked up in the framework's table. A name with no record but present in
   the framework's API inventory (data/api/) has no known source: deterministic.
2. Records for another device drop out (a record with device `any` always applies).
3. Each remaining record is evaluated at the version's release key (kb/versions.py):
   the one range containing it gives that record's answer; no range means unknown.
4. deterministic = False if any record is non-deterministic there; otherwise None if any
   is unknown; otherwise True. solutions = the union of the codes that fix at least one
   non-deterministic record; recipe = a smallest set of codes covering every
   non-deterministic record (ties: lower preference, then code), ordered by the phase in
   which a user applies them; None when a record has no solution or any is unknown.

One module per concern, each importing only those above it in this list:
- state.py: the loaded index (kb/_index.py, kb/_details.py; `split_index` / `join_index`) and every
  memo (made by `state.memo()`, so `reset()` clears it);
- names.py: step 1 (name -> records, the inventory, close names, an op's parameters);
- cover.py: the solution union and the smallest cover (the recipe);
- evidence.py: runs and static evidence of the queried release;
- tfkeras.py: a `tf.keras.*` op where TensorFlow's `tf.keras` is Keras 3 (2.16 on): the Keras release
  and `keras.*` records that answer beside the TensorFlow ones;
- evaluate.py: steps 2-4 (`answer`);
- this file: the public functions, which check their arguments and memoize answers.

To add a cache:
1. In the module that reads it, write `_things: dict[K, V] = memo()` (`from kb.query.state import memo`).
2. Bound it if callers choose its keys: `if len(_things) < LIMIT:` before storing.
3. Run `pytest tests/test_query_caches.py`: it fails for a module-level dict, list or set that
   `memo()` did not make, and checks that `reset()` empties yours.
"""

from kb import reductions, versions
from kb.bounds import MAX_NAME, MAX_VERSION, check_text, echo
from kb.model import Status
from kb.query.cover import MAX_EXACT, smallest_cover
from kb.query.evaluate import answer, known_release
from kb.query.names import frameworks, inventory, op_parameters, resolve
from kb.query.state import (
    CORE_SOURCE_FIELDS, DETAIL_KEYS, LIMIT, SEEN_KEYS, Lazy, clear, index, join_index, light, memo, scan_index,
    split_index, split_seen, use,
)

__all__ = [
    "CORE_SOURCE_FIELDS", "DETAIL_KEYS", "DEVICES", "DISTRIBUTIONS", "MAX_EXACT", "answer", "index", "inventory",
    "join_index", "known_release", "parameters", "reset", "scan_index", "smallest_cover", "solution", "split_index",
    "split_seen", "status", "SEEN_KEYS",
]

calls = Lazy("calls", globals())
tfkeras = Lazy("query.tfkeras", globals())  # only tf.keras.* ops need it

DEVICES = ("gpu", "cpu", "any")
DISTRIBUTIONS = ("ngc",)
_PLAIN = frozenset({str, int, float, bool, type(None)})
_cache: dict[tuple, Status] = memo()  # status()'s answers (benchmarks/bench_query.py clears it alone)
_keys: dict[str, tuple] = memo()
_resolved: dict[tuple, tuple] = memo()


def reset(new_index: dict | None = None) -> None:
    """Forget every memo (and optionally swap the index), e.g. after `kb build` in-process."""
    clear()
    if new_index is not None:
        use(new_index)


def solution(code: str) -> dict | None:
    """What a solution code means: title, kind, how, snippet (None for a code the KB lacks).

    For people reading an answer: `kb status` prints this under the recipe."""
    found = index()["solutions"].get(code)
    return dict(found) if found is not None else None


def parameters(op: str, framework: str | None = None) -> tuple | None:
    """The parameters of `op` in order, each `(name, default)`; `default` is a plain literal,
    `kb.NO_DEFAULT` (must be passed) or `kb.UNKNOWN_DEFAULT` (not a plain literal); variadic
    ones keep their stars (`**kwargs`). None when the KB knows the op but not its signature;
    UnknownOpError for an unknown name. Used to map positional arguments to names.
    """
    if not isinstance(op, str) or not op:
        raise ValueError("op must be a non-empty string such as 'torch.nn.functional.interpolate'")
    check_text("op", op, MAX_NAME, example="torch.nn.functional.interpolate")  # bounded as status() is
    if framework is not None and framework not in frameworks():
        check_text("framework", framework, MAX_NAME, example="pytorch")
        raise ValueError(f"framework must be one of {', '.join(frameworks())}, not {echo(framework)}")
    idx = light()
    fw, _ = resolve(op, framework, idx)
    return op_parameters(op, fw, idx)


def status(
    op: str,
    version: str,
    *,
    framework: str | None = None,
    device: str = "gpu",
    distribution: str | None = None,
    call: dict | None = None,
) -> Status:
    """Is `op` run-to-run reproducible in `version`, and what makes it so?

    `distribution="ngc"` reads `version` as an NGC container version (e.g. "20.03").
    `call` describes how the op is called (docs/calls.md): parameter names with literal
    values, `input.ndim`, `input.dtype`, `backend`; None means unknown.
    Raises UnknownOpError (a LookupError) for an unknown name and ValueError for a
    version that is not a version, an unknown device/distribution or a bad call.
    """
    # Only arguments that passed the checks below are ever cached, so a hit needs no check.
    # The key holds only plain values with their types (4.0 == 4 and True == 1 hash alike, so
    # a key of values alone would let an answer for 4 answer a call the checks refuse for
    # 4.0); anything else (a subclass, an object whose __hash__ raises) is never cached.
    cache_key: tuple | None = None
    hit = None
    if (type(op) is str and type(version) is str and type(device) is str
            and (framework is None or type(framework) is str) and (distribution is None or type(distribution) is str)):
        if call is None:
            cache_key = (op, version, framework, device, distribution, None)
        elif type(call) is dict and all(type(k) is str and type(v) in _PLAIN for k, v in call.items()):
            cache_key = (op, version, framework, device, distribution,
                         tuple((k, type(v), v) for k, v in call.items()))
        if cache_key is not None:
            hit = _cache.get(cache_key)
    if hit is not None:
        return hit
    # Checked before anything reads a file: a framework name selects data/api/<framework>.txt,
    # so it must be a known one.
    if not (type(op) is str and type(version) is str and 0 < len(op) <= MAX_NAME and 0 < len(version) <= MAX_VERSION
            and op.isascii() and version.isascii()):
        check_text("op", op, MAX_NAME, example="tf.nn.bias_add")
        check_text("version", version, MAX_VERSION, example="2.1")
    if framework is not None and framework not in frameworks():
        check_text("framework", framework, MAX_NAME, example="tensorflow")
        raise ValueError(f"framework must be one of {', '.join(frameworks())}, not {echo(framework)}")
    if device not in DEVICES:
        check_text("device", device, MAX_NAME, example="gpu")
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {echo(device)}")
    if distribution is not None and distribution not in DISTRIBUTIONS:
        check_text("distribution", distribution, MAX_NAME, example="ngc")
        raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)} or None, not {echo(distribution)}")
    given = None if call is None else calls.normalize(call)
    key = _keys.get(version)
    if key is None:
        key = versions.release_key(version)
        if len(_keys) < LIMIT:
            _keys[version] = key
    idx = light()
    resolved = _resolved.get((op, framework))
    if resolved is None:
        resolved = resolve(op, framework, idx)
        if len(_resolved) < LIMIT:
            _resolved[(op, framework)] = resolved
    framework, ids = resolved
    params = None
    if given is not None:
        params = op_parameters(op, framework, idx)
        params = calls.check_keys(op, given, params)  # the form the call is of (kb/calls.py, bind)
        if params is not None:  # `reduce=False` selects reduction='none' (kb/reductions.py)
            given = reductions.legacy_reduction(framework, given, calls.names(params))
    keras = (tfkeras.basis(op, key, idx) if framework == "tensorflow" and distribution is None
             and op.startswith("tf.keras.") else None)
    result = answer(op, version, key=key, framework=framework, device=device, distribution=distribution, ids=ids, idx=idx,
                    call=given, params=params, keras=keras)
    if cache_key is not None:
        if len(_cache) >= LIMIT:
            _cache.clear()
        _cache[cache_key] = result
    return result
