// SPDX-License-Identifier: MIT
// `writelab top`'s accounting (docs/top.md): what the tracer delivers for the
// whole machine (durability and slow calls, charged windows: explain's
// tracer and blame.h), added up per process and per interval, and each
// call's blocked time charged to who made it wait.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "explain/tracer.h"
#include "program/explain/blame.h"

namespace writelab {

// One process over an interval, or over the whole run.
struct TopProcess {
  std::string comm;
  uint64_t dirtied = 0;  // bytes of page cache it turned dirty
  uint64_t written = 0;  // bytes written to disks for it: its pages' writeback, its direct I/O
  uint64_t written_cached = 0;  // of which its page cache's (the rest: direct I/O)
  double throttled_ms = 0;      // asleep in balance_dirty_pages (its calls of 1 ms or more)
  uint64_t syncs = 0;           // durability calls: fsync, fdatasync, sync*, msync, O_*SYNC writes
  uint64_t sync_ns = 0;         // their time, summed
  uint64_t sync_part_ns[SPLIT_PARTS] = {};
  uint64_t sync_max_ns = 0;
  double waited_ms = 0;  // its calls' blocked time charged to others (not itself)
  double caused_ms = 0;  // others' calls' blocked time charged to it
  // The 99th percentile of its durability calls, where they were at least
  // 100 (Histogram::SupportedPercentile); set when the interval closes.
  std::optional<double> sync_p99_ms;
};

// The culprit of a victim's blocked time that no write explains (blame.h's
// unattributed): dirty throttling, other sleep, an empty commit or flush.
inline constexpr uint16_t kCauseUncharged = 101;

// Victim -> culprit: the victim's blocked time charged to the culprit.
struct TopStallKey {
  uint32_t victim = 0;
  CulpritId culprit;
  auto operator<=>(const TopStallKey&) const = default;
};
struct TopStall {
  std::string victim_comm, culprit_comm;
  double ms = 0;
  uint64_t calls = 0;  // the victim's calls it made wait
};

struct TopInterval {
  uint64_t t0_ns = 0, t1_ns = 0;  // CLOCK_MONOTONIC
  std::map<uint32_t, TopProcess> processes;
  std::map<TopStallKey, TopStall> stalls;  // calls charged in this interval
  double seconds() const { return static_cast<double>(t1_ns - t0_ns) / 1e9; }
};

// Names a process by its number ("" when it is gone): /proc/PID/comm.
using CommOf = std::function<std::string(uint32_t tgid)>;

class TopTally {
 public:
  TopTally(uint64_t start_ns, CommOf comm_of);

  void AddCall(const TraceCall& c);
  void AddCharges(ChargeWindow w);
  // The disk under a file system (kernel dev_t encodings), for the calls'
  // flushes and queues.
  void SetDisk(uint32_t fs, uint32_t disk) { disk_of_[fs] = disk; }

  // Ends the interval at now. A call is charged to its culprits one
  // interval after it arrived (the windows of the writes queued around its
  // end close up to 10 ms later); final: every call left is charged now.
  TopInterval Close(uint64_t now_ns, bool final);

  // Over the run so far (sync_p99_ms filled in).
  std::map<uint32_t, TopProcess> Run() const;
  const std::map<TopStallKey, TopStall>& RunStalls() const { return run_stalls_; }
  const std::vector<TopInterval>& Intervals() const { return intervals_; }
  // Windows delivered but no longer kept (beyond kMaxKeptCalls in kWindowKeepNs).
  uint64_t windows_dropped() const { return windows_dropped_; }

  // Windows are kept this long after they end, for calls that began before.
  static constexpr uint64_t kWindowKeepNs = 60'000'000'000ull;

 private:
  TopProcess& In(std::map<uint32_t, TopProcess>& m, uint32_t tgid, const std::string& comm);
  void Rename(uint32_t tgid, const std::string& comm);
  void Charge(const TraceCall& c, const BlameIndex& index);
  void Prune(uint64_t now_ns);

  CommOf comm_of_;
  std::map<uint32_t, std::string> comms_;
  std::map<uint32_t, uint32_t> disk_of_;
  std::vector<ChargeWindow> windows_;
  HeldByFs held_before_;  // the dirty pages held as the first window kept began
  uint64_t windows_dropped_ = 0;
  std::vector<TraceCall> pending_, arriving_;  // to charge at the next Close, and the one after
  TopInterval now_;
  std::map<uint32_t, TopProcess> run_;
  std::map<uint32_t, Histogram> latency_now_, latency_run_;  // durability calls' times
  std::map<TopStallKey, TopStall> run_stalls_;
  std::vector<TopInterval> intervals_;
};

}  // namespace writelab
