// SPDX-License-Identifier: MIT
// --explain: where the time went, from the kernel's own tracepoints and
// function entries, counted in the kernel by explain.bpf.c (docs/explain.md).
// An experiment reads the counters before and after what it measures; the
// difference becomes the row's attribution figures (explain/figures.h).
#pragma once

#include <linux/types.h>
#include <sys/types.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "explain/explain_counters.h"
#include "writelab/error.h"

namespace writelab {

using ExplainCounters = explain_counters;

// What the programs may count: writelab's process, the target file
// system (st_dev of the directory) and the block devices under it.
struct ExplainScope {
  pid_t tgid = 0;
  dev_t fs_dev = 0;
  uint32_t fs_block_size = 0;     // statvfs f_bsize, for journal blocks in bytes
  std::vector<dev_t> block_devs;  // the disk and its partitions
};

// The groups of probes; each is there or not, as the kernel allows.
enum class ExplainProbe { kBlock, kThrottle, kConversions, kJournal, kSyncParts, kWriteback, kWbt };
inline constexpr int kExplainProbes = 7;
const char* ExplainProbeName(ExplainProbe p);

// after - before, field by field (hz kept).
ExplainCounters ExplainDelta(const ExplainCounters& after, const ExplainCounters& before);

// Loaded once per target; attached only while a row measures (ExplainSpan).
class Explainer {
 public:
  virtual ~Explainer() = default;
  // Attaches the programs of the groups asked for (and of those they
  // depend on: the call parts need the block and journal programs) that
  // the kernel accepts; a group that fails to attach is missing from then
  // on, with the reason. Detach undoes it. Nothing else is attached, so a
  // row pays only for what it attributes.
  virtual void Attach(std::initializer_list<ExplainProbe> groups) = 0;
  virtual void Detach() = 0;
  // Times only the calls of these threads (empty: every thread of the
  // process) until changed.
  virtual void TimeOnly(const std::vector<pid_t>& tids) = 0;
  // Counts the dirty throttling of only these threads (empty: every thread
  // of the process) until changed: the writers whose time x_throttled_pct
  // is a share of.
  virtual void ThrottleOnly(const std::vector<pid_t>& tids) = 0;
  // Whose writes were ahead of the timed calls (ahead_bytes): the files
  // that are writelab's own and those and the processes that are the
  // background's (each file by its file system and inode, as stat gives
  // them), until changed; anything else is another's.
  virtual void AheadOf(const std::vector<std::pair<dev_t, ino_t>>& own,
                       const std::vector<std::pair<dev_t, ino_t>>& background,
                       const std::vector<pid_t>& background_pids) = 0;
  // The counters so far, summed over CPUs.
  virtual ExplainCounters Read() const = 0;
  // What the self-check of the call split's state found wrong
  // (explain/split_check.h); empty when nothing.
  virtual std::vector<std::string> CheckNotes() const = 0;
  // Why a group is not counted ("" when it is).
  virtual std::string Missing(ExplainProbe p) const = 0;
  bool Sees(ExplainProbe p) const { return Missing(p).empty(); }
  // The target file system's block size (0: unknown).
  virtual uint32_t fs_block_size() const = 0;
};

// The counters over one row or phase of it: attached from construction to
// End() (or destruction). With a null explainer it does nothing.
class ExplainSpan {
 public:
  ExplainSpan(Explainer* e, std::initializer_list<ExplainProbe> groups) : e_(e) {
    if (!e_) return;
    e_->Attach(groups);
    before_ = e_->Read();
  }
  ~ExplainSpan() {
    if (e_) e_->Detach();
  }
  ExplainSpan(const ExplainSpan&) = delete;
  ExplainSpan& operator=(const ExplainSpan&) = delete;
  // The difference since construction; nullopt without an explainer.
  std::optional<ExplainCounters> End() {
    if (!e_) return std::nullopt;
    ExplainCounters d = ExplainDelta(e_->Read(), before_);
    e_->Detach();
    e_ = nullptr;
    return d;
  }

 private:
  Explainer* e_;
  ExplainCounters before_{};
};

// The one line that says why --explain cannot run here (not root, no BTF,
// not built in), or nullopt when it can.
std::optional<std::string> ExplainRefusal();

// Loads the programs the kernel has points for and attaches them.
Result<std::unique_ptr<Explainer>> StartExplainer(const ExplainScope& scope);

// The scope of a target: the file system of dir, its disk and partitions.
Result<ExplainScope> ExplainScopeOf(const std::string& dir, const std::string& device);

}  // namespace writelab
