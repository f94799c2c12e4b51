// SPDX-License-Identifier: MIT
// The figures of `writelab stride` rows: key, label, unit and what each
// includes, in table order. Its own header, so that readers of results (the
// survey's recommendations, the reporters) name figures by checked keys
// (KeyOf) without depending on the experiment.
#pragma once

#include <string_view>

#include "core/result.h"

namespace writelab {

// The figures of its rows, in table order (docs/stride.md).
inline constexpr FigureSpec kStrideFigures[] = {
    {"cycles", "CYCLES", "writes", "writes completed in the step"},
    {"written_mb", "WRITTEN (MB)", "MB", "bytes written in the step, in 10^6 bytes"},
    {"elapsed_s", "ELAPSED (s)", "s", "the step's duration, first write to last completion"},
    {"mb_s", "SPEED (MB/s)", "MB/s", "written / elapsed"},
    {"write_p50_ms", "p50", "ms", "one write from issue to completion, median"},
    {"write_p99_ms", "p99", "ms", "one write from issue to completion, 99th percentile"},
    {"write_max_ms", "max", "ms", "one write from issue to completion, worst"},
    {"syscalls_per_write", "syscalls/write", "calls",
     "system calls per write: pwrite calls, or io_uring_enter calls (submits and waits) for "
     "io_uring"},
    {"device_writes", "dev writes", "I/Os",
     "write requests the device completed during the step (/sys/block/DEV/stat)"},
    {"device_merges", "dev merges", "merges", "writes the block layer merged into others"},
    {"device_kib_per_write", "KiB/dev write", "KiB", "bytes per completed device write"},
};

// A figure of kStrideFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey StrideKey(std::string_view key) { return KeyOf(kStrideFigures, key); }

}  // namespace writelab
