// SPDX-License-Identifier: MIT
// The picture of fsync on the report page, drawn first in its section:
// what fsync-tester printed, each iteration's write+sync time, a
// line per background and method.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "experiments/fsync/def.h"
#include "report/html_plan.h"

namespace writelab {

using nlohmann::json;

void FsyncPictures(const std::vector<const RunPlan*>& runs, std::vector<json>& out) {
  for (const RunPlan* p : runs) {
    json c = spec::Picture("fsync: write+sync per iteration — " + p->label, "line",
                           spec::Axis("x", "iteration", "linear"), out.empty() ? "fsync" : "");
    c["caption"] =
        "Each point is one write+sync (log scale), in order through the trials: a background "
        "that makes it jump from milliseconds to seconds is the 2009 stall.";
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

}  // namespace writelab
