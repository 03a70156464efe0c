/* sitegen report site: charts, the case table's filters/sorting/pages, the per-case history strip.
 * A classic script (works from file://), loaded in <head>; it never builds HTML from strings, so no page
 * data can become markup. Without it every page still shows all its content and links. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function norm(text) {
    return String(text).normalize("NFKC").toLowerCase();
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  var NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 3 }); // one formatter: creating one per call is slow

  function fmt(n) {
    return NUMBER.format(Number(n));
  }

  /* ---- charts ------------------------------------------------------------------------------------ */

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  /* A tick label's width at 12 px, estimated as site/pages/chartsvg.py estimates it (wide CJK characters, others). */
  function labelWidth(text) {
    var widest = 0;
    String(text).split("<br>").forEach(function (line) {
      var width = 0;
      for (var i = 0; i < line.length; i++) width += line.charCodeAt(i) >= 0x2e80 ? 12.5 : 7.2;
      widest = Math.max(widest, width);
    });
    return widest;
  }

  /* The runs' axis names every run it can; on a narrow chart only every n-th (the latest always), so that no name
   * overlaps the next, is turned on its side or is hidden past the chart's edge (plotly hides what overflows). */
  function fittedTicks(axis, width) {
    if (!axis || !axis.tickvals || !axis.ticktext || axis.tickvals.length < 2 || !width) return axis;
    var widest = 0;
    axis.ticktext.forEach(function (text) { widest = Math.max(widest, labelWidth(text)); });
    var room = (width - 66) / axis.tickvals.length;
    var step = Math.max(1, Math.ceil((widest + 8) / room));
    if (step === 1) return axis;
    var last = axis.tickvals.length - 1;
    var keep = function (_, i) { return (last - i) % step === 0; };
    return Object.assign({}, axis, { tickvals: axis.tickvals.filter(keep), ticktext: axis.ticktext.filter(keep) });
  }

  function themed(layout, width) {
    var text = cssVar("--text");
    var grid = cssVar("--border");
    var axis = function (a) {
      var out = Object.assign({}, a || {});
      out.gridcolor = grid;
      out.linecolor = grid;
      out.zerolinecolor = grid;
      out.automargin = true;
      return out;
    };
    return Object.assign({}, layout, {
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      font: { family: cssVar("--font"), color: text, size: 12 },
      margin: Object.assign({ l: 52, r: 14, t: 10, b: 44 }, layout.margin || {}),
      xaxis: axis(fittedTicks(layout.xaxis, width)),
      yaxis: axis(layout.yaxis),
      hoverlabel: { font: { family: cssVar("--font") } }
    });
  }

  /* plotly.js (about 1.1 MB) is loaded only when a chart nears the viewport, after the page has loaded and
   * painted: the headline, banner and case table work before it arrives, and a reader who never scrolls
   * to the charts never loads it. It comes as a classic <script> (works from file://, script-src 'self'). */
  var charts = [];
  var plotlyState = ""; // "" not asked for, "loading", "ready", "failed"
  var drawQueue = [];
  var drawing = false; // a drawNext is scheduled

  function chartFailed(node) {
    var note = el("p", "chart-failed muted", "The interactive chart could not be drawn (plotly.js did not load): the picture above stays, and its data is in the table below.");
    node.parentNode.insertBefore(note, node.nextSibling);
  }

  function drawChart(node) {
    var source = document.getElementById(node.getAttribute("data-chart"));
    if (!source) return;
    var figure = JSON.parse(source.textContent);
    charts.push({ node: node, layout: figure.layout });
    node.textContent = ""; // the static picture (site/pages/chartsvg.py) gives way to plotly's chart
    window.Plotly.newPlot(node, figure.data, themed(figure.layout, node.clientWidth), {
      displayModeBar: false,
      responsive: true,
      displaylogo: false
    });
  }

  // One chart per task, so that drawing several charts never holds the page for long at a time.
  function drawNext() {
    var node = drawQueue.shift();
    if (node) drawChart(node);
    drawing = drawQueue.length > 0;
    if (drawing) window.setTimeout(drawNext, 0);
  }

  function flushQueue() {
    if (plotlyState === "failed") {
      drawQueue.forEach(chartFailed);
      drawQueue = [];
    } else if (plotlyState === "ready" && drawQueue.length && !drawing) {
      drawing = true;
      window.setTimeout(drawNext, 0);
    }
  }

  function loadPlotly() {
    plotlyState = "loading";
    var script = document.createElement("script");
    script.src = document.body.getAttribute("data-plotly");
    script.onload = function () {
      plotlyState = typeof window.Plotly === "undefined" ? "failed" : "ready";
      flushQueue();
    };
    script.onerror = function () {
      plotlyState = "failed";
      flushQueue();
    };
    document.head.appendChild(script);
  }

  function queueChart(node) {
    drawQueue.push(node);
    if (!plotlyState) loadPlotly();
    flushQueue();
  }

  function initCharts() {
    var nodes = document.querySelectorAll("[data-chart]");
    if (!nodes.length || !document.body.getAttribute("data-plotly")) return;
    if (!window.IntersectionObserver) {
      for (var i = 0; i < nodes.length; i++) queueChart(nodes[i]);
    } else {
      var observer = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          observer.unobserve(entry.target);
          queueChart(entry.target);
        });
      }, { rootMargin: "200px 0px" });
      for (var j = 0; j < nodes.length; j++) observer.observe(nodes[j]);
    }
    var retheme = function () {
      charts.forEach(function (c) { window.Plotly.relayout(c.node, themed(c.layout, c.node.clientWidth)); });
    };
    if (window.matchMedia) {
      var scheme = window.matchMedia("(prefers-color-scheme: dark)");
      if (scheme.addEventListener) scheme.addEventListener("change", retheme);
    }
    var resized = 0;
    window.addEventListener("resize", function () { // a turned phone: the axis names as many runs as now fit
      window.clearTimeout(resized);
      resized = window.setTimeout(retheme, 200);
    });
  }

  /* ---- change against the baseline: a row's data-change, its badge, the Change filter -------------------- */
  /* The Change filter is one more select like Status, kept in the URL hash as change=<kind>. Without a
   * baseline the index has no such select and its rows no data-change: the filter is then always off. */
  var changeFilter = {
    fromHash: function (params) { return params.get("change") || ""; },
    toHash: function (state, params) { if (state.change) params.set("change", state.change); },
    matches: function (state, row) { return !state.change || row.change === state.change; },
    // the badge of a compact row (index_page.case_table_data's "changes"), after the status badge in its cell
    appendBadge: function (td, tr, data, kind) {
      var spec = kind ? data.changes[kind] : null;
      if (!spec) return;
      tr.setAttribute("data-change", kind);
      var wrap = td.appendChild(el("span", "change-badge"));
      td.insertBefore(document.createTextNode(" "), wrap);
      wrap.appendChild(badge(spec)).title = spec[3];
    },
    words: function (data, kind) {
      var spec = kind ? data.changes[kind] : null;
      return spec ? spec[0] + " " + spec[1] : "";
    }
  };

  /* ---- case table -------------------------------------------------------------------------------- */

  function readHashState() {
    var hash = location.hash.replace(/^#/, "");
    if (hash.indexOf("=") === -1) return null; // a plain #anchor, not filter state
    var params = new URLSearchParams(hash);
    return {
      q: params.get("q") || "",
      status: params.get("status") || "",
      verdict: params.get("verdict") || "",
      tag: params.get("tag") || "",
      code: params.get("code") || "",
      flaky: params.get("flaky") === "1",
      change: changeFilter.fromHash(params),
      sort: params.get("sort") || "",
      dir: params.get("dir") === "desc" ? "desc" : "asc",
      page: Math.max(1, parseInt(params.get("page") || "1", 10) || 1)
    };
  }

  function writeHashState(state) {
    var params = new URLSearchParams();
    if (state.q) params.set("q", state.q);
    if (state.status) params.set("status", state.status);
    if (state.verdict) params.set("verdict", state.verdict);
    if (state.tag) params.set("tag", state.tag);
    if (state.code) params.set("code", state.code);
    if (state.flaky) params.set("flaky", "1");
    changeFilter.toHash(state, params);
    if (state.sort) { params.set("sort", state.sort); params.set("dir", state.dir); }
    if (state.page > 1) params.set("page", String(state.page));
    var query = params.toString();
    var url = location.pathname + location.search + (query ? "#" + query : "");
    try {
      history.replaceState(null, "", url);
    } catch (e) {
      if (query) location.replace("#" + query);
    }
  }

  /* A long case list comes as compact data (see index_page.case_table_data) in an asset of its own: a row's <tr>
   * is built only when shown, so the page holds a hundred rows however many cases there are. */
  var FLAKY = ["↯", "flaky", "flaky"]; // the flaky badge's icon, word and class, on the index's rows and a case page

  function badge(spec) {
    var span = el("span", spec[2]);
    span.appendChild(el("i", "", spec[0])).setAttribute("aria-hidden", "true"); // as site/pages/badges.py writes a badge
    span.appendChild(document.createTextNode(" " + spec[1]));
    return span;
  }

  /* trials: the status order, then the trial pass rate within a status (as index_page._status_sort). */
  function trialSort(order, trials) {
    if (!trials || !trials[1]) return order;
    return Math.round((order + 0.999 * trials[0] / trials[1]) * 10000) / 10000;
  }

  function dataRows(data) {
    /* Failing since: [id, sort key, runs ago, first run, tooltip] of each failing case, when the index has the column
     * (index_page.case_table_data); a Map, so that a case id like "__proto__" is a key like any other. */
    var withSince = Array.isArray(data.since);
    var since = new Map(withSince ? data.since.map(function (s) { return [s[0], s]; }) : []);
    return data.rows.map(function (r, index) {
      var status = data.statuses[r[4]] || ["?", r[4], "status status-other", 3];
      var verdict = data.verdicts[r[5]] || ["•", r[5], "verdict verdict-other"];
      var ratio = r[8] ? r[7] / r[8] : 1;
      var trials = r[14] || null; /* trials: [passed, trials] of a case with several (index_page.case_table_data) */
      var streak = since.get(r[0]) || null;
      var row = {
        tr: null,
        index: index,
        id: r[0],
        status: r[4],
        verdict: r[5],
        tags: r[3],
        codes: r[6],
        flaky: !!r[12],
        change: r[13] || "",
        text: null, // what the search looks in: made on the first search (see textOf)
        words: function () {
          return [r[0], r[12] ? "↯ flaky" : "", r[2], r[3].join(" "), status[0] + " " + status[1],
            verdict[0] + " " + verdict[1], changeFilter.words(data, r[13]), r[6].join(""), r[7] + "/" + r[8], fmt(r[9]),
            r[10], trials ? trials[0] + "/" + trials[1] : "", streak ? streak[2] + " " + streak[3] : ""].join(" ");
        },
        // a case not failing sorts after every streak (index_page.since_cell)
        keys: [r[0], trialSort(status[3], trials), r[5], r[6].join(", "), ratio, r[9], r[11] === null ? -1 : r[11],
          streak ? streak[1] : 1]
      };
      row.build = function () {
        var tr = el("tr");
        tr.setAttribute("data-status", r[4]);
        tr.setAttribute("data-verdict", r[5]);
        if (row.flaky) tr.setAttribute("data-flaky", "1");
        var cell = tr.appendChild(el("td", "case-cell"));
        // r[1]: the case's slug, or the name of its raw trace when it has no page (urls.case_href), or "".
        var link = cell.appendChild(el(r[1] ? "a" : "span", "case-link", r[0]));
        if (r[1]) link.href = "cases/" + (r[1].indexOf(".") < 0 ? r[1] + ".html" : r[1]);
        if (row.flaky) {
          cell.appendChild(document.createTextNode(" "));
          cell.appendChild(badge(FLAKY)).title = r[12]; // why: site/pages/badges.py's flaky_title, as rows in HTML say it
        }
        if (r[2]) cell.appendChild(el("span", "case-title", r[2]));
        if (r[3].length) {
          var tags = cell.appendChild(el("span", "tags"));
          r[3].forEach(function (tag) {
            tags.appendChild(el("a", "tag", tag)).href = "#tag=" + encodeURIComponent(tag);
          });
        }
        var statusCell = tr.appendChild(el("td"));
        statusCell.appendChild(badge(status));
        if (trials) { /* trials */
          statusCell.appendChild(document.createTextNode(" "));
          statusCell.appendChild(el("span", "trial-count", trials[0] + "/" + trials[1])).title = "trials passed";
        }
        changeFilter.appendBadge(statusCell, tr, data, r[13]);
        tr.appendChild(el("td")).appendChild(badge(verdict));
        var codes = tr.appendChild(el("td", "codes"));
        r[6].forEach(function (code) { codes.appendChild(el("code", "", code)); });
        tr.appendChild(el("td", "num", r[7] + "/" + r[8]));
        tr.appendChild(el("td", "num", fmt(r[9])));
        tr.appendChild(el("td", "num", r[10]));
        if (withSince) {
          var sinceCell = tr.appendChild(el("td", "since-col"));
          if (streak) {
            if (streak[4]) sinceCell.title = streak[4]; /* the tooltip: the case page's sentence (since_cell) */
            sinceCell.appendChild(el("span", "since-ago", streak[2]));
            if (streak[3]) {
              sinceCell.appendChild(document.createTextNode(" "));
              sinceCell.appendChild(el("span", "since-run", streak[3]));
            }
          }
        }
        return tr;
      };
      return row;
    });
  }

  function domRows(tbody, numeric) {
    return Array.prototype.map.call(tbody.rows, function (tr, index) {
      var sortKeys = Array.prototype.map.call(tr.cells, function (td, col) {
        var raw = td.hasAttribute("data-sort") ? td.getAttribute("data-sort") : td.textContent.trim();
        return numeric[col] ? parseFloat(raw) : raw;
      });
      var tags = Array.prototype.map.call(tr.querySelectorAll(".tag"), function (a) { return a.textContent; });
      var codes = Array.prototype.map.call(tr.querySelectorAll(".codes code"), function (c) { return c.textContent; });
      return {
        tr: tr,
        index: index,
        id: tr.cells[0].getAttribute("data-sort") || "",
        status: tr.getAttribute("data-status") || "",
        verdict: tr.getAttribute("data-verdict") || "",
        tags: tags,
        codes: codes,
        flaky: tr.hasAttribute("data-flaky"),
        change: tr.getAttribute("data-change") || "",
        text: norm(tr.textContent),
        keys: sortKeys
      };
    });
  }

  function initCaseTable(table) {
    var tbody = table.tBodies[0];
    var pageSize = parseInt(table.getAttribute("data-page-size"), 10) || 100;
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var keys = headers.map(function (th) { return th.getAttribute("data-key"); });
    var numeric = headers.map(function (th) { return th.getAttribute("data-sort-type") === "num"; });
    var collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
    /* A long case list: every case's row is in assets/case-rows-<hash>.js (index_page.CaseRowsFile), which the
     * index names and loads only when the reader first uses a control or opens a filtered link (loadRows).
     * Until then the table is the page's own first rows (staticView): nothing is parsed or built before the
     * first paint. A short list is the page's rows, taken at once. */
    var source = table.getAttribute("data-rows-src") || "";
    var total = parseInt(table.getAttribute("data-total"), 10) || tbody.rows.length;
    var rows = source ? null : domRows(tbody, numeric); // null: a long list whose rows' data has not come yet
    var staticPages = document.getElementById("case-pages");
    var rowsState = "idle"; // a long list's rows' data: idle, loading, loaded or failed
    var rowsNote = ""; // said after the count line when the rows' data could not be loaded
    var pendingSave = false; // whether the update waiting for the rows' data puts its state in the URL
    var spare = document.createDocumentFragment(); // the page's rows past the first page, out of the DOM meanwhile
    var controls = {
      q: document.getElementById("filter-q"),
      status: document.getElementById("filter-status"),
      verdict: document.getElementById("filter-verdict"),
      tag: document.getElementById("filter-tag"),
      code: document.getElementById("filter-code"),
      flaky: document.getElementById("filter-flaky"),
      change: document.getElementById("filter-change") // none without a baseline
    };
    var count = document.getElementById("case-count");
    var pager = document.getElementById("case-pager");
    var prev = document.getElementById("page-prev");
    var next = document.getElementById("page-next");
    var info = document.getElementById("page-info");
    var empty = el("tr", "empty-row");
    empty.appendChild(el("td", "", "No cases match these filters.")).colSpan = headers.length;
    function defaultState() {
      return { q: "", status: "", verdict: "", tag: "", code: "", flaky: false, change: "", sort: "", dir: "asc", page: 1 };
    }
    var state = defaultState();

    headers.forEach(function (th) {
      var key = th.getAttribute("data-key");
      if (!key) return;
      var button = el("button", "sort-button", th.textContent);
      button.type = "button";
      button.addEventListener("click", function () {
        if (state.sort === key) {
          state.dir = state.dir === "asc" ? "desc" : "asc";
        } else {
          state.sort = key;
          state.dir = "asc";
        }
        state.page = 1;
        update(true);
      });
      th.textContent = "";
      th.appendChild(button);
    });

    /* The page's own rows (the first rows of the case list, in its order) stand for the first rows of the data. */
    function adoptStaticRows() {
      var current = Array.prototype.slice.call(tbody.rows).concat(Array.prototype.slice.call(spare.children));
      for (var i = 0; i < current.length && i < rows.length; i++) {
        if (current[i].cells[0].getAttribute("data-sort") !== rows[i].id) return;
        rows[i].tr = current[i];
      }
    }

    function ensureOption(select, value) {
      if (!value) return;
      for (var i = 0; i < select.options.length; i++) if (select.options[i].value === value) return;
      select.appendChild(el("option", "", value)).value = value;
    }

    function toControls() {
      controls.q.value = state.q;
      ensureOption(controls.status, state.status);
      ensureOption(controls.verdict, state.verdict);
      ensureOption(controls.tag, state.tag);
      ensureOption(controls.code, state.code);
      controls.status.value = state.status;
      controls.verdict.value = state.verdict;
      controls.tag.value = state.tag;
      controls.code.value = state.code;
      controls.flaky.checked = state.flaky;
      if (!controls.change) state.change = "";
      else { ensureOption(controls.change, state.change); controls.change.value = state.change; }
    }

    function fromControls() {
      state.q = controls.q.value;
      state.status = controls.status.value;
      state.verdict = controls.verdict.value;
      state.tag = controls.tag.value;
      state.code = controls.code.value;
      state.flaky = controls.flaky.checked;
      state.change = controls.change ? controls.change.value : "";
      state.page = 1;
      update(true);
    }

    function textOf(row) {
      if (row.text === null) row.text = norm(row.words());
      return searchText ? row.text + " " + (searchText.get(row.id) || "") : row.text;
    }

    /* ---- search text: questions and answers, in an asset of their own -------------------------- */
    /* Loaded by a classic <script src> (works from file://, allowed by the CSP's script-src 'self') when
     * the search box is first used, so the index stays small however long the answers are. */
    var searchText = null; // case id -> question and answer, normalised (search.search_text_data)
    var searchLoading = false;
    function loadSearchText() {
      var src = controls.q.getAttribute("data-search-text");
      if (searchLoading || !src) return;
      searchLoading = true;
      var script = document.createElement("script");
      script.src = src;
      script.addEventListener("load", function () {
        var data = window.SITEGEN_SEARCH_TEXT;
        if (!data || !data.cases) return;
        searchText = new Map(data.cases); // a Map: a case id like "__proto__" is a key like any other
        if (state.q) update(false);
      });
      script.addEventListener("error", function () {
        controls.q.title = "Question and answer text could not be loaded: the search covers ids, titles, tags and checks.";
      });
      document.head.appendChild(script);
    }
    /* ---- end search text ---------------------------------------------------------------------------- */

    /* ---- rows' data: every case of a long list, in an asset of its own ------------------------------- */
    /* Loaded as the search text is (a classic <script src>, from file:// too, under script-src 'self'). What the
     * reader did meanwhile is in `state` and the controls; the update it asked for runs when the data comes. */
    function loadRows() {
      if (rowsState !== "idle") return;
      rowsState = "loading";
      var script = document.createElement("script");
      script.src = source;
      script.addEventListener("load", function () {
        var data = window.SITEGEN_CASE_ROWS;
        if (!data || !Array.isArray(data.rows)) { rowsFailed(); return; }
        rows = dataRows(data);
        rowsState = "loaded";
        adoptStaticRows();
        if (staticPages) staticPages.hidden = true; // the script pages through every case itself
        update(pendingSave);
      });
      script.addEventListener("error", rowsFailed);
      document.head.appendChild(script);
    }

    /* Without the rows' data (a site copied without its assets folder), the filters cover the page's own rows. */
    function rowsFailed() {
      rowsState = "failed";
      tbody.appendChild(spare);
      if (staticPages) staticPages.hidden = false;
      rows = domRows(tbody, numeric);
      rowsNote = " The list of every case (" + source + ") could not be loaded: the filters cover this page's " +
        fmt(rows.length) + " cases; the pages below list all " + fmt(total) + ".";
      update(pendingSave);
    }

    /* A long list before its rows' data is needed: the page's first rows, as the script's first page shows them
     * (its pager's Next loads the data), the rows past them out of the DOM (laid out, a phone's CPU spent its first
     * second on them). When the page has no more rows than a script page, its links to the static pages stay. */
    function staticView() {
      var shown = Math.min(tbody.rows.length, pageSize);
      while (tbody.rows.length > shown) spare.appendChild(tbody.rows[shown]);
      var trimmed = spare.children.length > 0;
      if (staticPages) staticPages.hidden = trimmed;
      count.textContent = countText(total, total, 0, shown, false);
      pager.hidden = !trimmed;
      prev.disabled = true;
      next.disabled = false;
      info.textContent = "Page 1 of " + fmt(Math.ceil(total / pageSize));
    }
    /* ---- end rows' data -------------------------------------------------------------------------------- */

    function matching() {
      var words = norm(state.q).split(/\s+/).filter(Boolean);
      return rows.filter(function (row) {
        if (state.status && row.status !== state.status) return false;
        if (state.verdict && row.verdict !== state.verdict) return false;
        if (state.tag && row.tags.indexOf(state.tag) === -1) return false;
        if (state.code && row.codes.indexOf(state.code) === -1) return false;
        if (state.flaky && !row.flaky) return false;
        if (!changeFilter.matches(state, row)) return false;
        for (var i = 0; i < words.length; i++) if (textOf(row).indexOf(words[i]) === -1) return false;
        return true;
      });
    }

    function sorted(list) {
      var col = keys.indexOf(state.sort);
      if (col === -1) return list;
      var sign = state.dir === "desc" ? -1 : 1;
      return list.slice().sort(function (a, b) {
        var x = a.keys[col], y = b.keys[col], c;
        if (numeric[col]) c = (isNaN(x) ? -Infinity : x) - (isNaN(y) ? -Infinity : y);
        else c = collator.compare(x, y);
        return c !== 0 ? sign * c : a.index - b.index;
      });
    }

    function update(save) {
      if (rows === null) { // the rows' data is on its way: this update runs when it comes
        pendingSave = pendingSave || save;
        count.textContent = "Loading all " + fmt(total) + " cases…";
        loadRows();
        return;
      }
      var list = sorted(matching());
      var pages = Math.max(1, Math.ceil(list.length / pageSize));
      state.page = Math.min(state.page, pages);
      var start = (state.page - 1) * pageSize;
      var shown = list.slice(start, start + pageSize);
      if (!showsAlready(shown)) {
        var fragment = document.createDocumentFragment();
        shown.forEach(function (row) {
          if (!row.tr) row.tr = row.build();
          fragment.appendChild(row.tr);
        });
        if (!shown.length) fragment.appendChild(empty);
        tbody.textContent = "";
        tbody.appendChild(fragment);
      }
      headers.forEach(function (th, col) {
        if (keys[col] && keys[col] === state.sort) th.setAttribute("aria-sort", state.dir === "asc" ? "ascending" : "descending");
        else th.removeAttribute("aria-sort");
      });
      var filtered = list.length !== rows.length;
      count.textContent = countText(list.length, rows.length, start, shown.length, filtered) + rowsNote;
      pager.hidden = pages <= 1;
      prev.disabled = state.page <= 1;
      next.disabled = state.page >= pages;
      info.textContent = "Page " + fmt(state.page) + " of " + fmt(pages);
      if (save) writeHashState(state);
      scheduleMarkScrollable();
    }

    /* Whether the table already shows `shown`, in order, with at most rows after them (removed here): so the
     * first update of an unfiltered index keeps the rows the browser has laid out, instead of building them
     * again (a phone's slow CPU spent most of its first second on that, docs/architecture.md "the index"). */
    function showsAlready(shown) {
      var current = tbody.rows;
      if (!shown.length || current.length < shown.length) return false;
      for (var i = 0; i < shown.length; i++) if (shown[i].tr !== current[i]) return false;
      while (tbody.rows.length > shown.length) tbody.deleteRow(-1);
      return true;
    }

    if (rows === null) { // a hand on the controls: the rows' data starts loading before the choice is made
      document.getElementById("case-filters").addEventListener("focusin", loadRows);
      document.getElementById("case-filters").addEventListener("pointerdown", loadRows);
      table.tHead.addEventListener("pointerdown", loadRows);
    }
    controls.q.addEventListener("input", fromControls);
    controls.q.addEventListener("focus", loadSearchText);
    controls.q.addEventListener("input", loadSearchText);
    ["status", "verdict", "tag", "code", "flaky", "change"].forEach(function (name) {
      if (controls[name]) controls[name].addEventListener("change", fromControls);
    });
    document.getElementById("filter-reset").addEventListener("click", function () {
      state = defaultState();
      toControls();
      update(true);
    });
    prev.addEventListener("click", function () { state.page -= 1; update(true); table.scrollIntoView(); });
    next.addEventListener("click", function () { state.page += 1; update(true); table.scrollIntoView(); });
    /* Back and Forward: the table follows the URL, an empty fragment being the unfiltered table. */
    function followHash() {
      var fromHash = readHashState();
      var bare = location.hash.replace(/^#/, "") === "";
      if (!fromHash && !bare) return; // a plain #anchor leaves the filters as they are
      var next = fromHash || defaultState();
      if (JSON.stringify(next) === JSON.stringify(state)) return; // hashchange and popstate both report one step
      state = next;
      toControls();
      update(false);
      if (fromHash && state.q) loadSearchText();
      if (fromHash) document.getElementById("cases").scrollIntoView();
    }
    window.addEventListener("hashchange", followHash);
    window.addEventListener("popstate", followHash);

    var initial = readHashState();
    if (initial) state = initial;
    if (state.q) loadSearchText();
    toControls();
    document.getElementById("case-filters").hidden = false;
    if (rows === null) staticView(); // a long list: its own first rows until a control is used
    if (rows !== null || initial) update(false); // a filtered link loads the rows' data at once
    table.classList.add("is-ready");
  }

  /* "Showing 101–200 of 1,234 cases.", "3 matching cases (22 in all).", "The only matching case (22 in all)." */
  function countText(matched, total, start, shown, filtered) {
    var all = " (" + fmt(total) + " in all).";
    if (!matched) return "No case matches" + all;
    if (shown === matched) {
      if (!filtered) return matched === 1 ? "The only case." : "All " + fmt(matched) + " cases.";
      return (matched === 1 ? "The only matching case" : fmt(matched) + " matching cases") + all;
    }
    return "Showing " + fmt(start + 1) + "–" + fmt(start + shown) + " of " + fmt(matched) +
      (filtered ? " matching cases" + all : " cases.");
  }

  /* ---- tables wider than the screen --------------------------------------------------------------- */
  /* A table that does not fit scrolls inside its .table-wrap: marked so the CSS shows it scrolls (and
   * keeps the first column in view), and made focusable so a keyboard can scroll it too. */
  function markScrollable() {
    var wraps = document.querySelectorAll(".table-wrap");
    var scrolling = [];
    for (var j = 0; j < wraps.length; j++) scrolling.push(wraps[j].scrollWidth > wraps[j].clientWidth + 1);
    // All measured first, then all marked: a mark between two measurements would lay the page out again.
    for (var i = 0; i < wraps.length; i++) {
      var wrap = wraps[i];
      var scrolls = scrolling[i];
      wrap.classList.toggle("is-scrollable", scrolls);
      if (scrolls && !wrap.hasAttribute("tabindex")) {
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        var table = wrap.querySelector("table");
        var heading = wrap.closest("section") && wrap.closest("section").querySelector("h2");
        var name = table && table.caption ? table.caption.textContent : heading ? heading.textContent.replace(/#$/, "") : "Table";
        wrap.setAttribute("aria-label", name + " (scrolls sideways)");
      } else if (!scrolls && wrap.hasAttribute("tabindex")) {
        wrap.removeAttribute("tabindex");
        wrap.removeAttribute("role");
        wrap.removeAttribute("aria-label");
      }
    }
  }

  /* Measured after the next frame is painted, when the layout is done anyway: measuring at once would make
   * the browser lay the page out in the middle of a script, a long task on a phone. */
  var markPending = false;
  function scheduleMarkScrollable() {
    if (markPending) return;
    markPending = true;
    window.requestAnimationFrame(function () {
      window.setTimeout(function () { markPending = false; markScrollable(); }, 0);
    });
  }
  window.addEventListener("resize", scheduleMarkScrollable);
  /* ---- end tables wider than the screen ----------------------------------------------------------- */

  /* ---- per-case history strip -------------------------------------------------------------------- */

  var STRIP_MAX = 60;

  /* A flaky case's badge, after its verdict in the result box (as site/pages/badges.py makes a badge): made here, from
   * the run's history, not written into every page hidden (site/pages/history_page.py's history_data). */
  function showFlaky(id, flaky) {
    var badges = document.querySelector(".case-head .badges");
    for (var k = 0; k < flaky.length && badges; k++) {
      if (flaky[k][0] !== id) continue;
      var shown = badges.insertBefore(badge(FLAKY), badges.querySelector(".tag"));
      shown.setAttribute("data-flaky-badge", "");
      shown.title = flaky[k][1];
      return;
    }
  }

  function initStrip(root) {
    var main = document.querySelector("main[data-case-id]");
    var data = window.SITEGEN_HISTORY;
    if (!main || !data || !data.cases) {
      root.appendChild(el("p", "muted", "No run history was found for this site."));
      return;
    }
    var id = main.getAttribute("data-case-id");
    var strip = "";
    for (var k = 0; k < data.cases.length; k++) {
      if (data.cases[k][0] === id) { strip = data.cases[k][1]; break; }
    }
    var runs = data.runs || [];
    showFlaky(id, data.flaky || []);
    if (!strip) {
      root.appendChild(el("p", "muted", "This case is not in the recorded history yet."));
      return;
    }
    var first = Math.max(0, strip.length - STRIP_MAX);
    var list = el("ol", "strip-cells");
    list.setAttribute("aria-label", "Pass or fail in each recorded run, oldest first");
    for (var i = first; i < strip.length; i++) {
      var run = runs[i] || { label: "", time: "" };
      var mark = strip.charAt(i);
      var word = mark === "P" ? "passed" : mark === "F" ? "failed" : "not in this run";
      var cell = el("li", "strip-cell " + (mark === "P" ? "strip-pass" : mark === "F" ? "strip-fail" : "strip-absent"),
        mark === "P" ? "✓" : mark === "F" ? "✗" : "·");
      if (i === strip.length - 1) cell.className += " strip-current";
      cell.title = "Run " + (i + 1) + " · " + run.label + " · " + run.time + ": " + word;
      cell.setAttribute("aria-label", cell.title);
      list.appendChild(cell);
    }
    var passed = 0, present = 0;
    for (var j = 0; j < strip.length; j++) {
      if (strip.charAt(j) !== "-") present++;
      if (strip.charAt(j) === "P") passed++;
    }
    var text = "Passed in " + fmt(passed) + " of " + fmt(present) + " recorded runs";
    if (first > 0) text += " (the last " + fmt(STRIP_MAX) + " of " + fmt(strip.length) + " runs are shown)";
    text += ". The outlined cell is this build.";
    root.appendChild(list);
    root.appendChild(el("p", "legend", text));
  }

  /* "case 5 of 2,000" on a case page: its place in the suite, from the shared history data. */
  function initPosition(node) {
    var main = document.querySelector("main[data-case-id]");
    var data = window.SITEGEN_HISTORY;
    if (!main || !data || !data.cases) return;
    var id = main.getAttribute("data-case-id");
    for (var k = 0; k < data.cases.length; k++) {
      if (data.cases[k][0] === id) {
        node.textContent = "case " + fmt(k + 1) + " of " + fmt(data.cases.length);
        return;
      }
    }
  }

  /* "Failing since PR #12 · a1b2c3d · 2026-11-30, 3 runs ago." in a failing case's result box, from the shared
   * history data: it changes with every run, the page only when its case does (history_page.history_data). */
  function initSince(node) {
    var main = document.querySelector("main[data-case-id]");
    var data = window.SITEGEN_HISTORY;
    if (!main || !data || !Array.isArray(data.since)) return;
    var id = main.getAttribute("data-case-id");
    for (var k = 0; k < data.since.length; k++) {
      if (data.since[k][0] === id) {
        node.textContent = data.since[k][1];
        node.hidden = false;
        return;
      }
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var table = document.getElementById("case-table");
    if (table) initCaseTable(table);
    var position = document.querySelector("[data-case-position]");
    if (position) initPosition(position);
    var since = document.querySelector("[data-failing-since]");
    if (since) initSince(since);
    var strip = document.querySelector("[data-history-strip]");
    if (strip) initStrip(strip);
    scheduleMarkScrollable();
  });
  /* Until the reader does something, every chart is its static picture: plotly.js (a second of a phone's CPU)
   * is loaded on the first scroll, pointer move, touch or key — as a facade for a heavy widget does — and only
   * then for the charts near the viewport. Nothing the reader asked for waits on it. */
  var intent = ["scroll", "wheel", "pointerdown", "pointermove", "touchstart", "keydown", "focusin"];
  function onIntent() {
    intent.forEach(function (name) { window.removeEventListener(name, onIntent, true); });
    initCharts();
  }
  window.addEventListener("load", function () {
    if (!document.querySelector("[data-chart]")) return;
    intent.forEach(function (name) { window.addEventListener(name, onIntent, { capture: true, passive: true }); });
  });
})();
