// SPDX-License-Identifier: MIT
// `writelab top`'s definition (command/definition.h): the whole machine's
// write path, live, per process, and who stalls whom (docs/top.md). Its
// parts: command.cc (the subcommand), watch.cc (the session), tally.cc
// (the accounting), screen.cc (the live screen), results.cc (the document).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "command/definition.h"
#include "core/result.h"
#include "core/run_context.h"
#include "writelab/error.h"

namespace writelab {

inline constexpr const char* kTopName = "top";
inline constexpr const char* kTopStallsName = "top-stalls";

inline constexpr const char* kTopReproduces =
    "what iotop, biotop and a post-mortem with ext4slower, offcputime and blktrace show by "
    "hand, for the whole machine at once: who dirties and writes, who is throttled, whose "
    "fsync waits, and whose writes it waited behind";

struct TopSpec {
  uint64_t duration_ns = 0;              // 0: until Ctrl-C
  uint64_t interval_ns = 1'000'000'000;  // the screen's and the document's interval
  size_t rows = 20;                      // processes and pairs on the screen
  bool quiet = false;                    // no live screen
};

// The figures of the two results.
inline constexpr FigureSpec kTopFigures[] = {
    {"dirtied_mb", "dirtied", "MB",
     "page cache it turned dirty (writeback_dirty_folio), in 10^6 bytes, over the run"},
    {"dirtied_mb_s", "dirtied per second", "MB/s", "dirtied_mb over the run's length"},
    {"written_mb", "written for it", "MB",
     "bytes queued to the disks for it: writeback of pages it dirtied (by whichever thread: "
     "flusher, journal, an fsync) and its direct I/O"},
    {"written_mb_s", "written per second", "MB/s", "written_mb over the run's length"},
    {"dirty_mb", "dirty at the end", "MB",
     "an estimate: the pages it dirtied during the run less those written back for it "
     "(pages deleted or truncated before writeback are counted as still dirty)"},
    {"throttled_ms", "throttled", "ms",
     "asleep in balance_dirty_pages (dirty throttling), in calls of 1 ms or more"},
    {"syncs", "durability calls", "calls",
     "fsync, fdatasync, sync_file_range, msync, syncfs, sync, O_SYNC/O_DSYNC writes, io_uring "
     "fsync"},
    {"sync_ms", "durability time", "ms", "their time, sys_enter to sys_exit, summed"},
    {"sync_p99_ms", "durability p99", "ms",
     "99th percentile of their times (exact within 1/16; only with 100 calls or more)"},
    {"sync_max_ms", "durability max", "ms", "the longest of them"},
    {"cpu_pct", "on CPU", "%", "share of the durability calls' time their threads ran"},
    {"runq_pct", "waiting for a CPU", "%", "share they were runnable, not running"},
    {"journal_pct", "journal commit", "%", "share they slept for a journal commit"},
    {"writeback_pct", "its writes", "%", "share they slept for their own writes"},
    {"flush_pct", "cache flush", "%", "share they slept for a cache flush"},
    {"other_pct", "other sleep", "%", "share they slept on anything else"},
    {"waited_ms", "waited on others", "ms",
     "its calls' blocked time charged to other processes or causes, or to none"},
    {"caused_ms", "made others wait", "ms", "other processes' blocked time charged to it"},
};

inline constexpr FigureSpec kTopStallFigures[] = {
    {"ms", "charged", "ms",
     "the victim's blocked time (journal commit, cache flush, its writes, throttling) charged "
     "to the culprit over the run: by the culprit's bytes in what the victim waited on"},
    {"share_pct", "share", "%", "of all the victim's blocked time charged"},
    {"calls", "calls", "calls", "the victim's calls that waited on the culprit"},
    {"max_interval_ms", "worst interval", "ms", "the most charged in one interval"},
};

consteval FigureKey TopKey(std::string_view key) { return KeyOf(kTopFigures, key); }
consteval FigureKey TopStallKeyOf(std::string_view key) { return KeyOf(kTopStallFigures, key); }

extern const ProgramDef kTopDef;

void AddTopCommand(CLI::App& app, CommandAction* action);

// Watches the machine until the duration ends or Ctrl-C; appends "top" and
// "top-stalls" to doc. An error: nothing could be watched (not root, no BTF).
Status RunTop(const TopSpec& spec, const RunContext& ctx, Document& doc);

}  // namespace writelab
