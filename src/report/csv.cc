// SPDX-License-Identifier: MIT
#include "report/csv.h"

#include <fmt/format.h>

#include "core/units.h"

namespace writelab {
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

std::string Quote(const std::string& s) { return CsvField(s); }

std::string Num(double v) { return fmt::format("{}", v); }

}  // namespace

std::string RenderCsv(const Document& doc) {
  std::string out =
      "experiment,testbed,scheduler,target,row,status,errno,figure,unit,n,median,min,max,mean,ci95_"
      "low,ci95_high,"
      "includes,host,run,rank\n";
  // Each line ends with the host and the run's start, so that files from
  // many runs can be concatenated; under MPI, then the rank ("all 3" for an
  // aggregate) and that rank's host.
  for (const ExperimentResult& e : doc.experiments) {
    std::string host = doc.host.hostname, rank;
    if (e.ranks > 0) rank = "all " + std::to_string(e.ranks);
    if (e.rank >= 0) {
      rank = std::to_string(e.rank);
      for (const RankInfo& info : doc.ranks)
        if (info.rank == e.rank) host = info.host.hostname;
    }
    const std::string tail =
        "," + Quote(host) + "," + Quote(doc.started_at) + "," + Quote(rank) + "\n";
    for (const Row& r : e.rows) {
      std::string head = Quote(e.name) + "," + Quote(e.testbed) + "," + Quote(e.scheduler) + "," +
                         Quote(e.target.path) + "," + Quote(r.name) + "," +
                         RowStatusName(r.status) + "," + std::to_string(r.error_code) + ",";
      if (r.status != RowStatus::kOk) {
        out += head + ",,0,,,,,,," + Quote(r.message) + tail;
        continue;
      }
      for (const Figure& f : r.figures) {
        const Summary& s = f.value;
        out += head + Quote(f.key) + "," + Quote(f.unit) + "," + std::to_string(s.n) + "," +
               Num(s.median) + "," + Num(s.min) + "," + Num(s.max) + "," + Num(s.mean) + "," +
               (s.ci95 ? Num(s.ci95->low) + "," + Num(s.ci95->high) : std::string(",")) + "," +
               Quote(f.includes) + tail;
      }
      for (const Latency& l : r.latencies) {
        for (const auto& [p, ns] : l.percentiles_ns) {
          out += head + Quote(fmt::format("{}_p{}", l.key, p)) + ",ns," + std::to_string(l.count) +
                 "," + std::to_string(ns) + ",,,,,," + Quote(l.includes) + tail;
        }
      }
    }
  }
  return Printable(out, true);
}

}  // namespace writelab
