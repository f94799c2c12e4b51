// SPDX-License-Identifier: MIT
// How a `writelab prealloc` trial becomes a row: the figures measured during
// the trial (preparation and workload times, write percentiles), the file's
// allocation and extents before and after the workload from FIEMAP, and the
// write latency. Internal to the prealloc experiment; its own file so that the
// row building is tested on a file of the test's own.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/histogram.h"
#include "core/outcome.h"
#include "core/result.h"
#include "writelab/error.h"

namespace writelab {

// One mode's trial.
struct PreallocTrial {
  Outcome outcome;
  std::map<std::string, double> figures;    // keys of kPreallocFigures
  std::map<std::string, double> explained;  // --explain: keys of kExplainFigures
  Histogram latency;                        // each strided write
};

// The file's allocated bytes, extents and unwritten extents, into figures
// suffixed `when` ("before" or "after"; "after" also records the size and
// the written extents). A file system without FIEMAP (tmpfs) gives no extent
// figures and no error.
std::optional<Error> SnapshotExtents(int fd, const std::string& path, const char* when,
                                     std::map<std::string, double>& f);

// The mode's row: figures and latency for an ok trial, otherwise only name,
// status, errno and message.
Row PreallocRow(std::string name, PreallocTrial& t);
// Over rounds: figures are medians with min-max over the trials that
// completed, latencies merged. The first trial that was not ok decides the
// row's status (an unsupported mode is not tried again).
Row PreallocRow(std::string name, std::vector<PreallocTrial>& trials);

}  // namespace writelab
