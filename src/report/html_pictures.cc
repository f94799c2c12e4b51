// SPDX-License-Identifier: MIT
// The picture each experiment the report knows is about, drawn at the top of
// its section: what the original post showed, from the result tree.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "report/html_plan.h"

namespace writelab {
namespace {

using nlohmann::json;

const Figure* FigureOf(const Row& r, const std::string& key) {
  return r.status == RowStatus::kOk ? r.FindFigure(key) : nullptr;
}

json Picture(const std::string& title, const std::string& kind, json x, const std::string& id) {
  json c = spec::Chart(title, kind, std::move(x));
  c["picture"] = id;  // an anchor, and what the screenshot test looks for
  return c;
}

std::string Prefix(const std::vector<const RunPlan*>& runs, const RunPlan& p) {
  return runs.size() > 1 ? p.label + " " : "";
}

// A bar chart, a bar per row, of the given figures (each on its own axis).
struct Bars {
  const char* key;
  const char* name;  // the axis name: "throughput"
};
json RowBars(const RunPlan& p, const std::string& title, const std::vector<Bars>& figures,
             const std::string& id, bool (*take)(const Row&) = nullptr) {
  const ExperimentResult& e = *p.run;
  json c = Picture(title, "bar", spec::Axis("x", e.row_label, "category"), id);
  std::vector<const Row*> rows;
  for (const Row& r : e.rows)
    if (!take || take(r)) rows.push_back(&r);
  for (const Row* r : rows) c["labels"].push_back(spec::RowLabel(c, *r));
  for (const Bars& b : figures) {
    const Figure* shape = nullptr;
    for (const Row* r : rows)
      if (!shape) shape = FigureOf(*r, b.key);
    if (!shape) continue;
    json d = spec::Dataset(b.name, spec::YAxisFor(c, shape->unit, "linear", b.name), json::array());
    for (const Row* r : rows) spec::AddValue(d, FigureOf(*r, b.key));
    c["datasets"].push_back(std::move(d));
    c["covers"].push_back(b.key);
  }
  if (c["datasets"].empty() || rows.empty()) return nullptr;
  return c;
}

// stride's row "8 qd32 batch4": step 8 on the line "qd32 batch4".
std::pair<double, std::string> StepOf(const std::string& name) {
  double step = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), step);
  if (ec != std::errc() || !std::isfinite(step) || step <= 0) return {0, ""};
  std::string rest(end, name.data() + name.size());
  if (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  return {step, rest.empty() ? "qd1" : rest};
}

// The 2006 table as a chart: a figure against step (log x), a line per
// scheduler (or test bed) and queue depth.
json StrideChart(const std::vector<const RunPlan*>& runs, const std::string& key,
                 const std::string& title, const std::string& id) {
  json c = Picture(title, "line", spec::Axis("x", "step (x unit)", "logarithmic"), id);
  c["covers"] = json::array({key});
  c["rows_on_x"] = true;
  for (const RunPlan* p : runs) {
    std::vector<std::string> lines;
    for (const Row& r : p->run->rows)
      if (auto [step, line] = StepOf(r.name);
          step > 0 && FigureOf(r, key) &&
          std::find(lines.begin(), lines.end(), line) == lines.end())
        lines.push_back(line);
    for (const std::string& line : lines) {
      json d = json::object();
      for (const Row& r : p->run->rows) {
        auto [step, l] = StepOf(r.name);
        const Figure* f = FigureOf(r, key);
        if (l != line || step <= 0 || !f) continue;
        if (d.empty())
          d = spec::Dataset(Prefix(runs, *p) + line, spec::YAxisFor(c, f->unit), json::array());
        json point = {{"data", json::array()}};
        spec::AddValue(point, f);
        d["data"].push_back(json::array({step, point["data"][0]}));
        d["lo"].push_back(point["lo"][0]), d["hi"].push_back(point["hi"][0]);
      }
      c["datasets"].push_back(std::move(d));
    }
  }
  return c;
}

void StridePictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  out.push_back(StrideChart(runs, "mb_s", "stride: MB/s against step", "stride"));
  out.push_back(
      StrideChart(runs, "device_merges", "stride: device write merges per step", "stride-merges"));
}

