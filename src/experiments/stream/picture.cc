// SPDX-License-Identifier: MIT
// The picture of stream on the report page, drawn first in its section:
// the trade-off per strategy: throughput, the page cache left
// and the bystander's fsync (p99, or its worst with too few probes).
#include <nlohmann/json.hpp>

#include <vector>

#include "experiments/stream/def.h"
#include "experiments/stream/figures.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

namespace {

// The 2009 post's picture: the bystander's fdatasync over time beside the
// writer's throughput, for plain and for the strategy drawn beside it (of
// those that bound the cache, the one whose bystander's worst was lowest,
// as the survey recommends). Only for runs with the bystander's calls over
// time; null otherwise.
json BystanderOverTime(const RunPlan& p) {
  const Row* plain = nullptr;
  const Row* best = nullptr;
  const std::string worst = StreamKey("probe_max_ms").name;
  for (const Row& r : p.run->rows) {
    const Figure* max = spec::FigureOf(r, worst);
    if (!max) continue;
    if (r.name == "plain")
      plain = &r;
    else if (r.name != "window" &&
             (!best || max->value.median < spec::FigureOf(*best, worst)->value.median))
      best = &r;
  }
  auto series = [](const Row& r, const char* key) -> const Series* {
    for (const Series& s : r.series)
      if (s.key == key) return &s;
    return nullptr;
  };
  if (!plain || !series(*plain, "probe")) return nullptr;
  json c = spec::Picture("stream: the bystander's fdatasync while each writer runs — " + p.label,
                         "line", spec::Axis("x", "time (s)", "linear"), "stream-bystander");
  c["caption"] =
      "A bystander's small fdatasync (left, log scale) while plain and the best strategy write "
      "(right): with plain, look for the fdatasync stalling once writeback of the writer's dirty "
      "pages begins.";
  const std::string lat = spec::YAxisFor(c, "ms", "logarithmic", "bystander fdatasync");
  const std::string mbs = spec::YAxisFor(c, "MB/s", "linear", "writer throughput");
  for (const Row* r : {plain, best}) {
    if (!r) continue;
    if (const Series* probe = series(*r, "probe")) {
      json pts = json::array();
      for (const auto& pt : probe->points)
        if (pt.size() >= 2 && pt[1] > 0) pts.push_back(json::array({pt[0], pt[1]}));
      c["datasets"].push_back(
          spec::Dataset(r->name + ": bystander fdatasync", lat, std::move(pts)));
    }
    if (const Series* timeline = series(*r, "timeline");
        timeline && timeline->columns.size() > 1 && timeline->columns[1].name == "throughput") {
      json pts = json::array();
      for (const auto& pt : timeline->points) pts.push_back(json::array({pt[0], pt[1]}));
      c["datasets"].push_back(spec::Dataset(r->name + ": written", mbs, std::move(pts)));
    }
  }
  return c;
}

}  // namespace

void StreamPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    if (json b = BystanderOverTime(*p); !b.is_null()) out.push_back(std::move(b));
    // p99 where every row measured has one, else each row's worst probe.
    bool p99 = true;
    for (const Row& r : p->run->rows)
      if (spec::FigureOf(r, StreamKey("probe_max_ms").name) &&
          !spec::FigureOf(r, StreamKey("probe_p99_ms").name))
        p99 = false;
    for (json& c :
         spec::RowBars(*p, "stream: the trade-off per strategy — " + p->label,
                       {{StreamKey("mb_s").name, "throughput"},
                        {StreamKey("cached_end").name, "page cache left"},
                        {p99 ? StreamKey("probe_p99_ms").name : StreamKey("probe_max_ms").name,
                         p99 ? "bystander fsync p99" : "bystander fsync max"}},
                       out.empty() ? "stream" : "")) {
      c["caption"] =
          "Per strategy, one chart per unit: its throughput, the page cache it leaves behind and "
          "the bystander's fsync. The one to pick keeps throughput near plain's while leaving "
          "little cache and stalling the bystander little.";
      out.push_back(std::move(c));
    }
    if (json t = spec::TradeOff(*p, "stream: the trade-off, one point per trial — " + p->label,
                                StreamKey("probe_p99_ms").name, StreamKey("mb_s").name, "");
        !t.is_null() && t["datasets"].size() > 1)
      out.push_back(std::move(t));
  }
}

}  // namespace writelab
