// SPDX-License-Identifier: MIT
// The picture of `writelab run -- CMD` on the report page: per strategy run
// (plain beside the strategy with --compare), CMD's throughput, the page
// cache its files kept and, with --measure, the bystander's worst; with
// --compare --measure first the trade-off, a point per trial.
#include <nlohmann/json.hpp>

#include "program/run/def.h"
#include "program/run/figures.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

void RunPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  bool first_trade_off = true, first_bars = true;  // the ids on the first of each
  for (const RunPlan* p : runs) {
    if (p->run->name != kRunName) continue;  // run-files: the tables say it
    if (json t = spec::TradeOff(*p, "run: the trade-off, one point per trial — " + p->label,
                                RunKey("probe_p99_ms").name, RunKey("durable_mb_s").name,
                                first_trade_off ? "run-tradeoff" : "");
        !t.is_null() && t["datasets"].size() > 1) {
      out.push_back(std::move(t));
      first_trade_off = false;
    }
    for (json& c : spec::RowBars(*p, "run: CMD under each strategy — " + p->label,
                                 {{RunKey("mb_s").name, "throughput"},
                                  {RunKey("cached_end").name, "page cache left"},
                                  {RunKey("probe_max_ms").name, "bystander fdatasync max"}},
                                 first_bars ? "run" : "")) {
      out.push_back(std::move(c));
      first_bars = false;
    }
  }
}

}  // namespace writelab
