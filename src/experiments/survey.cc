// SPDX-License-Identifier: MIT
// The survey's plan: which experiments, with what parameters, sized from the
// free space and the dirty thresholds of the host.
#include "experiments/survey.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "experiments/fsync/fsync.h"
#include "experiments/prealloc/prealloc.h"
#include "experiments/records/records.h"
#include "experiments/stream/stream.h"
#include "experiments/stride/stride.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/team.h"

namespace writelab {

namespace {

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs v;
  return statvfs(dir.c_str(), &v) == 0 ? static_cast<uint64_t>(v.f_bavail) * v.f_frsize : 0;
}

// stride on a file of writelab's own, 5 rounds of 0.2 s per step.
std::function<Status(const RunContext&, ExperimentResult&)> SurveyStride(const std::string& dir) {
  return [dir](const RunContext& ctx, ExperimentResult& e) {
    StrideSpec spec;
    // Made new (O_EXCL|O_NOFOLLOW) in the checked --dir: stride then
    // opens writelab's own file, never a name planted in a shared dir.
    auto made = CreateOwnFile(dir, "survey-stride", O_WRONLY, &spec.file);
    if (!made) return Status(std::unexpected(made.error()));
    spec.span = 64u << 20;
    spec.steps = {1, 2, 3, 4, 8, 16, 64, 512};
    spec.duration_ns = 200'000'000;
    spec.rounds = kSurveyTrials;
    Status s = ValidateStrideSpec(spec)
                   ? RunStride(spec, spec.file, ctx, e)
                   : std::unexpected(PlainError("stride: invalid survey parameters"));
    RemoveOwnFile(spec.file);  // writelab's own file
    return s;
  };
}

}  // namespace

// The random background must outgrow the dirty-background threshold, or it
// never reaches the disk while we measure (docs/fsync.md).
uint64_t RandomSpan(const Host& host, uint64_t free) {
  uint64_t threshold =
      host.vm.count("dirty_background_bytes") && host.vm.at("dirty_background_bytes")
          ? static_cast<uint64_t>(host.vm.at("dirty_background_bytes"))
          : host.memory_bytes / 100 *
                static_cast<uint64_t>(host.vm.count("dirty_background_ratio")
                                          ? host.vm.at("dirty_background_ratio")
                                          : 10);
  uint64_t span = threshold + threshold / 4;
  span = std::clamp<uint64_t>(span, 256u << 20, std::max<uint64_t>(free / 4, 256u << 20));
  return span / 4096 * 4096;
}

namespace {

struct SurveySpecs {
  StreamSpec stream;
  FsyncSpec fsync;
  RecordsSpec records;
  PreallocSpec prealloc;
};

// Time goes to trials, not length: 5 of each headline row, so that compare
// can tell a change from noise (docs/report.md). writers: how many write the
// file system at once (ranks under MPI), sharing its free space.
SurveySpecs SurveySpecsFor(const std::string& dir, const Host& host, int writers) {
  const uint64_t free = FreeBytes(dir) / static_cast<uint64_t>(writers);
  SurveySpecs s;
  s.stream.dir = dir;
  s.stream.size = std::clamp<uint64_t>(free / 8 / (8u << 20) * (8u << 20), 8u << 20, 128u << 20);
  s.stream.repeat = kSurveyTrials;
  s.stream.interval_ns = 250'000'000;
  s.fsync.dir = dir;
  s.fsync.count = 5;
  s.fsync.rounds = kSurveyTrials;
  s.fsync.interval_ns = 150'000'000;
  s.fsync.methods = {SyncMethod::kFsync, SyncMethod::kFdatasync};
  s.fsync.bg_span = RandomSpan(host, free);
  s.fsync.bg_warmup_ns = 1'500'000'000;
  s.records.dir = dir;
  s.records.corpus_size = 2u << 20;
  s.records.total = 16u << 20;
  s.records.rounds = kSurveyTrials;
  s.prealloc.dir = dir;
  s.prealloc.file_size = 64u << 20;
  s.prealloc.writes = 200;
  s.prealloc.rounds = kSurveyTrials;
  return s;
}

template <class Spec, class Validate, class Run>
std::function<Status(const RunContext&, ExperimentResult&)> Validated(Spec spec, Validate validate,
                                                                      Run run) {
  return [spec, validate, run](const RunContext& ctx, ExperimentResult& e) mutable -> Status {
    if (auto ok = validate(spec); !ok) return std::unexpected(PlainError(ok.error()));
    return run(spec, ctx, e);
  };
}

// The step on rank 0 alone: the other ranks take its steps idle.
std::function<Status(const RunContext&, ExperimentResult&)> OnRankZero(
    std::function<Status(const RunContext&, ExperimentResult&)> run) {
  return [run](const RunContext& ctx, ExperimentResult& e) {
    if (ctx.team && ctx.team->rank() != 0) ctx.team->set_role(Role::kIdle);
    return run(ctx, e);
  };
}

}  // namespace

std::vector<SurveyStep> SurveyPlan(const std::string& dir, const Host& host) {
  SurveySpecs s = SurveySpecsFor(dir, host, 1);
  return {
      {"stream", "streaming strategies", 7, Validated(s.stream, ValidateStreamSpec, RunStream)},
      {"fsync", "sync latency beside background writers", 26,
       Validated(s.fsync, ValidateFsyncSpec, RunFsync)},
      {"records", "small-record write strategies", 6,
       Validated(s.records, ValidateRecordsSpec, RunRecords)},
      {"prealloc", "preallocation modes", 6,
       Validated(s.prealloc, ValidatePreallocSpec, RunPrealloc)},
      {"stride", "strided direct writes", 9, SurveyStride(dir)},
  };
}

std::vector<SurveyStep> SurveyPlanAcrossRanks(const std::string& dir, const Host& host, int ranks) {
  SurveySpecs s = SurveySpecsFor(dir, host, ranks);
  auto stream = Validated(s.stream, ValidateStreamSpec, RunStream);
  auto records = Validated(s.records, ValidateRecordsSpec, RunRecords);
  FsyncSpec fsync = s.fsync;
  if (ranks > 1) fsync.roles = "measure=0,background=1-" + std::to_string(ranks - 1);
  auto fsync_run = [fsync](const RunContext& ctx, ExperimentResult& e) {
    FsyncSpec spec = fsync;
    spec.background_rank = !spec.roles.empty() && ctx.team && ctx.team->rank() != 0;
    if (auto ok = ValidateFsyncSpec(spec); !ok)
      return Status(std::unexpected(PlainError(ok.error())));
    return RunFsync(spec, ctx, e);
  };
  const std::string all = "all " + std::to_string(ranks) + " ranks at once";
  return {
      {"stream", "streaming strategies, rank 0 alone", 7, OnRankZero(stream)},
      {"stream", "streaming strategies, " + all, 7, stream},
      {"fsync", "rank 0's sync latency while the other ranks write", 26, fsync_run},
      {"records", "small-record write strategies, rank 0 alone", 6, OnRankZero(records)},
      {"records", "small-record write strategies, " + all, 6, records},
  };
}

}  // namespace writelab
