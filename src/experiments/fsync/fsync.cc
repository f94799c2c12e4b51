// SPDX-License-Identifier: MIT
#include "experiments/fsync/fsync.h"
#include "command/trials.h"
#include "experiments/fsync/def.h"
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

constexpr SyncMethodInfo kMethods[] = {
    {SyncMethod::kFsync, "fsync", "pwrite, then fsync", 0, 0, true},
    {SyncMethod::kFdatasync, "fdatasync", "pwrite, then fdatasync", 0, 0, true},
    {SyncMethod::kSfr, "sfr",
     "pwrite, then sync_file_range(WRITE|WAIT_AFTER) on the range, then fdatasync", 0, 0, true},
    {SyncMethod::kOsync, "osync", "file opened O_SYNC: the pwrite is the sync", O_SYNC, 0, false},
    {SyncMethod::kOdsync, "odsync", "file opened O_DSYNC: the pwrite is the sync", O_DSYNC, 0,
     false},
    {SyncMethod::kRwfDsync, "rwf-dsync", "pwritev2 with RWF_DSYNC: the write is the sync", 0,
     RWF_DSYNC, false},
    {SyncMethod::kReopen, "reopen",
     "per iteration fopen (truncating), fprintf one line, fflush, fsync, fclose: Axboe's 2009 "
     "fwrite+fsync loop (--write-size does not apply)",
     0, 0, true},
};

constexpr BackgroundInfo kBackgrounds[] = {
    {BackgroundKind::kNone, "none", "nothing else writes"},
    {BackgroundKind::kRandom, "random",
     "4 KiB random pwrites over --bg-span, never synced (Mason's random writer)"},
    {BackgroundKind::kStream, "stream",
     "sequential buffered 1 MiB pwrites, never synced, wrapping at --bg-size (the dd)"},
    {BackgroundKind::kCommand, "cmd", "the command given with --bg-cmd, run by /bin/sh"},
};

std::string DirOf(const FsyncSpec& spec) {
  return spec.dir.empty() ? ParentDir(spec.file) : spec.dir;
}

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
  if (ctx.testbed && ctx.journal && !device.empty()) {
    const uint64_t limit = WholeMiB(std::clamp<uint64_t>(room / 4, 16u << 20, 256u << 20));
    if (LimitDeviceDirty(device, limit, *ctx.journal, limits)) {
      t = BackgroundThreshold(device);
      *from = "the test bed's " + device + " limited to " +
              FormatBytes(static_cast<double>(limit)) +
              " of dirty pages (bdi max_bytes, strict) for the run, since twice the threshold of " +
              threshold + " is more than a quarter of its free space; then twice " +
              FormatBytes(static_cast<double>(t.bytes));
      return std::min(room, twice(t));
    }
  }
  *from = "a quarter of the free space, less than twice the dirty background threshold of " +
          threshold + ": the stream may stay in the page cache";
  return room;
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

namespace {

// --mitigation: none first (every other row is compared with it), each
// once, root for those that change the device, not across MPI ranks; and
// the rounds' default, 5 to compare.
std::expected<void, std::string> ValidateMitigations(FsyncSpec& spec) {
  std::vector<Mitigation>& m = spec.mitigations;
  if (m.empty()) {
    if (spec.rounds == 0) spec.rounds = 1;
    return {};
  }
  if (std::none_of(m.begin(), m.end(),
                   [](const Mitigation& x) { return x.kind == MitigationKind::kNone; }))
    m.insert(m.begin(), Mitigation{});
  std::stable_partition(m.begin(), m.end(),
                        [](const Mitigation& x) { return x.kind == MitigationKind::kNone; });
  for (size_t i = 0; i < m.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (m[j].name == m[i].name)
        return std::unexpected("--mitigation: " + m[i].name + " is given twice");
    const bool changes_device =
        m[i].kind != MitigationKind::kNone && m[i].kind != MitigationKind::kBackground;
    if (changes_device && geteuid() != 0)
      return std::unexpected("--mitigation " + m[i].name +
                             ": needs root (it changes the device's settings)");
  }
  if (!spec.roles.empty()) return std::unexpected("--mitigation: not with --roles");
  if (spec.rounds == 0) spec.rounds = m.size() > 1 ? 5 : 1;
  return {};
}

}  // namespace

