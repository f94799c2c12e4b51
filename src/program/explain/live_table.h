// SPDX-License-Identifier: MIT
// The live table of `writelab explain -- CMD` on stderr, once a second while
// it runs: per type of call, the calls of the last second, p50 and p99 of
// all its calls so far, and the split of the last second's time. Drawn only
// on a terminal (redrawn in place with ANSI cursor-up); on anything else,
// and with --quiet, nothing is printed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "explain/tracer.h"

namespace writelab {

class LiveTable {
 public:
  // The table's lines (no ANSI codes) from the tracer's sums now, against
  // those of the previous call: a header, a line of column names, and a
  // line per type of call (those with calls, most time in the last second
  // first, at most kMaxRows).
  std::vector<std::string> Update(const std::vector<TraceFile>& files,
                                  const std::vector<trace_hist>& hists, uint64_t elapsed_ns,
                                  uint64_t since_ns);
  // Draws lines over the table drawn last (cursor up, clear), on a terminal.
  void Draw(std::FILE* out, const std::vector<std::string>& lines);
  // Removes the table drawn last.
  void Erase(std::FILE* out);

  static constexpr size_t kMaxRows = 8;

 private:
  struct Sums {
    uint64_t calls = 0, ns = 0;
    uint64_t part_ns[SPLIT_PARTS] = {};
  };
  std::map<uint32_t, Sums> last_;  // per class
  size_t drawn_ = 0;               // lines on the terminal now
};

}  // namespace writelab
