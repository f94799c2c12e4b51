// SPDX-License-Identifier: MIT
// What `writelab explain -- CMD` collected, and how it becomes rows: one per
// type of call, one per file, one per slow call, each with its figures and,
// per type, a diagnosis written from the measured shares.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "core/result.h"
#include "explain/tracer.h"
#include "program/explain/blame.h"

namespace writelab {

// What the system looked like at a moment (sampled by user space).
struct ContextSample {
  uint64_t t_ns = 0;                       // CLOCK_MONOTONIC
  uint64_t dirty = 0, writeback = 0;       // bytes, /proc/meminfo
  std::map<uint32_t, uint64_t> in_flight;  // per disk (kernel dev_t): requests in flight
};

struct ProgramTrace {
  uint64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC
  std::vector<TraceFile> files;
  std::vector<trace_hist> hists;  // per class
  trace_totals totals{};
  bool split = true;             // the parts were measured (the scheduler's events attached)
  size_t wait_functions = 0;     // sleeping functions found in the kernel's symbols
  SplitSelfCheck check;          // of the overlaps' state, at the end
  std::vector<TraceCall> calls;  // the slow and durability calls delivered, kept in order
  uint64_t calls_dropped = 0;    // delivered but not kept (beyond kMaxKeptCalls)
  std::vector<TraceCommit> commits;
  std::vector<TraceCommitStats> commit_stats;
  std::map<std::pair<uint32_t, uint64_t>, std::string> paths;  // (dev, inode) -> path
  std::map<uint32_t, uint32_t> block_size;                     // fs dev -> block size
  std::map<uint32_t, uint32_t> disk_of;                        // fs dev -> its disk's dev
  std::vector<ContextSample> samples;
  std::vector<ChargeWindow> windows;          // the writes queued to the disks, charged (blame.h)
  uint64_t windows_dropped = 0;               // delivered but not kept (beyond kMaxKeptCalls)
  std::map<CulpritId, CulpritWrites> writes;  // per culprit, over the run (windows only)
};

inline constexpr size_t kMaxKeptCalls = 200'000;

// "fdatasync", "write (synchronous)", "pwrite64 (direct, synchronous)".
std::string ClassName(uint32_t class_id);
// A file's name in the rows: its path, else "(deleted or closed) dev 7:3 inode 12".
std::string FileName(const ProgramTrace& t, uint32_t dev, uint64_t ino);

// The kernel's log-linear histograms (one or all classes added up), each
// bucket counted at its middle.
Histogram FromKernel(const trace_hist& k);
Histogram AllCalls(const std::vector<trace_hist>& per_class);

// One row per type of call made, with its latencies, its series of calls
// over time (the slow and durability ones) and its diagnosis as a note.
std::vector<Row> CallTypeRows(const ProgramTrace& t);
// One row per file written or synced, most time first.
std::vector<Row> FileRows(const ProgramTrace& t);
// The top slowest calls delivered, slowest first, with what was around them.
std::vector<Row> SlowCallRows(const ProgramTrace& t, int top);
// One row per culprit: the calls' blocked time charged to it, and what it
// wrote to the watched disks over the run (blame.h), most time first.
std::vector<Row> CulpritRows(const ProgramTrace& t);
// The disk under a file system (0: not known).
uint32_t CallDisk(const ProgramTrace& t, uint32_t dev);
// "who made them wait (…): dd (pid 4242) 62%, …": a type's delivered calls, charged.
std::string TypeBlameNote(const ProgramTrace& t, const BlameIndex& index, uint32_t class_id);

// One line for a person from a type's measured shares (percent of its time),
// or that nothing dominated: "71% waiting for journal commits that carried
// 540 MB of other data; see the fsync and stream experiments". writes: the
// calls are synchronous or direct writes (the conversion hint is theirs).
struct Shares {
  double parts[SPLIT_PARTS] = {};      // what the threads did (split_parts.h)
  double during[SPLIT_OVERLAPS] = {};  // what the disks and journals did meanwhile
  double lock = 0;                     // of parts[SPLIT_OTHER], in contended locks' waits
  double commits_per_call = 0, conversions_per_call = 0;
  double carried_mb = 0;  // what the overlapping commits carried of others' data
  bool split = true;      // false: the parts were not measured, for the reason unsplit
  const char* unsplit = "an io_uring operation completes without a thread waiting in a call";
  bool fallocated = false;  // the scope called fallocate
};
std::string Diagnosis(const Shares& s, bool writes);

// A type of call below this share of all the traced time gets no diagnosis.
inline constexpr double kDiagnosedShare = 1.0;

}  // namespace writelab
