// SPDX-License-Identifier: MIT
#include "experiments/fsync/fsync.h"
#include "command/trials.h"
#include "experiments/fsync/def.h"
#include "experiments/fsync/phase.h"
#include "experiments/fsync/rows.h"
#include "experiments/fsync/sync_loop.h"
#include "experiments/fsync/warmup.h"
#include "io/trusted_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/clock.h"
#include "core/significance.h"
#include "core/units.h"
#include "experiments/fsync/mitigation.h"
#include "experiments/stream/stream.h"  // AutoStreamSize
#include "explain/figures.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/team.h"
#include "port/linux_compat.h"
#include "telemetry/dirty_threshold.h"
#include "telemetry/identify.h"
#include "telemetry/memory_budget.h"
#include "telemetry/sampler.h"
#include "testbed/dirty_limit.h"

namespace writelab {
namespace {

uint64_t FreeSpace(const std::string& dir) {
  struct statvfs vfs;
  return statvfs(dir.c_str(), &vfs) == 0 ? static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize : 0;
}

uint64_t WholeMiB(uint64_t bytes) { return bytes / (1u << 20) * (1u << 20); }

// Where the stream background wraps, when --bg-size is not given: at twice
// the dirty background threshold that applies to the device, so that its
// pages reach the device while the rows measure, within a quarter of the
// free space (shared by the ranks). A test bed without room for that gets
// a dirty limit on its own device (kept in limits until the run ends); on
// the user's own file system the stream may stay in the page cache, and
// the rows say so. *from says which, for the parameters.
// On a test bed whose room (a quarter of its free space) is too small for
// a background to outgrow the dirty threshold that applies: its device gets
// a dirty limit of its own for the run (kept in limits), a quarter of the
// room within 16-256 MiB. Says what it did; "" when it did nothing.
std::string LimitSmallTestBed(const std::string& device, uint64_t room, const RunContext& ctx,
                              std::vector<ScopedChange>& limits) {
  if (!ctx.testbed || !ctx.journal || device.empty() || !limits.empty()) return "";
  const uint64_t limit = WholeMiB(std::clamp<uint64_t>(room / 4, 16u << 20, 256u << 20));
  if (!LimitDeviceDirty(device, limit, *ctx.journal, limits)) return "";
  return "the test bed's " + device + " limited to " + FormatBytes(static_cast<double>(limit)) +
         " of dirty pages (bdi max_bytes, strict) for the run";
}

uint64_t SizeStream(const std::string& dir, const std::string& device, int ranks,
                    const RunContext& ctx, std::vector<ScopedChange>& limits, std::string* from) {
  const uint64_t room = WholeMiB(FreeSpace(dir) / 4 / static_cast<uint64_t>(ranks));
  DirtyThreshold t = BackgroundThreshold(device);
  auto twice = [](const DirtyThreshold& x) {
    return WholeMiB(std::max<uint64_t>(2 * x.bytes, 64u << 20));
  };
  const std::string threshold = FormatBytes(static_cast<double>(t.bytes)) + " (" + t.how + ")";
  if (twice(t) <= room) {
    *from = "twice the dirty background threshold, " + threshold;
    return twice(t);
  }
  if (std::string limited = LimitSmallTestBed(device, room, ctx, limits); !limited.empty()) {
    t = BackgroundThreshold(device);
    *from = limited + ", since twice the threshold of " + threshold +
            " is more than a quarter of its free space; then twice " +
            FormatBytes(static_cast<double>(t.bytes));
    return std::min(room, twice(t));
  }
  *from = "a quarter of the free space, less than twice the dirty background threshold of " +
          threshold + ": the stream may stay in the page cache";
  return room;
}

// The random background's span, when --bg-span is auto: stream's
// --size auto rule (AutoStreamSize: 2.5x the device's dirty background
// threshold in whole 4 KiB pages, within a quarter of the free space, shared
// by the ranks, and 30 GB), so that its dirty pages outgrow the threshold
// and reach the device while the rows measure. *from says how.
uint64_t SizeSpan(const std::string& dir, const std::string& device, int ranks,
                  const RunContext& ctx, std::vector<ScopedChange>& limits, std::string* from) {
  const uint64_t free_bytes = FreeSpace(dir) / static_cast<uint64_t>(ranks);
  DirtyThreshold t = BackgroundThreshold(device);
  std::string limited;
  if (t.bytes && AutoStreamSize(t.bytes, free_bytes, 4096) < t.bytes * 5 / 2)
    if (limited = LimitSmallTestBed(device, WholeMiB(free_bytes / 4), ctx, limits);
        !limited.empty())
      t = BackgroundThreshold(device);
  *from = AutoStreamSizeFrom(t.bytes, t.how, free_bytes);
  if (!limited.empty()) *from += " (" + limited + ")";
  return AutoStreamSize(t.bytes, free_bytes, 4096);
}

void AddParams(const FsyncSpec& spec, ExperimentResult& out) {
  std::string methods, bgs;
  for (SyncMethod m : spec.methods)
    methods += (methods.empty() ? "" : ",") + std::string(InfoOf(m).name);
  for (BackgroundKind b : spec.backgrounds)
    bgs += (bgs.empty() ? "" : ",") + std::string(BackgroundName(b));
  out.params = {
      {"path", spec.file.empty() ? spec.dir : spec.file, ""},
      {"write_size", static_cast<int64_t>(spec.write_size), "bytes"},
      {"count", static_cast<int64_t>(spec.count), "iterations"},
      {"rounds", static_cast<int64_t>(spec.rounds), "trials"},
      {"interval", static_cast<double>(spec.interval_ns) / 1e9, "s"},
      {"sync", methods, ""},
      {"background", bgs, ""},
      {"bg_cmd", spec.bg_command, ""},
      {"bg_size", static_cast<int64_t>(spec.bg_size), "bytes"},
      {"bg_size_from", spec.bg_size_from, ""},
      {"bg_span", static_cast<int64_t>(spec.bg_span), "bytes"},
      {"bg_span_from", spec.bg_span_from, ""},
      {"bg_warmup", static_cast<double>(spec.bg_warmup_ns) / 1e9, "s"},
      {"bg_warmup_auto", spec.bg_warmup_auto, ""},
      {"sample_interval", static_cast<double>(spec.sample_interval_ns) / 1e9, "s"},
      {"listing", spec.verbose, ""},
  };
  if (!spec.roles.empty()) out.params.push_back({"roles", spec.roles, ""});
  if (!spec.mitigations.empty()) {
    std::string names;
    for (const Mitigation& m : spec.mitigations) names += (names.empty() ? "" : ",") + m.name;
    out.params.push_back({"mitigation", names, ""});
  }
}

}  // namespace

Status RunFsync(const FsyncSpec& given, const RunContext& ctx, ExperimentResult& out) {
  FsyncSpec spec = given;
  const std::string dir = DirOf(spec);
  out.name = "fsync";
  out.reproduces = kFsyncReproduces;
  out.target = TargetOf(ctx, dir);
  const bool mitigating = !spec.mitigations.empty();
  if (mitigating && ctx.team)
    return std::unexpected(PlainError("--mitigation: not under MPI (it changes one machine)"));
  const bool streams = std::find(spec.backgrounds.begin(), spec.backgrounds.end(),
                                 BackgroundKind::kStream) != spec.backgrounds.end();
  // Where the run is, test bed or not; under MPI every rank's stream load
  // shares the directory's free space.
  std::vector<ScopedChange> limits;  // a test bed's dirty limit, for the run
  if (spec.bg_size && streams) spec.bg_size_from = "--bg-size";
  if (spec.bg_size == 0 && streams)
    spec.bg_size = SizeStream(dir, out.target.device, ctx.team ? ctx.team->size() : 1, ctx, limits,
                              &spec.bg_size_from);
  const bool random = std::find(spec.backgrounds.begin(), spec.backgrounds.end(),
                                BackgroundKind::kRandom) != spec.backgrounds.end();
  if (random && spec.bg_span == 0)
    spec.bg_span = SizeSpan(dir, out.target.device, ctx.team ? ctx.team->size() : 1, ctx, limits,
                            &spec.bg_span_from);
  else if (random)
    spec.bg_span_from = "--bg-span";
  if (spec.bg_warmup_auto) spec.warmup_threshold = BackgroundThreshold(out.target.device).bytes;
  out.row_label = mitigating ? "background/method/mitigation" : "background/method";
  out.table = KeyNames(KeysOf(
      kFsyncFigures, {"write_p50_ms", "sync_p50_ms", "sync_p99_ms", "sync_max_ms", "total_p99_ms",
                      "bg_mb_s", "device_mb_s", "bg_device_pct", "dirty_peak"}));
  if (mitigating) out.table.push_back(FsyncKey("vs_none_pct").name);
  // Comparable across methods and targets; a p99 needs 100 iterations.
  out.compare_figure = static_cast<uint64_t>(spec.count) >= Histogram::SamplesFor(99)
                           ? KeyOf(kFsyncFigures, "total_p99_ms").name
                           : KeyOf(kFsyncFigures, "total_max_ms").name;
  AddParams(spec, out);
  if (streams && spec.bg_size < (1u << 20))
    return std::unexpected(
        PlainError("too little free space in " + dir + " for a stream background"));
  AlignedBuffer data(spec.write_size, 4096);
  data.FillPattern(3);
  if (ctx.team && spec.background_rank) {
    ctx.team->set_role(Role::kBackground);
    out.notes.push_back("a background rank (--roles " + spec.roles +
                        "): it ran each row's background load while the measuring ranks synced");
  }
  Status status;
  std::map<std::string, Row> measured;
  for (BackgroundKind bg : spec.backgrounds) {
    PhaseResult phase = mitigating ? RunMitigatedPhase(spec, bg, ctx, out.target.device, data)
                                   : RunPhase(spec, bg, ctx, out.target.device, data);
    for (Row& r : phase.rows) measured[r.name] = std::move(r);
    if (!phase.status) {
      status = phase.status;
      break;
    }
  }
  // Every row is present, in order, measured or saying why not.
  std::vector<std::string> suffixes = {""};
  if (mitigating) {
    suffixes.clear();
    for (const Mitigation& m : spec.mitigations) suffixes.push_back("/" + m.name);
  }
  for (BackgroundKind bg : spec.backgrounds)
    for (size_t k = 0; k < suffixes.size(); ++k)
      for (SyncMethod m : spec.methods) {
        if (mitigating && !AppliesTo(spec.mitigations[k], bg)) continue;
        std::string name = std::string(BackgroundName(bg)) + "/" + InfoOf(m).name + suffixes[k];
        if (auto it = measured.find(name); it != measured.end()) {
          out.rows.push_back(std::move(it->second));
          continue;
        }
        out.rows.push_back(MakeRow(name, Unmeasured()));
      }
  if (mitigating) CompareWithNone(out.rows);
  auto any_mitigation = [&](MitigationKind kind) {
    return mitigating && std::any_of(spec.mitigations.begin(), spec.mitigations.end(),
                                     [&](const Mitigation& m) { return m.kind == kind; });
  };
  auto any_background = [&](BackgroundKind kind) {
    return std::find(spec.backgrounds.begin(), spec.backgrounds.end(), kind) !=
           spec.backgrounds.end();
  };
  if (any_mitigation(MitigationKind::kBackground) &&
      std::any_of(spec.backgrounds.begin(), spec.backgrounds.end(),
                  [](BackgroundKind b) { return b != BackgroundKind::kStream; }))
    out.notes.push_back(
        "bg= mitigations change how the stream background writes: they have rows under the "
        "stream background only");
  if (any_mitigation(MitigationKind::kCgroup) && any_background(BackgroundKind::kNone))
    out.notes.push_back(
        "cgroup= mitigations place the background in a cgroup: they have no rows under the "
        "background none");
  if (spec.rounds > 1)
    out.notes.push_back(
        mitigating ? "each background runs every mitigation and method --rounds times, the order "
                     "rotating, each after its own warm-up; figures are medians over the rounds "
                     "with min-max"
                   : "each background runs every method --rounds times, the order rotating; "
                     "figures are medians over the rounds with min-max");
  if (ctx.explainer)
    for (std::string& n : ExplainNotes(*ctx.explainer, kFsyncExplains))
      out.notes.push_back(std::move(n));
  return status;
}

}  // namespace writelab
