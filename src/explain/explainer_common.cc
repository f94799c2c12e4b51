// SPDX-License-Identifier: MIT
// The parts of --explain that do not need libbpf.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "explain/explainer.h"
#include "telemetry/sysfs_block.h"

namespace writelab {

const char* ExplainProbeName(ExplainProbe p) {
  switch (p) {
    case ExplainProbe::kBlock:
      return "block requests";
    case ExplainProbe::kThrottle:
      return "dirty throttling";
    case ExplainProbe::kConversions:
      return "extent conversions";
    case ExplainProbe::kJournal:
      return "journal commits";
    case ExplainProbe::kSyncParts:
      return "sync calls";
    case ExplainProbe::kWriteback:
      return "writeback";
    case ExplainProbe::kWbt:
      return "writeback throttling (blk-wbt)";
  }
  return "?";
}

ExplainCounters ExplainDelta(const ExplainCounters& after, const ExplainCounters& before) {
  static_assert(sizeof(ExplainCounters) % sizeof(__u64) == 0);
  constexpr size_t n = sizeof(ExplainCounters) / sizeof(__u64);
  __u64 a[n], b[n];
  std::memcpy(a, &after, sizeof a);
  std::memcpy(b, &before, sizeof b);
  for (size_t i = 0; i < n; ++i) a[i] -= b[i];
  ExplainCounters out;
  std::memcpy(&out, a, sizeof a);
  out.hz = after.hz ? after.hz : before.hz;
  return out;
}

namespace {

// "253:0\n" from a sysfs dev file.
}  // namespace

Result<ExplainScope> ExplainScopeOf(const std::string& dir, const std::string& device) {
  ExplainScope scope;
  scope.tgid = getpid();
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return Unexpected(ErrnoError(errno, "stat " + dir));
  scope.fs_dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  struct statvfs vfs;
  if (!S_ISBLK(st.st_mode) && statvfs(dir.c_str(), &vfs) == 0)
    scope.fs_block_size = static_cast<uint32_t>(vfs.f_bsize);
  if (!device.empty()) {
    for (dev_t d : DiskAndPartitions(device)) scope.block_devs.push_back(d);
  }
  return scope;
}

}  // namespace writelab
