// SPDX-License-Identifier: MIT
#include "experiments/fsync/warmup.h"

#include <fmt/format.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/units.h"
#include "telemetry/procfs.h"

namespace writelab {
namespace {

// --bg-warmup auto: the most it waits for writeback to begin.
constexpr uint64_t kAutoWarmupCap = 30'000'000'000;

// Whether the background's writes are reaching the device: Dirty +
// Writeback at the writeback threshold (the kernel writes back from there),
// or the device written a quarter of the threshold since the warm-up began
// (a background that writes its own pages back, bg=window-drop or
// dontcache, reaches the device long before its dirty pages could).
struct WritebackWatch {
  MeminfoReader mem;
  BlockStatReader disk;
  std::optional<uint64_t> sectors0;
  uint64_t pages = 0, device = 0;
  explicit WritebackWatch(const std::string& device_name) : disk(device_name) {
    if (auto s = disk.Read()) sectors0 = s->write_sectors;
  }
  bool Begun(uint64_t threshold) {
    const MemSample m = mem.Read().value_or(MemSample{});
    pages = m.dirty + m.writeback;
    if (auto s = disk.Read(); s && sectors0) device = (s->write_sectors - *sectors0) * 512;
    return pages >= threshold || device >= threshold / 4;
  }
};

// Waits out the warm-up; fails if the load exits meanwhile. With
// --bg-warmup auto and a load that writes (random, stream), it then waits
// until writeback has begun (WritebackWatch), and says in *note how long
// that took, or that the cap came first.
}  // namespace

std::optional<std::string> WarmUp(const FsyncSpec& spec, BackgroundLoad* load, uint64_t ns,
                                  const std::string& device, const RunContext& ctx,
                                  std::string* note) {
  const uint64_t start = NowNs(), end = start + ns;
  WritebackWatch watch(device);
  while (NowNs() < end && !ctx.Interrupted()) {
    if (load)
      if (auto why = load->Exited()) return *why;
    usleep(10'000);
  }
  const bool wait_writeback =
      spec.bg_warmup_auto && spec.warmup_threshold && load && load->bytes_written();
  bool begun = false;
  while (wait_writeback && !ctx.Interrupted() && NowNs() - start < kAutoWarmupCap) {
    if (auto why = load->Exited()) return *why;
    if ((begun = watch.Begun(spec.warmup_threshold))) break;
    usleep(50'000);
  }
  if (wait_writeback && note)
    *note =
        fmt::format(
            "warm-up: {} until writeback began (Dirty + Writeback {}, the device written {}; "
            "threshold {})",
            FormatValue(static_cast<double>(NowNs() - start) / 1e9, "s"),
            FormatBytes(static_cast<double>(watch.pages)),
            FormatBytes(static_cast<double>(watch.device)),
            FormatBytes(static_cast<double>(spec.warmup_threshold))) +
        (begun ? std::string()
               : fmt::format("; not reached within {}", FormatValue(kAutoWarmupCap / 1e9, "s")));
  if (load)
    if (auto why = load->Exited()) return *why;
  return std::nullopt;
}

}  // namespace writelab
