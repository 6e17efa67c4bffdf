// climatesearch console: comfort only. Every page works without this file.
(function () {
  "use strict";

  // Copy buttons: data-copy names the element whose text is copied.
  function copyText(text, button) {
    var done = function () {
      var s = document.createElement("span");
      s.className = "copied";
      s.setAttribute("role", "status");
      s.textContent = "copied";
      button.after(s);
      setTimeout(function () { s.remove(); }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
    } else { fallback(text); done(); }
  }
  function fallback(text) {
    var ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.className = "sr-only";
    document.body.appendChild(ta);
    ta.select();
    try { document.execCommand("copy"); } catch (e) { /* the text stays selectable */ }
    ta.remove();
  }
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest("button.copy");
    if (!b) return;
    var el = document.getElementById(b.getAttribute("data-copy"));
    if (el) copyText(el.textContent, b);
  });

  // Pick two to compare: with two ticked, go to the comparison.
  var pickForm = document.getElementById("pick-form");
  if (pickForm) {
    var status = document.getElementById("pick-status");
    pickForm.addEventListener("change", function () {
      var ticked = pickForm.querySelectorAll("input.pick:checked");
      if (status) status.textContent = ticked.length === 2 ? "Comparing…" : (ticked.length > 2 ? "Tick only two." : "Tick " + (2 - ticked.length) + " more.");
      if (ticked.length === 2) pickForm.requestSubmit();
    });
  }

  // Live preview of the column map: each mapped row follows its select.
  var grid = document.getElementById("mapgrid");
  var sample = document.getElementById("sample");
  if (grid && sample) {
    var headers = Array.prototype.map.call(sample.querySelectorAll("thead th"), function (th) { return th.textContent; });
    var rows = Array.prototype.map.call(sample.querySelectorAll("tbody tr"), function (tr) {
      return Array.prototype.map.call(tr.querySelectorAll("td"), function (td) { return td.textContent; });
    });
    grid.addEventListener("change", function (ev) {
      var sel = ev.target.closest("select.mapsel");
      if (!sel) return;
      var col = headers.indexOf(sel.value);
      var cells = sel.closest("tr").querySelectorAll("td.mapped");
      cells.forEach(function (td, i) {
        td.textContent = col >= 0 && rows[i] ? (rows[i][col] || "") : "";
      });
    });
  }

  // Autocomplete ids from search.
  var inputs = document.querySelectorAll("input.idinput");
  var list = document.getElementById("ids");
  if (inputs.length && list) {
    var timer = null;
    var ask = function (q) {
      fetch("/api/search?limit=8&q=" + encodeURIComponent(q), { headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { results: [] }; })
        .then(function (body) {
          list.replaceChildren();
          (body.results || []).forEach(function (h) {
            var o = document.createElement("option");
            o.value = h.catalog + ":" + h.id;
            o.label = h.name + " (" + (h.unit || "") + ")";
            list.appendChild(o);
          });
        })
        .catch(function () { /* no suggestions */ });
    };
    inputs.forEach(function (inp) {
      inp.addEventListener("input", function () {
        var q = inp.value.trim();
        if (q.length < 2 || /^[a-z0-9]+:[^\s]+$/i.test(q) || /^\d+$/.test(q)) return;
        clearTimeout(timer);
        timer = setTimeout(function () { ask(q); }, 200);
      });
    });
  }
})();
