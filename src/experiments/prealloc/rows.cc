// SPDX-License-Identifier: MIT
#include "experiments/prealloc/rows.h"

#include <sys/stat.h>

#include <cerrno>

#include "experiments/prealloc/figures.h"
#include "explain/figures.h"
#include "telemetry/fiemap.h"

namespace writelab {

std::optional<Error> SnapshotExtents(int fd, const std::string& path, const char* when,
                                     std::map<std::string, double>& f) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoError(errno, "fstat " + path);
  std::string s = when;
  if (s == "after") f["size_after"] = static_cast<double>(st.st_size);
  f["allocated_" + s] = static_cast<double>(st.st_blocks) * 512;
  auto extents = ReadExtents(fd, path);
  if (!extents && extents.error().code == EOPNOTSUPP) return std::nullopt;  // tmpfs: unknown
  if (!extents) return extents.error();
  ExtentCounts c = CountExtents(*extents);
  f["extents_" + s] = static_cast<double>(c.total);
  f["unwritten_" + s] = static_cast<double>(c.unwritten);
  if (s == "after") f["written_after"] = static_cast<double>(c.written);
  return std::nullopt;
}

Row PreallocRow(std::string name, PreallocTrial& t) {
  std::vector<PreallocTrial> one;
  one.push_back(std::move(t));
  return PreallocRow(std::move(name), one);
}

Row PreallocRow(std::string name, std::vector<PreallocTrial>& trials) {
  const PreallocTrial* bad = nullptr;
  for (const PreallocTrial& t : trials)
    if (!bad && !t.outcome.ok()) bad = &t;
  Row row = MakeRow(std::move(name), bad ? bad->outcome : trials.front().outcome);
  if (bad == &trials.front()) return row;  // nothing measured
  std::map<std::string, std::vector<double>> figures, explained;
  Histogram latency;
  for (const PreallocTrial& t : trials) {  // a row that failed later keeps its rounds before
    if (!t.outcome.ok()) break;
    for (const auto& [key, v] : t.figures) figures[key].push_back(v);
    for (const auto& [key, v] : t.explained) explained[key].push_back(v);
    latency.Merge(t.latency);
  }
  AddFigures(row.figures, kPreallocFigures, figures);
  AddFigures(row.figures, kExplainFigures, explained);
  if (latency.count())
    row.latencies.push_back(
        Latency::From(latency, "write", "strided write", "one pwrite of --block with the --flags"));
  return row;
}

}  // namespace writelab
