// SPDX-License-Identifier: MIT
// The picture of stream on the report page, drawn first in its section:
// the trade-off per strategy: throughput, the page cache left
// and the bystander's fsync (p99, or its worst with too few probes).
#include <nlohmann/json.hpp>

#include <vector>

#include "experiments/stream/def.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

void StreamPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    // p99 where every row measured has one, else each row's worst probe.
    bool p99 = true;
    for (const Row& r : p->run->rows)
      if (spec::FigureOf(r, "probe_max_ms") && !spec::FigureOf(r, "probe_p99_ms")) p99 = false;
    json c = spec::RowBars(*p, "stream: the trade-off per strategy — " + p->label,
                           {{"mb_s", "throughput"},
                            {"cached_end", "page cache left"},
                            {p99 ? "probe_p99_ms" : "probe_max_ms",
                             p99 ? "bystander fsync p99" : "bystander fsync max"}},
                           out.empty() ? "stream" : "");
    if (!c.is_null()) out.push_back(std::move(c));
  }
}

}  // namespace writelab
