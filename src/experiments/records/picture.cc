// SPDX-License-Identifier: MIT
// The picture of records on the report page, drawn first in its section:
// lines/s per method on a log axis, the synchronous variants on
// a chart of their own.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "experiments/records/def.h"
#include "experiments/records/figures.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

namespace {

bool HasSlash(const Row& r) { return r.name.find('/') != std::string::npos; }
bool NoSlash(const Row& r) { return !HasSlash(r); }

}  // namespace

void RecordsPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    for (bool sync : {false, true}) {
      for (json& c : spec::RowBars(*p,
                                   std::string("records: lines/s per method") +
                                       (sync ? ", synchronous variants" : "") + " — " + p->label,
                                   {{RecordsKey("lines_s").name, "lines/s"}},
                                   out.empty() ? "records" : "", sync ? HasSlash : NoSlash)) {
        c["y"][0]["type"] = "logarithmic";
        c["caption"] = sync ? "Lines per second when every line is durable (log scale): the "
                              "device's flush latency sets the rate, whatever the method."
                            : "Lines per second per method (log scale): the methods that hand the "
                              "kernel many lines per system call win by an order of magnitude.";
        out.push_back(std::move(c));
      }
    }
  }
}

}  // namespace writelab
