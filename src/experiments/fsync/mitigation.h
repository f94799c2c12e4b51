// SPDX-License-Identifier: MIT
// `writelab fsync --mitigation`: the kernel's answers to the 2009 stall of
// a sync beside a streaming writer, each a setting applied for its rows and
// undone after them (docs/fsync.md, "Mitigations"):
//
//   none                 as it is
//   wbt=off, wbt=2ms     block-layer writeback throttling (blk-wbt, Linux
//                        4.10): the device's queue/wbt_lat_usec
//   bdi=SIZE             the device's own dirty limit (bdi max_bytes with
//                        strict_limit, Linux 6.2)
//   bg=dontcache,        the stream background writes with the stream
//   bg=window-drop       experiment's strategy instead of plain pwrites
//   scheduler=NAME       the device's I/O scheduler
//   cgroup=io.latency:T, the background in a cgroup of writelab's own
//   cgroup=io.max:SPEC   under the cgroup v2 io controller (unsupported
//                        where there is none)
//
// Each knob is journaled before it changes and restored when its guard
// goes (and by `writelab cleanup` after a kill).
#pragma once

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/fsync/spec.h"
#include "testbed/cgroup.h"
#include "testbed/scoped_change.h"
#include "writelab/error.h"

namespace writelab {

// "wbt=2ms" -> its Mitigation; an error names what is wrong, for --mitigation.
std::expected<Mitigation, std::string> ParseMitigation(const std::string& text);

// A mitigation in force: its knobs' changes (undone when it goes), for
// cgroup= the cgroup the background is to be placed in (OwnCgroup::Place
// before it starts; removed when it goes), and what the row should say
// about it ("wbt_lat_usec reads 0 under bfq: bfq turns wbt off").
struct AppliedMitigation {
  std::vector<ScopedChange> changes;
  std::unique_ptr<OwnCgroup> cgroup;
  std::vector<std::string> notes;
};

// Why a mitigation cannot be applied here, as a row says it: unsupported
// (the kernel or device lacks it), or failed (the change itself failed).
struct MitigationRefusal {
  bool unsupported = true;
  Error error;
};

// A scheduler row's note: "under bfq, wbt_lat_usec reads 0 (bfq turns
// writeback throttling off)"; bfq is named only when it is the scheduler.
std::string SchedulerWbtNote(const std::string& scheduler, const std::string& wbt_lat_usec);

// Applies m to the disk named device (its queue and bdi) through journal.
std::expected<AppliedMitigation, MitigationRefusal> ApplyMitigation(const Mitigation& m,
                                                                    const std::string& device,
                                                                    UndoJournal* journal);

}  // namespace writelab
