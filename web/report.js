// SPDX-License-Identifier: MIT
// writelab's HTML report: draws the charts specified in the JSON of
// the script element writelab-charts (one entry per div with data-chart=N) with
// Chart.js, then writes a self-check into the hidden element writelab-check: per chart
// its painted pixels and points, and every error caught on the page. The
// browser test reads that element from the dumped DOM.
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

  function config(spec) {
    var scales = { x: scale(spec.x) };
    spec.y.forEach(function (a) { scales[a.id] = scale(a, a.right ? "right" : "left"); });
    if (spec.stacked) Object.keys(scales).forEach(function (k) { scales[k].stacked = true; });
    var category = spec.x.type === "category";
    var datasets = spec.datasets.map(function (d, i) {
      var color = palette[i % palette.length];
      return {
        label: d.label,
        yAxisID: d.axis,
        data: category ? d.data : d.data.map(function (p) { return { x: p[0], y: p[1] }; }),
        borderColor: color,
        backgroundColor: color,
        borderWidth: spec.kind === "bar" ? 0 : 1.5,
        pointRadius: spec.kind === "bar" ? 0 : 2,
        spanGaps: true
      };
    });
    return {
      type: spec.kind,
      data: { labels: category ? spec.labels : undefined, datasets: datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: category ? undefined : false,
        normalized: true,
        scales: scales,
        plugins: { title: { display: true, text: spec.title } }
      }
    };
  }

  // Painted pixels of a canvas: not empty means the chart drew something.
  function painted(canvas) {
    var data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    var n = 0;
    for (var i = 3; i < data.length; i += 4) if (data[i] !== 0) n++;
    return n;
  }

  var check = { charts: 0, rendered: [], errors: errors };
  try {
    var specs = JSON.parse(document.getElementById("writelab-charts").textContent);
    check.charts = specs.length;
    document.querySelectorAll("div[data-chart]").forEach(function (div) {
      var spec = specs[Number(div.getAttribute("data-chart"))];
      var canvas = document.createElement("canvas");
      div.appendChild(canvas);
      var entry = { chart: Number(div.getAttribute("data-chart")), pixels: 0, points: 0 };
      try {
        var chart = new Chart(canvas, config(spec));
        chart.data.datasets.forEach(function (d, i) {
          chart.getDatasetMeta(i).data.forEach(function (e) {
            if (e && !e.skip && isFinite(e.x) && isFinite(e.y)) entry.points++;
          });
        });
        entry.pixels = painted(canvas);
      } catch (e) {
        errors.push("chart " + entry.chart + ": " + e);
      }
      check.rendered.push(entry);
    });
  } catch (e) {
    errors.push(String(e));
  }
  var out = document.getElementById("writelab-check");
  out.textContent = JSON.stringify(check);
})();
