// SPDX-License-Identifier: MIT
#include "telemetry/memory_budget.h"

#include <sys/resource.h>

#include <charconv>
#include <tuple>

#include "core/units.h"
#include "telemetry/procfs.h"

namespace writelab {
namespace {

std::optional<uint64_t> Number(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// "VmSize:   123456 kB" in /proc/self/status, in bytes.
std::optional<uint64_t> StatusKb(const std::string& status, std::string_view key) {
  const size_t at = status.find(std::string(key) + ":");
  if (at == std::string::npos) return std::nullopt;
  const size_t start = status.find_first_of("0123456789", at);
  const size_t end = status.find(' ', start);
  if (start == std::string::npos || end == std::string::npos) return std::nullopt;
  auto kb = Number(std::string_view(status).substr(start, end - start));
  return kb ? std::optional(*kb * 1024) : std::nullopt;
}

// The room under a soft resource limit, given what the process uses of it.
void Lower(MemoryRoom& room, uint64_t bytes, const char* limit) {
  if (bytes < room.bytes) room = {bytes, limit};
}

void ResourceLimits(MemoryRoom& room) {
  const std::string status = ReadSmallFile("/proc/self/status").value_or("");
  for (auto [resource, key, name] : {std::tuple{RLIMIT_AS, "VmSize", "RLIMIT_AS"},
                                     std::tuple{RLIMIT_DATA, "VmData", "RLIMIT_DATA"}}) {
    rlimit rl{};
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) continue;
    const uint64_t used = StatusKb(status, key).value_or(0);
    Lower(room, rl.rlim_cur > used ? rl.rlim_cur - used : 0, name);
  }
}

// The process's cgroup (v2 "0::/path", or v1's memory controller) and the
// room its limit leaves.
void CgroupLimit(MemoryRoom& room) {
  const std::string groups = ReadSmallFile("/proc/self/cgroup").value_or("");
  size_t pos = 0;
  while (pos < groups.size()) {
    size_t end = groups.find('\n', pos);
    if (end == std::string::npos) end = groups.size();
    const std::string line = groups.substr(pos, end - pos);
    pos = end + 1;
    const size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    if (path.find("..") != std::string::npos) continue;
    std::string max, current;
    if (controllers.empty()) {  // v2
      max = "/sys/fs/cgroup" + path + "/memory.max";
      current = "/sys/fs/cgroup" + path + "/memory.current";
    } else if (controllers.find("memory") != std::string::npos) {
      max = "/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes";
      current = "/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes";
    } else {
      continue;
    }
    auto limit = Number(ReadSmallFile(max).value_or(""));  // "max": no limit
    if (!limit) continue;
    const uint64_t used = Number(ReadSmallFile(current).value_or("")).value_or(0);
    Lower(room, *limit > used ? *limit - used : 0,
          controllers.empty() ? "cgroup memory.max" : "cgroup memory.limit_in_bytes");
  }
}

}  // namespace

MemoryRoom AvailableMemory() {
  MemoryRoom room{UINT64_MAX, "no limit"};
  if (auto mem = ParseMeminfo(ReadSmallFile("/proc/meminfo").value_or(""))) {
    if (mem->available) Lower(room, mem->available, "MemAvailable");
  }
  ResourceLimits(room);
  CgroupLimit(room);
  return room;
}

std::optional<std::string> CheckMemory(std::string_view what, uint64_t bytes) {
  return CheckMemory(what, bytes, AvailableMemory());
}

}  // namespace writelab
