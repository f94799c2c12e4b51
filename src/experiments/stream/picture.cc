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

void StreamPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    // p99 where every row measured has one, else each row's worst probe.
    bool p99 = true;
    for (const Row& r : p->run->rows)
      if (spec::FigureOf(r, StreamKey("probe_max_ms").name) &&
          !spec::FigureOf(r, StreamKey("probe_p99_ms").name))
        p99 = false;
    json c = spec::RowBars(*p, "stream: the trade-off per strategy — " + p->label,
                           {{StreamKey("mb_s").name, "throughput"},
                            {StreamKey("cached_end").name, "page cache left"},
                            {p99 ? StreamKey("probe_p99_ms").name : StreamKey("probe_max_ms").name,
                             p99 ? "bystander fsync p99" : "bystander fsync max"}},
                           out.empty() ? "stream" : "");
    if (!c.is_null()) out.push_back(std::move(c));
  }
}

}  // namespace writelab
