// SPDX-License-Identifier: MIT
// The picture of prealloc on the report page, drawn first in its section:
// the 2012 table, workload time per mode with a bar per test
// bed, and the extents before and after.
#include <nlohmann/json.hpp>

#include <vector>

#include "experiments/prealloc/def.h"
#include "experiments/prealloc/figures.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

void PreallocPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  const ExperimentResult& first = *runs.front()->run;
  json c = spec::Picture("prealloc: workload time per mode", "bar",
                         spec::Axis("x", first.row_label, "category"), "prealloc");
  c["caption"] =
      "Time of the strided sync+direct writes per preallocation mode (median, min–max): a mode "
      "that leaves unwritten extents pays for converting them as it writes.";
  for (const Row& r : first.rows) c["labels"].push_back(spec::RowLabel(c, r));
  for (const RunPlan* p : runs) {
    json d = spec::Dataset(p->label, spec::YAxisFor(c, "s", "linear", "workload"), json::array());
    c["covers"] = json::array({PreallocKey("workload_s").name});
    for (const Row& r : first.rows) {
      const Row* mine = nullptr;
      for (const Row& m : p->run->rows)
        if (m.name == r.name) mine = &m;
      if (mine && mine->status != RowStatus::kOk) spec::RowLabel(c, *mine);
      spec::AddValue(d, mine ? spec::FigureOf(*mine, PreallocKey("workload_s").name) : nullptr);
    }
    c["datasets"].push_back(std::move(d));
  }
  out.push_back(std::move(c));
  for (const RunPlan* p : runs) {
    for (json& e : spec::RowBars(*p, "prealloc: extents before and after — " + p->label,
                                 {{PreallocKey("extents_before").name, "extents before"},
                                  {PreallocKey("unwritten_before").name, "unwritten before"},
                                  {PreallocKey("extents_after").name, "extents after"},
                                  {PreallocKey("unwritten_after").name, "unwritten after"}},
                                 "")) {
      e["caption"] =
          "The file's extents before and after the workload (FIEMAP): unwritten ones are "
          "converted as they are written, and many small ones are fragmentation.";
      out.push_back(std::move(e));
    }
  }
}

}  // namespace writelab
