// SPDX-License-Identifier: MIT
// One trial of one `stream` strategy: write the file, sync it, measure what
// it left behind, remove it. Internal to the stream experiment.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/histogram.h"
#include "core/outcome.h"
#include "core/run_context.h"
#include "experiments/stream/spec.h"
#include "explain/explainer.h"
#include "io/bystander.h"
#include "io/file.h"
#include "io/runner.h"
#include "telemetry/pagecache.h"
#include "telemetry/sampler.h"

namespace writelab {

struct TrialEnv {
  const StreamSpec& spec;
  const RunContext& ctx;
  std::string device;         // for the sampler: "vda", "" for none
  size_t direct_alignment;    // O_DIRECT alignment of the target
  const AlignedBuffer& data;  // one block of pattern, aligned for O_DIRECT
  BystanderProbe* probe;      // null with --no-probe
  std::string label;          // "window-drop, round 2/3" for the progress line
  bool keep_file;             // leave the file in place (--keep, last trial)
};

struct TrialResult {
  Outcome outcome;
  uint64_t bytes = 0;
  uint64_t start_ns = 0;   // the first write began (NowNs): MPI's aggregate counts from here...
  uint64_t end_ns = 0;     // ...to here, the final sync's end
  uint64_t origin_ns = 0;  // the samples' t = 0
  double write_s = 0;      // first write to last write returning (strategy syscalls included)
  double sync_s = 0;       // the final fsync (library: Finish())
  WriteCounters counters;
  Histogram write_latency;  // per write call (library: per Append)
  bool probed = false;
  int probe_error = 0;
  Histogram probe_latency;
  std::vector<std::array<double, 2>> probe_points;  // t (s, on the samples' clock), ms
  bool time_limited = false;                        // stopped at spec.time_limit_ns
  int passes = 0;  // times the file was written again from the start (spec.min_time_ns)
  std::vector<SamplePoint> samples;
  std::vector<double> gib_mb_s;  // MB/s of each GiB written (last one may be partial)
  std::optional<CacheResidency> residency;
  std::string residency_error;
  bool library = false;  // measured through StreamWriter (no runner counters)
  std::string library_choice;
  // paced: its own flushes, the window's range and the slowest flush.
  uint64_t paced_flushes = 0, paced_window_min = 0, paced_window_max = 0, paced_slowest_ns = 0;
  uint64_t paced_unmet = 0;  // its flushes over half the target at the smallest window
  std::string path;          // the file written (kept only with keep_file)
  std::map<std::string, double> explained;  // --explain: keys of kExplainFigures
  std::optional<uint64_t> memcg_peak;       // memcg: the most its cgroup was charged
  std::string memcg_note;                   // memcg: its limit, as the kernel read it back

  double total_s() const { return write_s + sync_s; }
};

TrialResult RunStreamTrial(StreamStrategy strategy, const TrialEnv& env);

// Stops the bystander probe (if any) and keeps its latencies and its
// calls over time, at seconds from origin_ns (the samples' t = 0).
void StopTrialProbe(const TrialEnv& env, uint64_t origin_ns, TrialResult& r);

// The memcg anchor (memcg_trial.cc): plain's writes and final fsync from a
// child process placed in a memory cgroup of spec.memcg_bytes before it
// writes, while this process samples and probes; an OOM kill of the child
// fails the trial, saying so. fd: the trial's file, opened as plain's.
void MeasureInMemcg(int fd, const TrialEnv& env, TrialResult& r);

// What --explain attributes in a stream trial's writes.
inline constexpr std::initializer_list<ExplainProbe> kStreamExplains = {ExplainProbe::kThrottle,
                                                                        ExplainProbe::kWriteback};
// With the bystander probe, its calls are split too.
inline constexpr std::initializer_list<ExplainProbe> kStreamProbeExplains = {
    ExplainProbe::kThrottle, ExplainProbe::kWriteback, ExplainProbe::kSyncParts};

}  // namespace writelab
