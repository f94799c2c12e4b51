// SPDX-License-Identifier: MIT
// The figures of `writelab prealloc` rows: key, label, unit and what each
// includes, in table order. Its own header, so that readers of results (the
// survey's recommendations, the reporters) name figures by checked keys
// (KeyOf) without depending on the experiment.
#pragma once

#include <string_view>

#include "core/result.h"

namespace writelab {

// The figures of its rows, in table order (docs/prealloc.md).
inline constexpr FigureSpec kPreallocFigures[] = {
    {"prep_s", "preparation", "s", "making the file in this mode, then fsync"},
    {"workload_s", "workload", "s", "all the strided writes (each synchronous with the flags)"},
    {"write_p50_ms", "write p50", "ms", "one strided write, median"},
    {"write_p99_ms", "write p99", "ms", "one strided write, 99th percentile"},
    {"write_max_ms", "write max", "ms", "one strided write, worst"},
    {"extents_before", "extents before", "extents", "FIEMAP extents after preparation"},
    {"unwritten_before", "unwritten before", "extents", "of those, unwritten"},
    {"extents_after", "extents after", "extents", "FIEMAP extents after the workload"},
    {"unwritten_after", "unwritten after", "extents", "of those, unwritten"},
    {"written_after", "written after", "extents", "of those, written"},
    {"size_after", "size", "bytes", "file size after the workload"},
    {"allocated_before", "allocated before", "bytes", "st_blocks x 512 after preparation"},
    {"allocated_after", "allocated after", "bytes", "st_blocks x 512 after the workload"},
};

// A figure of kPreallocFigures by its key, checked when the program is compiled
// (KeyOf): what makes a row's figure names it this way.
consteval FigureKey PreallocKey(std::string_view key) { return KeyOf(kPreallocFigures, key); }

}  // namespace writelab
