/* "Check my stack": the rules of kb.status() (kb/query/, kb/versions.py) in plain JS.
 * Pure functions over api/v1/all.json; no DOM, so node runs them in the tests
 * (tests/test_site_stack_js.py compares them with kb.status() on many cases). */
(function (root) {
  "use strict";
  var PEP440 = /^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?(?:-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?\d*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$/i;

  /* "2.1.0rc1" -> [0, 2, 1]: epoch, release, trailing zeros stripped (docs/versions.md). */
  /* Own keys only: an op, framework or call key from a permalink ("constructor", "__proto__")
   * must never reach Object.prototype's members through a plain lookup. */
  function own(table, key) { return table && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined; }
  var MAX_NAME = 256, MAX_VERSION = 64;  /* kb/bounds.py: the same bounds kb.status() applies */
  function echo(text) { text = String(text); return JSON.stringify(text.slice(0, 80)) + (text.length > 80 ? " (+" + (text.length - 80) + " characters)" : ""); }

  function releaseKey(version) {
    if (String(version).length > MAX_VERSION) throw new Error("version " + echo(version) + " is too long: at most " + MAX_VERSION + " characters");
    var m = PEP440.exec(String(version));
    if (!m) throw new Error(JSON.stringify(version) + " is not a version: expected e.g. 2.1, 2.1.0, 1.15.5 or 2.21.0rc1");
    var parts = m[2].split(".").map(function (p) { return parseInt(p, 10); });
    while (parts.length > 1 && parts[parts.length - 1] === 0) parts.pop();
    return [m[1] ? parseInt(m[1], 10) : 0].concat(parts);
  }

  function compare(a, b) {  /* lexicographic, like Python tuples */
    for (var i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return a.length - b.length;
  }

  function inRange(range, key) {
    return (range.lo === null || compare(range.lo, key) <= 0) && (range.hi === null || compare(key, range.hi) < 0);
  }

  function evaluate(source, key, distribution) {
    var ranges = distribution ? (source.distributions[distribution] || []) : source.status;
    for (var i = 0; i < ranges.length; i++) if (inRange(ranges[i], key)) return ranges[i];
    return null;
  }

  function orderIndex(data, code) { return data.order.indexOf(code); }

  function byOrder(data, codes) {
    return codes.slice().sort(function (a, b) { return orderIndex(data, a) - orderIndex(data, b); });
  }

  function combinations(items, size, start, prefix, out) {
    if (prefix.length === size) { out.push(prefix.slice()); return; }
    for (var i = start; i < items.length; i++) { prefix.push(items[i]); combinations(items, size, i + 1, prefix, out); prefix.pop(); }
  }

  function compareCombo(a, b) {
    for (var i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length - b.length;
  }

  /* Fewest codes such that every need holds one of them or one they imply (kb/query/cover.py). */
  function smallestCover(data, needs) {
    var all = {};
    needs.forEach(function (need) { need.forEach(function (c) { all[c] = true; }); });
    var codes = Object.keys(all).sort();
    for (var size = 0; size <= codes.length; size++) {
      var combos = [];
      combinations(codes, size, 0, [], combos);
      var best = null, bestPref = 0;
      combos.forEach(function (combo) {
        var covered = {};
        combo.forEach(function (c) { covered[c] = true; data.solutions[c].implies.forEach(function (i) { covered[i] = true; }); });
        var ok = needs.every(function (need) { return need.some(function (c) { return covered[c]; }); });
        if (!ok) return;
        var pref = combo.reduce(function (s, c) { return s + data.solutions[c].preference; }, 0);
        if (best === null || pref < bestPref || (pref === bestPref && compareCombo(combo, best) < 0)) { best = combo; bestPref = pref; }
      });
      if (best !== null) return byOrder(data, best);
    }
    return [];
  }

  function applies(source, device) {
    return device === "any" || source.device === device || source.device === "any";
  }

  /* kb.status(ids..., version, device, distribution, call) over a list of source ids; `op` is the
   * name asked about (a record's `calls:` patterns name ops), `params` its signature or null. */
  function answer(data, ids, version, device, distribution, op, call, params, keras) {
    var perSource = [], needs = [], anyFalse = false, anyUnknown = false, anyUnsolved = false;
    var excluded = [], depends = false;
    var groups = [{ op: op, key: releaseKey(version), ids: ids, defaults: params ? defaultsOf(params) : null }];
    /* a tf.keras.* op where tf.keras is Keras 3 (kb/query/tfkeras.py): its Keras records, at the Keras release */
    if (keras) groups.push({ op: keras.op, key: keras.key, ids: keras.ids, defaults: keras.params ? defaultsOf(keras.params) : null });
    groups.forEach(function (g) {
      var op = g.op, key = g.key, defaults = g.defaults;
      g.ids.map(function (id) { return data.sources[id]; }).filter(function (s) { return applies(s, device); }).forEach(function (s) {
        var limit = s.op_versions ? own(s.op_versions, op) : undefined;  /* the releases in which the op is this source */
        if (limit && key !== null && !inRange({ lo: limit[0], hi: limit[1] }, key)) return;
        var r = key === null ? null : evaluate(s, key, distribution);
        var alternatives = forOp(s.calls || [], op, op === s.id, r && r.when ? r.when : null);
        var cond = { condition: conditionText(alternatives), applies: true };
        if (alternatives.length) {
          var ev = evaluateCall(alternatives, call === undefined ? null : call, defaults);
          if (ev[0] === false) { excluded.push(s.id); return; }
          if (ev[0] === null) depends = true;
          cond.applies = ev[0];
        }
        if (r === null) {
          if (cond.applies === null && (call === null || call === undefined) && compiledOnly(alternatives)) {
            /* a record of compiled kernels with no range here leaves an eager answer (kb/query/evaluate.py) */
            perSource.push({ id: s.id, title: s.title, versions: null, deterministic: null, solutions: [], raises: null, note: null, condition: cond.condition, applies: cond.applies });
            return;
          }
          anyUnknown = true;
          perSource.push({ id: s.id, title: s.title, versions: null, deterministic: null, solutions: [], raises: null, note: null, condition: cond.condition, applies: cond.applies });
          return;
        }
        perSource.push({ id: s.id, title: s.title, versions: r.versions, deterministic: r.deterministic, solutions: r.solutions.slice(), raises: r.raises, note: r.note, condition: cond.condition, applies: cond.applies, basis: r.basis || "documented", read: r.read || [] });
        if (!r.deterministic) {
          anyFalse = true;
          if (r.solutions.length) needs.push(r.solutions); else anyUnsolved = true;
        }
      });
    });
    var union = {};
    needs.forEach(function (n) { n.forEach(function (c) { union[c] = true; }); });
    /* a "not deterministic" answer is known as well as the sources that make it so (kb/query/evaluate.py) */
    var deciding = anyFalse ? perSource.filter(function (x) { return x.deterministic === false; }) : perSource;
    var matched = deciding.filter(function (x) { return x.deterministic !== null && x.deterministic !== undefined; });
    var shown = ran(data, deciding, groups[0].key, device, call, groups[0].defaults);
    /* a release whose wheel was read for the deciding records (or for every record, excluded ones too) */
    var readIds = (anyFalse ? deciding : perSource).map(function (x) { return x.id; }).concat(anyFalse ? [] : excluded);
    var readHere = !distribution && readAt(data, readIds, groups[0].key, version);
    var basis = shown || matched.some(function (x) { return x.basis === "verified"; }) ? "verified"
      : readHere || matched.some(function (x) { return x.basis === "static"; }) ? "static"
      : (matched.length || excluded.length) ? "documented" : "unverified";
    var det = anyFalse ? false : (anyUnknown ? null : true);
    var recipe = (anyUnsolved || anyUnknown) ? null : smallestCover(data, needs);
    if (det === true && basis === "unverified") { det = null; recipe = null; }  /* never "deterministic" without a basis */
    return {
      deterministic: det,
      solutions: byOrder(data, Object.keys(union)),
      recipe: recipe,
      sources: perSource,
      needs: needs,
      excluded: excluded,
      depends_on_call: depends,
      basis: basis,
      read: [].concat.apply([], matched.map(function (x) { return x.read; }))
    };
  }

  /* Whether a run of an applying source was measured on this release and device (kb/query/evidence.py
   * verified; without a call, every case counts). */
  function ran(data, perSource, key, device, call, defaults) {
    if (key === null) return false;
    var given = call !== null && call !== undefined;
    return perSource.some(function (x) {
      return (own(data.runs || {}, x.id) || []).some(function (run) {
        return (device === "any" || run.device === device) && sameRelease(run.key, key) &&
          (!given || caseAgrees(run.call, call, defaults));
      });
    });
  }

  /* kb/query/evidence.py _case_agrees: a case speaks for a call when no fact the call states (or its
   * defaults) differs from it; a run before cases (no call) is an eager call */
  function caseAgrees(ranCall, call, defaults) {
    var has = function (o, k) { return Object.prototype.hasOwnProperty.call(o, k); };
    var asked = has(call, "compiled") ? call.compiled : null;
    if (ranCall === null || ranCall === undefined) return typed(asked).t === "none";
    if (!same(has(ranCall, "compiled") ? ranCall.compiled : null, asked)) return false;
    return Object.keys(ranCall).every(function (k) {
      var value = ranCall[k];
      if (has(call, k)) {  /* a case states the exact dtype it ran (float32); a call may state only the kind */
        return same(call[k], value) || (typeof value === "string" && has(DTYPES, value) && typed(call[k]).t === "str" &&
                                        DTYPES[value] === typed(call[k]).v);
      }
      if (defaults && has(defaults, k) && !same(defaults[k], value)) {
        return defaults[k] === NO_DEFAULT || defaults[k] === UNKNOWN_DEFAULT;
      }
      return true;
    });
  }

  /* kb/query/evidence.py static: the release's wheel was read for one of these records (2.4 counts the
   * 2.4.x reads; keys drop trailing zeros, so both sides are padded to the width the version is written in) */
  function readAt(data, ids, key, version) {
    if (key === null) return false;
    var width = 1 + Math.max(key.length - 1, (String(version).trim().match(/\./g) || []).length + 1);
    var pad = function (k) { var out = k.slice(0, width); while (out.length < width) out.push(0); return out; };
    var want = pad(key);
    return ids.some(function (id) {
      return (own(data.static_reads || {}, id) || []).some(function (k) { return compare(pad(k), want) === 0; });
    });
  }

  function sameRelease(runKey, key) {  /* kb/query/evidence.py same_release */
    if (key.length > 3) return compare(runKey, key) === 0;
    var pad = function (k) { return k.concat([0, 0, 0]).slice(0, 3); };
    return compare(pad(runKey), pad(key)) === 0;
  }

  /* ---- An op no record covers here (kb/query/norecord.py): a sweep of the call, the kernel class read in
   * the code, the framework's documented guarantee; else "no known source, not verified". ---- */
  function covers(call, full, dtype) {
    return Object.keys(call).every(function (name) {
      if (name === "compiled") return true;
      var v = typed(call[name]);
      if (name === "input.dtype" && v.t === "str" && isDtype(v.v) && KINDS.indexOf(v.v) < 0) return v.v === dtype;
      if (!Object.prototype.hasOwnProperty.call(full, name)) return false;
      var ran = full[name];  /* a case records its exact dtype (float32); a call may state only the kind (float) */
      if (/\.dtype$/.test(name) && v.t === "str" && KINDS.indexOf(v.v) >= 0 && typeof ran === "string" && DTYPES[ran] === v.v) return true;
      return same(v, ran);
    });
  }

  function seen(data, fw, op, key, device, call) {
    var basis = data.basis || {}, entries = own(own(basis.seen || {}, fw) || {}, op) || [];
    var defaults = own(own(basis.seen_defaults || {}, fw) || {}, op) || {};
    var compiled = !!(call && call.compiled && typed(call.compiled).t !== "none");
    var out = { same: [], differ: [], other: [] };
    entries.forEach(function (e) {  /* [release key, device, facts, dtype, class, version, gpu, runs] */
      if (!sameRelease(e[0], key) || (device !== "any" && e[1] !== device)) return;
      var isCompiled = Object.prototype.hasOwnProperty.call(e[2], "compiled") && e[2].compiled !== null;
      if (isCompiled !== compiled) return;
      var full = {};
      Object.keys(defaults).forEach(function (k) { full[k] = defaults[k]; });
      Object.keys(e[2]).forEach(function (k) { full[k] = e[2][k]; });
      if (call && !covers(call, full, e[3])) out.other.push(e);
      else (e[4] === "same" ? out.same : out.differ).push(e);
    });
    return out;
  }

  function noRecord(data, fw, op, key, device, call, depends) {
    var basis = data.basis || {}, sawn = seen(data, fw, op, key, device, call);
    var classes = (own(own(basis.elementwise || {}, fw) || {}, op) || []).map(function (id) { return basis.kernel_classes[id]; })
      .filter(function (c) { return c && inRange(c, key) && (device === "any" || c.device === "any" || c.device === device); });
    var guarantee = ((basis.guarantees || {})[fw] || []).filter(function (g) {
      return inRange(g, key) && (device === "any" || g.device === "any" || g.device === device);
    })[0] || null;
    if (sawn.differ.length) return { deterministic: false, basis: "verified", recipe: null, seen: [], guarantee: null, read: [], depends: depends };
    if (classes.length) return { deterministic: true, basis: "static", recipe: [], seen: [], guarantee: null, read: [].concat.apply([], classes.map(function (c) { return c.read; })), depends: depends };
    if (sawn.same.length) return { deterministic: true, basis: "verified", recipe: [], seen: sawn.same, guarantee: null, read: [], depends: depends || !call };
    if (guarantee) return { deterministic: null, basis: "documented", recipe: [], seen: [], guarantee: guarantee, read: [], depends: depends };
    return { deterministic: null, basis: "unverified", recipe: [], seen: [], guarantee: null, read: [], depends: depends };
  }

  /* kb/query/headline.py: the answer's first line, saying how it is known. */
  var NO_SOURCE = "no known source, not verified";
  function headline(a, version, callGiven) {
    if (a.deterministic === false) {
      var conds = a.sources.filter(function (x) { return x.deterministic === false; }).map(function (x) { return x.condition; });
      var text = "not deterministic";
      if (a.depends_on_call && conds.length && conds.every(Boolean)) {
        text += " when " + conds.filter(function (c, i) { return conds.indexOf(c) === i; }).join("; or when ") + "; deterministic otherwise";
      }
      return text;
    }
    if (a.deterministic === true) {
      if (a.basis === "verified" && a.seen && a.seen.length) {
        var first = a.seen[0], runs = a.seen.map(function (e) { return e[7]; }).filter(function (n, i, all) { return all.indexOf(n) === i; }).sort();
        var where = (first[1] === "gpu" ? String(first[6] || "GPU").replace("NVIDIA ", "") : "CPU");
        var what = callGiven ? "this call" : "the " + a.seen.length + " call(s) an operator sweep ran";
        var t = "no difference seen in " + what + " (" + where + ", " + a.framework + " " + first[5] + ": 0 of " + runs.join("/") +
          " runs differed); a run, weaker than a code read";
        return callGiven ? t : t + "; other calls: " + NO_SOURCE;
      }
      var said = { verified: "deterministic, verified", "static": "deterministic by the code read", documented: "documented deterministic" }[a.basis] || "deterministic";
      /* records about some calls, with no range for this release (kb/query/headline.py) */
      var open = a.sources.filter(function (x) { return x.deterministic === null && x.condition; }).map(function (x) { return x.condition; });
      if (a.depends_on_call && open.length) said += "; when " + open.filter(function (c, i) { return open.indexOf(c) === i; }).join("; or when ") + ": " + NO_SOURCE;
      return said;
    }
    if (a.sources.length && a.sources.some(function (x) { return x.deterministic !== null && x.deterministic !== undefined; })) {
      var unknown = a.sources.filter(function (x) { return x.deterministic === null; }).map(function (x) { return x.id; });
      return "unknown: " + unknown.join(", ") + (unknown.length === 1 ? " has" : " have") + " no range for " + version + ", not verified";
    }
    var out = a.sources.length ? "no known source for " + version + ", not verified (the records cover other releases)" : NO_SOURCE;
    if (a.guarantee) out += "; documented deterministic under " + a.guarantee.code + " (" + a.guarantee.claim + ")";
    return out;
  }

  function compiledOnly(alternatives) {
    return alternatives.length > 0 && alternatives.every(function (alt) {
      return alt.some(function (p) { return p[0] === "compiled" && !p[1].some(function (v) { return v === null || (v && v.t === "none"); }); });
    });
  }

  /* ---- Call conditions: kb/calls.py in JS (docs/calls.md). A condition is a list of
   * [key, values] pairs (all must hold); a record's alternatives for an op: any one suffices. ---- */
  var NO_DEFAULT = { marker: "NO_DEFAULT" }, UNKNOWN_DEFAULT = { marker: "UNKNOWN_DEFAULT" };
  var FACTS = ["input.ndim", "input.dtype", "input.layout", "backend", "compiled", "at.method"], KINDS = ["float", "int", "bool", "complex"];
  var COMPILERS = ["inductor"];  /* `compiled` left out of a call is eager (None), as in kb/calls.py */
  /* kb/calls.py DTYPES (exact dtype -> kind), LAYOUTS, GIVEN, DEFAULT_FACTS, LEN */
  var DTYPES = { bfloat16: "float", float16: "float", float32: "float", float64: "float", float8_e4m3fn: "float",
    float8_e4m3fnuz: "float", float8_e5m2: "float", float8_e5m2fnuz: "float", float8_e8m0fnu: "float",
    uint8: "int", uint16: "int", uint32: "int", uint64: "int", int8: "int", int16: "int", int32: "int", int64: "int",
    bool: "bool", complex32: "complex", complex64: "complex", complex128: "complex" };
  var LAYOUTS = ["strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"];
  var GIVEN = "given", LEN = ".len", NUMEL = ".numel";
  /* kb/calls.py ARG_FACTS: `<tensor>.<fact>` of a tensor argument (`input.<fact>` for the first), with their checks */
  var ARG_FACTS = ["dtype", "layout", "device", "ndim", "memory_format", "numel"];
  var DEVICES = ["cpu", "cuda"], MEMORY_FORMATS = ["contiguous_format", "channels_last", "channels_last_3d"];
  function argFact(key) {  /* [tensor, fact] or null */
    var i = key.lastIndexOf(".");
    if (i <= 0) return null;
    var tensor = key.slice(0, i), fact = key.slice(i + 1);
    return ARG_FACTS.indexOf(fact) >= 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(tensor) ? [tensor, fact] : null;
  }
  /* kb/calls.py bounds: ">65536", "<=65536", ">=1024,<65536" -> [lowest, highest or null]; null for no range. */
  function bounds(text) {
    if (typeof text !== "string" || !text || text.length > 200) return null;
    var low = 0, high = null, parts = text.split(",");
    for (var i = 0; i < parts.length; i++) {
      var m = /^(>=|<=|>|<)([0-9]+)$/.exec(parts[i]);
      if (!m) return null;
      var n = parseInt(m[2], 10);
      if (m[1] === ">") low = Math.max(low, n + 1);
      else if (m[1] === ">=") low = Math.max(low, n);
      else if (m[1] === "<") high = high === null ? n - 1 : Math.min(high, n - 1);
      else high = high === null ? n : Math.min(high, n);
    }
    return high !== null && high < low ? null : [low, high];
  }
  /* kb/calls.py overlap: the counts and ranges two lists both admit (a pattern and its range's `when`) */
  function overlap(a, b) {
    var out = [];
    var span = function (x) { x = typed(x); return x.t === "int" ? [x.v, x.v] : x.t === "str" ? bounds(x.v) : null; };
    a.forEach(function (x) {
      b.forEach(function (y) {
        var sx = span(x), sy = span(y);
        if (sx === null || sy === null) return;
        var low = Math.max(sx[0], sy[0]), highs = [sx[1], sy[1]].filter(function (h) { return h !== null; });
        var high = highs.length ? Math.min.apply(null, highs) : null;
        if (high !== null && high < low) return;
        var value = high === low ? low : high === null ? ">=" + low : ">=" + low + ",<=" + high;
        if (!member(value, out)) out.push(value);
      });
    });
    return out;
  }
  function inCount(v, text) {
    var span = bounds(text);
    return span !== null && v.t === "int" && span[0] <= v.v && (span[1] === null || v.v <= span[1]);
  }
  function rangeText(v) {
    if (typeof v !== "string") return show(v);
    return v.split(",").map(function (part) { var m = /^(>=|<=|>|<)(.*)$/.exec(part); return m[1] + " " + m[2]; }).join(" and ");
  }
  /* kb/calls.py check_arg_fact: a tensor argument's fact with a value that fact cannot take */
  function checkArgFact(key, v) {
    var parts = argFact(key);
    if (parts === null || key === "input.ndim" || key === "input.dtype" || key === "input.layout") return;
    var fact = parts[1];
    if (fact === "dtype" && KINDS.indexOf(v.v) < 0 && !isDtype(v.v)) throw new Error("call['" + key + "'] is a dtype kind (" + KINDS.join(", ") + ") or an exact dtype (" + Object.keys(DTYPES).join(", ") + ")");
    if (fact === "layout" && LAYOUTS.indexOf(v.v) < 0) throw new Error("call['" + key + "'] is a layout: " + LAYOUTS.join(", "));
    if (fact === "device" && DEVICES.indexOf(v.v) < 0) throw new Error("call['" + key + "'] is a device type: " + DEVICES.join(", "));
    if (fact === "ndim" && (v.t !== "int" || v.v < 0)) throw new Error("call['" + key + "'] is the tensor's rank, a whole number >= 0");
    if (fact === "memory_format" && MEMORY_FORMATS.indexOf(v.v) < 0) throw new Error("call['" + key + "'] is a memory format: " + MEMORY_FORMATS.join(", "));
    if (fact === "numel" && (v.t !== "int" || v.v < 0)) throw new Error("call['" + key + "'] is the tensor's element count (tensor.numel()), a whole number >= 0");
  }
  var DEFAULT_FACTS = { "compiled": { t: "none", v: null } };  /* input.layout left out is unknown, as every input.* fact */
  function isDtype(v) { return Object.prototype.hasOwnProperty.call(DTYPES, v); }

  /* Values carry their Python type: {t: "bool"|"int"|"float"|"str"|"none", v}. */
  function typed(v) {
    if (v !== null && typeof v === "object" && v.t) return v;
    if (v === null) return { t: "none", v: null };
    if (typeof v === "boolean") return { t: "bool", v: v };
    if (typeof v === "number") return { t: Number.isInteger(v) ? "int" : "float", v: v };
    return { t: "str", v: String(v) };
  }
  function same(a, b) {  /* kb/calls.py same(): True is not 1 */
    a = typed(a); b = typed(b);
    if (a.t === "bool" || b.t === "bool") return a.t === b.t && a.v === b.v;
    if (a.t === "none" || b.t === "none") return a.t === b.t;
    var numeric = function (x) { return x.t === "int" || x.t === "float"; };
    if (numeric(a) && numeric(b)) return a.v === b.v;
    return a.t === b.t && a.v === b.v;
  }
  function member(v, values) { return values.some(function (x) { return same(v, x); }); }
  /* kb/calls.py value_holds: true, false, or null (a kind against exact dtypes of that kind). */
  function valueHolds(v, values) {
    if (member(v, values)) return true;
    v = typed(v);
    if (v.t === "int" && values.some(function (x) { return typeof x === "string" && inCount(v, x); })) return true;
    if (v.t !== "none" && values.indexOf(GIVEN) >= 0) return true;
    if (v.t === "str" && isDtype(v.v) && KINDS.indexOf(v.v) < 0 && values.indexOf(DTYPES[v.v]) >= 0) return true;
    if (v.t === "str" && KINDS.indexOf(v.v) >= 0 && values.some(function (x) { return typeof x === "string" && DTYPES[x] === v.v && isDtype(x); })) return null;
    return false;
  }

  /* kb/signatures.py _literal / parse: "mode='nearest'" -> ["mode", "nearest"]. */
  function literal(text) {
    if (text === "None") return { t: "none", v: null };
    if (text === "True" || text === "False") return { t: "bool", v: text === "True" };
    if (text.length >= 2 && text[0] === text[text.length - 1] && (text[0] === "'" || text[0] === '"') && text.indexOf("\\") < 0) return { t: "str", v: text.slice(1, -1) };
    if (/^[-+]?\d+$/.test(text.replace(/_/g, "")) && !/^_|_$|__/.test(text)) return { t: "int", v: parseInt(text.replace(/_/g, ""), 10) };
    var f = Number(text);
    if (text.trim() !== "" && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) && isFinite(f)) return { t: "float", v: f };
    return UNKNOWN_DEFAULT;
  }
  function parseParam(field) {
    var i = field.indexOf("=");
    if (i < 0) return [field, NO_DEFAULT];
    var d = field.slice(i + 1);
    return [field.slice(0, i), d === "?" ? UNKNOWN_DEFAULT : literal(d)];
  }
  /* kb/signatures.py parse: the union of every form ("|" fields), with .forms and .choices ("@name=a|b"). */
  function parseParams(fields) {
    var forms = [[]], choices = {}, union = [], seen = {};
    fields.forEach(function (field) {
      if (field === "|") forms.push([]);
      else if (field[0] === "@") { var i = field.indexOf("="); choices[field.slice(1, i)] = field.slice(i + 1).split("|"); }
      else if (field[0] === ">") { /* a module's functional op (lint KB022); not a parameter */ }
      else forms[forms.length - 1].push(parseParam(field));
    });
    forms.forEach(function (form) { form.forEach(function (p) { if (!seen[p[0]]) { seen[p[0]] = true; union.push(p); } }); });
    union.forms = forms; union.choices = choices;
    return union;
  }
  function names(params) { return params.map(function (p) { return p[0]; }).filter(function (n) { return n[0] !== "*"; }); }
  /* kb/calls.py bind: the first form whose names take every key of the call; other forms' parameters not given. */
  function bind(op, call, params) {
    var forms = params.forms || [];
    if (forms.length < 2) return params;
    var keys = Object.keys(call).filter(function (k) { var a = argFact(k); return FACTS.indexOf(k) < 0 && !(a && a[0] === "input"); })
      .map(function (k) { var a = argFact(k); return k.slice(-LEN.length) === LEN ? k.slice(0, -LEN.length) : a ? a[0] : k; });
    for (var i = 0; i < forms.length; i++) {
      var have = names(forms[i]);
      if (openEnded(forms[i]) || keys.every(function (k) { return have.indexOf(k) >= 0; })) {
        var bound = forms[i].concat(names(params).filter(function (n) { return have.indexOf(n) < 0; }).map(function (n) { return [n, { t: "none", v: null }]; }));
        bound.forms = [forms[i]]; bound.choices = params.choices;
        return bound;
      }
    }
    throw new Error(op + " has no form that takes " + keys.join(", ") + " together; its forms: " +
      forms.map(function (f) { return "(" + names(f).join(", ") + ")"; }).join("; "));
  }
  function defaultsOf(params) { var out = {}; params.forEach(function (p) { out[p[0]] = p[1]; }); return out; }
  function openEnded(params) { return params.some(function (p) { return p[0].slice(0, 2) === "**"; }); }

  /* kb.parameters(op): from all.json's params (every op a record names), else null. */
  function parameters(data, op, framework) {
    var fields = own(own(data.params, framework), op);
    return fields ? parseParams(fields) : null;
  }

  /* A call as the CLI reads `--call KEY=VALUE`: a Python literal where it is one, else a string. */
  function pyLiteral(text) {
    text = text.trim();
    if (text === "None" || text === "True" || text === "False") return literal(text);
    if (/^[-+]?\d+$/.test(text)) return { t: "int", v: parseInt(text, 10) };
    if (/^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$/.test(text)) return { t: "float", v: Number(text) };
    if (text.length >= 2 && text[0] === text[text.length - 1] && (text[0] === "'" || text[0] === '"')) return { t: "str", v: text.slice(1, -1) };
    return { t: "str", v: text };
  }
  function parseCall(text) {
    var call = Object.create(null), items = String(text || "").split(/[,;\n]/).map(function (x) { return x.trim(); }).filter(Boolean);
    if (!items.length) return null;
    items.forEach(function (item) {
      var i = item.indexOf("=");
      if (i <= 0) throw new Error("call facts are KEY=VALUE (e.g. mode=nearest), not " + JSON.stringify(item));
      var key = item.slice(0, i).trim();
      if (Object.prototype.hasOwnProperty.call(call, key)) throw new Error("the call gives " + key + " twice");
      call[key] = pyLiteral(item.slice(i + 1));
    });
    return call;
  }
  /* kb/calls.py normalize + check_keys (the errors kb.status() raises as ValueError); returns the
   * parameters of the form the call is of (bind). */
  function checkCall(op, call, params) {
    Object.keys(call).forEach(function (key) {
      var v = typed(call[key]);
      if (key === "input.ndim" && (v.t !== "int" || v.v < 0)) throw new Error("call['input.ndim'] is the input's rank, a whole number >= 0");
      if (key === "input.dtype" && KINDS.indexOf(v.v) < 0 && !isDtype(v.v)) throw new Error("call['input.dtype'] is a dtype kind (" + KINDS.join(", ") + ") or an exact dtype (" + Object.keys(DTYPES).join(", ") + ")");
      if (key.slice(-LEN.length) === LEN && (v.t !== "int" || v.v < 0)) throw new Error("call['" + key + "'] is the length of the sequence " + key.slice(0, -LEN.length) + ", a whole number >= 0");
      if (key === "input.layout" && LAYOUTS.indexOf(v.v) < 0) throw new Error("call['input.layout'] is the input's layout: " + LAYOUTS.join(", "));
      checkArgFact(key, v);
      if (key === "compiled" && v.t !== "none" && COMPILERS.indexOf(v.v) < 0) throw new Error("call['compiled'] names the compiler the call runs under: " + COMPILERS.join(", ") + ", or None for eager");
    });
    if (!params) return null;
    if (!openEnded(params)) {
      var known = names(params);
      Object.keys(call).forEach(function (key) {
        var isLen = key.slice(-LEN.length) === LEN && known.indexOf(key.slice(0, -LEN.length)) >= 0;
        var parts = argFact(key), isArg = parts !== null && (parts[0] === "input" || known.indexOf(parts[0]) >= 0);
        if (FACTS.indexOf(key) < 0 && known.indexOf(key) < 0 && !isLen && !isArg) {
          throw new Error(op + " has no parameter '" + key + "'; its parameters are: " + (known.join(", ") || "(none)") + "; call facts: " + FACTS.join(", "));
        }
      });
    }
    Object.keys(params.choices || {}).forEach(function (key) {
      if (!Object.prototype.hasOwnProperty.call(call, key)) return;
      var v = typed(call[key]);
      if (v.t !== "none" && !(v.t === "str" && params.choices[key].indexOf(v.v) >= 0)) {
        throw new Error(op + ": " + key + "=" + show(v) + " is not one of its values: " + params.choices[key].map(function (x) { return "'" + x + "'"; }).join(", "));
      }
    });
    return bind(op, call, params);
  }

  function asPairs(when) {  /* {key: [values]} or [[key, values]] -> sorted [[key, values]] */
    var pairs = Array.isArray(when) ? when.slice() : Object.keys(when).map(function (k) { return [k, when[k]]; });
    return pairs.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; });
  }
  function both(a, b) {
    var merged = {};
    a.forEach(function (p) { merged[p[0]] = p[1]; });
    b.forEach(function (p) {
      if (!Object.prototype.hasOwnProperty.call(merged, p[0])) merged[p[0]] = p[1];
      else if (p[0].slice(-NUMEL.length) === NUMEL) merged[p[0]] = overlap(merged[p[0]], p[1]);
      else merged[p[0]] = merged[p[0]].filter(function (v) { return member(v, p[1]); });
    });
    return asPairs(merged);
  }
  /* kb/calls.py for_op: the alternatives under which a record applies to `op`. */
  function forOp(patterns, op, anyOp, extra) {
    var alternatives = [], unconditional = !patterns.length;
    if (patterns.length) {
      var named = patterns.filter(function (p) { return anyOp || !p.ops.length || p.ops.indexOf(op) >= 0; })
        .map(function (p) { return asPairs(p.when); });
      if (!named.length || named.some(function (w) { return !w.length; })) unconditional = true; else alternatives = named;
    }
    var ex = extra ? asPairs(extra) : null;
    if (ex && ex.length) return unconditional ? [ex] : alternatives.map(function (a) { return both(a, ex); });
    if (unconditional) return [];
    return alternatives;
  }
  function valueOf(key, call, defaults) {
    if (Object.prototype.hasOwnProperty.call(call, key)) return [true, call[key]];
    if (Object.prototype.hasOwnProperty.call(DEFAULT_FACTS, key)) return [true, DEFAULT_FACTS[key]];
    if (FACTS.indexOf(key) >= 0 || defaults === null || key.slice(-LEN.length) === LEN || argFact(key) !== null) return [false, null];
    var d = Object.prototype.hasOwnProperty.call(defaults, key) ? defaults[key] : UNKNOWN_DEFAULT;
    if (d === NO_DEFAULT || d === UNKNOWN_DEFAULT) return [false, null];
    return [true, d];
  }
  function evaluateCall(alternatives, call, defaults) {
    if (!alternatives.length) return [true, []];
    if (call === null) return [null, []];
    var result = false;
    for (var i = 0; i < alternatives.length; i++) {
      var holds = true;
      for (var j = 0; j < alternatives[i].length; j++) {
        var kv = valueOf(alternatives[i][j][0], call, defaults);
        var found = kv[0] ? valueHolds(kv[1], alternatives[i][j][1]) : null;
        if (found === null) holds = null;
        else if (!found) { holds = false; break; }
      }
      if (holds === true) return [true, []];
      if (holds === null) result = null;
    }
    return [result, []];
  }
  function show(v) {
    v = typed(v);
    if (v.t === "none") return "None";
    if (v.t === "bool") return v.v ? "True" : "False";
    if (v.t === "str") return "'" + v.v + "'";
    if (v.t === "float" && Number.isInteger(v.v)) return v.v.toFixed(1);
    return String(v.v);
  }
  /* kb/calls.py text(): "mode is 'bilinear' or 'bicubic' and antialias is False". */
  function conditionText(alternatives) {
    if (!alternatives.length) return null;
    return alternatives.map(function (alt) {
      return alt.map(function (p) {
        var key = p[0], values = p[1];
        if (key === "compiled") return values.map(function (v) { return v === null ? "eager" : "compiled with " + v; }).join(" or ");
        if (key !== "input.dtype" && values.length && values.every(function (v) { return typeof v === "string" && KINDS.indexOf(v) >= 0; })) return key + " is " + ("aeiou".indexOf(values[0][0]) >= 0 ? "an " : "a ") + values.join(" or ") + " tensor";
        if (key.slice(-LEN.length) === LEN) return "len(" + key.slice(0, -LEN.length) + ") is " + values.map(show).join(" or ");
        if (key.slice(-NUMEL.length) === NUMEL && values.length && values.every(function (v) { return bounds(v) !== null || (typeof v === "number" && Number.isInteger(v)) || (v && v.t === "int"); })) return key + " is " + values.map(rangeText).join(" or ");
        if (values.length === 1 && values[0] === null) return key + " is not given";
        if (values.length === 1 && values[0] === GIVEN) return key + " is given";
        return key + " is " + values.map(show).join(" or ");
      }).join(" and ");
    }).join("; or ");
  }

  function resolve(data, op, framework) {
    var record = own(data.sources, op);
    if (record && (!framework || framework === record.framework)) {
      /* a record id that is also an op name answers for the op (kb/query/names.py resolve) */
      var named = own(data.names[record.framework] || {}, op);
      return named && named.indexOf(op) >= 0 ? named : [op];
    }
    var table = data.names[framework] || {};
    return Object.prototype.hasOwnProperty.call(table, op) ? table[op] : null;
  }

  /* One op, like kb.status(op, version, framework=..., device=..., distribution=..., call=...). */
  function opStatus(data, op, version, framework, device, distribution, call) {
    var ids = resolve(data, op, framework);
    var rec = own(data.sources, op);
    var fw = rec && (!framework || framework === rec.framework) ? rec.framework : framework;
    var keras = fw === "tensorflow" && !distribution ? kerasBasis(data, op, releaseKey(version)) : null;
    if (ids === null && !keras) return null;  /* no record: kb.status() consults the API inventory */
    var params = call ? parameters(data, op, fw) : null;
    if (call) params = checkCall(op, call, params);
    if (keras && call && keras.ids.length) keras.params = parameters(data, keras.op, "keras");
    var a = answer(data, ids || [], version, device || "gpu", distribution || null, op, call || null, params, keras);
    delete a.needs;
    a.framework = fw;
    if (!a.sources.length && !a.excluded.length && !distribution) {
      /* nothing covers the op on this release and device (kb/query/evaluate.py _no_record) */
      var n = noRecord(data, fw, op, releaseKey(version), device || "gpu", call || null, a.depends_on_call);
      a.deterministic = n.deterministic; a.basis = n.basis; a.seen = n.seen; a.guarantee = n.guarantee; a.read = n.read;
      a.depends_on_call = n.depends;
      a.recipe = n.recipe === null ? null : [];
    } else if (a.deterministic === null && !distribution && a.sources.length && a.sources.every(function (x) {
      return x.deterministic === null && x.condition && x.applies === null; })) {
      /* only records about some calls, none with a range here: the other calls from the kernel class or a
       * sweep (kb/query/evaluate.py _unknown_for_some_calls) */
      var m = noRecord(data, fw, op, releaseKey(version), device || "gpu", call || null, true);
      if (m.deterministic === true && (m.basis === "static" || m.basis === "verified")) {
        a.deterministic = true; a.basis = m.basis; a.seen = m.seen; a.guarantee = m.guarantee; a.read = m.read;
        a.depends_on_call = true;
      }
    }
    a.headline = headline(a, version, !!call);
    return a;
  }

  /* kb/query/tfkeras.py basis(): where TensorFlow's tf.keras is Keras 3 (a release whose wheel requires
   * keras 3, data/versions/tensorflow.yaml), the keras.* name, its records and the Keras release's key
   * (null: the release's requirement was not read). */
  function kerasBasis(data, op, key) {
    var PREFIX = "tf.keras.";
    if (op.slice(0, PREFIX.length) !== PREFIX) return null;
    var reg = own(data.registries, "tensorflow"), rows = (reg && reg.keras) || [];
    var first = null, row = null, i;
    for (i = 0; i < rows.length; i++) if (rows[i].keras3) { first = rows[i].key; break; }
    if (key.length >= 3) {
      for (i = 0; i < rows.length; i++) if (compare(rows[i].key.slice(0, key.length), key) === 0) row = rows[i];
    }
    var name = "keras." + op.slice(PREFIX.length);
    var ids = resolve(data, name, "keras") || [];
    if (row !== null && row.keras3) return { op: name, key: row.keras ? releaseKey(row.keras) : null, ids: ids, params: null };
    if (row === null && first !== null && compare(key, first) > 0) return { op: name, key: null, ids: ids, params: null };
    return null;
  }

  /* A whole stack: every source of the framework (kb/site/model.py stack()). */
  function stackStatus(data, framework, version, device, distribution) {
    var ids = Object.keys(data.sources).filter(function (id) { return data.sources[id].framework === framework; }).sort();
    var a = answer(data, ids, version, device || "gpu", distribution || null, framework + " stack", null, null);
    var unsolved = [], unknown = [], affected = [];
    a.sources.forEach(function (s) {
      if (s.deterministic === null) unknown.push(s.id);
      else if (s.deterministic === false) { affected.push(s.id); if (!s.solutions.length) unsolved.push(s.id); }
    });
    return { recipe: a.needs.length ? smallestCover(data, a.needs) : [], unsolved: unsolved, unknown: unknown, affected: affected, sources: a.sources };
  }

  /* ---- Unknown names: the same suggestions as kb.status()'s UnknownOpError (kb/query/names.py),
   * with Python's difflib.get_close_matches ported exactly (same scores, same tie order). ---- */

  /* "N<TAB>suffix" lines (N characters shared with the previous name) -> the names. */
  function decodeNames(text) {
    var out = [], prev = "";
    text.split("\n").forEach(function (line) {
      if (!line) return;
      var tab = line.indexOf("\t");
      var name = prev.slice(0, parseInt(line.slice(0, tab), 10)) + line.slice(tab + 1);
      out.push(name); prev = name;
    });
    return out;
  }

  function Matcher(b) {  /* difflib.SequenceMatcher with seq2 = b, no isjunk, autojunk on */
    this.b = b; this.b2j = {};
    for (var i = 0; i < b.length; i++) { var ch = b[i]; (this.b2j[ch] = this.b2j[ch] || []).push(i); }
    if (b.length >= 200) {
      var ntest = Math.floor(b.length / 100) + 1, self = this;
      Object.keys(this.b2j).forEach(function (ch) { if (self.b2j[ch].length > ntest) delete self.b2j[ch]; });
    }
    this.fullbcount = null;
  }
  Matcher.prototype.longest = function (a, alo, ahi, blo, bhi) {
    var b = this.b, b2j = this.b2j, besti = alo, bestj = blo, bestsize = 0, j2len = {};
    for (var i = alo; i < ahi; i++) {
      var newj2len = {}, js = Object.prototype.hasOwnProperty.call(b2j, a[i]) ? b2j[a[i]] : [];
      for (var x = 0; x < js.length; x++) {
        var j = js[x];
        if (j < blo) continue;
        if (j >= bhi) break;
        var k = newj2len[j] = (j2len[j - 1] || 0) + 1;
        if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
      }
      j2len = newj2len;
    }
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) { besti--; bestj--; bestsize++; }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
    return [besti, bestj, bestsize];
  };
  Matcher.prototype.ratio = function (a) {
    var queue = [[0, a.length, 0, this.b.length]], matches = 0;
    while (queue.length) {
      var q = queue.pop(), m = this.longest(a, q[0], q[1], q[2], q[3]), i = m[0], j = m[1], k = m[2];
      if (k) {
        matches += k;
        if (q[0] < i && q[2] < j) queue.push([q[0], i, q[2], j]);
        if (i + k < q[1] && j + k < q[3]) queue.push([i + k, q[1], j + k, q[3]]);
      }
    }
    return ratioOf(matches, a.length + this.b.length);
  };
  Matcher.prototype.quickRatio = function (a) {
    if (this.fullbcount === null) {
      this.fullbcount = {};
      for (var i = 0; i < this.b.length; i++) this.fullbcount[this.b[i]] = (this.fullbcount[this.b[i]] || 0) + 1;
    }
    var avail = {}, matches = 0;
    for (var x = 0; x < a.length; x++) {
      var ch = a[x], n = Object.prototype.hasOwnProperty.call(avail, ch) ? avail[ch] : (this.fullbcount[ch] || 0);
      avail[ch] = n - 1;
      if (n > 0) matches++;
    }
    return ratioOf(matches, a.length + this.b.length);
  };
  function ratioOf(matches, length) { return length ? 2.0 * matches / length : 1.0; }

  function closeMatches(word, possibilities, n, cutoff) {
    var m = new Matcher(word), result = [];
    possibilities.forEach(function (x) {
      var la = x.length, lb = word.length;
      if (ratioOf(Math.min(la, lb), la + lb) < cutoff || m.quickRatio(x) < cutoff) return;
      var r = m.ratio(x);
      if (r >= cutoff) result.push([r, x]);
    });
    result.sort(function (p, q) { return p[0] !== q[0] ? q[0] - p[0] : (p[1] < q[1] ? 1 : p[1] > q[1] ? -1 : 0); });
    return result.slice(0, n).map(function (p) { return p[1]; });
  }

  function endsWith(s, tail) { return s.length >= tail.length && s.slice(s.length - tail.length) === tail; }

  /* kb/query/names.py suggest(op, framework): close names from records, the op tables and the inventory. */
  function suggest(data, op, framework, inventory) {
    var seen = {}, pool = [];
    function add(n) { if (!Object.prototype.hasOwnProperty.call(seen, n)) { seen[n] = true; pool.push(n); } }
    Object.keys(data.sources).forEach(add);
    var frameworks = framework ? [framework] : Object.keys(data.names);
    frameworks.forEach(function (fw) {
      Object.keys(data.names[fw] || {}).forEach(add);
      ((inventory && inventory[fw]) || []).forEach(add);
    });
    var dot = op.lastIndexOf("."), head = (dot >= 0 ? op.slice(0, dot) : op) + ".";
    var near = pool.filter(function (n) { return n.slice(0, head.length) === head; });
    if (!near.length) near = pool;
    var found = closeMatches(op, near, 5, 0.6);
    if (found.length < 3) {  /* in kb/query/names.py `near is not pool` always holds: near is a list, pool a set */
      var tail = dot >= 0 ? op.slice(dot + 1) : op;
      closeMatches(op, pool, 5, 0.75).forEach(function (n) { if (found.indexOf(n) < 0) found.push(n); });
      pool.filter(function (n) { return endsWith(n, "." + tail) && found.indexOf(n) < 0; }).sort().slice(0, 3)
        .forEach(function (n) { found.push(n); });
    }
    return found.slice(0, 5);
  }

  var sets = typeof WeakMap === "function" ? new WeakMap() : null;
  function nameSet(names) {  /* membership in a list of 200,000 names, built once per list */
    var found = sets && sets.get(names);
    if (!found) {
      found = Object.create(null);
      names.forEach(function (n) { found[n] = true; });
      if (sets) sets.set(names, found);
    }
    return found;
  }

  function inferFramework(data, op) {
    var fws = Object.keys(data.prefixes);
    for (var i = 0; i < fws.length; i++) {
      if (data.prefixes[fws[i]].some(function (p) { return op.slice(0, p.length) === p; })) return fws[i];
    }
    return null;
  }

  /* The whole of kb.status(op, ...) for the page: {status} or {unknown: {op, framework, suggestions, reason}}.
   * `inventory`: framework -> its public names (api/v1/names/<fw>.txt), for the frameworks loaded. */
  function lookup(data, inventory, op, version, framework, device, distribution, call) {
    releaseKey(version);  /* a bad version raises first, as kb.status() does */
    if (typeof op !== "string" || !op || op.length > MAX_NAME || !/^[\x20-\x7e]+$/.test(op)) {
      throw new Error("op " + echo(op) + " must be 1 to " + MAX_NAME + " printable ASCII characters, e.g. 'tf.nn.bias_add'");
    }
    var record = own(data.sources, op);
    if (!(record && (!framework || framework === record.framework))) {
      var fw = framework || inferFramework(data, op);
      if (fw === null) {
        return { unknown: { op: op, framework: null, suggestions: suggest(data, op, null, inventory),
                            reason: "cannot tell the framework of " + op } };
      }
      var ids = own(own(data.names, fw), op);
      var names = (inventory && inventory[fw]) || [];
      if (!(ids && ids.length) && !nameSet(names)[op]) {
        if (!own(data.names, fw) && !names.length) return { unknown: { op: op, framework: fw, suggestions: [], reason: "the KB has no records or list of public names for " + fw + " yet" } };
        return { unknown: { op: op, framework: fw, suggestions: suggest(data, op, fw, inventory), reason: null } };
      }
      framework = fw;
    }
    var st = opStatus(data, op, version, framework, device, distribution, call);
    if (st === null) {  /* a public name with no record: what a sweep, the code or the framework says, if anything */
      var key = releaseKey(version);
      var n = noRecord(data, framework, op, key, device || "gpu", call || null, false);
      st = { deterministic: n.deterministic, solutions: [], recipe: n.recipe, sources: [], excluded: [], depends_on_call: n.depends,
             basis: n.basis, seen: n.seen, guarantee: n.guarantee, read: n.read, framework: framework };
      st.headline = headline(st, version, !!call);
    }
    return { status: st };
  }

  var api = { releaseKey: releaseKey, opStatus: opStatus, stackStatus: stackStatus, smallestCover: smallestCover,
              decodeNames: decodeNames, suggest: suggest, closeMatches: closeMatches, lookup: lookup,
              parseCall: parseCall, parameters: parameters };
  if (typeof module !== "undefined" && module.exports) module.exports = api; else root.KBStack = api;
})(this);
