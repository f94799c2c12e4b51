// SPDX-License-Identifier: MIT
#include "testbed/memory_cgroup.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "telemetry/procfs.h"

namespace writelab {
namespace {

// The value of "KEY N" in a flat keyed file (memory.events,
// memory.oom_control), nullopt when absent.
std::optional<uint64_t> KeyedValue(const std::string& path, const std::string& key) {
  std::istringstream lines(ReadSmallFile(path).value_or(""));
  std::string k;
  for (uint64_t v; lines >> k >> v;)
    if (k == key) return v;
  return std::nullopt;
}

std::optional<uint64_t> NumberIn(const std::string& path) {
  auto line = ReadLine(path);
  if (!line || line->empty() || line->find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::strtoull(line->c_str(), nullptr, 10);
}

}  // namespace

Result<CgroupPlace> FindMemoryCgroupPlace() {
  auto v2 = FindCgroupPlace();
  if (v2 && ListsController(ReadLine(v2->root + "/cgroup.controllers").value_or(""), "memory"))
    return v2;
  auto v1 = FindV1CgroupPlace("memory");
  if (v1) return v1;
  return std::unexpected(ErrnoError(
      ENOENT,
      "no memory controller: cgroup v2 does not offer it and no cgroup v1 hierarchy has it"));
}

Result<std::unique_ptr<MemoryCgroup>> MemoryCgroup::Make(uint64_t limit, UndoJournal& journal) {
  auto place = FindMemoryCgroupPlace();
  if (!place) return std::unexpected(place.error());
  auto made = OwnCgroup::Make(*place, {"memory"}, journal);
  if (!made) return std::unexpected(made.error());
  std::unique_ptr<MemoryCgroup> g(new MemoryCgroup(std::move(*made), place->v1, limit));
  auto set =
      g->group_->Set(place->v1 ? "memory.limit_in_bytes" : "memory.max", std::to_string(limit));
  if (!set) return std::unexpected(set.error());  // ~g removes the cgroup
  g->limit_ = std::strtoull(set->c_str(), nullptr, 10);
  return g;
}

std::optional<uint64_t> MemoryCgroup::OomKills() const {
  return KeyedValue(path() + (v1_ ? "/memory.oom_control" : "/memory.events"), "oom_kill");
}

std::optional<uint64_t> MemoryCgroup::PeakBytes() const {
  return NumberIn(path() + (v1_ ? "/memory.max_usage_in_bytes" : "/memory.peak"));
}

std::string MemoryCgroup::limit_file() const {
  return v1_ ? "cgroup v1 memory.limit_in_bytes" : "cgroup v2 memory.max";
}

}  // namespace writelab
