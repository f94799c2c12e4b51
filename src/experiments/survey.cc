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
    unlink(spec.file.c_str());  // writelab's own file
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

std::vector<SurveyStep> SurveyPlan(const std::string& dir, const Host& host) {
  uint64_t free = FreeBytes(dir);
  // Time goes to trials, not length: 5 of each headline row, so that
  // compare can tell a change from noise (docs/report.md).
  uint64_t stream_size =
      std::clamp<uint64_t>(free / 8 / (8u << 20) * (8u << 20), 8u << 20, 128u << 20);
  auto validated = [](auto spec, auto validate, auto run) {
    return [spec, validate, run](const RunContext& ctx, ExperimentResult& e) mutable -> Status {
      if (auto ok = validate(spec); !ok) return std::unexpected(PlainError(ok.error()));
      return run(spec, ctx, e);
    };
  };
  StreamSpec stream;
  stream.dir = dir;
  stream.size = stream_size;
  stream.repeat = kSurveyTrials;
  stream.interval_ns = 250'000'000;
  FsyncSpec fsync;
  fsync.dir = dir;
  fsync.count = 5;
  fsync.rounds = kSurveyTrials;
  fsync.interval_ns = 150'000'000;
  fsync.methods = {SyncMethod::kFsync, SyncMethod::kFdatasync};
  fsync.bg_span = RandomSpan(host, free);
  fsync.bg_warmup_ns = 1'500'000'000;
  RecordsSpec records;
  records.dir = dir;
  records.corpus_size = 2u << 20;
  records.total = 16u << 20;
  records.rounds = kSurveyTrials;
  PreallocSpec prealloc;
  prealloc.dir = dir;
  prealloc.file_size = 64u << 20;
  prealloc.writes = 200;
  prealloc.rounds = kSurveyTrials;
  return {
      {"stream", "streaming strategies", 7, validated(stream, ValidateStreamSpec, RunStream)},
      {"fsync", "sync latency beside background writers", 26,
       validated(fsync, ValidateFsyncSpec, RunFsync)},
      {"records", "small-record write strategies", 6,
       validated(records, ValidateRecordsSpec, RunRecords)},
      {"prealloc", "preallocation modes", 6,
       validated(prealloc, ValidatePreallocSpec, RunPrealloc)},
      {"stride", "strided direct writes", 9, SurveyStride(dir)},
  };
}

}  // namespace writelab
