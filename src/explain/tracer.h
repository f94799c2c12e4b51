// SPDX-License-Identifier: MIT
// The kernel side of `writelab explain -- CMD` (trace.bpf.c): a scope of
// processes whose write and sync calls are timed and split, with their
// slow calls and the journal's commits delivered as they happen
// (docs/explain.md, "Explaining your own program").
#pragma once

#include <linux/types.h>
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "explain/split_check.h"
#include "explain/trace_counters.h"
#include "writelab/error.h"

namespace writelab {

// What the ring buffer delivers, in user space's words.
using TraceCall = trace_call_event;
using TraceCommit = trace_commit_event;
using TraceCommitStats = trace_stats_event;
using TraceFileName = trace_file_event;
using TraceCharges = trace_charge_event;

struct TraceSink {
  std::function<void(const TraceCall&)> call;
  std::function<void(const TraceCommit&)> commit;
  std::function<void(const TraceCommitStats&)> stats;
  std::function<void(const TraceFileName&)> file;
  std::function<void(const TraceCharges&)> charges;
};

struct TraceFile {
  trace_file_key key;
  trace_file_stats stats;
};

// The parts of the kernel it relies on; each seen or not, with the reason.
enum class TracePart { kCalls, kSplit, kOverlap, kJournal, kConversions, kUring, kBlame, kLocks };
inline constexpr int kTraceParts = 8;
const char* TracePartName(TracePart p);

class Tracer {
 public:
  virtual ~Tracer() = default;
  // Adds a process (its thread group) to the scope; what it forks from then
  // on joins by itself.
  virtual Status AddProcess(pid_t tgid) = 0;
  // Takes a process out of the scope again (one added that was not what
  // was meant: its number was another's by then).
  virtual void RemoveProcess(pid_t tgid) = 0;
  // Calls at least this long (and every durability call) are delivered.
  virtual void SetSlow(uint64_t ns) = 0;
  // Delivers what the ring holds to the sink, waiting at most timeout_ms
  // for the first record.
  virtual void Poll(int timeout_ms) = 0;
  virtual std::vector<TraceFile> Files() const = 0;
  // Per class (kind * 4 + class bits), summed over CPUs.
  virtual std::vector<trace_hist> Histograms() const = 0;
  virtual trace_totals Totals() const = 0;
  // The processes in the scope now (the one added and what it forked).
  virtual std::vector<pid_t> Processes() const = 0;
  // Why a part is missing ("" when it is there).
  virtual std::string Missing(TracePart p) const = 0;
  // How many of the sleeping functions (explain/wait_functions.h) the
  // kernel's symbols gave: 0 counts every sleep as other.
  virtual size_t WaitFunctionsFound() const = 0;
  // Detaches the programs: from then on nothing changes, and what was
  // counted stays readable (a self-check read while requests still come
  // and go would race them).
  virtual void Stop() = 0;
  // The self-check of the overlaps' state, now.
  virtual SplitSelfCheck Check() const = 0;
  // After Stop: what the open windows held (the disks' writes and the file
  // systems' pages dirtied), as records ending at their last charge.
  virtual std::vector<TraceCharges> OpenWindows() const = 0;
};

// The call kinds' names: "write", "fdatasync", "io_uring write"...
const char* TraceKindName(uint32_t kind);

// A charge record as the ring delivers it (size bytes: its head and its n
// entries, no more) into out, the entries past n zero; false when size is
// too short for its head or for the entries it says it holds.
bool ReadChargeRecord(const void* data, size_t size, TraceCharges& out);

// Loads and attaches trace.bpf.c; devices (the disks of --device, as
// dev_t) join the scope's from the start. The refusal of ExplainRefusal
// (explain/explainer.h) applies.
Result<std::unique_ptr<Tracer>> StartTracer(TraceSink sink, const std::vector<dev_t>& devices);

// A file system watched from the start, and the disk under it (dev_t).
struct WatchedFs {
  dev_t fs = 0, disk = 0;
};

// `writelab top`: the same programs with every process in the scope but
// the caller's own, and the file systems given (every mounted one on a
// disk) watched from the start; one first written to later joins as in
// explain. AddProcess and Processes are not used.
Result<std::unique_ptr<Tracer>> StartMachineTracer(TraceSink sink,
                                                   const std::vector<WatchedFs>& file_systems);

}  // namespace writelab
