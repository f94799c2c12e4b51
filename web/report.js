// SPDX-License-Identifier: MIT
// writelab's HTML report: draws the charts specified in the JSON of
// the script element writelab-charts (one entry per div with data-chart=N) with
// Chart.js, then writes a self-check into the hidden element writelab-check: per chart
// its painted pixels and points, legend, caption and series that are 0
// throughout, how many charts are open on load, and every error caught on
// the page. The browser test reads that element from the dumped DOM. A
// chart inside a closed <details> (an experiment's "more charts") is drawn
// when the details is opened, not on load.
(function () {
  "use strict";
  var errors = window.writelabErrors || [];
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

  function scale(axis, position) {
    var s = { type: axis.type, title: { display: true, text: axis.title } };
    if (position) s.position = position;
    return s;
  }

  // Min-max whiskers: a dataset's "lo" and "hi", one per value, drawn as a
  // vertical line with caps through each bar or point.
  var whiskers = {
    id: "writelabWhiskers",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      chart.data.datasets.forEach(function (d, i) {
        var meta = chart.getDatasetMeta(i);
        if (!d.writelabLo || meta.hidden) return;
        var y = chart.scales[d.yAxisID];
        meta.data.forEach(function (el, j) {
          var lo = d.writelabLo[j], hi = d.writelabHi[j];
          if (lo === null || hi === null || lo === undefined || !el || el.skip) return;
          var top = y.getPixelForValue(hi), bottom = y.getPixelForValue(lo);
          if (!isFinite(top) || !isFinite(bottom)) return;
          ctx.save();
          ctx.beginPath();
          ctx.rect(chart.chartArea.left, chart.chartArea.top,
                   chart.chartArea.right - chart.chartArea.left,
                   chart.chartArea.bottom - chart.chartArea.top);
          ctx.clip();
          ctx.strokeStyle = "#333";
          ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(el.x, top); ctx.lineTo(el.x, bottom);
          ctx.moveTo(el.x - 3, top); ctx.lineTo(el.x + 3, top);
          ctx.moveTo(el.x - 3, bottom); ctx.lineTo(el.x + 3, bottom);
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };

  // A color with transparency, for a min-max band.
  function faint(hex) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + ",0.15)";
  }

  function dataset(spec, d, i) {
    var color = palette[(d.color === undefined ? i : d.color) % palette.length];
    var category = spec.x.type === "category";
    var out = {
      label: d.label,
      yAxisID: d.axis,
      data: category ? d.data : d.data.map(function (p) { return { x: p[0], y: p[1] }; }),
      borderColor: color,
      backgroundColor: color,
      borderWidth: spec.kind === "bar" ? 0 : 1.5,
      pointRadius: spec.kind === "bar" ? 0 : 2,
      spanGaps: true,
      writelabLo: d.lo,
      writelabHi: d.hi
    };
    if (d.points) {  // a cloud of points (each call of explain's timeline), no line
      out.type = "scatter";
      out.showLine = false;
    }
    if (d.band) {  // a min-max band: "upper" then "lower", filled between, no legend
      out.borderWidth = 0;
      out.pointRadius = 0;
      out.writelabBand = true;
      out.fill = d.band === "lower" ? "-1" : false;
      out.backgroundColor = faint(color);
    }
    if (d.changes) {  // change points on a trend: a triangle where each began, named
      out.showLine = false;
      out.pointStyle = "triangle";
      out.pointRadius = 7;
      out.writelabNames = d.names;
    }
    if (d.marks) {  // percentile marks: points, no line, named in the tooltip
      out.type = "scatter";
      out.showLine = false;
      out.pointStyle = "triangle";
      out.pointRadius = 5;
      out.borderColor = "#000";
      out.backgroundColor = "#000";
      out.writelabNames = d.names;
    }
    return out;
  }

  // An axis's range takes in the whiskers on it, not only the values.
  function whiskerRange(spec, axis, s) {
    spec.datasets.forEach(function (d) {
      if (d.axis !== axis.id || !d.lo) return;
      d.lo.concat(d.hi).forEach(function (v) {
        if (v === null || !isFinite(v) || (axis.type === "logarithmic" && v <= 0)) return;
        s.suggestedMin = s.suggestedMin === undefined ? v : Math.min(s.suggestedMin, v);
        s.suggestedMax = s.suggestedMax === undefined ? v : Math.max(s.suggestedMax, v);
      });
    });
    if (axis.type !== "logarithmic" && spec.kind === "bar") s.suggestedMin = 0;
    return s;
  }

  function config(spec) {
    var scales = { x: scale(spec.x) };
    spec.y.forEach(function (a) {
      scales[a.id] = whiskerRange(spec, a, scale(a, a.right ? "right" : "left"));
    });
    if (spec.stacked) Object.keys(scales).forEach(function (k) { scales[k].stacked = true; });
    var category = spec.x.type === "category";
    return {
      type: spec.kind,
      data: {
        labels: category ? spec.labels : undefined,
        datasets: spec.datasets.map(function (d, i) { return dataset(spec, d, i); })
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: category ? undefined : false,
        normalized: true,
        scales: scales,
        plugins: {
          title: { display: true, text: spec.title },
          legend: {
            labels: { filter: function (item, data) { return !data.datasets[item.datasetIndex].writelabBand; } }
          },
          tooltip: {
            callbacks: {
              label: function (item) {
                var names = item.dataset.writelabNames;
                return names ? names[item.dataIndex] : undefined;
              }
            }
          }
        }
      },
      plugins: [whiskers]
    };
  }

  // The axes as drawn: title and largest tick, for the self-check.
  function axes(chart) {
    return Object.keys(chart.scales).map(function (k) {
      var s = chart.scales[k];
      var max = 0;
      (s.ticks || []).forEach(function (t) { if (isFinite(t.value)) max = Math.max(max, Math.abs(t.value)); });
      return { id: k, title: (s.options.title && s.options.title.text) || "", max_tick: max,
               type: s.type,
               ticks: (s.ticks || []).map(function (t) { return String(t.label); }) };
    });
  }

  // Painted pixels of a canvas: not empty means the chart drew something.
  function painted(canvas) {
    var data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    var n = 0;
    for (var i = 3; i < data.length; i += 4) if (data[i] !== 0) n++;
    return n;
  }

  // Datasets drawn whose every value (and min-max whisker) is 0: a line on
  // 0 says nothing.
  function zeroSeries(chart) {
    var n = 0;
    chart.data.datasets.forEach(function (d) {
      var values = (d.data || []).map(function (v) { return v !== null && typeof v === "object" ? v.y : v; })
        .concat(d.writelabLo || [], d.writelabHi || [])
        .filter(function (v) { return v !== null && v !== undefined; });
      if (values.length > 0 && values.every(function (v) { return v === 0; })) n++;
    });
    return n;
  }

  function draw(div, specs) {
    var spec = specs[Number(div.getAttribute("data-chart"))];
    var canvas = document.createElement("canvas");
    div.appendChild(canvas);
    var caption = div.parentNode.querySelector("figcaption");
    var entry = { chart: Number(div.getAttribute("data-chart")), pixels: 0, points: 0,
                  kind: "", title: "", axes: [], legend: [], zero_series: 0,
                  caption: caption ? caption.textContent : "" };
    try {
      entry.kind = spec.kind;
      entry.title = spec.title;
      var chart = new Chart(canvas, config(spec));
      entry.axes = axes(chart);
      chart.data.datasets.forEach(function (d, i) {
        chart.getDatasetMeta(i).data.forEach(function (e) {
          if (e && !e.skip && isFinite(e.x) && isFinite(e.y)) entry.points++;
        });
      });
      entry.legend = (chart.legend && chart.legend.legendItems || []).map(function (item) { return item.text; });
      entry.zero_series = zeroSeries(chart);
      entry.pixels = painted(canvas);
    } catch (e) {
      errors.push("chart " + entry.chart + ": " + e);
    }
    return entry;
  }

  var check = { charts: 0, rendered: [], open_on_load: 0, folded: 0, errors: errors };
  // report.html#all: every "more charts" opened first (the browser test).
  if (/#all$/.test(window.location.hash)) {
    document.querySelectorAll("details.more").forEach(function (d) { d.open = true; });
  }
  try {
    var specs = JSON.parse(document.getElementById("writelab-charts").textContent);
    check.charts = specs.length;
    document.querySelectorAll("div[data-chart]").forEach(function (div) {
      var closed = div.closest("details:not([open])");
      if (closed) {  // drawn when opened, once
        check.folded++;
        closed.addEventListener("toggle", function () {
          if (closed.open && !div.firstChild) draw(div, specs);
        });
        return;
      }
      check.open_on_load++;
      check.rendered.push(draw(div, specs));
    });
  } catch (e) {
    errors.push(String(e));
  }
  // The page's order, for the test: where the recommendations and the
  // first chart are.
  var all = Array.prototype.slice.call(document.querySelectorAll("#recommendations, div[data-chart]"));
  check.recommendations_first = all.length > 0 && all[0].id === "recommendations";
  check.unsupported_marked = document.querySelectorAll(".unsupported").length;
  // What a reader meets first and what must never be on the page: the
  // Findings box before every other section, section titles said twice,
  // table columns empty on every row, numbers with an exponent.
  var firstH2 = document.querySelector("h2");
  check.findings_first = !!firstH2 && firstH2.parentNode.id === "findings" &&
    document.querySelectorAll("#findings li").length > 0;
  var titles = {};
  check.repeated_titles = [];
  document.querySelectorAll("h2, h3").forEach(function (h) {
    var t = h.textContent.trim();
    if (titles[t]) check.repeated_titles.push(t);
    titles[t] = true;
  });
  check.empty_columns = [];
  document.querySelectorAll("table").forEach(function (table) {
    var rows = Array.prototype.slice.call(table.querySelectorAll("tr")).filter(function (tr) {
      return tr.querySelector("td");
    });
    var heads = table.querySelectorAll("tr th");
    for (var c = 1; rows.length > 1 && c < heads.length; c++) {
      var empty = rows.every(function (tr) {
        var cell = tr.children[c];
        var text = cell ? cell.textContent.trim() : "";
        return text === "" || text === "\u2014";
      });
      if (empty) check.empty_columns.push(heads[c].textContent.trim());
    }
  });
  // A word that is a number in scientific notation ("7.21e+05", "1e-19 s");
  // a path or a hex name is one word with its dashes and slashes.
  function hasExponent(text) {
    return text.split(/[\s(),;]+/).some(function (word) {
      return /^[-+]?\d+(\.\d+)?e[+-]?\d+[a-z/%]*$/i.test(word);
    });
  }
  check.exponents = [];
  document.querySelectorAll("td, th, li, figcaption, h2, h3, dd").forEach(function (el) {
    if (hasExponent(el.textContent)) check.exponents.push(el.textContent.trim().slice(0, 80));
  });
  check.rendered.forEach(function (r) {
    r.axes.forEach(function (a) {
      (a.ticks || []).forEach(function (t) {
        if (hasExponent(t)) check.exponents.push(r.title + ": tick " + t);
      });
    });
  });
  // report.html#only=picture-stride: that picture alone (the screenshots in docs/img).
  var only = /#only=([\w-]+)/.exec(window.location.hash);
  if (only && document.getElementById(only[1])) {
    var keep = document.getElementById(only[1]);
    document.body.childNodes.forEach(function (n) { if (n.style) n.style.display = "none"; });
    document.body.appendChild(keep);
    keep.style.display = "block";
    keep.style.margin = "0";
    document.body.style.margin = "8px";
  }
  var out = document.getElementById("writelab-check");
  out.textContent = JSON.stringify(check);
})();
