/* The "Check my stack" form: reads api/v1/all.json, answers with KBStack (stack-core.js).
 * Every piece of data is inserted with textContent: record text is data, never markup. */
(function () {
  "use strict";
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }
  function link(href, text) { var a = el("a", text); a.href = href; return a; }

  function start() {
    var form = document.getElementById("kb-stack");
    if (!form) return;
    var out = document.getElementById("kb-result");
    fetch("api/v1/all.json").then(function (r) { return r.json(); }).then(function (data) { setup(data, out); })
      .catch(function (e) { out.textContent = "Could not load api/v1/all.json (" + e + "); serve the site over HTTP."; });
  }

  function setup(data, out) {
    var fw = document.getElementById("kb-framework"), ver = document.getElementById("kb-version");
    var dev = document.getElementById("kb-device"), dist = document.getElementById("kb-distribution");
    var op = document.getElementById("kb-op");
    data.frameworks.forEach(function (name) { var o = el("option", name); o.value = name; fw.appendChild(o); });
    function fill() {
      var reg = data.registries[(dist.value ? dist.value + "-" : "") + fw.value];
      var list = document.getElementById("kb-versions"); list.textContent = "";
      if (reg) reg.releases.slice().reverse().forEach(function (r) { var o = el("option"); o.value = r.version; list.appendChild(o); });
      var ops = document.getElementById("kb-ops"); ops.textContent = "";
      Object.keys(data.names[fw.value] || {}).forEach(function (n) { var o = el("option"); o.value = n; ops.appendChild(o); });
    }
    fw.addEventListener("change", fill); dist.addEventListener("change", fill); fill();
    function go() { render(data, out, fw.value, ver.value.trim(), dev.value, dist.value || null, op.value.trim()); }
    document.getElementById("kb-go").addEventListener("click", go);
    [ver, op].forEach(function (input) { input.addEventListener("keydown", function (e) { if (e.key === "Enter") go(); }); });
  }

  function recipeList(data, codes) {
    var ol = el("ol", null, "kb-recipe");
    codes.forEach(function (code) {
      var s = data.solutions[code], li = el("li");
      li.appendChild(link("solutions.html#" + code.toLowerCase(), code));
      li.appendChild(document.createTextNode(": " + s.title + ". " + s.how));
      if (s.snippet) { var pre = el("pre"); pre.appendChild(el("code", s.snippet)); li.appendChild(pre); }
      ol.appendChild(li);
    });
    return ol;
  }

  function sourceList(data, ids, title) {
    var box = el("div"); box.appendChild(el("h3", title));
    var ul = el("ul");
    ids.forEach(function (id) {
      var li = el("li"); li.appendChild(link("sources/" + id + ".html", data.sources[id].title));
      li.appendChild(document.createTextNode(" (" + id + ")")); ul.appendChild(li);
    });
    box.appendChild(ul); return box;
  }

  function render(data, out, framework, version, device, distribution, op) {
    out.textContent = "";
    var where = (distribution ? distribution + " " : framework + " ") + version + " (" + device + ")";
    try { KBStack.releaseKey(version); } catch (e) { out.appendChild(el("p", e.message, "kb-error")); return; }
    var reg = data.registries[(distribution ? distribution + "-" : "") + framework];
    var key = KBStack.releaseKey(version);
    function isPrefix(k) { return key.length <= k.length && key.every(function (v, i) { return k[i] === v; }); }
    if (reg && !reg.releases.some(function (r) { return isPrefix(KBStack.releaseKey(r.version)); })) {
      out.appendChild(el("p", "Note: " + version + " is not a known release (latest known: " + reg.latest + ").", "kb-note"));
    }
    if (op) {
      var s = KBStack.opStatus(data, op, version, framework, device, distribution);
      if (s === null) { out.appendChild(el("p", op + ": no source record in the KB for " + framework + " (if it is a real op, no known source makes it non-deterministic).", "kb-verdict")); return; }
      var verdict = s.deterministic === true ? "deterministic" : s.deterministic === false ? "NOT deterministic" : "unknown";
      out.appendChild(el("p", op + " on " + where + ": " + verdict, "kb-verdict"));
      if (s.recipe && s.recipe.length) { out.appendChild(el("h3", "Recipe")); out.appendChild(recipeList(data, s.recipe)); }
      else if (s.deterministic === false) out.appendChild(el("p", "No recipe: at least one source has no solution in this version."));
      else if (s.deterministic === null) out.appendChild(el("p", "No recipe: the KB does not know every source's status in this version."));
      var applying = s.sources.filter(function (x) { return x.deterministic !== true; }).map(function (x) { return x.id; });
      if (applying.length) out.appendChild(sourceList(data, applying, "Sources that apply"));
      return;
    }
    var st = KBStack.stackStatus(data, framework, version, device, distribution);
    out.appendChild(el("p", where + ": " + st.affected.length + " known source(s) apply", "kb-verdict"));
    out.appendChild(el("h3", "Recipe"));
    if (st.recipe.length) out.appendChild(recipeList(data, st.recipe));
    else out.appendChild(el("p", "Nothing to set: no source with a solution applies."));
    var fixed = st.affected.filter(function (id) { return st.unsolved.indexOf(id) < 0; });
    if (fixed.length) out.appendChild(sourceList(data, fixed, "Fixed by the recipe"));
    if (st.unsolved.length) out.appendChild(sourceList(data, st.unsolved, "No solution in this version (avoid these ops)"));
    if (st.unknown.length) out.appendChild(sourceList(data, st.unknown, "Status unknown in this version"));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
