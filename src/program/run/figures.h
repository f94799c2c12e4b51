// SPDX-License-Identifier: MIT
// The figures of `writelab run`: a row per strategy run (plain and the
// strategy with --compare), and a row per file CMD wrote (docs/run.md).
#pragma once

#include "core/result.h"

namespace writelab {

inline constexpr FigureSpec kRunFigures[] = {
    {"mb_s", "MB/s", "MB/s",
     "bytes CMD and its descendants wrote to storage over CMD's wall time (from start to exit)"},
    {"durable_mb_s", "MB/s until durable", "MB/s",
     "--compare or --measure: the same bytes over CMD's wall time plus settle: until none of the "
     "pages it wrote to its "
     "files of at least --min-file was dirty or under writeback (what was written is on the "
     "disk, or at least in its cache)"},
    {"elapsed_s", "elapsed", "s", "CMD's wall time, start to exit"},
    {"settle_s", "settle", "s",
     "after CMD exited, until the pages it left dirty in its files of at least --min-file "
     "were written back (cachestat; with --measure the bystander probes through it; only with "
     "--compare or --measure)"},
    {"bytes", "written", "bytes",
     "bytes the scope wrote to storage (/proc/PID/io write_bytes of CMD, its reaped "
     "descendants included)"},
    {"coverage_pct", "handled", "%",
     "of the bytes written to files CMD wrote at least --min-file to, the share the strategy "
     "handled"},
    {"cached_end", "left cached", "bytes",
     "the page cache still held, when CMD exited, by the files it wrote at least --min-file to "
     "(cachestat)"},
    {"dirty_peak", "peak Dirty", "bytes",
     "largest system-wide Dirty sampled while CMD ran (with --measure, and its pages settled)"},
    {"files", "files", "files", "regular files CMD wrote"},
    {"files_handled", "files handled", "files", "files the strategy handled (shim or supervisor)"},
    {"probe_p50_ms", "probe p50", "ms",
     "--measure: bystander 4 KiB pwrite + fdatasync while CMD ran and its dirty pages were "
     "written back, median"},
    {"probe_p99_ms", "probe p99", "ms",
     "--measure: bystander 4 KiB pwrite + fdatasync, 99th percentile"},
    {"probe_max_ms", "probe max", "ms", "--measure: bystander 4 KiB pwrite + fdatasync, worst"},
    {"exit_status", "exit status", "", "CMD's exit status (128 + N for a signal N)"},
    {"memcg_peak", "memcg peak", "bytes",
     "memcg:SIZE: the most memory its cgroup was charged, CMD's page cache included (v1 "
     "memory.max_usage_in_bytes, v2 memory.peak)"},
    {"oom_kills", "OOM kills", "processes",
     "memcg:SIZE: processes the OOM killer ended in its cgroup (oom_kill)"},
};

// A row per file.
inline constexpr FigureSpec kRunFileFigures[] = {
    {"written", "written", "bytes",
     "bytes written to it: as the shim counted them, else its growth while writelab watched"},
    {"handled", "handled", "bytes", "bytes the strategy handled"},
    {"cached_end", "left cached", "bytes",
     "its pages in the page cache when CMD exited (for a file CMD wrote at least --min-file to)"},
    {"size", "size", "bytes", "its size when CMD exited"},
};

consteval FigureKey RunKey(std::string_view key) { return KeyOf(kRunFigures, key); }
consteval FigureKey RunFileKey(std::string_view key) { return KeyOf(kRunFileFigures, key); }

}  // namespace writelab
