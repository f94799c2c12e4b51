// SPDX-License-Identifier: MIT
#include "telemetry/canary.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <expected>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/stats.h"

namespace writelab {
namespace {

constexpr FigureSpec kCanaryFigures[] = {
    {"cpu_loop_ms", "CPU loop", "ms", "a fixed loop of 4M multiply-adds, one thread"},
    {"fdatasync_us", "4 KiB write + fdatasync", "us",
     "pwrite of 4 KiB at offset 0 and fdatasync, into an unnamed file in the directory"},
};

// A fixed amount of dependent arithmetic: what it takes varies with the
// CPU's frequency and with whatever else runs on it, not with the input.
double CpuLoopMs() {
  const uint64_t start = NowNs();
  uint64_t x = 2009;
  for (int i = 0; i < 4'000'000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  asm volatile("" : : "r"(x));  // the result is used: the loop is not optimised away
  return static_cast<double>(NowNs() - start) / 1e6;
}

// One call not counted, then kCanarySyncs timed; an error ends it.
std::expected<std::vector<double>, std::string> SyncUs(int fd) {
  char block[4096];
  std::memset(block, 0xa5, sizeof block);
  std::vector<double> us;
  for (int i = 0; i <= kCanarySyncs; ++i) {
    const uint64_t start = NowNs();
    if (pwrite(fd, block, sizeof block, 0) != static_cast<ssize_t>(sizeof block) ||
        fdatasync(fd) != 0)
      return std::unexpected(std::string("write + fdatasync: ") + std::strerror(errno));
    if (i > 0) us.push_back(static_cast<double>(NowNs() - start) / 1e3);
  }
  return us;
}

}  // namespace

Canary MeasureCanary(const std::string& dir) {
  Canary c;
  c.where = dir;
  std::vector<double> cpu;
  for (int i = 0; i < kCanaryLoops; ++i) cpu.push_back(CpuLoopMs());
  c.figures.push_back(kCanaryFigures[0].Make(Summarize(std::move(cpu))));
  // No name in the directory: nothing of the user's can be met or left; a
  // symlink planted at the directory's own name is not followed.
  const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    c.note = "no fdatasync part: an unnamed file in " + dir + ": " + std::strerror(errno);
    return c;
  }
  auto us = SyncUs(fd);
  close(fd);
  if (!us) {
    c.note = "no fdatasync part: " + dir + ": " + us.error();
    return c;
  }
  c.figures.push_back(kCanaryFigures[1].Make(Summarize(std::move(*us))));
  return c;
}

}  // namespace writelab
