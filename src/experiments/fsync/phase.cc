// SPDX-License-Identifier: MIT
#include "experiments/fsync/phase.h"
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
#include "telemetry/procfs.h"
#include "telemetry/sampler.h"
#include "testbed/dirty_limit.h"

namespace writelab {

namespace {

Result<UniqueFd> OpenTestFile(const FsyncSpec& spec, const SyncMethodInfo& m, std::string* path) {
  int flags = O_WRONLY | m.open_flags;
  if (!spec.file.empty()) {
    *path = spec.file;
    return OpenFile(spec.file, flags | O_CREAT | O_TRUNC);
  }
  return CreateOwnFile(spec.dir, "fsync", flags, path);
}

// --explain: the row's file is its own, the background's file and
// processes (those it forked so far; the kernel adds what they fork later)
// the background's, for who was ahead of its calls (the background's file
// by lstat: writelab made it, and it is only read).
void NameWhoIsAhead(Explainer& explainer, int fd, const BackgroundLoad* load) {
  std::vector<std::pair<dev_t, ino_t>> own, background;
  std::vector<pid_t> pids;
  struct stat st;
  if (fstat(fd, &st) == 0) own.push_back({st.st_dev, st.st_ino});
  if (load && !load->path().empty() && lstat(load->path().c_str(), &st) == 0)
    background.push_back({st.st_dev, st.st_ino});
  if (load && load->pid() > 0) pids = Descendants(load->pid());  // a command's children too
  explainer.AheadOf(own, background, pids);
}

}  // namespace

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
    if (ctx.explainer) NameWhoIsAhead(*ctx.explainer, fd->get(), load);
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

namespace {

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
// rotating each round (command/trials.h), until an interrupt or a
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
}  // namespace

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

}  // namespace writelab
