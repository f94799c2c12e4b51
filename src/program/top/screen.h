// SPDX-License-Identifier: MIT
// `writelab top`'s screen (docs/top.md): the last interval per process, and
// who stalled whom, as lines of text (drawn in place on a terminal by
// LiveTable::Draw).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "program/top/tally.h"

namespace writelab {

struct TopScreenContext {
  double elapsed_s = 0;
  uint64_t dirty = 0, writeback = 0;  // the machine's, /proc/meminfo (bytes)
  size_t rows = 20;                   // processes shown at most, and as many pairs
};

// The header, the processes of the interval (most active first: bytes
// dirtied and written, time in durability calls and throttled), and the
// victim -> culprit pairs charged in the interval, with their totals so far.
std::vector<std::string> TopScreen(const TopInterval& now,
                                   const std::map<uint32_t, TopProcess>& run,
                                   const std::map<TopStallKey, TopStall>& run_stalls,
                                   const TopScreenContext& ctx);

// "dd (pid 4242)", "the journal's own blocks": the culprit of a pair.
std::string TopCulpritName(const TopStallKey& k, const TopStall& s);
// "sqlite3 (pid 4250) <- dd (pid 4242)": a pair.
std::string TopStallName(const TopStallKey& k, const TopStall& s);

// How active a process was: what orders the screen's and the results' rows.
double TopActivity(const TopProcess& p);

}  // namespace writelab
