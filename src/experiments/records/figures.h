// SPDX-License-Identifier: MIT
// The figures of `writelab records` rows: key, label, unit and what each
// includes, in table order. Its own header, so that readers of results (the
// survey's recommendations, the reporters) name figures by checked keys
// (KeyOf) without depending on the experiment.
#pragma once

#include <string_view>

#include "core/result.h"

namespace writelab {

// The figures of its rows, in table order (docs/records.md).
inline constexpr FigureSpec kRecordsFigures[] = {
    {"seconds", "seconds", "s",
     "the pass: first write to the last flush and the sync choice's syncs; excludes opening and "
     "the verification"},
    {"mb_s", "MB/s", "MB/s", "bytes written / seconds"},
    {"lines_s", "lines/s", "lines/s", "lines written / seconds"},
    {"syscalls_per_line", "syscalls/line", "calls",
     "write system calls (io_uring: io_uring_enter) plus sync calls, per line"},
    {"speedup", "vs write", "x", "lines/s over the write row with the same sync choice"},
    {"bytes", "written", "bytes", "bytes of the pass"},
    {"lines", "lines", "lines", "lines of the pass"},
    {"write_calls", "write calls", "calls", "write system calls counted by the engine"},
    {"sync_calls", "sync calls", "calls", "fdatasync / fsync calls"},
    {"short_writes", "short writes", "calls", "write calls that wrote less than asked"},
};

// A figure of kRecordsFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey RecordsKey(std::string_view key) { return KeyOf(kRecordsFigures, key); }

// The figures of the --commit rows, in table order (docs/records.md). Like
// every figure table, the same shape as the one above on purpose: data.
inline constexpr FigureSpec kCommitFigures[] = {
    {"commits_s", "commits/s", "commits/s", "records made durable per second, all threads"},
    {"p50_ms", "commit p50", "ms", "one commit: append/pwrite until durable, median"},
    {"p99_ms", "commit p99", "ms", "one commit, 99th percentile"},
    {"max_ms", "commit max", "ms", "one commit, worst"},
    {"records_per_sync", "records/sync", "records", "commits per fdatasync call"},
    {"sync_ms", "fdatasync", "ms", "mean time in one fdatasync call"},
    {"speedup", "vs fdatasync", "x",
     "commits/s over fdatasync/T (per-thread fdatasync, growing file), median to median"},
    {"commits", "commits", "records", "records committed in the row"},
    {"syncs", "fdatasyncs", "calls", "fdatasync calls"},
    {"zero_bytes", "zeros ahead", "bytes",
     "zeros written ahead of the records (prealloc rows); fdatasync-prealloc: before the clock"},
    {"ceiling_commits_s", "ceiling", "commits/s",
     "group rows: T / the row's own mean fdatasync time, the most commits/s any group commit of T "
     "threads, each with one record per cycle, can reach with these syncs"},
    {"ceiling_fraction", "of ceiling", "fraction", "group rows: commits/s / ceiling"},
    {"wait_timeouts", "wait timeouts", "syncs",
     "group rows: syncs that started after waiting in vain for the last cycle's committers"},
};

// A figure of kCommitFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey CommitKey(std::string_view key) { return KeyOf(kCommitFigures, key); }

}  // namespace writelab
