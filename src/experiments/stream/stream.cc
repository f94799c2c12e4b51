// SPDX-License-Identifier: MIT
#include "experiments/stream/stream.h"

#include "experiments/stream/def.h"
#include "io/trusted_dir.h"
#include "telemetry/dirty_threshold.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "command/trials.h"
#include "core/units.h"
#include "experiments/stream/rows.h"
#include "experiments/stream/trial.h"
#include "explain/figures.h"
#include "io/file.h"
#include "mpi/team.h"
#include "telemetry/memory_budget.h"

namespace writelab {
namespace {

std::string DirOf(const StreamSpec& spec) {
  return spec.dir.empty() ? ParentDir(spec.file) : spec.dir;
}

void AddParams(const StreamSpec& spec, const std::string& path, ExperimentResult& out) {
  std::string names;
  for (StreamStrategy s : spec.strategies)
    names += (names.empty() ? "" : ",") + StreamRowName(spec, s);
  out.params = {
      {"path", path, ""},
      {"size", static_cast<int64_t>(spec.size), "bytes"},
      {"size_from", spec.size_from, ""},
      {"block", static_cast<int64_t>(spec.block), "bytes"},
      {"strategies", names, ""},
      {"rounds", static_cast<int64_t>(spec.rounds), "trials"},
      {"target", static_cast<double>(spec.pace_target_ns) / 1e6, "ms"},
      {"interval", static_cast<double>(spec.interval_ns) / 1e9, "s"},
      {"probe", spec.probe, ""},
      {"probe_period", static_cast<double>(spec.probe_period_ns) / 1e9, "s"},
      {"keep", spec.keep, ""},
      {"time_limit", static_cast<double>(spec.time_limit_ns) / 1e9, "s"},
      {"min_time", static_cast<double>(spec.min_time_ns) / 1e9, "s"},
      {"writeback_threshold", static_cast<int64_t>(spec.threshold), "bytes"},
      {"threshold_from", spec.threshold_from, ""},
  };
}

}  // namespace

const char* StreamStrategyName(StreamStrategy s) {
  for (const auto& info : kStreamStrategies)
    if (info.id == s) return info.name;
  return "?";
}

std::string StreamRowName(const StreamSpec& spec, StreamStrategy s) {
  if (s == StreamStrategy::kMemcg) return "memcg:" + spec.memcg_size;
  return StreamStrategyName(s);
}

std::expected<void, std::string> ValidateStreamSpec(StreamSpec& spec) {
  if (!spec.dir.empty() && !spec.file.empty())
    return std::unexpected("give at most one of --dir and --file");
  if (spec.dir.empty() && spec.file.empty()) spec.dir = ".";
  if (!spec.dir.empty()) {
    auto resolved = CheckWorkDir("--dir", spec.dir);
    if (!resolved) return std::unexpected(resolved.error());
    spec.dir = *resolved;
  }
  if (!spec.file.empty()) {
    struct stat st;
    if (stat(spec.file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return std::unexpected("--file: '" + spec.file + "' is not a regular file");
    std::string dir = DirOf(spec);
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return std::unexpected("--file: directory '" + dir + "' does not exist");
  }
  if (spec.size == 0) return std::unexpected("--size: must be greater than 0");
  if (spec.block == 0) return std::unexpected("--block: must be greater than 0");
  if (spec.block > spec.size)
    return std::unexpected("--block: " + FormatBytes(static_cast<double>(spec.block)) +
                           " is larger than --size " + FormatBytes(static_cast<double>(spec.size)));
  if (spec.block > (uint64_t{1} << 30)) return std::unexpected("--block: at most 1 GiB");
  if (spec.rounds < 1) return std::unexpected("--rounds: must be at least 1");
  if (spec.interval_ns < 10'000'000) return std::unexpected("--interval: at least 10ms");
  if (spec.strategies.empty())
    for (const auto& info : kStreamStrategies)
      if (info.id != StreamStrategy::kMemcg) spec.strategies.push_back(info.id);
  if (std::ranges::find(spec.strategies, StreamStrategy::kMemcg) != spec.strategies.end() &&
      !spec.memcg_bytes)
    return std::unexpected("--strategy memcg: give the cgroup's limit, e.g. memcg:256M");
  if (spec.min_time_ns &&
      std::ranges::find(spec.strategies, StreamStrategy::kLibrary) != spec.strategies.end())
    return std::unexpected("a minimum trial time is for the write loops, not the library");
  if (auto big = CheckMemory(
          "--block " + FormatBytes(static_cast<double>(spec.block)) + " (one buffer)", spec.block))
    return std::unexpected(*big);
  return {};
}

namespace {

// What every trial of a run shares.
struct RoundsEnv {
  const StreamSpec& spec;
  const RunContext& ctx;
  std::string device;
  size_t align;
  const AlignedBuffer& data;
  BystanderProbe* probe;
  bool user_file_existed;
};

// Under MPI, what the aggregate needs of a trial (mpi/team.h).
void RecordStreamTrial(const RunContext& ctx, const std::string& row, int round,
                       const TrialResult& t) {
  TrialSpan span;
  span.row = row;
  span.trial = round;
  span.start_ns = t.start_ns;
  span.end_ns = t.end_ns;
  span.bytes = t.bytes;
  span.origins["timeline"] = t.origin_ns;
  span.written_from_origin = true;  // its progress counter starts with the trial
  RecordTrial(ctx, std::move(span), {{"write", &t.write_latency}, {"probe", &t.probe_latency}});
}

// Every strategy, spec.rounds times in rotated order (command/trials.h),
// into acc. Stops at a failure or an interrupt.
Status RunRounds(const RoundsEnv& r, std::vector<StreamAccumulator>& acc) {
  const StreamSpec& spec = r.spec;
  TrialPlan plan;
  plan.cells = spec.strategies.size();
  plan.rounds = spec.rounds;
  plan.name = [&](size_t i) { return StreamRowName(spec, spec.strategies[i]); };
  return RunTrials(
      r.ctx, plan,
      [&](const TrialSlot& t) {
        StreamStrategy s = spec.strategies[t.cell];
        TrialEnv env{spec,
                     r.ctx,
                     r.device,
                     r.align,
                     r.data,
                     r.probe,
                     StreamRowName(spec, s) + ", round " + std::to_string(t.round + 1) + "/" +
                         std::to_string(spec.rounds),
                     r.user_file_existed || (spec.keep && t.last)};
        return RunStreamTrial(s, env);
      },
      [&](const TrialSlot& t, TrialResult&& trial) {
        if (trial.outcome.ok())
          RecordStreamTrial(r.ctx, StreamRowName(spec, spec.strategies[t.cell]), t.round, trial);
        AddStreamTrial(spec, t.round, trial, acc[t.cell]);
      });
}

}  // namespace

uint64_t AutoStreamSize(uint64_t threshold, uint64_t free_bytes, uint64_t block) {
  if (block == 0) return 0;
  const uint64_t want = threshold ? (threshold * 5 / 2 + block - 1) / block * block
                                  : (uint64_t{1} << 30) / block * block;
  const uint64_t room = std::min<uint64_t>(free_bytes / 4, kAutoStreamLimit) / block * block;
  return std::max<uint64_t>(std::min(want, room), block);
}

std::string AutoStreamSizeFrom(uint64_t threshold, const std::string& how, uint64_t free_bytes) {
  if (!threshold)
    return "auto: the dirty background threshold is not known, so 1 GiB within a quarter of the "
           "free space";
  return "auto: 2.5x the dirty background threshold of " +
         FormatBytes(static_cast<double>(threshold)) + (how.empty() ? "" : " (" + how + ")") +
         ", within a quarter of the free space (" + FormatBytes(static_cast<double>(free_bytes)) +
         ") and 30 GB";
}

namespace {

// --size auto, for the target now known: the size and how it was chosen.
void SizeForTarget(StreamSpec& spec, const std::string& dir) {
  if (!spec.size_auto) return;
  struct statvfs v {};
  const uint64_t free_bytes =
      statvfs(dir.c_str(), &v) == 0 ? static_cast<uint64_t>(v.f_bavail) * v.f_frsize : 0;
  spec.size = AutoStreamSize(spec.threshold, free_bytes, spec.block);
  spec.size_from = AutoStreamSizeFrom(spec.threshold, "", free_bytes);
}

}  // namespace

Status RunStream(const StreamSpec& given, const RunContext& ctx, ExperimentResult& out) {
  StreamSpec spec = given;
  const std::string dir = DirOf(spec);
  out.name = "stream";
  out.reproduces = kStreamReproduces;
  out.row_label = "strategy";
  out.target = TargetOf(ctx, dir);
  const DirtyThreshold limit = BackgroundThreshold(out.target.device);
  spec.threshold = limit.bytes;
  spec.threshold_from = limit.how;
  SizeForTarget(spec, dir);
  out.table = KeyNames(KeysOf(kStreamFigures, {"mb_s", "write_mb_s", "sync_s", "dirty_peak",
                                               "cached_end", "probe_p99_ms", "probe_max_ms"}));
  AddParams(spec, spec.file.empty() ? dir : spec.file, out);

  size_t align = std::max<uint64_t>(4096, out.target.logical_block_size.value_or(4096));
  AlignedBuffer data(spec.block, align);
  data.FillPattern(1);
  std::unique_ptr<BystanderProbe> probe;
  if (spec.probe) {
    auto p = BystanderProbe::Create(dir, spec.probe_period_ns);
    if (!p) return std::unexpected(p.error());
    probe = std::move(*p);
  }
  struct stat st;
  const bool user_file_existed = !spec.file.empty() && stat(spec.file.c_str(), &st) == 0;

  const size_t n = spec.strategies.size();
  std::vector<StreamAccumulator> acc(n);
  RoundsEnv rounds{spec, ctx, out.target.device, align, data, probe.get(), user_file_existed};
  Status status = RunRounds(rounds, acc);
  for (size_t i = 0; i < n; ++i) {
    if (acc[i].outcome.ok() && acc[i].figures.empty()) acc[i].outcome = Unmeasured("strategy");
    out.rows.push_back(StreamRow(StreamRowName(spec, spec.strategies[i]), acc[i]));
  }
  AddTrialNotes(ctx, RotationNote(spec.rounds), spec.probe ? kStreamProbeExplains : kStreamExplains,
                out);
  return status;
}

}  // namespace writelab