const SyncMethodInfo& InfoOf(SyncMethod m) {
  for (const auto& info : kMethods)
    if (info.id == m) return info;
  return kMethods[0];
}
std::span<const SyncMethodInfo> SyncMethods() { return kMethods; }
std::span<const BackgroundInfo> Backgrounds() { return kBackgrounds; }

std::expected<void, std::string> ValidateFsyncSpec(FsyncSpec& spec) {
  if (!spec.dir.empty() && !spec.file.empty())
    return std::unexpected("give at most one of --dir and --file");
  if (spec.dir.empty() && spec.file.empty()) spec.dir = ".";
  struct stat st;
  std::string dir = DirOf(spec);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return std::unexpected((spec.dir.empty() ? "--file: directory '" : "--dir: '") + dir +
                           "' is not a directory");
  if (access(dir.c_str(), W_OK) != 0) return std::unexpected("'" + dir + "' is not writable");
  if (!spec.dir.empty()) {
    auto resolved = CheckWorkDir("--dir", spec.dir);
    if (!resolved) return std::unexpected(resolved.error());
    spec.dir = *resolved;
  }
  if (!spec.file.empty() && stat(spec.file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return std::unexpected("--file: '" + spec.file + "' is not a regular file");
  if (spec.write_size == 0) return std::unexpected("--write-size: must be greater than 0");
  if (spec.write_size > (1ull << 30)) return std::unexpected("--write-size: at most 1 GiB");
  if (spec.count < 1) return std::unexpected("--count: must be at least 1");
  if (spec.count > 1'000'000) return std::unexpected("--count: at most 1000000");
  if (spec.rounds < 0 || spec.rounds > 1000) return std::unexpected("--rounds: between 1 and 1000");
  if (spec.sample_interval_ns < 10'000'000)
    return std::unexpected("--sample-interval: at least 10ms");
  if (spec.bg_span < 4096) return std::unexpected("--bg-span: at least 4 KiB");
  if (spec.methods.empty()) spec.methods = {SyncMethod::kFsync};
  if (spec.backgrounds.empty())
    spec.backgrounds = {BackgroundKind::kNone, BackgroundKind::kRandom, BackgroundKind::kStream};
  // A row is named BACKGROUND/METHOD: each may be given once.
  for (size_t i = 0; i < spec.methods.size(); ++i)
    if (std::count(spec.methods.begin(), spec.methods.begin() + i, spec.methods[i]))
      return std::unexpected(std::string("--sync: ") + InfoOf(spec.methods[i]).name +
                             " is given twice");
  for (size_t i = 0; i < spec.backgrounds.size(); ++i)
    if (std::count(spec.backgrounds.begin(), spec.backgrounds.begin() + i, spec.backgrounds[i]))
      return std::unexpected(std::string("--background: ") + BackgroundName(spec.backgrounds[i]) +
                             " is given twice");
  if (auto ok = ValidateMitigations(spec); !ok) return ok;
  bool wants_cmd = std::find(spec.backgrounds.begin(), spec.backgrounds.end(),
                             BackgroundKind::kCommand) != spec.backgrounds.end();
  if (wants_cmd && spec.bg_command.empty())
    return std::unexpected("--background cmd needs --bg-cmd 'COMMAND'");
  if (!wants_cmd && !spec.bg_command.empty())
    return std::unexpected("--bg-cmd is only used with --background cmd");
  if (spec.bg_size != 0 && spec.bg_size < (1u << 20))
    return std::unexpected("--bg-size: at least 1 MiB");
  if (auto big = CheckMemory(
          "--write-size " + FormatBytes(static_cast<double>(spec.write_size)) + " (one buffer)",
          spec.write_size))
    return std::unexpected(*big);
  return {};
}

namespace {

Result<UniqueFd> OpenTestFile(const FsyncSpec& spec, const SyncMethodInfo& m, std::string* path) {
  int flags = O_WRONLY | m.open_flags;
  if (!spec.file.empty()) {
    *path = spec.file;
    return OpenFile(spec.file, flags | O_CREAT | O_TRUNC);
  }
  return CreateOwnFile(spec.dir, "fsync", flags, path);
}

struct PhaseResult {
  std::vector<Row> rows;
  Status status;
};

// One background: start it, warm up, run every sync method, stop it.
struct Measured {
  const SyncMethodInfo* method;
  SyncRun run;
  FsyncRowContext rc;
  // For the trial loop: the run's, or failed when the background died
  // during it (that ends the rounds too).
  Outcome outcome;
  const Mitigation* mitigation = nullptr;  // with --mitigation: the one in force
  std::vector<std::string> notes;          // what it said when applied
};

// One method's row under the running background: its own file, its
// iterations, the background's bytes and the sampler's span around it.
Measured MeasureOne(const FsyncSpec& spec, const SyncMethodInfo& info, const std::string& bg_name,
                    BackgroundLoad* load, Sampler& sampler, const AlignedBuffer& data,
                    const RunContext& ctx) {
  Measured m{&info, {}, {}, {}, nullptr, {}};
  m.rc.bg_name = bg_name;
  std::string path;
  auto fd = OpenTestFile(spec, info, &path);
  std::optional<uint64_t> bytes0 = load ? load->bytes_written() : std::nullopt;
  SamplePoint p0 = sampler.SampleNow();
  if (fd) {
    auto engine = ctx.Engine(info.rwf_flags ? MakePwritev2Engine(fd->get(), info.rwf_flags)
                                            : MakePwriteEngine(fd->get()));
    m.run = MeasureSyncMethod(spec, info, *engine, data.data(), ctx, fd->get());
    if (spec.file.empty()) RemoveOwnFile(path);
  } else {
    m.run.outcome.Fail(fd.error());
  }
  SamplePoint p1 = sampler.SampleNow();
  m.rc.seconds = p1.t_s - p0.t_s;
  m.rc.points = {p0, p1};  // the span of this row; filled in after Stop()
  if (load && bytes0) m.rc.bg_bytes = *load->bytes_written() - *bytes0;
  if (load)
    if (auto why = load->Exited())
      m.rc.bg_failure = "background " + bg_name + " " + *why + " during the measurement";
  m.outcome = m.run.outcome;
  if (!m.rc.bg_failure.empty() && m.outcome.status != RowStatus::kFailed)
    m.outcome.Fail(PlainError(m.rc.bg_failure));
  return m;
}

// The measured rows (a method's trials in the order of the rounds) with
// their telemetry; the first failure becomes the phase's status.
void AddRows(const FsyncSpec& spec, const std::vector<SamplePoint>& all,
             std::vector<Measured>& runs, PhaseResult& out) {
  for (SyncMethod method : spec.methods) {
    std::vector<FsyncTrial> trials;
    for (Measured& m : runs) {
      if (m.method != &InfoOf(method)) continue;
      double t0 = m.rc.points.front().t_s, t1 = m.rc.points.back().t_s;
      m.rc.points.clear();
      FillTelemetry(all, t0, t1, m.rc);
      trials.push_back({std::move(m.run), std::move(m.rc)});
    }
    if (trials.empty()) continue;
    out.rows.push_back(
        FsyncRow(InfoOf(method), trials, static_cast<double>(spec.sample_interval_ns) / 1e9));
    const Row& row = out.rows.back();
    bool bg_failed = !trials.back().rc.bg_failure.empty();  // a failure ends the rounds
    if (row.status == RowStatus::kFailed && out.status)
      out.status =
          std::unexpected(PlainError(bg_failed ? row.message : row.name + ": " + row.message));
  }
}

// A background rank's trial under --roles: from its step to the next.
struct HeldTrial {
  SyncMethod method;
  int round;
  uint64_t start_ns;
  std::optional<uint64_t> bytes;  // the load's count at the start
  double t_s;                     // on the phase's sampler
};

// Under MPI, the span of a trial this rank measured.
void RecordMeasured(const RunContext& ctx, const Measured& m, int round, const Sampler& sampler) {
  const SyncRun& run = m.run;
  if (!ctx.team || !run.outcome.ok() || run.write_latency.count() == 0) return;
  RecordTrial(
      ctx,
      {m.rc.bg_name + "/" + m.method->name,
       round,
       Role::kMeasure,
       run.start_ns,
       run.end_ns,
       0,
       0,
       "",
       {{"iterations", run.start_ns}, {"timeline", sampler.start_ns()}}},
      {{"write", &run.write_latency}, {"sync", &run.sync_latency}, {"total", &run.total_latency}});
}

// Every method spec.rounds times under the running background, the order
// rotating each round (experiments/trials.h), until an interrupt or a
// failure. A background rank (--roles) takes the same steps and only notes
// when each trial began. A failed trial ends the rounds with success:
// AddRows makes the failure the phase's status.
Status MeasureRounds(const FsyncSpec& spec, const std::string& bg_name, BackgroundLoad* load,
                     Sampler& sampler, const AlignedBuffer& data, const RunContext& ctx,
                     std::vector<Measured>& runs, std::vector<HeldTrial>& held) {
  TrialPlan plan;
  plan.cells = spec.methods.size();
  plan.rounds = spec.rounds;
  plan.name = [&](size_t i) { return bg_name + "/" + InfoOf(spec.methods[i]).name; };
  if (spec.background_rank && load)
    plan.before_step = [&]() -> Status {
      auto why = load->Exited();
      if (!why) return {};
      ctx.team->Step(true);  // stops the measuring ranks at this step
      return Unexpected(
          PlainError("background " + bg_name + " " + *why + " during the measurement"));
    };
  if (spec.background_rank)
    plan.not_measured = [&](const TrialSlot& t) {
      held.push_back({spec.methods[t.cell], t.round, NowNs(),
                      load ? load->bytes_written() : std::nullopt, sampler.SampleNow().t_s});
    };
  Status status = RunTrials(
      ctx, plan,
      [&](const TrialSlot& t) {
        return MeasureOne(spec, InfoOf(spec.methods[t.cell]), bg_name, load, sampler, data, ctx);
      },
      [&](const TrialSlot& t, Measured&& one) {
        RecordMeasured(ctx, one, t.round, sampler);
        runs.push_back(std::move(one));
      });
  if (!status && !runs.empty() && !runs.back().outcome.ok()) return {};  // the row says why
  return status;
}

// A background rank's rows: what its load wrote while the others measured
// each row's trials (the last one ends at the phase's last step).
void AddHeldRows(const FsyncSpec& spec, const std::string& bg_name, BackgroundLoad* load,
                 const std::vector<SamplePoint>& all, const Sampler& sampler,
                 const std::vector<HeldTrial>& held, uint64_t end_ns, double end_t,
                 const RunContext& ctx, PhaseResult& out) {
  const std::optional<uint64_t> bytes_end = load ? load->bytes_written() : std::nullopt;
  for (SyncMethod method : spec.methods) {
    std::vector<FsyncRowContext> trials;
    for (size_t i = 0; i < held.size(); ++i) {
      if (held[i].method != method) continue;
      const bool last = i + 1 == held.size();
      const uint64_t end = last ? end_ns : held[i + 1].start_ns;
      const std::optional<uint64_t> bytes1 = last ? bytes_end : held[i + 1].bytes;
      FsyncRowContext rc;
      rc.bg_name = bg_name;
      rc.seconds = static_cast<double>(end - held[i].start_ns) / 1e9;
      if (held[i].bytes && bytes1) rc.bg_bytes = *bytes1 - *held[i].bytes;
      FillTelemetry(all, held[i].t_s, last ? end_t : held[i + 1].t_s, rc);
      if (rc.bg_bytes)  // a phase with a load (not none, not cmd's uncounted one)
        RecordTrial(ctx, {bg_name + "/" + InfoOf(method).name,
                          held[i].round,
                          Role::kBackground,
                          held[i].start_ns,
                          end,
                          *rc.bg_bytes,
                          0,
                          "",
                          {{"timeline", sampler.start_ns()}}});
      trials.push_back(std::move(rc));
    }
    out.rows.push_back(BackgroundRankRow(bg_name + "/" + InfoOf(method).name, trials,
                                         static_cast<double>(spec.sample_interval_ns) / 1e9));
  }
}

// bg= changes how the stream background writes: it has rows under the
// stream background only; cgroup= places the background in a cgroup: rows
// under a background only.
bool AppliesTo(const Mitigation& m, BackgroundKind bg) {
  if (m.kind == MitigationKind::kCgroup) return bg != BackgroundKind::kNone;
  return m.kind != MitigationKind::kBackground || bg == BackgroundKind::kStream;
}

// With --mitigation, one cell: the mitigation applied, the background
// started (for bg=, with its style), warmed up, the method measured with a
// sampler of its own, and all of it undone. Every cell, none's included,
// gets the same warm-up, so that the rows differ only by the mitigation.
Measured MeasureMitigated(const FsyncSpec& spec, BackgroundKind bg, const Mitigation& mit,
                          const SyncMethodInfo& info, const std::string& device,
                          const AlignedBuffer& data, const RunContext& ctx) {
  const std::string bg_name = BackgroundName(bg);
  Measured m{&info, {}, {}, {}, &mit, {}};
  m.rc.bg_name = bg_name;
  auto refuse = [&](const Error& e, bool unsupported) {
    m.run.outcome.Fail(e, unsupported ? Feature::kKernelKnob : Feature::kNone);
    m.outcome = m.run.outcome;
    return std::move(m);
  };
  auto applied = ApplyMitigation(mit, device, ctx.journal);
  if (!applied) return refuse(applied.error().error, applied.error().unsupported);
  m.notes = applied->notes;
  std::unique_ptr<BackgroundLoad> load;
  if (bg != BackgroundKind::kNone) {
    BackgroundSpec bs{bg, DirOf(spec), spec.bg_span, spec.bg_size, spec.bg_command, mit.style};
    std::function<Status(pid_t)> place;
    if (applied->cgroup) place = [&](pid_t pid) { return applied->cgroup->Place(pid); };
    auto started = BackgroundLoad::Start(bs, ctx.journal, place);
    if (!started)
      return refuse(PlainError("background " + bg_name + ": " + started.error().Message()), false);
    load = std::move(*started);
  }
  std::string warmed;
  if (auto why = WarmUp(spec, load.get(), load ? spec.bg_warmup_ns : 0, device, ctx, &warmed)) {
    m.rc.bg_failure = "background " + bg_name + " " + *why + " during the warm-up";
    m.outcome.Fail(PlainError(m.rc.bg_failure));
    return m;
  }
  if (warmed.find("not reached") != std::string::npos) m.notes.push_back(warmed);
  if (ctx.Interrupted()) {
    m.outcome.interrupted = true;
    return m;
  }
  Sampler sampler(device, spec.sample_interval_ns, load ? load->counter() : nullptr);
  sampler.Start();
  Measured one = MeasureOne(spec, info, bg_name, load.get(), sampler, data, ctx);
  const double t0 = one.rc.points.front().t_s, t1 = one.rc.points.back().t_s;
  one.rc.points.clear();
  FillTelemetry(sampler.Stop(), t0, t1, one.rc);
  if (load) load->Stop();
  one.mitigation = &mit;
  one.notes = std::move(m.notes);
  return one;
}

// The rows of a mitigated phase, "BACKGROUND/METHOD/MITIGATION", by
// mitigation, then method; the first failure becomes the phase's status.
void AddMitigatedRows(const FsyncSpec& spec, std::vector<Measured>& runs, PhaseResult& out) {
  for (const Mitigation& mit : spec.mitigations)
    for (SyncMethod method : spec.methods) {
      std::vector<FsyncTrial> trials;
      std::vector<std::string> notes;
      for (Measured& m : runs) {
        if (m.mitigation != &mit || m.method != &InfoOf(method)) continue;
        for (std::string& n : m.notes)
          if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
        trials.push_back({std::move(m.run), std::move(m.rc)});
      }
      if (trials.empty()) continue;
      Row row =
          FsyncRow(InfoOf(method), trials, static_cast<double>(spec.sample_interval_ns) / 1e9);
      row.name += "/" + mit.name;
      row.notes.insert(row.notes.begin(), notes.begin(), notes.end());
      if (row.status == RowStatus::kFailed && out.status)
        out.status = std::unexpected(PlainError(row.name + ": " + row.message));
      out.rows.push_back(std::move(row));
    }
}

// One background under every mitigation and method, spec.rounds times, the
// order rotating each round.
PhaseResult RunMitigatedPhase(const FsyncSpec& spec, BackgroundKind bg, const RunContext& ctx,
                              const std::string& device, const AlignedBuffer& data) {
  PhaseResult out;
  const size_t methods = spec.methods.size();
  std::vector<const Mitigation*> mits;
  for (const Mitigation& m : spec.mitigations)
    if (AppliesTo(m, bg)) mits.push_back(&m);
  auto mit = [&](size_t cell) -> const Mitigation& { return *mits[cell / methods]; };
  auto method = [&](size_t cell) -> const SyncMethodInfo& {
    return InfoOf(spec.methods[cell % methods]);
  };
  TrialPlan plan;
  plan.cells = mits.size() * methods;
  plan.rounds = spec.rounds;
  plan.progress = true;
  plan.name = [&](size_t cell) {
    return std::string(BackgroundName(bg)) + "/" + method(cell).name + "/" + mit(cell).name;
  };
  std::vector<Measured> runs;
  Status status = RunTrials(
      ctx, plan,
      [&](const TrialSlot& t) {
        return MeasureMitigated(spec, bg, mit(t.cell), method(t.cell), device, data, ctx);
      },
      [&](const TrialSlot&, Measured&& one) { runs.push_back(std::move(one)); });
  AddMitigatedRows(spec, runs, out);
  if (!status && out.status) out.status = status;
  return out;
}

PhaseResult RunPhase(const FsyncSpec& spec, BackgroundKind bg, const RunContext& ctx,
                     const std::string& device, const AlignedBuffer& data) {
  PhaseResult out;
  const std::string bg_name = BackgroundName(bg);
  auto fail_all = [&](const std::string& why) {
    for (SyncMethod m : spec.methods) {
      SyncRun none;
      FsyncRowContext rc;
      rc.bg_name = bg_name;
      rc.bg_failure = why;
      out.rows.push_back(FsyncRow(InfoOf(m), none, rc, 0));
    }
    out.status = std::unexpected(PlainError(why));
    return std::move(out);
  };
  std::unique_ptr<BackgroundLoad> load;
  // With --roles only the background ranks run the load; the others measure.
  const bool runs_load = spec.roles.empty() || spec.background_rank;
  if (bg != BackgroundKind::kNone && runs_load) {
    BackgroundSpec bs{bg, DirOf(spec), spec.bg_span, spec.bg_size, spec.bg_command};
    auto started = BackgroundLoad::Start(bs, ctx.journal);
    if (!started) return fail_all("background " + bg_name + ": " + started.error().Message());
    load = std::move(*started);
  }
  std::string warmed;
  if (auto why = WarmUp(spec, load.get(), spec.bg_warmup_ns, device, ctx, &warmed))
    return fail_all("background " + bg_name + " " + *why + " during the warm-up");
  if (ctx.Interrupted()) {
    out.status = std::unexpected(PlainError("interrupted"));
    return out;
  }
  // The timeline's throughput is the background's; no fork after this.
  Sampler sampler(device, spec.sample_interval_ns, load ? load->counter() : nullptr);
  sampler.Start();
  std::vector<Measured> runs;
  std::vector<HeldTrial> held;
  Status measured = MeasureRounds(spec, bg_name, load.get(), sampler, data, ctx, runs, held);
  // Under MPI the phase ends together, so that no load outlives the
  // measurements it was for; a rank whose row failed stops the others here.
  bool row_failed = !runs.empty() && (runs.back().run.outcome.status == RowStatus::kFailed ||
                                      !runs.back().rc.bg_failure.empty());
  auto load_died = [&](const std::string& why) {
    return std::unexpected(
        PlainError("background " + bg_name + " " + why + " during the measurement"));
  };
  if (spec.background_rank && load && measured)  // its load ran until the last trial began
    if (auto why = load->Exited()) {
      row_failed = true;
      measured = load_died(*why);
      if (ctx.team) ctx.team->Step(true);
    }
  if (ctx.team && measured) ctx.team->Step(row_failed);  // (no-op after the one above)
  // A load that died during the last trial: the others have finished it, so
  // this rank's failure stops them at their next step (RunOnRanks').
  if (spec.background_rank && load && measured && ctx.team && !ctx.team->stopped())
    if (auto why = load->Exited()) measured = load_died(*why);
  const uint64_t end_ns = NowNs();
  const double end_t = sampler.SampleNow().t_s;
  std::vector<SamplePoint> all = sampler.Stop();
  if (spec.background_rank)
    AddHeldRows(spec, bg_name, load.get(), all, sampler, held, end_ns, end_t, ctx, out);
  if (load) load->Stop();
  AddRows(spec, all, runs, out);
  if (!warmed.empty())
    for (Row& r : out.rows) r.notes.push_back(warmed);
  if (!measured && out.status) out.status = measured;
  if (ctx.team && ctx.team->stopped() && out.status && !row_failed)
    out.status = std::unexpected(ctx.team->StopReason());
  return out;
}

}  // namespace

namespace {

// Each mitigation row against the none row of its background and method:
// the worst write+sync over the rounds, by the rank test compare uses.
void CompareWithNone(std::vector<Row>& rows) {
  constexpr FigureKey kWorst = FsyncKey("total_max_ms");
  for (Row& row : rows) {
    if (row.name.ends_with("/none") || row.status != RowStatus::kOk) continue;
    const std::string base = row.name.substr(0, row.name.rfind('/'));
    const Row* none = nullptr;
    for (const Row& r : rows)
      if (r.name == base + "/none" && r.status == RowStatus::kOk) none = &r;
    const Figure* a = none ? none->FindFigure(kWorst.name) : nullptr;
    const Figure* b = row.FindFigure(kWorst.name);
    if (!a || !b || a->value.median <= 0) continue;
    const std::vector<double>& x = a->value.samples;
    const std::vector<double>& y = b->value.samples;
    const double change = (b->value.median / a->value.median - 1) * 100;
    const double p = MannWhitneyP(x, y);
    std::map<std::string, double> f = {{FsyncKey("vs_none_pct").name, change},
                                       {FsyncKey("vs_none_p").name, p}};
    std::string interval;
    if (auto ci = BootstrapMedianRatio(x, y)) {
      f[FsyncKey("vs_none_low_pct").name] = (ci->low - 1) * 100;
      f[FsyncKey("vs_none_high_pct").name] = (ci->high - 1) * 100;
      interval = fmt::format(", 95% interval {:+.0f}% to {:+.0f}%", (ci->low - 1) * 100,
                             (ci->high - 1) * 100);
    }
    AddFigures(row.figures, kFsyncFigures, f);
    const double floor = SmallestMannWhitneyP(x.size(), y.size());
    size_t enough = 2;  // the fewest rounds a side that could show a difference
    while (enough < 1000 && SmallestMannWhitneyP(enough, enough) >= 0.05) ++enough;
    row.notes.push_back(fmt::format(
        "worst write+sync against {}/none: {} -> {} ({:+.0f}%{}), p = {:.3g} over {} and {} "
        "rounds: {}",
        base, FormatValue(a->value.median, "ms"), FormatValue(b->value.median, "ms"), change,
        interval, p, x.size(), y.size(),
        p < 0.05 ? "significant"
        : floor >= 0.05
            ? fmt::format("cannot be significant with so few rounds (the smallest p is {:.2g}; "
                          "--rounds {} or more)",
                          floor, enough)
            : "not significant"));
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
