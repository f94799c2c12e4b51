// SPDX-License-Identifier: MIT
// The picture of `writelab run -- CMD` on the report page: per strategy run
// (plain beside the strategy with --compare), CMD's throughput, the page
// cache its files kept and, with --measure, the bystander's worst.
#include <nlohmann/json.hpp>

#include "program/run/def.h"
#include "program/run/figures.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

void RunPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    if (p->run->name != kRunName) continue;  // run-files: the tables say it
    for (json& c : spec::RowBars(*p, "run: CMD under each strategy — " + p->label,
                                 {{RunKey("mb_s").name, "throughput"},
                                  {RunKey("cached_end").name, "page cache left"},
                                  {RunKey("probe_max_ms").name, "bystander fdatasync max"}},
                                 out.empty() ? "run" : ""))
      out.push_back(std::move(c));
  }
}

}  // namespace writelab