// What fsync-tester printed: each iteration's write+sync time, a line per
// background and method.
void FsyncPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    json c = Picture("fsync: write+sync per iteration — " + p->label, "line",
                     spec::Axis("x", "iteration", "linear"), out.empty() ? "fsync" : "");
    std::string y = spec::YAxisFor(c, "s", "logarithmic", "write+sync");
    for (const Row& r : p->run->rows) {
      json data = json::array();
      double iteration = 0;  // counted on through the trials, in their order
      for (const Series& s : r.series) {
        if (s.key != "iterations" || s.columns.size() < 3) continue;
        for (const auto& point : s.points) {
          ++iteration;
          if (point.size() >= 3 && point[1] + point[2] > 0)  // 0 is on no log axis
            data.push_back(json::array({iteration, point[1] + point[2]}));
        }
      }
      if (!data.empty()) c["datasets"].push_back(spec::Dataset(r.name, y, std::move(data)));
    }
    out.push_back(std::move(c));
  }
}

bool HasSlash(const Row& r) { return r.name.find('/') != std::string::npos; }
bool NoSlash(const Row& r) { return !HasSlash(r); }

void StreamPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    // p99 where every row measured has one, else each row's worst probe.
    bool p99 = true;
    for (const Row& r : p->run->rows)
      if (FigureOf(r, "probe_max_ms") && !FigureOf(r, "probe_p99_ms")) p99 = false;
    json c = RowBars(*p, "stream: the trade-off per strategy — " + p->label,
                     {{"mb_s", "throughput"},
                      {"cached_end", "page cache left"},
                      {p99 ? "probe_p99_ms" : "probe_max_ms",
                       p99 ? "bystander fsync p99" : "bystander fsync max"}},
                     out.empty() ? "stream" : "");
    if (!c.is_null()) out.push_back(std::move(c));
  }
}

void PreallocPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  const ExperimentResult& first = *runs.front()->run;
  json c = Picture("prealloc: workload time per mode", "bar",
                   spec::Axis("x", first.row_label, "category"), "prealloc");
  for (const Row& r : first.rows) c["labels"].push_back(spec::RowLabel(c, r));
  for (const RunPlan* p : runs) {
    json d = spec::Dataset(p->label, spec::YAxisFor(c, "s", "linear", "workload"), json::array());
    c["covers"] = json::array({"workload_s"});
    for (const Row& r : first.rows) {
      const Row* mine = nullptr;
      for (const Row& m : p->run->rows)
        if (m.name == r.name) mine = &m;
      if (mine && mine->status != RowStatus::kOk) spec::RowLabel(c, *mine);
      spec::AddValue(d, mine ? FigureOf(*mine, "workload_s") : nullptr);
    }
    c["datasets"].push_back(std::move(d));
  }
  out.push_back(std::move(c));
  for (const RunPlan* p : runs) {
    json e = RowBars(*p, "prealloc: extents before and after — " + p->label,
                     {{"extents_before", "extents before"},
                      {"unwritten_before", "unwritten before"},
                      {"extents_after", "extents after"},
                      {"unwritten_after", "unwritten after"}},
                     "");
    if (!e.is_null()) out.push_back(std::move(e));
  }
}

void RecordsPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    for (bool sync : {false, true}) {
      json c = RowBars(*p,
                       std::string("records: lines/s per method") +
                           (sync ? ", synchronous variants" : "") + " — " + p->label,
                       {{"lines_s", "lines/s"}}, out.empty() ? "records" : "",
                       sync ? HasSlash : NoSlash);
      if (c.is_null()) continue;
      c["y"][0]["type"] = "logarithmic";
      out.push_back(std::move(c));
    }
  }
}

}  // namespace

std::vector<json> ExperimentPictures(const std::vector<const RunPlan*>& runs) {
  std::vector<json> out;
  const std::string& name = runs.front()->run->name;
  if (name == "stride") StridePictures(runs, out);
  if (name == "fsync") FsyncPictures(runs, out);
  if (name == "stream") StreamPictures(runs, out);
  if (name == "prealloc") PreallocPictures(runs, out);
  if (name == "records") RecordsPictures(runs, out);
  return out;
}

}  // namespace writelab
