// SPDX-License-Identifier: MIT
// The figures of `writelab stream` rows: key, label, unit and what each
// includes, in table order. Its own header, so that readers of results (the
// survey's recommendations, the reporters) name figures by checked keys
// (KeyOf) without depending on the experiment.
#pragma once

#include <string_view>

#include "core/result.h"

namespace writelab {

// The figures of its rows, in table order (docs/stream.md).
inline constexpr FigureSpec kStreamFigures[] = {
    {"mb_s", "MB/s", "MB/s", "all writes, the strategy's own syscalls and the final fsync"},
    {"write_mb_s", "write MB/s", "MB/s",
     "the write phase: write calls and the strategy's own sync_file_range/fadvise calls; "
     "excludes the final fsync"},
    {"sync_s", "final sync", "s", "the final fsync (library: StreamWriter::Finish)"},
    {"total_s", "elapsed", "s", "write phase plus the final fsync"},
    {"bytes", "written", "bytes", "bytes accepted by the kernel"},
    {"calls", "write calls", "calls", "write system calls (library: Append calls)"},
    {"short_writes", "short writes", "calls", "calls that wrote less than asked"},
    {"eintr_retries", "EINTR retries", "calls", "calls interrupted and retried"},
    {"dirty_peak", "peak Dirty", "bytes", "largest system-wide Dirty in /proc/meminfo sampled"},
    {"writeback_peak", "peak Writeback", "bytes", "largest system-wide Writeback sampled"},
    {"cached_end", "left cached", "bytes",
     "the file's pages in the page cache after the final sync"},
    {"probe_p50_ms", "probe p50", "ms", "bystander 4 KiB pwrite + fdatasync, median"},
    {"probe_p99_ms", "probe p99", "ms", "bystander 4 KiB pwrite + fdatasync, 99th percentile"},
    {"probe_max_ms", "probe max", "ms", "bystander 4 KiB pwrite + fdatasync, worst"},
    {"memcg_peak", "memcg peak", "bytes",
     "memcg:SIZE: the most memory the writer's cgroup was charged, its page cache included (v1 "
     "memory.max_usage_in_bytes, v2 memory.peak)"},
    {"vs_threshold", "written / writeback threshold", "x",
     "bytes written over the dirty background threshold where the kernel starts writing the "
     "device back (the parameter writeback_threshold): below 1 the trial met no writeback "
     "pressure"},
};

// A figure of kStreamFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey StreamKey(std::string_view key) { return KeyOf(kStreamFigures, key); }

}  // namespace writelab
