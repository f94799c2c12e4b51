// SPDX-License-Identifier: MIT
// Who made a call wait (docs/explain.md, "Who made it wait"): the time a
// call slept for a journal commit, a cache flush or its own writes, charged
// to the processes whose writes that commit, flush or queue carried, in
// proportion to their bytes (trace_counters.h's charge records); and its
// waits for locks, each to the lock's holder (split_lock).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "explain/tracer.h"

namespace writelab {

// The cause of bytes a window held beyond its named culprits (TRACE_CHARGE_ENTRIES).
inline constexpr uint16_t kCauseUnnamed = 100;

// A lock's holder (TRACE_CAUSE_LOCK, TRACE_CAUSE_LOCK_READERS,
// TRACE_CAUSE_LOCK_FLUSHER) or a journal handle's (TRACE_CAUSE_HANDLE,
// TRACE_CAUSE_HANDLE_FLUSHER): charged time for a wait, never bytes.
inline bool IsLockCause(uint16_t cause) {
  return cause == TRACE_CAUSE_LOCK || cause == TRACE_CAUSE_LOCK_READERS ||
         cause == TRACE_CAUSE_LOCK_FLUSHER || cause == TRACE_CAUSE_HANDLE ||
         cause == TRACE_CAUSE_HANDLE_FLUSHER;
}

// A culprit that is a process (tgid): what it dirtied or issued, a lock or
// a journal handle it held, or one a flusher held writing back its pages.
inline bool IsProcessCause(uint16_t cause) {
  return cause == TRACE_CAUSE_PROCESS || cause == TRACE_CAUSE_LOCK ||
         cause == TRACE_CAUSE_LOCK_FLUSHER || cause == TRACE_CAUSE_HANDLE ||
         cause == TRACE_CAUSE_HANDLE_FLUSHER;
}

// Whom bytes are charged to: a process, or a cause with no process behind it.
struct CulpritId {
  uint16_t cause = TRACE_CAUSE_UNKNOWN;  // TRACE_CAUSE_*
  uint32_t tgid = 0;
  auto operator<=>(const CulpritId&) const = default;
};

// A window or commit as kept: its charges, without the record's padding;
// a commit's wait for the handles open on its transaction, from locked_ns
// to unlocked_ns, and the holder of the last one (holder SPLIT_LOCK_UNSEEN:
// none seen).
struct ChargeWindow {
  uint32_t kind = TRACE_CHARGE_WINDOW, dev = 0;
  bool flush = false;
  uint64_t t0 = 0, t1 = 0, rest_bytes = 0;
  uint64_t done_bytes = 0;  // a disk's window: write bytes completed in it
  std::vector<trace_charge> charges;
  uint64_t locked_ns = 0, unlocked_ns = 0;
  split_lock_holder handle{};
  static ChargeWindow From(const TraceCharges& e);
};

// What one culprit wrote to the watched disks over the run, and of which
// files; and what it dirtied on the watched file systems.
struct CulpritWrites {
  std::string comm;
  uint64_t bytes = 0, dirtied = 0;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> files;  // (dev, inode) -> bytes
};

// The dirty page cache each culprit held on one file system: what it
// dirtied there less what was written back for it, never below nothing
// (what was written back beyond it was dirtied before tracing began);
// bytes and name. Per file system (kernel dev_t encoding).
using HeldBytes = std::map<CulpritId, std::pair<uint64_t, std::string>>;
using HeldByFs = std::map<uint32_t, HeldBytes>;

// Adds what w changed to held (weight: the share of it that counts): a
// dirty window's pages dirtied, a disk window's writeback of files' pages.
// Windows must be added in the order they ended.
void AddHeld(const ChargeWindow& w, HeldByFs& held, double weight = 1.0);

// A commit's thread runs this long at most after the last handle on its
// locked transaction stopped (its wake-up), charged to that handle's
// holder with the wait; a longer rest is the commit's own time.
inline constexpr uint64_t kHandleStopSlackNs = 1'000'000;

// A call's blocked time, charged.
struct CallBlame {
  struct Share {
    CulpritId who;
    std::string comm;
    double ms = 0;
    uint64_t bytes = 0;  // of the commits, flushes and queue it waited on
  };
  std::vector<Share> shares;  // most ms first
  double blocked_ms = 0;      // asleep for a commit, writes, a flush, throttling or other
  double unattributed_ms = 0;
  std::map<std::string, double> unattributed;  // why -> ms
};

// The charge records of a run, indexed for calls: windows per disk,
// commits and pages dirtied per file system, each in the order they ended.
class BlameIndex {
 public:
  // base: what each culprit held before the first of windows (none: nothing).
  explicit BlameIndex(const std::vector<ChargeWindow>& windows, const HeldByFs* base = nullptr);
  // c's blocked time, charged; disk: the disk under c's file (0: unknown).
  CallBlame Of(const TraceCall& c, uint32_t disk) const;

 private:
  using Bytes = std::map<CulpritId, std::pair<uint64_t, std::string>>;  // bytes, comm
  void AddCommits(const TraceCall& c, uint32_t disk, Bytes& into) const;
  void AddBeside(const ChargeWindow& commit, uint32_t disk, Bytes& into) const;
  void AddBacklog(uint32_t disk, uint64_t at, Bytes& into, uint32_t only_fs = 0) const;
  void AddFlushes(const TraceCall& c, uint32_t disk, Bytes& into) const;
  void AddQueue(const TraceCall& c, uint32_t disk, Bytes& into) const;
  void IndexHeld(const std::vector<ChargeWindow>& windows, const HeldByFs* base);
  void AddHolders(const TraceCall& c, Bytes& into) const;
  uint64_t ChargeHandles(const TraceCall& c, uint64_t journal_ns,
                         std::map<CulpritId, CallBlame::Share>& shares, CallBlame& b) const;
  std::map<uint32_t, std::vector<const ChargeWindow*>> disks_, commits_, dirtied_;
  // Per disk, what was still queued (written, not completed) as each of
  // its windows ended, in disks_' order.
  std::map<uint32_t, std::vector<uint64_t>> backlog_;
  // The dirty and disk windows in the order they ended, and what was held
  // after every kHeldEvery of them (held_[k]: after k * kHeldEvery).
  static constexpr size_t kHeldEvery = 256;
  std::vector<const ChargeWindow*> changes_;
  std::vector<HeldByFs> held_;
};

// "dd (pid 4242)", "the journal's own blocks", "self (pid 17)".
std::string CulpritName(const CulpritId& who, const std::string& comm, uint32_t self_tgid);

// One line for a person: "dd (pid 4242) 28.1 ms for 45.2 MB, …; not charged 1.2 ms (other
// sleep)".
std::string BlameLine(const CallBlame& b, uint32_t self_tgid);

}  // namespace writelab
