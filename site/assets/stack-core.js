/* "Check my stack": the rules of kb.status() (kb/query.py, kb/versions.py) in plain JS.
 * Pure functions over api/v1/all.json; no DOM, so node runs them in the tests
 * (tests/test_site_stack_js.py compares them with kb.status() on many cases). */
(function (root) {
  "use strict";
  var PEP440 = /^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?(?:-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?\d*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$/i;

  /* "2.1.0rc1" -> [0, 2, 1]: epoch, release, trailing zeros stripped (docs/versions.md). */
  function releaseKey(version) {
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

  /* Fewest codes such that every need holds one of them or one they imply (kb/query.py). */
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

  /* kb.status(ids..., version, device, distribution) over a list of source ids. */
  function answer(data, ids, version, device, distribution) {
    var key = releaseKey(version);
    var perSource = [], needs = [], anyFalse = false, anyUnknown = false, anyUnsolved = false;
    ids.map(function (id) { return data.sources[id]; }).filter(function (s) { return applies(s, device); }).forEach(function (s) {
      var r = evaluate(s, key, distribution);
      if (r === null) {
        anyUnknown = true;
        perSource.push({ id: s.id, title: s.title, versions: null, deterministic: null, solutions: [], raises: null, note: null });
        return;
      }
      perSource.push({ id: s.id, title: s.title, versions: r.versions, deterministic: r.deterministic, solutions: r.solutions.slice(), raises: r.raises, note: r.note });
      if (!r.deterministic) {
        anyFalse = true;
        if (r.solutions.length) needs.push(r.solutions); else anyUnsolved = true;
      }
    });
    var union = {};
    needs.forEach(function (n) { n.forEach(function (c) { union[c] = true; }); });
    return {
      deterministic: anyFalse ? false : (anyUnknown ? null : true),
      solutions: byOrder(data, Object.keys(union)),
      recipe: (anyUnsolved || anyUnknown) ? null : smallestCover(data, needs),
      sources: perSource,
      needs: needs
    };
  }

  function resolve(data, op, framework) {
    var record = data.sources[op];
    if (record && (!framework || framework === record.framework)) return [op];
    var table = data.names[framework] || {};
    return Object.prototype.hasOwnProperty.call(table, op) ? table[op] : null;
  }

  /* One op, like kb.status(op, version, framework=..., device=..., distribution=...). */
  function opStatus(data, op, version, framework, device, distribution) {
    var ids = resolve(data, op, framework);
    if (ids === null) return null;  /* no record: kb.status() consults the API inventory */
    var a = answer(data, ids, version, device || "gpu", distribution || null);
    delete a.needs;
    return a;
  }

  /* A whole stack: every source of the framework (kb/site/model.py stack()). */
  function stackStatus(data, framework, version, device, distribution) {
    var ids = Object.keys(data.sources).filter(function (id) { return data.sources[id].framework === framework; }).sort();
    var a = answer(data, ids, version, device || "gpu", distribution || null);
    var unsolved = [], unknown = [], affected = [];
    a.sources.forEach(function (s) {
      if (s.deterministic === null) unknown.push(s.id);
      else if (s.deterministic === false) { affected.push(s.id); if (!s.solutions.length) unsolved.push(s.id); }
    });
    return { recipe: a.needs.length ? smallestCover(data, a.needs) : [], unsolved: unsolved, unknown: unknown, affected: affected, sources: a.sources };
  }

  /* ---- Unknown names: the same suggestions as kb.status()'s UnknownOpError (kb/query.py _suggest),
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

  /* kb/query.py _suggest(op, framework): close names from records, the op tables and the inventory. */
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
    if (found.length < 3) {  /* in kb/query.py `near is not pool` always holds: near is a list, pool a set */
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
  function lookup(data, inventory, op, version, framework, device, distribution) {
    releaseKey(version);  /* a bad version raises first, as kb.status() does */
    var record = data.sources[op];
    if (!(record && (!framework || framework === record.framework))) {
      var fw = framework || inferFramework(data, op);
      if (fw === null) {
        return { unknown: { op: op, framework: null, suggestions: suggest(data, op, null, inventory),
                            reason: "cannot tell the framework of " + op } };
      }
      var ids = (data.names[fw] || {})[op];
      var names = (inventory && inventory[fw]) || [];
      if (!(ids && ids.length) && !nameSet(names)[op]) {
        if (!data.names[fw] && !names.length) return { unknown: { op: op, framework: fw, suggestions: [], reason: "the KB has no records or list of public names for " + fw + " yet" } };
        return { unknown: { op: op, framework: fw, suggestions: suggest(data, op, fw, inventory), reason: null } };
      }
      framework = fw;
    }
    var st = opStatus(data, op, version, framework, device, distribution);
    if (st === null) st = { deterministic: true, solutions: [], recipe: [], sources: [] };  /* a public name, no record */
    return { status: st };
  }

  var api = { releaseKey: releaseKey, opStatus: opStatus, stackStatus: stackStatus, smallestCover: smallestCover,
              decodeNames: decodeNames, suggest: suggest, closeMatches: closeMatches, lookup: lookup };
  if (typeof module !== "undefined" && module.exports) module.exports = api; else root.KBStack = api;
})(this);
