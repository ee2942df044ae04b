/* scorebench board page: sort, search, filter, column groups, drill-down, download.
   No framework, no network. Every text from the data goes in through textContent, never
   innerHTML. Without JavaScript the page is the complete static table. */
(function () {
  "use strict";
  var dataNode = document.getElementById("sb-data");
  var data = dataNode ? JSON.parse(dataNode.textContent) : {systems: {}, sections: [], labels: []};
  var NAME_COLS = {system: 1, method: 1, model: 1};
  // Rows beyond a page are display:none: a 1,000 x 50 table laid out in full costs seconds.
  var PAGE = 100;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function cellText(td) { return td.textContent; }
  function fmt(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") return Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(3) : String(Math.round(v * 1e4) / 1e4);
    return String(v);
  }
  function csvField(s) {
    s = String(s);
    // a spreadsheet runs a cell starting with = + - @ as a formula unless it is a number
    if (/^[=+\-@\t\r]/.test(s) && isNaN(Number(s.split(" ")[0]))) s = "'" + s;
    return /[",\n\r]/.test(s) ? "\"" + s.replace(/"/g, "\"\"") + "\"" : s;
  }
  function download(name, mime, text) {
    var a = el("a", {href: "data:" + mime + ";charset=utf-8," + encodeURIComponent(text), download: name});
    a.style.display = "none";
    document.body.appendChild(a);
    a.click();
    document.body.removeChild(a);
  }

  function Board(table) {
    var self = this;
    this.table = table;
    this.tbody = table.tBodies[0];
    this.heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    this.rows = Array.prototype.slice.call(this.tbody.rows);
    this.rows.forEach(function (r, i) { r._sbIndex = i; });
    this.sortCol = -1; this.sortDir = 0;
    this.hiddenGroups = {};
    this.filters = {};
    this.query = "";
    this.limit = PAGE;
    this.nameCol = -1;
    this.heads.forEach(function (th, i) {
      var label = th.textContent.trim();
      if (self.nameCol < 0 && NAME_COLS[label]) self.nameCol = i;
      th.setAttribute("tabindex", "0");
      th.setAttribute("aria-sort", "none");
      th.classList.add("sb-sortable");
      th.addEventListener("click", function () { self.sort(i); });
      th.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); self.sort(i); } });
    });
    this.toolbar();
    this.freeze();
    if (this.nameCol >= 0) {
      this.rows.forEach(function (r) {
        var td = r.cells[self.nameCol];
        if (!td || !Object.prototype.hasOwnProperty.call(data.systems, td.textContent)) return;
        td.classList.add("sb-drill");
        td.setAttribute("tabindex", "0");
        td.setAttribute("title", "show every value of this system");
        td.addEventListener("click", function () { drill(td.textContent); });
        td.addEventListener("keydown", function (ev) { if (ev.key === "Enter") drill(td.textContent); });
      });
    }
  }

  Board.prototype.toolbar = function () {
    var self = this, bar = el("div", {"class": "sb-toolbar", "data-for": this.table.id});
    if (this.nameCol >= 0) {
      var search = el("input", {type: "search", "class": "sb-search", placeholder: "search systems", "aria-label": "search systems"});
      search.addEventListener("input", function () { self.query = search.value.toLowerCase(); self.apply(); });
      bar.appendChild(search);
    }
    this.heads.forEach(function (th, i) {
      var kind = th.getAttribute("data-filter");
      if (kind === "cat") {
        var seen = {}, values = [];
        self.rows.forEach(function (r) { var t = r.cells[i] ? cellText(r.cells[i]) : ""; if (!seen[t]) { seen[t] = 1; values.push(t); } });
        values.sort();
        var sel = el("select", {"class": "sb-filter", "data-col": String(i), "aria-label": "filter " + th.textContent});
        sel.appendChild(el("option", {value: ""}, "all " + th.textContent.trim()));
        values.forEach(function (v) { var o = el("option", null, v); o.value = v; sel.appendChild(o); });
        sel.addEventListener("change", function () {
          if (sel.value === "") delete self.filters[i]; else self.filters[i] = {eq: sel.value};
          self.apply();
        });
        bar.appendChild(sel);
      } else if (kind === "num") {
        var inp = el("input", {type: "number", step: "any", "class": "sb-filter", "data-col": String(i),
          placeholder: th.textContent.trim() + " ≥", "aria-label": th.textContent.trim() + " at least"});
        inp.addEventListener("input", function () {
          var v = parseFloat(inp.value);
          if (isNaN(v)) delete self.filters[i]; else self.filters[i] = {min: v};
          self.apply();
        });
        bar.appendChild(inp);
      }
    });
    var groups = [];
    this.heads.forEach(function (th) { var g = th.getAttribute("data-group"); if (g && groups.indexOf(g) < 0) groups.push(g); });
    if (groups.length) {
      var box = el("span", {"class": "sb-groups"});
      box.appendChild(el("span", null, "columns: "));
      var collapsed = {}, anyCollapsed = false;
      this.heads.forEach(function (th) {
        if (th.getAttribute("data-collapsed") === "1") { collapsed[th.getAttribute("data-group")] = true; anyCollapsed = true; }
      });
      groups.forEach(function (g) {
        var lab = el("label"), cb = el("input", {type: "checkbox", "data-group": g});
        cb.checked = !collapsed[g];
        if (collapsed[g]) self.hiddenGroups[g] = true;
        cb.addEventListener("change", function () { self.hiddenGroups[g] = !cb.checked; self.columns(); });
        lab.appendChild(cb);
        lab.appendChild(document.createTextNode(" " + g));
        box.appendChild(lab);
      });
      bar.appendChild(box);
      if (anyCollapsed) self.columns();
    }
    var csv = el("button", {type: "button", "class": "sb-csv"}, "CSV"), json = el("button", {type: "button", "class": "sb-json"}, "JSON");
    csv.addEventListener("click", function () { download(self.table.id + ".csv", "text/csv", self.csv()); });
    json.addEventListener("click", function () { download(self.table.id + ".json", "application/json", self.json()); });
    bar.appendChild(el("span", null, " download view: "));
    bar.appendChild(csv); bar.appendChild(json);
    this.count = el("span", {"class": "sb-count", "aria-live": "polite"});
    bar.appendChild(this.count);
    this.table.parentNode.insertBefore(bar, this.table);
    this.more = el("button", {type: "button", "class": "sb-more"});
    this.more.addEventListener("click", function () { self.limit = Infinity; self.apply(); });
    this.table.parentNode.insertBefore(this.more, this.table.nextSibling);
    this.apply();
  };

  // A wide table (in a scrolling .sb-wide box) keeps its columns up to the system name in view.
  Board.prototype.freeze = function () {
    var box = this.table.parentNode;
    if (!box || !box.classList || !box.classList.contains("sb-wide") || this.nameCol < 0) return;
    var left = 0, self = this;
    for (var i = 0; i <= this.nameCol; i++) {
      var cells = [this.heads[i]];
      this.rows.forEach(function (r) { if (r.cells[i]) cells.push(r.cells[i]); });
      cells.forEach(function (c) { c.classList.add("sb-frozen"); c.style.left = left + "px"; });
      left += this.heads[i].getBoundingClientRect().width;
    }
  };

  Board.prototype.updateCount = function (n, shown) {
    this.count.textContent = " " + n + " of " + this.rows.length + " rows" + (shown < n ? ", first " + shown + " shown" : "");
    this.more.hidden = shown >= n;
    this.more.textContent = "show all " + n + " rows";
  };

  Board.prototype.key = function (row, i) {
    var td = row.cells[i];
    if (!td) return null;
    var v = td.getAttribute("data-v");
    return v === null || v === "" ? null : parseFloat(v);
  };

  Board.prototype.sort = function (i) {
    var self = this;
    this.sortDir = this.sortCol === i ? -this.sortDir : 1;
    this.sortCol = i;
    var numeric = this.rows.some(function (r) { return r.cells[i] && r.cells[i].hasAttribute("data-v"); });
    var keyed = this.rows.map(function (r) { return {r: r, k: numeric ? self.key(r, i) : (r.cells[i] ? cellText(r.cells[i]) : "")}; });
    var dir = this.sortDir;
    keyed.sort(function (a, b) {
      var x = a.k, y = b.k;
      if (x === null || (typeof x === "number" && isNaN(x))) return (y === null || (typeof y === "number" && isNaN(y))) ? a.r._sbIndex - b.r._sbIndex : 1;
      if (y === null || (typeof y === "number" && isNaN(y))) return -1;
      var c = numeric ? x - y : (x < y ? -1 : x > y ? 1 : 0);
      return c !== 0 ? dir * c : a.r._sbIndex - b.r._sbIndex;
    });
    this.rows = keyed.map(function (o) { return o.r; });
    var frag = document.createDocumentFragment();
    this.rows.forEach(function (r) { frag.appendChild(r); });
    this.tbody.appendChild(frag);
    this.heads.forEach(function (th, j) { th.setAttribute("aria-sort", j === i ? (dir > 0 ? "ascending" : "descending") : "none"); });
    this.apply();
  };

  Board.prototype.visible = function (row) {
    if (this.query && this.nameCol >= 0) {
      var name = row.cells[this.nameCol] ? cellText(row.cells[this.nameCol]).toLowerCase() : "";
      if (name.indexOf(this.query) < 0) return false;
    }
    for (var i in this.filters) {
      if (!Object.prototype.hasOwnProperty.call(this.filters, i)) continue;
      var f = this.filters[i], td = row.cells[i];
      if (!td) return false;
      if (f.eq !== undefined && cellText(td) !== f.eq) return false;
      if (f.min !== undefined) { var k = this.key(row, i); if (k === null || !(k >= f.min)) return false; }
    }
    return true;
  };

  Board.prototype.apply = function () {
    var n = 0, shown = 0, self = this;
    this.rows.forEach(function (r) {
      r._sbMatch = self.visible(r);
      if (r._sbMatch) n++;
      var show = r._sbMatch && shown < self.limit;
      if (show) shown++;
      if (r.hidden === show) r.hidden = !show;
    });
    this.updateCount(n, shown);
  };

  Board.prototype.shown = function (i) {
    var g = this.heads[i].getAttribute("data-group");
    return !(g && this.hiddenGroups[g]);
  };

  Board.prototype.columns = function () {
    var self = this, show = this.heads.map(function (_, i) { return self.shown(i); });
    this.heads.forEach(function (th, i) { th.hidden = !show[i]; });
    this.rows.forEach(function (r) { for (var i = 0; i < r.cells.length; i++) r.cells[i].hidden = !show[i]; });
  };

  Board.prototype.view = function () {
    var self = this, cols = [], out = [];
    this.heads.forEach(function (th, i) { if (self.shown(i)) cols.push(i); });
    this.rows.forEach(function (r) { if (r._sbMatch) out.push(cols.map(function (i) { return r.cells[i] ? cellText(r.cells[i]) : ""; })); });
    return {columns: cols.map(function (i) { return self.heads[i].textContent; }), rows: out};
  };
  Board.prototype.csv = function () {
    var v = this.view(), lines = [v.columns.map(csvField).join(",")];
    v.rows.forEach(function (r) { lines.push(r.map(csvField).join(",")); });
    return lines.join("\n") + "\n";
  };
  Board.prototype.json = function () {
    var v = this.view();
    return JSON.stringify(v.rows.map(function (r) { var o = {}; v.columns.forEach(function (c, j) { o[c] = r[j]; }); return o; }), null, 1);
  };

  function lab(i) { return i === null || i === undefined ? "" : data.labels[i]; }
  var panel = null;
  function drill(name) {
    if (!panel) {
      panel = el("div", {id: "sb-drill", role: "dialog", "aria-modal": "false", "aria-labelledby": "sb-drill-title"});
      document.body.appendChild(panel);
    }
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    var close = el("button", {type: "button", "class": "sb-close", "aria-label": "close"}, "×");
    close.addEventListener("click", function () { panel.hidden = true; });
    panel.appendChild(close);
    panel.appendChild(el("h3", {id: "sb-drill-title"}, name));
    var recs = data.systems[name] || [];
    var t = el("table", {"class": "sb-drill-table"}), head = el("tr");
    ["section", "task", "metric", "value", "interval", "rank"].forEach(function (c) { head.appendChild(el("th", {scope: "col"}, c)); });
    var thead = el("thead"); thead.appendChild(head); t.appendChild(thead);
    var tb = el("tbody");
    recs.forEach(function (r) {
      var tr = el("tr");
      var lo = r[4], hi = r[5], sec = data.sections[r[0]];
      var rank = r[6] === null || r[6] === undefined ? "" : String(r[6]) + (r[7] !== null && r[7] !== undefined ? " (" + r[7] + "–" + r[8] + ")" : "");
      [sec ? sec[1] : "", lab(r[1]), lab(r[2]), fmt(r[3]), lo === null || lo === undefined ? "" : "[" + fmt(lo) + ", " + fmt(hi) + "]", rank]
        .forEach(function (c, j) { tr.appendChild(el("td", j < 3 ? {"class": "name"} : null, c)); });
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    panel.appendChild(el("p", {"class": "note"}, recs.length + " values"));
    panel.appendChild(t);
    panel.hidden = false;
    close.focus();
  }
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape" && panel) panel.hidden = true; });

  var boards = {};
  Array.prototype.forEach.call(document.querySelectorAll("section > table, section > .sb-scroll > table"), function (table) {
    if (table.tHead && table.tBodies.length) boards[table.id] = new Board(table);
  });
  window.scorebenchBoards = boards;
  document.documentElement.classList.remove("sb-js");  // the rows are paged by the script from now on
  document.documentElement.setAttribute("data-sb-ready", "1");
})();
