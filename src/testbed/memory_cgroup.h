// SPDX-License-Identifier: MIT
// A memory cgroup of writelab's own, for `run --strategy memcg:SIZE`: CMD
// runs in it, its page cache charged to it under a limit, as users confine
// a copy that would otherwise fill the page cache (docs/run.md, "Anchors").
//
// The memory controller is looked for on cgroup v2 first (its root offers
// "memory": the limit is memory.max), else on a cgroup v1 hierarchy that
// has it (memory.limit_in_bytes), as on machines that still mount v1's
// memory hierarchy. The cgroup itself is an OwnCgroup (testbed/cgroup.h):
// journaled before it is made, removed with what is left in it killed, by
// Revert, by the destructor, and by `writelab cleanup` after a kill -9.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "testbed/cgroup.h"
#include "writelab/error.h"

namespace writelab {

class MemoryCgroup {
 public:
  // Makes the cgroup and sets its limit (bytes, read back: the kernel
  // rounds to pages). An error says why not (no memory controller, a v2
  // cgroup with processes of its own, not root).
  static Result<std::unique_ptr<MemoryCgroup>> Make(uint64_t limit, UndoJournal& journal);

  // Moves pid (and the children it forks from then on) into the cgroup.
  Status Place(pid_t pid) { return group_->Place(pid); }
  // How often the OOM killer ended a process of the cgroup (v2
  // memory.events, v1 memory.oom_control: "oom_kill N"); nullopt when the
  // kernel does not say.
  std::optional<uint64_t> OomKills() const;
  // The most memory the cgroup was charged (v1 memory.max_usage_in_bytes,
  // v2 memory.peak where the kernel has it, Linux 5.19), page cache
  // included.
  std::optional<uint64_t> PeakBytes() const;
  // Kills what is left in the cgroup and removes it (OwnCgroup::Revert).
  Status Revert() { return group_->Revert(); }

  const std::string& path() const { return group_->path(); }
  uint64_t limit() const { return limit_; }
  // "cgroup v1 memory.limit_in_bytes" or "cgroup v2 memory.max": what the
  // limit is, for a row's note.
  std::string limit_file() const;

 private:
  MemoryCgroup(std::unique_ptr<OwnCgroup> group, bool v1, uint64_t limit)
      : group_(std::move(group)), v1_(v1), limit_(limit) {}
  std::unique_ptr<OwnCgroup> group_;
  bool v1_;
  uint64_t limit_;
};

// Where a memory cgroup would be made (v2 where its root offers memory,
// else v1's memory hierarchy), or why there is none.
Result<CgroupPlace> FindMemoryCgroupPlace();

}  // namespace writelab
