// SPDX-License-Identifier: MIT
// The picture of stride on the report page, drawn first in its section:
// the 2006 table as a chart, MB/s and the device's merges against step (log x), a
// line per scheduler (or test bed) and queue depth.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "experiments/stride/def.h"
#include "experiments/stride/figures.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

namespace {

// The line of a run whose rows name only their step: its engine and queue
// depth ("io_uring qd32"), from its params.
std::string RunLine(const ExperimentResult& e) {
  std::string engine, qd = "1";
  for (const Param& p : e.params)
    if (const auto* text = std::get_if<std::string>(&p.value)) {
      if (p.key == "engine") engine = *text;
      if (p.key == "qd") qd = *text;
    }
  return (engine.empty() ? "" : engine + " ") + "qd" + qd;
}

// stride's row "8 qd32 batch4": step 8 on the line "qd32 batch4"; a row
// "8" is on the run's own line.
std::pair<double, std::string> StepOf(const std::string& name, const ExperimentResult& e) {
  double step = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), step);
  if (ec != std::errc() || !std::isfinite(step) || step <= 0) return {0, ""};
  std::string rest(end, name.data() + name.size());
  if (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  return {step, rest.empty() ? RunLine(e) : rest};
}

// The 2006 table as a chart: a figure against step (log x), a line per
// scheduler (or test bed) and queue depth.
json StrideChart(const std::vector<const RunPlan*>& runs, const std::string& key,
                 const std::string& title, const std::string& id) {
  json c = spec::Picture(title, "line", spec::Axis("x", "step (x unit)", "logarithmic"), id);
  c["covers"] = json::array({key});
  c["rows_on_x"] = true;
  // A line is named by its engine and queue depth ("io_uring qd32"); by its
  // run too only where two runs have the same one (a line per test bed or
  // scheduler).
  std::map<std::string, int> runs_with;
  for (const RunPlan* p : runs) {
    std::set<std::string> mine;
    for (const Row& r : p->run->rows)
      if (auto [step, line] = StepOf(r.name, *p->run); step > 0) mine.insert(line);
    for (const std::string& line : mine) ++runs_with[line];
  }
  for (const RunPlan* p : runs) {
    std::vector<std::string> lines;
    for (const Row& r : p->run->rows)
      if (auto [step, line] = StepOf(r.name, *p->run);
          step > 0 && spec::FigureOf(r, key) &&
          std::find(lines.begin(), lines.end(), line) == lines.end())
        lines.push_back(line);
    for (const std::string& line : lines) {
      json d = json::object();
      for (const Row& r : p->run->rows) {
        auto [step, l] = StepOf(r.name, *p->run);
        const Figure* f = spec::FigureOf(r, key);
        if (l != line || step <= 0 || !f) continue;
        if (d.empty())
          d = spec::Dataset((runs_with[line] > 1 ? spec::RunPrefix(runs, *p) : "") + line,
                            spec::YAxisFor(c, f->unit), json::array());
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

}  // namespace

void StridePictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  out.push_back(StrideChart(runs, StrideKey("mb_s").name, "stride: MB/s against step", "stride"));
  out.back()["caption"] =
      "MB/s against the step between 4 KiB direct writes (log x), a line per queue depth: "
      "throughput falls where the step keeps writes from merging into larger requests.";
  out.push_back(StrideChart(runs, StrideKey("device_merges").name,
                            "stride: device write merges per step", "stride-merges"));
  out.back()["caption"] =
      "Requests the block layer merged per step: where merges stop, every request stays 4 KiB.";
}

}  // namespace writelab
