// SPDX-License-Identifier: MIT
// What PacedWindow::unmet_flushes() means, in the words the rows' notes
// say after its count (the stream experiment's paced row, `writelab run`'s
// file rows). Header only: the shim, which links only libc, never
// includes it.
#pragma once

#include <string>
#include <string_view>

#include "core/units.h"
#include "lib/paced_window.h"

namespace writelab {

// " took more than half the target ... beside BESIDE, and a lower one only
// adds flushes": beside names the writer ("CMD", "this writer").
inline std::string UnmetFlushesWords(std::string_view beside) {
  return " took more than half the target with its window at the smallest, " +
         FormatBytes(static_cast<double>(PacedWindow::kMinWindow)) + ", each flushing " +
         FormatBytes(static_cast<double>(PacedWindow::kUnmetSpan)) +
         " at most: then the device did not give that target beside " + std::string(beside) +
         ", and a lower one only adds flushes";
}

}  // namespace writelab
