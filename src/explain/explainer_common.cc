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
std::optional<dev_t> ReadDev(const std::filesystem::path& p) {
  std::ifstream in(p);
  unsigned ma = 0, mi = 0;
  char colon = 0;
  if (!(in >> ma >> colon >> mi) || colon != ':') return std::nullopt;
  return makedev(ma, mi);
}

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
    const std::filesystem::path sys = "/sys/block/" + device;
    if (auto d = ReadDev(sys / "dev")) scope.block_devs.push_back(*d);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(sys, ec)) {
      if (!std::filesystem::exists(e.path() / "partition", ec)) continue;
      if (auto d = ReadDev(e.path() / "dev")) scope.block_devs.push_back(*d);
    }
  }
  return scope;
}

}  // namespace writelab
