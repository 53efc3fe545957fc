// vaultsync graph view: draws the data embedded in #graph-data with sigma.js (WebGL).
// Everything the page shows comes from that data; text goes in with textContent only.
(function () {
  "use strict";

  var START = performance.now();
  var DATA = JSON.parse(document.getElementById("graph-data").textContent);
  var FA2 = graphologyLibrary.layoutForceAtlas2;
  var N = DATA.nodes.length;
  var E = DATA.edges.length;
  var $ = function (id) { return document.getElementById(id); };

  var kindShown = DATA.kinds.map(function (k) { return k[2]; });
  var relShown = DATA.rels.map(function () { return true; });
  var nodeOn = new Uint8Array(N);
  var edgeOn = new Uint8Array(E);
  var focus = null;       // index of the note whose local graph is shown
  var local = null;       // Uint8Array: the notes of that local graph
  var selectedEdge = null;
  var shown = { nodes: 0, edges: 0 };
  var timings = {
    start: START, firstPaint: null, layoutMs: null, layoutDone: null, renderMs: null, iterations: 0,
  };

  // ---- the graph ------------------------------------------------------------------------
  // A disc grows with the square root of its degree; a big graph gets smaller discs, so its
  // hubs do not cover their neighbours.
  var SMALLEST = N > 5000 ? 1.5 : 3;
  var LARGEST = N > 5000 ? 12 : 24;
  var graph = new graphology.UndirectedGraph();
  var rand = seeded(17);
  DATA.nodes.forEach(function (n, i) {
    var kind = DATA.kinds[n[1]];
    graph.addNode(String(i), {
      x: rand() * 100,
      y: rand() * 100,
      size: Math.min(SMALLEST + 1.6 * Math.sqrt(n[4]), LARGEST),
      color: kind[1],
      label: n[2],
    });
  });
  DATA.edges.forEach(function (e, i) {
    graph.addEdgeWithKey("e" + i, String(e[0]), String(e[1]), { size: 1, color: "#c8c8c8" });
  });

  function seeded(seed) { // mulberry32: the same start, so the same layout, on every load
    return function () {
      seed = (seed + 0x6d2b79f5) | 0;
      var t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  // ---- what is shown ----------------------------------------------------------------------
  function edgeRelsOn(e) {
    return DATA.edges[e][2].some(function (r) { return relShown[r[0]]; });
  }

  function neighbourhood(start) { // two hops over the edges the filters show
    var seen = new Uint8Array(N);
    var frontier = [start];
    seen[start] = 1;
    for (var hop = 0; hop < 2; hop++) {
      var next = [];
      frontier.forEach(function (i) {
        graph.forEachEdge(String(i), function (edge, attrs, source, target) {
          var e = Number(edge.slice(1));
          var other = Number(source) === i ? Number(target) : Number(source);
          if (!seen[other] && kindShown[DATA.nodes[other][1]] && edgeRelsOn(e)) {
            seen[other] = 1;
            next.push(other);
          }
        });
      });
      frontier = next;
    }
    return seen;
  }

  function recompute() {
    local = focus === null ? null : neighbourhood(focus);
    shown.nodes = 0;
    shown.edges = 0;
    for (var i = 0; i < N; i++) {
      nodeOn[i] = kindShown[DATA.nodes[i][1]] && (local === null || local[i]) ? 1 : 0;
      if (i === focus) nodeOn[i] = 1;
      shown.nodes += nodeOn[i];
    }
    for (var e = 0; e < E; e++) {
      var edge = DATA.edges[e];
      edgeOn[e] = nodeOn[edge[0]] && nodeOn[edge[1]] && edgeRelsOn(e) ? 1 : 0;
      shown.edges += edgeOn[e];
    }
    if (selectedEdge !== null && !edgeOn[selectedEdge]) selectEdge(null);
    var count = $("count");
    count.dataset.nodes = shown.nodes;
    count.dataset.edges = shown.edges;
    count.textContent = shown.nodes + " of " + N + " notes · " + shown.edges + " of " + E +
      " connections shown";
    if (renderer) renderer.refresh();
  }

  // ---- drawing ----------------------------------------------------------------------------
  var renderer = null;
  recompute();
  renderer = new Sigma(graph, $("graph"), {
    enableEdgeEvents: true,
    labelRenderedSizeThreshold: 8,
    hideEdgesOnMove: N > 5000, // panning a big graph stays smooth without its edges
    defaultEdgeColor: "#c8c8c8",
    zIndex: true,
    nodeReducer: function (node, attrs) {
      var i = Number(node);
      if (!nodeOn[i]) return Object.assign({}, attrs, { hidden: true });
      var out = Object.assign({}, attrs);
      if (i === focus) { out.highlighted = true; out.forceLabel = true; out.zIndex = 2; }
      if (selectedEdge !== null) {
        var ends = DATA.edges[selectedEdge];
        if (i === ends[0] || i === ends[1]) { out.highlighted = true; out.forceLabel = true; }
      }
      return out;
    },
    edgeReducer: function (edge, attrs) {
      var e = Number(edge.slice(1));
      if (!edgeOn[e]) return Object.assign({}, attrs, { hidden: true });
      if (e === selectedEdge) return Object.assign({}, attrs, { color: "#d62728", size: 3, zIndex: 2 });
      return attrs;
    },
  });
  // sigma draws once in its constructor; the frame after it is the first paint.
  requestAnimationFrame(function () {
    setTimeout(function () {
      timings.firstPaint = performance.now();
      layout();
    }, 0);
  });

  // ForceAtlas2 in slices on the main thread (the page answers between them), on a copy of
  // the graph that nothing draws: one frame of a big graph costs more in software WebGL than
  // several iterations, so the drawn graph takes the positions every ~2 s of layout (every
  // slice for a small graph) and at the end.  Deterministic from the seeded start; big graphs
  // take Barnes-Hut (inferSettings) and fewer iterations.
  function layout() {
    var work = graph.copy();
    var settings = FA2.inferSettings(work);
    var total = N > 5000 ? 60 : N > 1000 ? 150 : 300;
    var slice = N > 5000 ? 2 : N > 1000 ? 5 : 25;
    var every = N > 1000 ? 2000 : 0;
    var spent = 0;
    var shownAt = 0;
    function publish() {
      graph.updateEachNodeAttributes(function (node, attrs) {
        var moved = work.getNodeAttributes(node);
        attrs.x = moved.x;
        attrs.y = moved.y;
        return attrs;
      }, { attributes: ["x", "y"] });
    }
    function step() {
      var t0 = performance.now();
      FA2.assign(work, { iterations: slice, settings: settings });
      spent += performance.now() - t0;
      timings.iterations += slice;
      if (timings.iterations < total) {
        if (spent - shownAt >= every) { shownAt = spent; publish(); }
        setTimeout(step, 0);
        return;
      }
      timings.layoutMs = spent;
      publish();
      var r0 = performance.now();
      renderer.refresh();
      timings.renderMs = performance.now() - r0;
      requestAnimationFrame(function () {
        setTimeout(function () {
          timings.layoutDone = performance.now();
          document.body.dataset.layout = "done";
        }, 0);
      });
    }
    step();
  }

  // ---- the panel ----------------------------------------------------------------------------
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  function swatch(color) {
    var s = el("span", "", "swatch");
    s.style.background = color;
    return s;
  }

  function filters() {
    var counts = DATA.kinds.map(function () { return 0; });
    DATA.nodes.forEach(function (n) { counts[n[1]]++; });
    DATA.kinds.forEach(function (k, i) {
      if (!counts[i]) return;
      $("kinds").appendChild(checkbox("kind-" + k[0], k[0] + " (" + counts[i] + ")", kindShown[i],
        swatch(k[1]), function (on) { kindShown[i] = on; recompute(); }));
    });
    DATA.rels.forEach(function (rel, i) {
      $("rels").appendChild(checkbox("rel-" + rel, rel, true, null,
        function (on) { relShown[i] = on; recompute(); }));
    });
  }

  function checkbox(id, text, on, before, change) {
    var label = el("label");
    var box = el("input");
    box.type = "checkbox";
    box.id = id;
    box.checked = on;
    box.addEventListener("change", function () { change(box.checked); });
    label.appendChild(box);
    if (before) label.appendChild(before);
    label.appendChild(document.createTextNode(text));
    return label;
  }

  function obsidianUrl(path) {
    if (!DATA.vault || !path) return "";
    return "obsidian://open?vault=" + encodeURIComponent(DATA.vault) +
      "&file=" + encodeURIComponent(path.replace(/\.md$/, ""));
  }

  function relationsOf(e) { // [{rel, origin, from, to}] of one edge
    var edge = DATA.edges[e];
    return edge[2].map(function (r) {
      var forward = r[2] === 1;
      return {
        rel: DATA.rels[r[0]],
        origin: DATA.origins[r[1]],
        from: forward ? edge[0] : edge[1],
        to: forward ? edge[1] : edge[0],
      };
    });
  }

  function relationNames(e) {
    var names = [];
    relationsOf(e).forEach(function (r) { if (names.indexOf(r.rel) < 0) names.push(r.rel); });
    return names.join(" · ");
  }

  function showNode(i) {
    var info = $("info");
    info.replaceChildren();
    var n = DATA.nodes[i];
    var head = el("h2", n[2]);
    head.prepend(swatch(DATA.kinds[n[1]][1]));
    info.appendChild(head);
    info.appendChild(el("p", DATA.kinds[n[1]][0] + " · " + n[0] + " · " + n[4] + " linked notes", "meta"));
    var url = obsidianUrl(n[3]);
    if (url) {
      var open = el("a", "Open in Obsidian");
      open.id = "open-obsidian";
      open.href = url;
      info.appendChild(open);
    }
    var list = el("ul", undefined, "links");
    graph.forEachEdge(String(i), function (edge, attrs, source, target) {
      var e = Number(edge.slice(1));
      if (!edgeOn[e]) return;
      var other = Number(source) === i ? Number(target) : Number(source);
      var item = el("li");
      var pick = el("button", DATA.nodes[other][2], "linkish");
      pick.addEventListener("click", function () { selectEdge(e); });
      item.appendChild(pick);
      item.appendChild(el("span", " " + relationNames(e), "meta"));
      list.appendChild(item);
    });
    info.appendChild(list);
  }

  function showEdge(e) {
    var info = $("info");
    info.replaceChildren();
    var edge = DATA.edges[e];
    info.appendChild(el("h2", DATA.nodes[edge[0]][2] + " — " + DATA.nodes[edge[1]][2]));
    var names = el("p", relationNames(e), "relations");
    names.id = "edge-relations";
    info.appendChild(names);
    var list = el("ul", undefined, "links");
    list.id = "edge-details";
    relationsOf(e).forEach(function (r) {
      list.appendChild(el("li", r.rel + ": " + DATA.nodes[r.from][2] + " → " + DATA.nodes[r.to][2] +
        " (" + r.origin + ")"));
    });
    info.appendChild(list);
  }

  function selectEdge(e) {
    selectedEdge = e;
    if (e === null) {
      if (focus !== null) showNode(focus); else $("info").replaceChildren(el("p", HELP, "meta"));
    } else {
      showEdge(e);
    }
    if (renderer) renderer.refresh();
  }

  function focusOn(i) {
    focus = i;
    selectedEdge = null;
    recompute();
    $("whole").hidden = false;
    showNode(i);
    var pos = renderer.getNodeDisplayData(String(i));
    if (pos) renderer.getCamera().animate({ x: pos.x, y: pos.y, ratio: 0.5 }, { duration: 300 });
  }

  function wholeGraph() {
    focus = null;
    selectedEdge = null;
    recompute();
    $("whole").hidden = true;
    $("info").replaceChildren(el("p", HELP, "meta"));
    renderer.getCamera().animatedReset({ duration: 300 });
  }

  var HELP = "Click a note for its local graph (two hops), a link for its relations.";

  // ---- search -------------------------------------------------------------------------------
  function search() {
    var words = $("search").value.trim().toLowerCase();
    var results = $("results");
    results.replaceChildren();
    if (!words) return;
    // The exact title first, then titles starting with the words, then the rest; the most
    // linked first within each.
    var hits = [];
    for (var i = 0; i < N; i++) {
      var title = DATA.nodes[i][2].toLowerCase();
      var at = title.indexOf(words);
      if (at < 0 || !kindShown[DATA.nodes[i][1]]) continue;
      hits.push([title === words ? 0 : at === 0 ? 1 : 2, -DATA.nodes[i][4], i]);
    }
    hits.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]; });
    hits = hits.slice(0, 12).map(function (h) { return h[2]; });
    hits.forEach(function (i) {
      var item = el("li");
      var pick = el("button", DATA.nodes[i][2], "linkish");
      pick.addEventListener("click", function () { focusOn(i); });
      item.appendChild(swatch(DATA.kinds[DATA.nodes[i][1]][1]));
      item.appendChild(pick);
      results.appendChild(item);
    });
    if (!hits.length) results.appendChild(el("li", "no shown note matches", "meta"));
  }

  $("search").addEventListener("input", search);
  $("search").addEventListener("keydown", function (event) {
    var first = $("results").querySelector("button");
    if (event.key === "Enter" && first) first.click();
  });
  $("whole").addEventListener("click", wholeGraph);
  renderer.on("clickNode", function (event) { focusOn(Number(event.node)); });
  renderer.on("clickEdge", function (event) { selectEdge(Number(event.edge.slice(1))); });
  renderer.on("enterEdge", function () { $("graph").style.cursor = "pointer"; });
  renderer.on("leaveEdge", function () { $("graph").style.cursor = ""; });
  renderer.on("clickStage", function () { selectEdge(null); });

  filters();
  $("info").replaceChildren(el("p", HELP, "meta"));
  if (!DATA.vault) $("vault").textContent = "no vault yet: run vaultsync sync for Obsidian links";
  else $("vault").textContent = "vault: " + DATA.vault;

  // For tests and benchmarks: what is shown, and when the page painted and laid out.
  window.graphview = {
    graph: graph,
    renderer: renderer,
    timings: timings,
    shown: function () { return { nodes: shown.nodes, edges: shown.edges }; },
    edgeOf: function (a, b) { // the edge key between two node ids, or null
      var ia = -1, ib = -1;
      DATA.nodes.forEach(function (n, i) { if (n[0] === a) ia = i; if (n[0] === b) ib = i; });
      return ia < 0 || ib < 0 ? null : graph.edge(String(ia), String(ib)) || null;
    },
    nodeIndex: function (id) {
      for (var i = 0; i < N; i++) if (DATA.nodes[i][0] === id) return i;
      return -1;
    },
    focusOn: focusOn,
  };
})();
