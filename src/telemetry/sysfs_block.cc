// SPDX-License-Identifier: MIT
#include "telemetry/sysfs_block.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>

namespace writelab {

std::string SysfsBlockDir(dev_t dev) {
  const std::string link =
      "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  char buf[PATH_MAX];
  return realpath(link.c_str(), buf) ? std::string(buf) : "";
}

std::string SysfsBlockName(dev_t dev) {
  const std::string dir = SysfsBlockDir(dev);
  return dir.empty() ? "" : std::filesystem::path(dir).filename().string();
}

std::optional<dev_t> ReadDevFile(const std::string& path) {
  std::ifstream in(path);
  unsigned ma = 0, mi = 0;
  char colon = 0;
  if (!(in >> ma >> colon >> mi) || colon != ':') return std::nullopt;
  return makedev(ma, mi);
}

dev_t DiskOf(dev_t dev) {
  const std::string dir = SysfsBlockDir(dev);
  std::error_code ec;
  if (dir.empty() || !std::filesystem::exists(dir + "/partition", ec)) return dev;
  return ReadDevFile(std::filesystem::path(dir).parent_path() / "dev").value_or(dev);
}

std::vector<dev_t> DiskAndPartitions(const std::string& name) {
  std::vector<dev_t> out;
  const std::filesystem::path sys = "/sys/block/" + name;
  if (auto d = ReadDevFile(sys / "dev")) out.push_back(*d);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(sys, ec)) {
    if (!std::filesystem::exists(e.path() / "partition", ec)) continue;
    if (auto d = ReadDevFile(e.path() / "dev")) out.push_back(*d);
  }
  return out;
}

std::optional<uint64_t> RequestsInFlight(dev_t disk) {
  std::ifstream in("/sys/dev/block/" + std::to_string(major(disk)) + ":" +
                   std::to_string(minor(disk)) + "/inflight");
  uint64_t reads = 0, writes = 0;
  if (!(in >> reads >> writes)) return std::nullopt;
  return reads + writes;
}

}  // namespace writelab
