/* The lookup form (home page and "Check my stack"): reads api/v1/all.json, answers with KBStack
 * (stack-core.js) by kb.status()'s rules, and keeps every answer at a permalink
 * (stack.html?fw=pytorch&v=2.11&op=torch.Tensor.index_add_).
 * Every piece of data is inserted with textContent: record text is data, never markup. */
(function () {
  "use strict";
  var inventories = {};  /* framework -> public names, fetched on the first unknown name */

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }
  function link(href, text, cls) { var a = el("a", text, cls); a.href = href; return a; }
  function add(parent, children) { children.forEach(function (c) { parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c); }); return parent; }
  function name(data, fw) { return (data.display_names && data.display_names[fw]) || fw; }

  function start() {
    var form = document.getElementById("kb-stack");
    if (!form) return;
    var out = document.getElementById("kb-result");
    load("api/v1/all.json", "api/v1/all.js", function () { return window.KB_ALL; })
      .then(function (data) { setup(data, form, out); })
      .catch(function (e) { out.textContent = "Could not load the site's data (api/v1/all.json: " + e + ")."; });
  }

  /* A script tag loads from file:// where fetch() cannot: a page opened from disk reads the
   * .js twin of each data file (window.KB_ALL, window.KB_NAMES); over HTTP it fetches the JSON,
   * and falls back to the script if the fetch fails. */
  function script(src, value) {
    return new Promise(function (resolve, reject) {
      var tag = document.createElement("script");
      tag.src = src;
      tag.onload = function () { var v = value(); if (v === undefined) reject(new Error(src + " set nothing")); else resolve(v); };
      tag.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(tag);
    });
  }
  function load(url, js, value, text) {
    if (window.location.protocol === "file:") return script(js, value);
    return fetch(url).then(function (r) { if (!r.ok) throw new Error(r.status); return text ? r.text() : r.json(); })
      .catch(function () { return script(js, value); });
  }

  function inventory(data, fw) {
    if (inventories[fw] || !(data.inventories || {})[fw]) return Promise.resolve(inventories[fw] || []);
    var url = data.inventories[fw];
    return load(url, url.replace(/\.txt$/, ".js"), function () { return (window.KB_NAMES || {})[fw]; }, true)
      .then(function (text) { inventories[fw] = KBStack.decodeNames(text); return inventories[fw]; });
  }

  function setup(data, form, out) {
    var fw = document.getElementById("kb-framework"), ver = document.getElementById("kb-version");
    var dev = document.getElementById("kb-device"), dist = document.getElementById("kb-distribution");
    var op = document.getElementById("kb-op"), callBox = document.getElementById("kb-call");
    function latest() { var reg = data.registries[(dist.value ? dist.value + "-" : "") + fw.value]; return reg ? reg.latest : ""; }
    function fill() {
      var reg = data.registries[(dist.value ? dist.value + "-" : "") + fw.value];
      var list = document.getElementById("kb-versions"); list.textContent = "";
      if (reg) reg.releases.slice().reverse().forEach(function (r) { var o = el("option"); o.value = r.version; list.appendChild(o); });
      ver.placeholder = "e.g. " + latest();
      var ops = document.getElementById("kb-ops"); ops.textContent = "";
      Object.keys(data.names[fw.value] || {}).sort().forEach(function (n) { var o = el("option"); o.value = n; ops.appendChild(o); });
    }
    var params = new URLSearchParams(window.location.search);
    // A value from the address is used only when the form offers it: "?fw=__proto__" fell back to
    // TensorFlow without a word, and "?device=x" answered for an empty "()" device.
    var refused = [];
    function pick(select, value, what) {
      if (!value) return;
      var offered = Array.prototype.some.call(select.options, function (o) { return o.value === value; });
      if (offered && (select !== fw || data.frameworks.indexOf(value) >= 0)) select.value = value;
      else refused.push(what + " \u201c" + value.slice(0, 80) + "\u201d is not one the form offers");
    }
    pick(fw, params.get("fw"), "the framework");
    pick(dev, params.get("device"), "the device");
    pick(dist, params.get("dist"), "the distribution");
    fw.addEventListener("change", function () { fill(); ver.value = ""; });
    dist.addEventListener("change", fill);
    fill();
    if (params.get("v")) ver.value = params.get("v");
    if (params.get("op")) op.value = params.get("op");
    if (params.get("call") && callBox) callBox.value = params.get("call");
    function go() {
      var version = ver.value.trim() || latest();
      ver.value = version;
      answer(data, out, { fw: fw.value, v: version, op: op.value.trim(), device: dev.value, dist: dist.value || "",
                          call: callBox ? callBox.value.trim() : "" });
    }
    form.addEventListener("submit", function (e) { e.preventDefault(); go(); });
    out.addEventListener("click", function (e) {
      var t = e.target.closest ? e.target.closest("[data-kb-op]") : null;
      if (t) { e.preventDefault(); op.value = t.getAttribute("data-kb-op"); go(); }
    });
    if (refused.length) {
      out.textContent = "";
      out.appendChild(el("p", "Not answered: " + refused.join("; ") + ". Choose one above and ask again.", "kb-note kb-refused"));
    } else if (params.get("v") || params.get("op")) go();
  }

  function permalink(q) {
    var p = new URLSearchParams();
    p.set("fw", q.fw); p.set("v", q.v);
    if (q.op) p.set("op", q.op);
    if (q.op && q.call) p.set("call", q.call);
    if (q.device && q.device !== "gpu") p.set("device", q.device);
    if (q.dist) p.set("dist", q.dist);
    return "stack.html?" + p.toString();
  }

  function answer(data, out, q) {
    out.textContent = "";
    var href = permalink(q);
    if (/(^|\/)stack\.html$/.test(window.location.pathname) && window.history && window.history.replaceState) {
      window.history.replaceState(null, "", href);
    }
    try { KBStack.releaseKey(q.v); } catch (e) { out.appendChild(el("p", e.message, "kb-error")); return; }
    var reg = data.registries[(q.dist ? q.dist + "-" : "") + q.fw];
    var key = KBStack.releaseKey(q.v);
    function isPrefix(k) { return key.length <= k.length && key.every(function (v, i) { return k[i] === v; }); }
    if (reg && !reg.releases.some(function (r) { return isPrefix(KBStack.releaseKey(r.version)); })) {
      out.appendChild(el("p", "Note: " + q.v + " is not a known " + (q.dist || name(data, q.fw)) + " release (latest known: " + reg.latest + ").", "kb-note"));
    }
    var where = (q.dist ? "NGC " : "") + name(data, q.fw) + " " + q.v + (q.device === "gpu" ? "" : " (" + q.device + ")");
    if (q.op) {
      out.appendChild(el("p", "Looking up " + q.op + "…", "kb-note"));
      inventory(data, q.fw).catch(function () { return []; }).then(function (names) {
        var inv = {}; inv[q.fw] = names;
        var found;
        out.textContent = "";
        try { found = KBStack.lookup(data, inv, q.op, q.v, q.fw, q.device, q.dist || null, KBStack.parseCall(q.call)); }
        catch (e) { out.appendChild(el("p", e.message, "kb-error")); out.appendChild(permalinkLine(href)); return; }
        if (found.unknown) unknownOp(data, out, q, found.unknown); else opAnswer(data, out, q, where, found.status);
        out.appendChild(permalinkLine(href));
      });
      return;
    }
    stackAnswer(data, out, q, where);
    out.appendChild(permalinkLine(href));
  }

  function permalinkLine(href) {
    var p = el("p", null, "kb-permalink");
    return add(p, ["Permalink to this answer: ", link(href, href.replace("stack.html", "stack.html"))]);
  }

  function verdict(cls, text) { return el("p", text, "kb-verdict kb-verdict-" + cls); }

  function unknownOp(data, out, q, u) {
    var p = verdict("unknown", u.reason ? (u.reason + ".") : (q.op + " is not a " + name(data, q.fw) + " name the knowledge base knows."));
    out.appendChild(p);
    if (u.suggestions.length) {
      var box = add(el("p"), ["Did you mean: "]);
      u.suggestions.forEach(function (s, i) {
        var a = link(permalink({ fw: q.fw, v: q.v, op: s, device: q.device, dist: q.dist }), s, "kb-suggestion");
        a.setAttribute("data-kb-op", s);
        box.appendChild(a);
        if (i < u.suggestions.length - 1) box.appendChild(document.createTextNode(", "));
      });
      box.appendChild(document.createTextNode("?"));
      out.appendChild(box);
    } else {
      out.appendChild(el("p", "No close name found: use the full public name, e.g. tf.nn.bias_add or torch.Tensor.index_add_."));
    }
  }

  function sentence(data, s) {
    if (s.deterministic === null) return "not verified: no source covers this version";
    if (s.deterministic) return "deterministic by default";
    if (s.solutions.length) return "not deterministic by default — fixed by " + s.solutions.join(" or ");
    return "not deterministic by default — no switch fixes it";
  }

  /* How the answer is known (kb.status's `basis`), under its first line (the headline). */
  var BASIS = {
    verified: "Verified: a run of this call on this release and device.",
    "static": "Read in the code of this release (its wheel or its tag), not run.",
    documented: "Documented: the sources below, or the framework's own guarantee.",
    unverified: "Not verified: no record, no run and no code read covers it here."
  };

  function opAnswer(data, out, q, where, s) {
    var cls = s.deterministic === true ? "ok" : s.deterministic === null ? "unknown" : (s.recipe && s.recipe.length ? "fix" : "ns");
    var text = q.op + " on " + where + ": " + s.headline + ".";
    if (s.deterministic === false && s.recipe && s.recipe.length) text += " Fixed by " + s.recipe.join(" + ") + ".";
    else if (s.deterministic === false) text += " No switch fixes it in this version.";
    out.appendChild(verdict(cls, text));
    if (s.basis) out.appendChild(el("p", BASIS[s.basis], "kb-note"));
    if (s.read && s.read.length) {
      out.appendChild(el("h3", "Code read"));
      var read = el("ul");
      s.read.slice(0, 8).forEach(function (r) {
        var where = r.repo + " " + (r.tag || (r.commit || "").slice(0, 10)) + " " + r.path + (r.lines && r.lines.length ? ":" + r.lines.join(",") : "");
        read.appendChild(add(el("li"), [r.url ? link(r.url, where) : where, ": " + r.what]));
      });
      out.appendChild(read);
    }
    if (s.depends_on_call) out.appendChild(el("p", "The answer depends on how " + q.op + " is called: give the call's parameters (Call box) to narrow it; each source below says when it applies.", "kb-note"));
    if (s.excluded && s.excluded.length) out.appendChild(el("p", "Left out for this call (their conditions do not hold): " + s.excluded.map(function (id) { return data.sources[id].title; }).join("; ") + ".", "kb-note"));
    if (s.recipe && s.recipe.length) { out.appendChild(el("h3", "What to set")); out.appendChild(recipeList(data, s.recipe)); }
    else if (s.deterministic === null && s.recipe === null) out.appendChild(el("p", "No recipe: the knowledge base does not know every source's status in this version."));
    var rows = s.sources.filter(function (x) { return x.deterministic !== true; });
    if (rows.length) {
      out.appendChild(el("h3", "Sources"));
      var ul = el("ul");
      rows.forEach(function (x) {
        var li = add(el("li"), [link("sources/" + x.id + ".html", x.title), ": " + sentence(data, x) + (x.versions ? " (range " + x.versions + ")" : "") + "."]);
        if (x.raises) li.appendChild(document.createTextNode(" Raises " + x.raises + " when determinism is requested."));
        if (x.condition) li.appendChild(add(el("span", null, "kb-condition"), [" Applies when " + x.condition + (x.applies === null ? " (the call leaves this open)." : ".")]));
        ul.appendChild(li);
      });
      out.appendChild(ul);
    }
  }

  function recipeList(data, codes, brief) {
    var ol = el("ol", null, "kb-recipe");
    codes.forEach(function (code) {
      var s = data.solutions[code], li = el("li");
      li.appendChild(link("solutions.html#" + code.toLowerCase(), code));
      li.appendChild(document.createTextNode(": " + s.title + (brief ? "" : ". " + s.how)));
      if (s.snippet && !brief) { var pre = el("pre"); pre.appendChild(el("code", s.snippet)); li.appendChild(pre); }
      ol.appendChild(li);
    });
    return ol;
  }

  function sourceList(data, ids, title) {
    var box = el("div"); box.appendChild(el("h3", title));
    var ul = el("ul");
    ids.forEach(function (id) { ul.appendChild(add(el("li"), [link("sources/" + id + ".html", data.sources[id].title)])); });
    box.appendChild(ul); return box;
  }

  /* The copy-paste block of kb/site/recipes.py for this version (GPU, stock builds). */
  function block(data, fw, version) {
    var key = KBStack.releaseKey(version);
    return ((data.recipes || {})[fw] || []).filter(function (b) {
      return b.series_keys.some(function (k) { return k.every(function (v, i) { return key[i] === v; }); });
    })[0] || null;
  }

  function stackAnswer(data, out, q, where) {
    var st = KBStack.stackStatus(data, q.fw, q.v, q.device, q.dist || null);
    var fixed = st.affected.filter(function (id) { return st.unsolved.indexOf(id) < 0; });
    var text = where + ": " + st.affected.length + " known source(s) of run-to-run differences apply";
    text += st.recipe.length ? "; " + fixed.length + " fixed by " + st.recipe.join(" + ") : "";
    text += st.unsolved.length ? "; " + st.unsolved.length + " with no switch" : "";
    text += st.unknown.length ? "; " + st.unknown.length + " unknown" : "";
    out.appendChild(verdict(st.unsolved.length ? "ns" : st.recipe.length ? "fix" : st.unknown.length ? "unknown" : "ok", text + "."));
    var b = (q.device === "gpu" && !q.dist) ? block(data, q.fw, q.v) : null;
    if (b && (b.code || b.shell)) {
      out.appendChild(el("h3", "What to set, in this order"));
      out.appendChild(recipeList(data, st.recipe, true));
      out.appendChild(el("h3", "The recipe for " + name(data, q.fw) + " " + b.label + ", to copy"));
      [b.code, b.shell].forEach(function (text) { if (text) { var pre = el("pre", null, "kb-copy"); pre.appendChild(el("code", text)); out.appendChild(pre); } });
      var ul = el("ul", null, "kb-changes");
      if (b.raises.length) {
        ul.appendChild(el("li", "These calls will raise under this recipe (no deterministic implementation): " +
          b.raises.map(function (r) { return r.title + " (" + r.exception + ")"; }).join("; ") + "." +
          (b.warn_only ? " " + b.warn_only.title + " (" + b.warn_only.code + ") makes that a warning: the run goes on and those ops stay non-deterministic." : "")));
      }
      b.missing.forEach(function (m) { ul.appendChild(el("li", "Also " + m.code + " (" + m.title + "): " + m.how)); });
      if (b.costs.length) ul.appendChild(el("li", "Measured cost: " + b.costs.join("; ") + "."));
      out.appendChild(ul);
    } else {
      out.appendChild(el("h3", "What to set"));
      if (st.recipe.length) out.appendChild(recipeList(data, st.recipe));
      else out.appendChild(el("p", "Nothing to set: no source with a solution applies."));
    }
    if (fixed.length) out.appendChild(sourceList(data, fixed, "Not deterministic by default — fixed by the recipe"));
    if (st.unsolved.length) out.appendChild(sourceList(data, st.unsolved, "Not deterministic — no switch fixes it in this version (avoid these ops)"));
    if (st.unknown.length) out.appendChild(sourceList(data, st.unknown, "Unknown: no source covers this version"));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
