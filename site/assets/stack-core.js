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

  var api = { releaseKey: releaseKey, opStatus: opStatus, stackStatus: stackStatus, smallestCover: smallestCover };
  if (typeof module !== "undefined" && module.exports) module.exports = api; else root.KBStack = api;
})(this);
