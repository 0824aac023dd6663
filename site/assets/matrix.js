/* Status matrices: details on click, tap and keyboard focus (not hover only), arrow-key moves.
 * A cell is a link to its range's explanation; its details (a tooltip span in the page) open
 * on focus from the keyboard and on the first click or tap; a second click follows the link.
 * One cell per table is in the tab order (roving tabindex); arrow keys, Home and End move. */
(function () {
  "use strict";
  var pointer = false, open = null;

  function close() { if (open) { open.classList.remove("kb-open"); open = null; } }
  function show(a) { if (open !== a) { close(); open = a; a.classList.add("kb-open"); } }

  function cells(table) { return Array.prototype.slice.call(table.querySelectorAll("td.kb-cell > a.kb-c")); }

  function setup(table) {
    var links = cells(table);
    if (!links.length) return;
    links.forEach(function (a, i) { a.tabIndex = i === 0 ? 0 : -1; });
    table.addEventListener("pointerdown", function () { pointer = true; setTimeout(function () { pointer = false; }, 600); });
    table.addEventListener("focusin", function (e) {
      var a = e.target.closest("a.kb-c");
      if (!a) return;
      links.forEach(function (l) { l.tabIndex = l === a ? 0 : -1; });
      if (!pointer) show(a);
    });
    table.addEventListener("click", function (e) {
      var a = e.target.closest("a.kb-c");
      if (!a || a.classList.contains("kb-open")) return;  /* already showing: follow the link */
      e.preventDefault(); show(a);
    });
    table.addEventListener("keydown", function (e) {
      var a = e.target.closest("a.kb-c");
      if (!a) return;
      if (e.key === "Escape") { close(); return; }
      var td = a.parentNode, tr = td.parentNode, col = Array.prototype.indexOf.call(tr.children, td);
      var target = null;
      if (e.key === "ArrowRight") target = td.nextElementSibling;
      else if (e.key === "ArrowLeft") target = td.previousElementSibling;
      else if (e.key === "ArrowDown" && tr.nextElementSibling) target = tr.nextElementSibling.children[col];
      else if (e.key === "ArrowUp" && tr.previousElementSibling) target = tr.previousElementSibling.children[col];
      else if (e.key === "Home") target = tr.querySelector("td.kb-cell");
      else if (e.key === "End") target = tr.lastElementChild;
      else return;
      var next = target && target.querySelector && target.querySelector("a.kb-c");
      e.preventDefault();
      if (next) next.focus();
    });
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("table[data-kb-matrix]"), setup);
    document.addEventListener("click", function (e) { if (open && !e.target.closest("td.kb-cell")) close(); });
    document.addEventListener("keydown", function (e) { if (e.key === "Escape") close(); });
    /* Copy buttons for the recipe blocks (plain <pre>, outside Markdown's code blocks). */
    Array.prototype.forEach.call(document.querySelectorAll("pre.kb-copy"), function (pre) {
      if (pre.querySelector("button")) return;
      var b = document.createElement("button"); b.type = "button"; b.className = "kb-copy-button"; b.textContent = "Copy";
      b.addEventListener("click", function () {
        var text = pre.querySelector("code").textContent;
        if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { b.textContent = "Copied"; }, function () { b.textContent = "Select and copy"; });
      });
      pre.insertBefore(b, pre.firstChild);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
