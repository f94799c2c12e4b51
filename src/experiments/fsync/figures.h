// SPDX-License-Identifier: MIT
// The figures of `writelab fsync` rows: key, label, unit and what each
// includes, in table order. Its own header, so that readers of results (the
// survey's recommendations, the reporters) name figures by checked keys
// (KeyOf) without depending on the experiment.
#pragma once

#include <string_view>

#include "core/result.h"

namespace writelab {

// The figures of its rows, in table order (docs/fsync.md).
inline constexpr FigureSpec kFsyncFigures[] = {
    {"write_p50_ms", "write p50", "ms", "the pwrite of --write-size at offset 0, median"},
    {"write_p99_ms", "write p99", "ms", "the pwrite, 99th percentile"},
    {"write_max_ms", "write max", "ms", "the pwrite, worst"},
    {"sync_min_ms", "sync min", "ms", "the sync call after the write, best"},
    {"sync_p50_ms", "sync p50", "ms", "the sync call after the write, median"},
    {"sync_p90_ms", "sync p90", "ms", "the sync call, 90th percentile"},
    {"sync_p99_ms", "sync p99", "ms", "the sync call, 99th percentile"},
    {"sync_max_ms", "sync max", "ms", "the sync call, worst"},
    {"total_p50_ms", "write+sync p50", "ms", "write and sync together, median"},
    {"total_p99_ms", "write+sync p99", "ms", "write and sync together, 99th percentile"},
    {"total_max_ms", "write+sync max", "ms", "write and sync together, worst"},
    {"bg_mb_s", "background MB/s", "MB/s", "bytes the background load wrote during this row"},
    {"device_mb_s", "device MB/s", "MB/s",
     "bytes written to the target device during this row (/sys/block/DEV/stat), all sources"},
    {"dirty_peak", "peak Dirty", "bytes", "largest system-wide Dirty sampled during this row"},
    {"writeback_peak", "peak Writeback", "bytes",
     "largest system-wide Writeback sampled during this row"},
    {"bg_device_pct", "bg on device", "%",
     "bytes the device wrote during this row, as a share of the background's bytes: far below "
     "100, the background's pages stayed in the page cache (all writers count on the device)"},
    {"vs_none_pct", "vs none", "%",
     "with --mitigation: the change of the worst write+sync (median over the rounds) against the "
     "none row of the same background and method"},
    {"vs_none_low_pct", "vs none, low", "%", "the change's 95% interval, lower end (bootstrap)"},
    {"vs_none_high_pct", "vs none, high", "%", "the change's 95% interval, upper end"},
    {"vs_none_p", "vs none p", "p",
     "two-sided Mann-Whitney p-value over the rounds' worst write+sync, this row against none"},
};

// Below this share of the background's bytes on the device (bg_device_pct),
// a row's background stayed in the page cache: the row says so, and the
// survey draws no conclusion from it.
inline constexpr double kBackgroundInCachePct = 10;

// A figure of kFsyncFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey FsyncKey(std::string_view key) { return KeyOf(kFsyncFigures, key); }

}  // namespace writelab
