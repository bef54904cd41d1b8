// topolog html report: draws the embedded topology with cytoscape.js and ties findings to it.
// Every text shown comes from the embedded JSON and is set with textContent, never as markup.
// State for tests: body[data-ready] once laid out, body[data-highlighted] the ids highlighted
// (JSON, sorted), body[data-selected] the finding or element shown in the details panel.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("topolog-data").textContent);
  // Label sizes (Graphviz sized the boxes for them) and the smallest label, in screen px,
  // that the page opens at or frames a finding at (verifier/reports/html_report.py).
  var FONTS = data.fonts || { box: 10, folded: 14, readable_px: 9 };
  var SEVERITIES = ["error", "warning", "note"];
  var KIND_COLOURS = {
    nvlink: "#76b900", nvswitch: "#76b900", xgmi: "#c0392b", c2c: "#8e44ad", d2d: "#8e44ad",
    pcie: "#0969da", upi: "#57606a", infiniband: "#d4a000", ethernet: "#e67e22", soc: "#16a085"
  };
  var NODE_COLOURS = {
    gpu: "#b7e07a", nvswitch: "#d7ecb4", nic: "#f6d58e", pcie_switch: "#a8c8f0", cpu: "#c9ced6",
    memory: "#e6e8eb", switch: "#f2c38b", cache: "#eef0f2", core: "#dfe3e8", fpga: "#f3b6c6"
  };

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  var findingsById = {};
  data.findings.forEach(function (f) { findingsById[f.id] = f; });
  var findingsOf = {};  // element id -> findings naming it
  data.findings.forEach(function (f) {
    // Marked where they are drawn and where the overview shows them (the folded node, the cable's edge).
    var marks = f.targets.concat((f.overview_targets || []).filter(function (t) { return f.targets.indexOf(t) < 0; }));
    marks.forEach(function (t) { (findingsOf[t] = findingsOf[t] || []).push(f); });
  });

  var style = [
    { selector: "node", style: {
      "label": "data(label)", "font-size": FONTS.box, "text-valign": "center", "text-halign": "center",
      "background-color": "#eef0f2",
      "border-width": 1, "border-color": "#8c959f", "shape": "round-rectangle", "width": 44, "height": 17 } },
    // Graphviz's size for each box, so that boxes placed where Graphviz put them never overlap.
    { selector: "node[w]", style: { "width": "data(w)", "height": "data(h)" } },
    { selector: ":parent", style: {
      "text-valign": "top", "text-halign": "center", "font-size": 11, "font-weight": "bold",
      "background-color": "#ffffff", "background-opacity": 0.7, "padding": 6 } },
    { selector: "node[kind = 'domain']", style: { "background-color": "#eef7e0", "border-color": "#76b900", "border-style": "dashed", "font-size": 9, "font-weight": "normal" } },
    { selector: "node[kind = 'rack'], node[kind = 'pod'], node[kind = 'fleet'], node[kind = 'cluster']", style: { "background-color": "#f6f8fa" } },
    { selector: "node.folded", style: { "background-color": "#dde3ea", "width": 96, "height": 30, "text-valign": "center", "font-size": FONTS.folded, "font-weight": "bold", "padding": 0 } },
    { selector: "edge", style: {
      "width": "data(width)",
      "line-color": "#8c959f",
      "curve-style": "bezier", "opacity": 0.75, "font-size": 7, "text-rotation": "autorotate" } },
    { selector: "edge.s-degraded", style: { "line-style": "dashed" } },
    { selector: "edge.s-down", style: { "line-style": "dotted", "line-color": "#cf222e" } },
    { selector: "edge.ov", style: { "display": "none" } },
    { selector: "edge.ov.shown", style: { "display": "element" } },
    { selector: "edge.bottleneck", style: { "underlay-color": "#ff8c00", "underlay-opacity": 0.35, "underlay-padding": 3, "label": "data(label)" } },
    { selector: ".sev-note", style: { "border-width": 3, "border-color": "#0969da", "line-color": "#0969da" } },
    { selector: ".sev-warning", style: { "border-width": 3, "border-color": "#bf8700", "line-color": "#bf8700" } },
    { selector: ".sev-error", style: { "border-width": 3, "border-color": "#cf222e", "line-color": "#cf222e" } },
    { selector: ".faded", style: { "opacity": 0.18 } },
    { selector: ".hl", style: { "opacity": 1, "overlay-color": "#ff00aa", "overlay-opacity": 0.25, "overlay-padding": 4, "z-index": 99, "label": "data(label)" } }
  ];

  // Colours by kind as plain selectors (a style function would run for every element on every
  // render), placed after the node and edge defaults and before the states that override them.
  var nodeKinds = Object.keys(NODE_COLOURS).map(function (k) {
    return { selector: "node[kind = '" + k + "']", style: { "background-color": NODE_COLOURS[k] } };
  });
  var edgeKinds = Object.keys(KIND_COLOURS).map(function (k) {
    return { selector: "edge[kind = '" + k + "']", style: { "line-color": KIND_COLOURS[k] } };
  });
  var at = style.findIndex(function (s) { return s.selector === "edge"; });
  style = style.slice(0, 2).concat(nodeKinds, style.slice(2, at + 1), edgeKinds, style.slice(at + 1));

  var cy = cytoscape({
    container: document.getElementById("cy"),
    elements: { nodes: data.nodes, edges: data.edges },
    style: style,
    layout: { name: "preset" },
    minZoom: 0.05,
    maxZoom: 4
  });

  // Folding (drill-down): a folded node or rack shows as one box, its contents hidden;
  // double-click toggles it. Positions stay Graphviz's, so nothing moves while folding.
  function setFolded(node, folded) {
    node.toggleClass("folded", folded);
    node.descendants().style("display", folded ? "none" : "element");
  }
  // Overview (drill-down's top): every node folded into one box, placed where Graphviz put it
  // in the fabric view. Detail: the full layout. Leaves keep their detail positions here;
  // a compound's position follows its children.
  var detailPos = {};
  cy.nodes().forEach(function (n) { if (!n.isParent()) detailPos[n.id()] = { x: n.position("x"), y: n.position("y") }; });
  var hasOverview = Object.keys(data.overview || {}).length > 0;
  var mode = "detail";
  function toOverview() {
    mode = "overview";
    cy.batch(function () {
      cy.nodes("[kind = 'node']").forEach(function (n) { if (n.isParent()) setFolded(n, true); });
      Object.keys(data.overview).forEach(function (id) {
        var n = cy.getElementById(id);
        var p = data.overview[id];
        // Where Graphviz put it in the fabric view, at the size Graphviz gave it there.
        if (n.nonempty()) n.position({ x: p[0], y: p[1] }).style({ width: p[2], height: p[3] });
      });
      cy.edges(".ov").addClass("shown");
    });
    document.body.dataset.mode = mode;
  }
  function toDetail() {
    mode = "detail";
    cy.batch(function () {
      cy.nodes(".folded[kind = 'node']").forEach(function (n) { setFolded(n, false); });
      Object.keys(data.overview || {}).forEach(function (id) { cy.getElementById(id).removeStyle("width height"); });
      cy.nodes().forEach(function (n) { var p = detailPos[n.id()]; if (p && !n.isParent()) n.position(p); });
      cy.edges(".ov").removeClass("shown");
    });
    document.body.dataset.mode = mode;
  }
  // ---- zoom that keeps labels readable ----
  function labelled(coll) { return coll.nodes().filter(function (n) { return n.visible() && n.data("label"); }); }
  // The zoom at which the smallest label of `coll` is READABLE px high.
  function readableZoom(coll) {
    var smallest = Infinity;
    labelled(coll.union(coll.descendants())).forEach(function (n) { smallest = Math.min(smallest, parseFloat(n.style("font-size"))); });
    return smallest === Infinity ? 1 : FONTS.readable_px / smallest;
  }
  // The zoom that fits `coll` with `pad` px around it.
  function fitZoom(coll, pad) {
    var bb = coll.boundingBox();
    return Math.min((cy.width() - 2 * pad) / Math.max(bb.w, 1), (cy.height() - 2 * pad) / Math.max(bb.h, 1));
  }
  // Fit `coll` when it fits at a readable zoom (no closer than 2); otherwise the readable zoom,
  // centred on `centre` (default: all of it). Returns whether all of `coll` is in view.
  function frame(coll, pad, centre) {
    var least = readableZoom(coll);
    var z = Math.min(fitZoom(coll, pad), Math.max(2, least));
    if (z >= least) {
      cy.zoom(z);
      cy.center(coll);
      return true;
    }
    cy.zoom(least);
    cy.center(centre || coll);
    return false;
  }
  function done() {
    if (hasOverview) toOverview(); else document.body.dataset.mode = mode;
    var all = cy.elements(":visible");
    if (!frame(all, 20, cy.collection())) {
      // Too big to read whole: open at a readable zoom on the worst finding's mark, or at the top left.
      var worst = cy.collection();
      SEVERITIES.some(function (s) {
        data.findings.forEach(function (f) {
          if (f.severity !== s || f.waived) return;
          (mode === "overview" ? f.overview_targets || [] : f.targets).forEach(function (t) { worst = worst.union(cy.getElementById(t)); });
        });
        worst = worst.filter(":visible");
        return worst.nonempty();
      });
      if (worst.nonempty()) {
        cy.center(worst.first());
      } else {
        var bb = all.boundingBox();
        cy.pan({ x: 20 - bb.x1 * cy.zoom(), y: 20 - bb.y1 * cy.zoom() });
      }
    }
    document.body.dataset.ready = "1";
  }
  if (data.laid_out) {
    done();  // Graphviz's layout, computed when the report was written (preset positions)
  } else {
    // Written where Graphviz was missing: cytoscape's own force layout, in the browser.
    var l = cy.layout({ name: "cose", animate: false, nodeDimensionsIncludeLabels: true });
    l.one("layoutstop", done);
    l.run();
  }
  cy.on("dbltap", "node", function (evt) {
    var n = evt.target;
    if (mode === "overview" && n.data("kind") === "node") {  // drill down into this node
      toDetail();
      cy.fit(n, 40);
      return;
    }
    if (n.data("kind") === "domain" || (!n.isParent() && !n.hasClass("folded"))) return;
    setFolded(n, !n.hasClass("folded"));
  });
  function foldAll(kind, folded) {
    cy.nodes(kind ? "[kind = '" + kind + "']" : "node").forEach(function (n) {
      if (n.data("kind") !== "domain" && (n.isParent() || n.hasClass("folded"))) setFolded(n, folded);
    });
  }
  document.getElementById("fold-nodes").addEventListener("click", function () { foldAll("node", true); });
  document.getElementById("fold-racks").addEventListener("click", function () { foldAll("rack", true); });
  document.getElementById("open-all").addEventListener("click", function () { toDetail(); foldAll(null, false); frame(cy.elements(":visible"), 20); });
  var overviewButton = document.getElementById("overview");
  if (hasOverview) {
    overviewButton.addEventListener("click", function () { highlight([]); toOverview(); frame(cy.elements(":visible"), 20); });
  } else {
    overviewButton.style.display = "none";
  }

  // ---- highlighting ----
  // Highlights `ids` (shown in the full drawing unless `onOverview`) and frames them with the
  // ends of any link among them; returns whether all of them are in view at a readable zoom.
  function highlight(ids, onOverview) {
    if (ids.length && mode === "overview" && !onOverview) toDetail();
    if (ids.length && mode === "detail" && onOverview) toOverview();
    cy.elements().removeClass("hl faded");
    var sorted = ids.slice().sort();
    document.body.dataset.highlighted = JSON.stringify(sorted);
    if (!ids.length) return;
    var coll = cy.collection();
    ids.forEach(function (id) {
      var e = cy.getElementById(id);
      if (e.nonempty()) {
        coll = coll.union(e);
        e.ancestors().forEach(function (a) { if (a.hasClass("folded")) setFolded(a, false); });
      }
    });
    cy.elements().not(coll).not(coll.ancestors()).not(coll.connectedNodes()).addClass("faded");
    coll.addClass("hl");
    if (coll.empty()) return false;
    // A cable is framed by its two ends; a device inside a node by itself (not the whole node).
    var around = coll.union(coll.connectedNodes());
    return frame(around, 40, around.first());
  }
  // A finding's subjects in the full drawing when they fit there at a readable zoom; else on the
  // overview, where a node is one box beside its leaf switches, when they fit there.
  function showFinding(f) {
    var framed = highlight(f.targets, false);
    var aerial = f.overview_targets || [];
    if (!framed && hasOverview && aerial.length) {
      if (!highlight(aerial, true)) highlight(f.targets, false);
    }
  }

  // ---- filters ----
  var sevBox = document.getElementById("severities");
  var shownSev = {};
  SEVERITIES.forEach(function (s) {
    var n = data.findings.filter(function (f) { return f.severity === s; }).length;
    var label = el("label");
    var box = el("input");
    box.type = "checkbox"; box.checked = true; box.id = "sev-" + s;
    shownSev[s] = true;
    box.addEventListener("change", function () { shownSev[s] = box.checked; applyFilters(); });
    label.appendChild(box);
    label.appendChild(el("span", s + " (" + n + ")", "sev sev-" + s));
    sevBox.appendChild(label);
  });
  var ruleSel = document.getElementById("rule");
  var rules = [];
  data.findings.forEach(function (f) { if (rules.indexOf(f.rule) < 0) rules.push(f.rule); });
  rules.sort();
  [""].concat(rules).forEach(function (r) {
    var o = el("option", r || "all rules");
    o.value = r;
    ruleSel.appendChild(o);
  });
  ruleSel.addEventListener("change", applyFilters);

  function visible(f) { return shownSev[f.severity] && (!ruleSel.value || ruleSel.value === f.rule); }

  var list = document.getElementById("findings");
  var items = {};
  data.findings.forEach(function (f) {
    var li = el("li", null, f.waived ? "waived" : "");
    li.id = "finding-" + f.id;
    li.dataset.finding = f.id;
    li.appendChild(el("span", f.severity, "sev sev-" + f.severity));
    li.appendChild(document.createTextNode(" " + f.rule + (f.waived ? " (waived) " : " ")));
    li.appendChild(el("span", f.subjects.join(", ")));
    li.addEventListener("click", function () { selectFinding(f.id); });
    items[f.id] = li;
    list.appendChild(li);
  });
  if (!data.findings.length) list.appendChild(el("li", "no findings", "none"));

  function applyFilters() {
    cy.elements().removeClass("sev-error sev-warning sev-note");
    data.findings.forEach(function (f) {
      items[f.id].style.display = visible(f) ? "" : "none";
    });
    // Each element shows the most severe visible finding that names it.
    Object.keys(findingsOf).forEach(function (id) {
      var shown = findingsOf[id].filter(function (f) { return visible(f) && !f.waived; });
      if (!shown.length) return;
      var worst = SEVERITIES.filter(function (s) { return shown.some(function (f) { return f.severity === s; }); })[0];
      cy.getElementById(id).addClass("sev-" + worst);
    });
    document.body.dataset.filtered = JSON.stringify(data.findings.filter(visible).map(function (f) { return f.id; }));
  }
  applyFilters();

  // ---- details panel ----
  var details = document.getElementById("details");
  function dl(pairs) {
    var d = el("dl");
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === "") return;
      d.appendChild(el("dt", p[0]));
      var dd = el("dd");
      if (p[1] instanceof Node) dd.appendChild(p[1]); else dd.textContent = typeof p[1] === "object" ? JSON.stringify(p[1]) : String(p[1]);
      d.appendChild(dd);
    });
    return d;
  }
  function elementLink(id, text) {
    var a = el("span", text || id, "link");
    a.dataset.element = id;
    a.addEventListener("click", function (ev) { ev.stopPropagation(); selectElement(id); });
    return a;
  }
  function proofTree(p) {
    var li = el("li");
    li.appendChild(el("code", p.fact));
    if (p.input) li.appendChild(el("span", " (input fact)", "hint"));
    if (p.rule) li.appendChild(el("span", " by " + (typeof p.rule === "string" ? p.rule : JSON.stringify(p.rule)), "hint"));
    var kids = (p.premises || []);
    if (kids.length || (p.absent || []).length) {
      var ul = el("ul");
      kids.forEach(function (k) { ul.appendChild(proofTree(k)); });
      (p.absent || []).forEach(function (a) { ul.appendChild(el("li", "absent: " + (typeof a === "string" ? a : JSON.stringify(a)))); });
      li.appendChild(ul);
    }
    return li;
  }
  function markSelected(id) {
    document.querySelectorAll("#side li.selected").forEach(function (n) { n.classList.remove("selected"); });
    document.body.dataset.selected = id;
  }

  function selectFinding(fid) {
    var f = findingsById[fid];
    markSelected(fid);
    items[fid].classList.add("selected");
    clear(details);
    details.appendChild(el("h2", f.rule + " " + f.severity + (f.waived ? " (waived)" : "")));
    details.appendChild(el("p", f.message));
    var subjects = el("span");
    f.subjects.forEach(function (s, i) {
      if (i) subjects.appendChild(document.createTextNode(", "));
      subjects.appendChild(el("code", s));
    });
    var drawn = el("span");
    f.targets.forEach(function (t, i) {
      if (i) drawn.appendChild(document.createTextNode(", "));
      drawn.appendChild(elementLink(t));
    });
    details.appendChild(dl([["where", f.location], ["subjects", subjects], ["on the drawing", f.targets.length ? drawn : "not drawn (not hardware)"]]));
    details.appendChild(el("h2", "Proof"));
    if (f.proof) {
      var ul = el("ul", null, "proof");
      ul.appendChild(proofTree(f.proof));
      details.appendChild(ul);
    } else {
      details.appendChild(el("p", "no proof recorded (run verify with --proofs)", "hint"));
    }
    showFinding(f);
  }

  function selectElement(id) {
    var e = cy.getElementById(id);
    var info = data.info[id] || {};
    markSelected(id);
    clear(details);
    details.appendChild(el("h2", (info.kind || "") + " " + (info.id || id)));
    var pairs = [];
    Object.keys(info).sort().forEach(function (k) {
      if (k === "ends" || k === "members") return;
      if (k === "model" && data.models[info.model]) return;
      pairs.push([k, info[k]]);
    });
    details.appendChild(dl(pairs));
    if (info.ends) {
      var ends = el("p");
      ends.appendChild(elementLink(info.ends[0]));
      ends.appendChild(document.createTextNode(" \u2194 "));
      ends.appendChild(elementLink(info.ends[1]));
      details.appendChild(ends);
    }
    if (info.members) {
      var ms = el("p");
      info.members.forEach(function (m, i) { if (i) ms.appendChild(document.createTextNode(", ")); ms.appendChild(elementLink(m)); });
      details.appendChild(ms);
    }
    if (info.model && data.models[info.model]) {
      var m = data.models[info.model];
      details.appendChild(el("h2", "Catalogue: " + info.model));
      details.appendChild(dl([["vendor", m.vendor], ["kind", m.kind], ["source", m.source], ["features", m.features.join(", ")]]));
      details.appendChild(dl(Object.keys(m.specs).map(function (k) { return [k, m.specs[k]]; })));
    }
    var fs = findingsOf[id] || [];
    if (fs.length) {
      details.appendChild(el("h2", "Findings"));
      var ul = el("ul");
      fs.forEach(function (f) {
        var li = el("li", null, "link");
        li.dataset.finding = f.id;
        li.textContent = f.rule + " " + f.severity + ": " + f.message;
        li.addEventListener("click", function () { selectFinding(f.id); });
        ul.appendChild(li);
      });
      details.appendChild(ul);
    }
    // Seen on the overview (a folded node, a fabric edge): shown there; otherwise in the full drawing.
    highlight(e.nonempty() ? [id] : [], mode === "overview" && e.nonempty() && e.visible());
  }
  cy.on("tap", "node, edge", function (evt) { selectElement(evt.target.id()); });
  cy.on("tap", function (evt) { if (evt.target === cy) { highlight([]); } });

  // ---- side lists ----
  var classList = document.getElementById("classes");
  data.classes.forEach(function (c) {
    var li = el("li", c.what + ": " + c.rate + (c.rate !== c.widest ? " (widest " + c.widest + ")" : " (all alike)"));
    li.dataset.pathClass = c.id;
    li.addEventListener("click", function () { markSelected(c.id); li.classList.add("selected"); highlight(c.wires); });
    classList.appendChild(li);
  });
  var domList = document.getElementById("domains");
  data.domains.forEach(function (d) {
    var li = el("li", d.label);
    li.dataset.domain = d.id;
    li.addEventListener("click", function () { markSelected(d.id); li.classList.add("selected"); highlight(d.grouped ? [d.id] : d.members); });
    domList.appendChild(li);
  });
  if (!data.domains.length) domList.appendChild(el("li", "none", "none"));
  var legend = document.getElementById("legend");
  Object.keys(KIND_COLOURS).forEach(function (k) {
    if (!data.edges.some(function (e) { return e.data.kind === k; })) return;
    var s = el("span");
    var i = el("i");
    i.style.background = KIND_COLOURS[k];
    s.appendChild(i);
    s.appendChild(document.createTextNode(k));
    legend.appendChild(s);
  });
  legend.appendChild(el("p", "Line width: bandwidth per direction (log scale). Orange glow: a path class's bottleneck. Dashed: degraded, dotted red: down. \u00d7N: N alike parts drawn once.", "hint"));

  document.getElementById("title").textContent = data.title;
  var c = data.counts;
  document.getElementById("summary").textContent = Object.keys(c).length
    ? SEVERITIES.map(function (s) { return (c[s] || 0) + " " + s; }).join(", ")
    : data.nodes.length + " objects drawn";

  // Tests and links may select a finding with #finding=ID (the same click handler runs).
  var m = /^#finding=(.+)$/.exec(window.location.hash);
  if (m && items[m[1]]) items[m[1]].click();
  window.topolog = { cy: cy, selectFinding: selectFinding, selectElement: selectElement };
})();
