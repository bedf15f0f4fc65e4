// tsim report: draws the page's charts with uPlot from the data in
// #tsim-data, and writes what it drew into #tsim-status (JSON: every chart
// drawn with its series, rows and inked pixels, the charts not drawn yet,
// and any error), which the browser test reads.
(function () {
  "use strict";
  var errors = window.tsimErrors || [];
  var statusEl = document.getElementById("tsim-status");
  var drawn = {};      // chart id -> status entry
  var figures = [];    // every chart's figure, in page order
  var built = [];      // [figure, uPlot, spec]
  var groups = {};     // sync name -> [uPlot]
  var syncing = false;

  var ns = document.getElementById("tsim-noscript");
  if (ns) ns.parentNode.removeChild(ns);

  function writeStatus() {
    var pending = [];
    figures.forEach(function (f) { if (!drawn[f.dataset.chart]) pending.push(f.dataset.chart); });
    var charts = [];
    figures.forEach(function (f) { if (drawn[f.dataset.chart]) charts.push(drawn[f.dataset.chart]); });
    statusEl.textContent = JSON.stringify({ charts: charts, pending: pending, errors: errors });
    statusEl.setAttribute("data-ready", "1");
  }

  var data;
  try {
    data = JSON.parse(document.getElementById("tsim-data").textContent);
  } catch (e) {
    errors.push("tsim-data: " + e.message);
    writeStatus();
    return;
  }
  var specs = {};
  data.charts.forEach(function (c) { specs[c.id] = c; });

  // Numbers as the tables write them: three significant digits, no
  // exponent for the magnitudes counters have.
  function num(v) {
    if (v == null || isNaN(v)) return "–";
    var a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1000) return v.toFixed(0);
    if (a >= 100) return v.toFixed(a === Math.round(a) ? 0 : 1);
    if (a >= 0.001) return String(Number(v.toPrecision(3)));
    return v.toExponential(2);
  }
  // A tick's label; a logarithmic axis leaves some ticks unlabelled (null).
  function tick(v) { return v == null ? "" : num(v); }
  function withUnit(v, unit) {
    if (v == null || isNaN(v)) return "–";
    if (unit === "s") {
      var a = Math.abs(v);
      if (a === 0) return "0";
      if (a < 1e-3) return num(v * 1e6) + " µs";
      if (a < 1) return num(v * 1e3) + " ms";
      return num(v) + " s";
    }
    return num(v) + (unit ? " " + unit : "");
  }

  // The frame each series takes its values from.
  function seriesFrames(spec) {
    var out = [];
    spec.frames.forEach(function (f, fi) { f.y.forEach(function () { out.push(fi); }); });
    return out;
  }

  // Each series' bars at the joined x values: [low, high] or null, from
  // its half-widths (err, around its values) or its bounds (lo and hi).
  function errorBars(spec, d) {
    var sf = seriesFrames(spec), col = [], seen = {};
    sf.forEach(function (fi) { seen[fi] = (seen[fi] || 0) + 1; col.push(seen[fi] - 1); });
    return spec.series.map(function (s, i) {
      if (!s.err && !s.lo) return null;
      var f = spec.frames[sf[i]], ys = f.y[col[i]], m = new Map();
      f.x.forEach(function (x, j) {
        if (s.lo) { if (s.lo[j] != null && s.hi[j] != null) m.set(x, [s.lo[j], s.hi[j]]); }
        else if (s.err[j] && ys[j] != null) m.set(x, [ys[j] - s.err[j], ys[j] + s.err[j]]);
      });
      return d[0].map(function (x) { var e = m.get(x); return e == null ? null : e; });
    });
  }

  function build(fig) {
    var id = fig.dataset.chart;
    try {
      buildChart(fig, id, specs[id]);
    } catch (e) {
      errors.push(id + ": " + e.message);
    }
  }

  function buildChart(fig, id, spec) {
    if (!spec || drawn[id]) return;
    var el = fig.querySelector(".plot");
    if (!spec.frames.length) {
      el.textContent = "no data";
      drawn[id] = { id: id, series: [], rows: 0, ink: 0 };
      return;
    }
    var tables = spec.frames.map(function (f) { return [f.x].concat(f.y); });
    var d = tables.length === 1 ? tables[0] : uPlot.join(tables);
    var labels = spec.x.labels;
    var xlog = spec.x.scale === "log", ylog = spec.y.scale === "log";
    var errs = errorBars(spec, d);
    var hasErr = errs.some(function (e) { return e; });

    var series = [{
      label: spec.x.label,
      value: function (u, v) { return v == null ? "–" : labels ? (labels[v] || "") : withUnit(v, spec.x.unit); }
    }];
    spec.series.forEach(function (s) {
      var o = {
        label: s.label, stroke: s.color, width: s.width || 1.5, dash: s.dash,
        spanGaps: !s.gaps, show: !s.hidden,
        value: function (u, v) { return withUnit(v, spec.y.unit); }
      };
      if (s.points) {
        o.paths = function () { return null; };
        o.points = { show: true, size: s.size || 4, width: 0, fill: s.color, stroke: s.color };
      } else {
        o.points = { show: labels != null || !!s.err || !!s.lo };
      }
      series.push(o);
    });

    var xScale = { time: false };
    if (xlog) {
      xScale.distr = 3;
      // Not out to the next power of ten: a little beyond the data.
      xScale.range = function (u, lo, hi) { return lo > 0 && hi > 0 ? [lo / 1.15, hi * 1.15] : [1, 10]; };
    }
    if (labels) { xScale.range = function () { return [-0.5, labels.length - 0.5]; }; }
    else if (spec.x.min != null || spec.x.max != null) {
      xScale.range = function (u, lo, hi) { return [spec.x.min != null ? spec.x.min : lo, spec.x.max != null ? spec.x.max : hi]; };
    }
    var yScale = {};
    if (ylog) { yScale.distr = 3; }
    if (hasErr || spec.y.min != null || spec.y.max != null) {
      yScale.range = function (u, lo, hi) {
        if (hasErr) {
          errs.forEach(function (e, i) {
            if (!e || !u.series[i + 1].show) return;
            e.forEach(function (b) {
              if (b != null) { lo = Math.min(lo, b[0]); hi = Math.max(hi, b[1]); }
            });
          });
        }
        var r = ylog ? uPlot.rangeLog(lo, hi, 10, true) : uPlot.rangeNum(Math.min(0, lo), hi, 0.1, true);
        if (spec.y.min != null) r[0] = spec.y.min;
        if (spec.y.max != null) r[1] = Math.max(spec.y.max, r[0] + 1e-9);
        return r;
      };
    }

    var xAxis = { label: spec.x.label, labelSize: 20, size: 36 };
    if (labels) {
      xAxis.splits = function () { return labels.map(function (_, i) { return i; }); };
      xAxis.values = function (u, splits) { return splits.map(function (i) { return labels[i]; }); };
    } else {
      xAxis.values = function (u, splits) { return splits.map(tick); };
    }
    var yAxis = { label: spec.y.label, labelSize: 20, size: 56,
      values: function (u, splits) { return splits.map(tick); } };

    var hooks = { draw: [], setScale: [] };
    if (hasErr) {
      hooks.draw.push(function (u) {
        var ctx = u.ctx, px = uPlot.pxRatio;
        ctx.save();
        errs.forEach(function (e, i) {
          var s = spec.series[i];
          if (!e || !u.series[i + 1].show) return;
          ctx.strokeStyle = s.color; ctx.lineWidth = 1.5 * px; ctx.setLineDash([]);
          e.forEach(function (b, j) {
            if (b == null || !(b[1] > b[0])) return;
            var lo = b[0], hi = b[1];
            if (s.errMin != null) lo = Math.max(lo, s.errMin);
            if (s.errMax != null) hi = Math.min(hi, s.errMax);
            var x = u.valToPos(u.data[0][j], "x", true);
            var y1 = u.valToPos(lo, "y", true), y2 = u.valToPos(hi, "y", true), w = 4 * px;
            ctx.beginPath();
            ctx.moveTo(x, y1); ctx.lineTo(x, y2);
            ctx.moveTo(x - w, y1); ctx.lineTo(x + w, y1);
            ctx.moveTo(x - w, y2); ctx.lineTo(x + w, y2);
            ctx.stroke();
          });
        });
        ctx.restore();
      });
    }
    if (spec.sync) {
      hooks.setScale.push(function (u, key) {
        if (key !== "x" || syncing || !u.tsimReady) return;
        syncing = true;
        var sc = u.scales.x;
        (groups[spec.sync] || []).forEach(function (o) {
          if (o !== u) o.setScale("x", { min: sc.min, max: sc.max });
        });
        syncing = false;
      });
    }

    var opts = {
      width: Math.max(240, el.clientWidth || 600),
      height: spec.height || 220,
      series: series,
      scales: { x: xScale, y: yScale },
      axes: [xAxis, yAxis],
      legend: { live: true },
      cursor: spec.sync ? { sync: { key: spec.sync } } : {},
      hooks: hooks
    };
    var u;
    try {
      u = new uPlot(opts, d, el);
    } catch (e) {
      errors.push(id + ": " + e.message);
      return;
    }
    if (spec.sync) {
      var g = groups[spec.sync] = groups[spec.sync] || [];
      if (g.length > 0) {
        var sc = g[0].scales.x;
        if (sc.min != null) u.setScale("x", { min: sc.min, max: sc.max });
      }
      g.push(u);
    }
    u.tsimReady = true;
    built.push([fig, u, spec]);
    drawn[id] = { id: id, series: spec.series.map(function (s) { return s.label; }), rows: d[0].length, ink: -1 };
  }

  // ink counts the pixels a chart's canvas has drawn: the test's proof
  // that a chart shows something, not only that it was set up.
  function ink(u) {
    try {
      var c = u.ctx.canvas, img = u.ctx.getImageData(0, 0, c.width, c.height).data, n = 0;
      for (var i = 3; i < img.length; i += 4) if (img[i] !== 0) n++;
      return n;
    } catch (e) { return -1; }
  }
  function finish() {
    built.forEach(function (b) {
      var st = drawn[b[2].id];
      if (st && st.ink < 0) st.ink = ink(b[1]);
    });
    writeStatus();
  }

  figures = Array.prototype.slice.call(document.querySelectorAll("figure[data-chart]"));
  function visible(f) { return f.offsetParent !== null; }
  // A page of many charts draws them as they come into view (a canvas
  // each holds memory); a small one draws every visible chart at once.
  var eager = figures.length <= 60 || typeof IntersectionObserver === "undefined";
  var observer = null;
  if (!eager) {
    observer = new IntersectionObserver(function (entries) {
      var any = false;
      entries.forEach(function (en) {
        if (en.isIntersecting) { build(en.target); observer.unobserve(en.target); any = true; }
      });
      if (any) Promise.resolve().then(finish);
    }, { rootMargin: "600px 0px" });
  }
  figures.forEach(function (f) {
    if (eager && visible(f)) build(f);
    else if (observer) observer.observe(f);
  });
  // A folded section's charts are drawn when it opens.
  document.querySelectorAll("details").forEach(function (det) {
    det.addEventListener("toggle", function () {
      if (!det.open) return;
      det.querySelectorAll("figure[data-chart]").forEach(function (f) {
        if (eager) build(f); else if (observer) observer.observe(f);
      });
      Promise.resolve().then(finish);
    });
  });
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      built.forEach(function (b) {
        var w = b[0].querySelector(".plot").clientWidth;
        if (w > 0) b[1].setSize({ width: Math.max(240, w), height: b[2].height || 220 });
      });
    }, 150);
  });
  // uPlot draws in a microtask after it is built: count the ink after it.
  Promise.resolve().then(function () { return null; }).then(finish);
})();
