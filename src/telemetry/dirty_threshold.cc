// SPDX-License-Identifier: MIT
#include "telemetry/dirty_threshold.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"
#include "telemetry/procfs.h"

namespace writelab {
namespace {

uint64_t VmKnob(const char* name, uint64_t otherwise) {
  auto text = ReadLine(std::string("/proc/sys/vm/") + name);
  if (!text) return otherwise;
  auto v = ParseSize(*text);
  return v ? *v : otherwise;
}

}  // namespace

DirtyThreshold BackgroundThreshold(const std::string& device) {
  DirtyThreshold t;
  const uint64_t bg_bytes = VmKnob("dirty_background_bytes", 0);
  const uint64_t bg_ratio = VmKnob("dirty_background_ratio", 10);
  const uint64_t ratio = std::max<uint64_t>(VmKnob("dirty_ratio", 20), 1);
  if (bg_bytes) {
    t.bytes = bg_bytes;
    t.how = "vm.dirty_background_bytes";
  } else {
    MeminfoReader mem;
    const uint64_t dirtyable = mem.Read().value_or(MemSample{}).available;
    t.bytes = dirtyable / 100 * bg_ratio;
    t.how = fmt::format("{}% of {} dirtyable memory (vm.dirty_background_ratio)", bg_ratio,
                        FormatBytes(static_cast<double>(dirtyable)));
  }
  if (device.empty()) return t;
  // A byte limit on the device with strict_limit caps its share: writeback
  // starts at the limit's background part (the kernel's wb_calc_thresh).
  // Without strict_limit the limit counts only once the global dirty pages
  // pass the global thresholds' midpoint (balance_dirty_pages runs free
  // below it), and before that only the flusher's periodic wake-up
  // (dirty_writeback_centisecs) writes the device back: the global
  // threshold applies.
  // max_bytes always reads as a size: a limit only below 100%, 1000000 in
  // max_ratio_fine's millionths.
  const std::string bdi = "/sys/block/" + device + "/bdi/";
  const auto fine = ReadLine(bdi + "max_ratio_fine");
  const auto max_bytes = ReadLine(bdi + "max_bytes");
  const auto strict = ReadLine(bdi + "strict_limit");
  const bool limited = fine && ParseSize(*fine).value_or(1'000'000) < 1'000'000 && strict &&
                       ParseSize(*strict).value_or(0) == 1;
  const uint64_t limit = limited && max_bytes ? ParseSize(*max_bytes).value_or(0) : 0;
  const uint64_t share = limit / ratio * std::min(bg_ratio, ratio);
  if (limit && share < t.bytes) {
    t.bytes = share;
    t.how = fmt::format("{}/{} of {}'s own limit of {} (bdi max_bytes)", std::min(bg_ratio, ratio),
                        ratio, device, FormatBytes(static_cast<double>(limit)));
  }
  return t;
}

}  // namespace writelab
