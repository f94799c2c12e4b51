// SPDX-License-Identifier: MIT
#include "command/orchestrator.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "command/errors.h"
#include "command/options.h"
#include "core/clock.h"
#include "core/units.h"
#include "explain/explainer.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/session.h"
#include "port/no_memory.h"
#include "telemetry/canary.h"
#include "telemetry/identify.h"
#include "testbed/journal.h"
#include "testbed/scoped_change.h"

namespace writelab {

Result<std::unique_ptr<UndoJournal>> OpenRunJournal() {
  if (geteuid() != 0) return std::unique_ptr<UndoJournal>();
  auto j = UndoJournal::Open();
  if (!j) return Unexpected(j.error());
  return std::move(*j);
}

Result<std::unique_ptr<Explainer>> StartExplainerAt(const std::string& where,
                                                    const std::string& device) {
  auto scope = ExplainScopeOf(where, device);
  if (!scope) return Unexpected(scope.error());
  return StartExplainer(*scope);
}

namespace {

// What a run of a plan keeps while it runs: where the survey says what it
// does (stdout, unless that carries the document) and whether this process
// says it (rank 0), and why its results have no attribution ("" for none
// to say).
struct Running {
  const Plan& plan;
  std::FILE* info = stdout;
  bool speaks = true;
  std::string without;
};

// The survey's attribution: --explain's programs for its one target when
// they can run here (root, BPF), else null and why not.
std::unique_ptr<Explainer> AttributionIfPossible(const Plan& plan, const Target& target,
                                                 std::string* why) {
  if (auto refusal = ExplainRefusal()) {
    *why = *refusal;
    return nullptr;
  }
  auto started = StartExplainerAt(plan.dir, target.device);
  if (!started) {
    *why = started.error().Message();
    return nullptr;
  }
  return std::move(*started);
}

}  // namespace

std::string SurveyCostLine(const Plan& plan, const std::string& device, uint64_t free_bytes) {
  uint64_t bytes = 0;
  std::vector<std::string> timed;
  for (const Step& s : plan.steps) {
    bytes += s.bytes;
    if (s.time_based && std::find(timed.begin(), timed.end(), s.name) == timed.end())
      timed.push_back(s.name);
  }
  std::string out = "it writes at least " + FormatBytes(static_cast<double>(bytes)) + " to " +
                    (device.empty() ? plan.dir : device + " (under " + plan.dir + ")");
  if (!timed.empty())
    out += ", plus what " + ListInWords(timed) + " write in their time at the device's speed";
  out += "; each file is removed after its step, and a step needs at most a quarter of the " +
         FormatBytes(static_cast<double>(free_bytes)) + " free\n";
  return out;
}

namespace {

// The survey's first lines: what it runs, for about how long, what it
// writes where, with or without attribution.
void Announce(const Running& r, const RunContext& ctx) {
  if (!r.plan.survey || !r.speaks) return;
  int expected = 0;
  for (const Step& s : r.plan.steps) expected += s.expected_s;
  std::fprintf(r.info, "writelab survey of %s: %zu experiments, about %d s%s\n", r.plan.dir.c_str(),
               r.plan.steps.size(), expected,
               ctx.team ? (" on " + std::to_string(ctx.team->size()) + " MPI ranks").c_str() : "");
  struct statvfs v {};
  const uint64_t free_bytes =
      statvfs(r.plan.dir.c_str(), &v) == 0 ? static_cast<uint64_t>(v.f_bavail) * v.f_frsize : 0;
  const std::string device = (r.plan.target ? *r.plan.target : IdentifyWhere(r.plan.dir)).device;
  std::fputs(SurveyCostLine(r.plan, device, free_bytes).c_str(), r.info);
  if (r.without.empty())
    std::fprintf(r.info, "attribution: on (--explain: where the time went, per row)\n");
  else
    std::fprintf(r.info, "attribution: off, the survey runs without it: %s\n", r.without.c_str());
}

// One step into new results at the end of doc: on one machine, one result
// (with --explain's programs loaded for it when the options ask); under
// MPI, the aggregate and each rank's on rank 0.
Status RunOneStep(const Running& r, const Step& step, const std::string& dir,
                  const std::string& where, const std::string& device, const RunContext& ctx,
                  Document& doc) {
  if (ctx.team)
    return RunOnRanks(*ctx.team, ctx, doc, [&](const RunContext& c, ExperimentResult& e) {
      return step.run(c, dir, e);
    });
  std::unique_ptr<Explainer> explainer;
  if (r.plan.targets.explain) {
    auto started = StartExplainerAt(where, device);
    if (!started) return Unexpected(started.error());
    explainer = std::move(*started);
  }
  RunContext with = ctx;
  if (explainer) with.explainer = explainer.get();
  doc.experiments.emplace_back();
  return FailingOnNoMemory("allocate the run's buffers",
                           [&] { return step.run(with, dir, doc.experiments.back()); });
}

// Every step of the plan on one target. An experiment's one step: its
// failure ends the run. The survey's steps: each announced, a failure
// noted in the errors while the next one runs, and under MPI the ranks
// agree before each step whether to go on (an interrupt on any rank stops
// every rank before the same step).
Status RunSteps(const Running& r, const std::string& dir, const std::string& where,
                const std::string& device, const RunContext& ctx, Document& doc) {
  const Plan& plan = r.plan;
  Status status;
  const uint64_t start = NowNs();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    if (plan.survey && ctx.team) {
      ctx.team->BeginExperiment();
      if (!ctx.team->Step()) return std::unexpected(PlainError("interrupted"));
    }
    if (plan.survey && r.speaks) {
      std::fprintf(r.info, "[%zu/%zu] %s: %s (about %d s; %.0f s elapsed)\n", i + 1,
                   plan.steps.size(), s.name.c_str(), s.what.c_str(), s.expected_s,
                   static_cast<double>(NowNs() - start) / 1e9);
      std::fflush(r.info);
    }
    const size_t before = doc.experiments.size();
    Status st = RunOneStep(r, s, dir, where, device, ctx, doc);
    for (size_t k = before; plan.survey && k < doc.experiments.size(); ++k) {
      doc.experiments[k].purpose = s.what;  // what tells its sections apart
      if (!r.without.empty())
        doc.experiments[k].notes.push_back("ran without attribution (--explain): " + r.without);
    }
    if (!plan.survey) return st;
    if (!st) {
      doc.errors.push_back(s.name + ": " + st.error().Message());
      status = std::unexpected(PlainError(s.name + " failed"));
    }
    if (ctx.team ? ctx.team->broken() : ctx.Interrupted())
      return std::unexpected(PlainError("interrupted"));
  }
  return status;
}

// Runs the steps under each scheduler (or as it is), switching and
// restoring the device's scheduler around each run.
// target: dir's, identified once (IdentifyWhere).
Status RunUnderSchedulers(const Running& r, const std::string& dir, const Target& target,
                          const std::string& label, bool dio, UndoJournal* journal,
                          const RunContext& ctx, Document& doc) {
  const TargetOptions& t = r.plan.targets;
  std::vector<std::string> schedulers = t.schedulers;
  // A file that does not exist yet lives on its directory's device.
  struct stat st;
  bool exists = stat(dir.c_str(), &st) == 0;
  const std::string where = exists ? dir : ParentDir(dir);
  const std::string& device = target.device;
  // Every scheduler the device offers, by default, only for a raw device the
  // experiment owns outright: never the system disk under a file.
  if (schedulers.empty() && t.all_schedulers_by_default && journal && exists && S_ISBLK(st.st_mode))
    schedulers = target.schedulers;
  if (schedulers.empty()) schedulers.push_back("");
  // Once per run, on its first target, before its first step.
  if (doc.canary.figures.empty()) doc.canary = MeasureCanary(where);
  for (const std::string& sched : schedulers) {
    if (ctx.Interrupted()) return std::unexpected(PlainError("interrupted"));
    const size_t before = doc.experiments.size();
    std::optional<ScopedChange> switched;
    Target switched_to = target;  // what the experiment finds, once
    if (!sched.empty() && !device.empty()) switched_to.scheduler = sched;
    RunContext run_ctx = ctx;
    run_ctx.target = &switched_to;
    if (!sched.empty() && device.empty()) {  // tmpfs: one run, saying why there are no others
      Status st = RunSteps(r, dir, where, device, run_ctx, doc);
      if (!st && doc.experiments.size() == before) return st;
      ExperimentResult& e = doc.experiments.back();
      e.testbed = label;
      e.notes.push_back("no block device under " + dir + ": --scheduler does not apply");
      return st;
    }
    if (!sched.empty()) {
      auto s = SetSysfs(*journal, "/sys/block/" + device + "/queue/scheduler", sched);
      if (!s)
        return std::unexpected(
            PlainError("--scheduler " + sched + " on " + device + ": " + s.error().Message()));
      switched.emplace(std::move(*s));
    }
    Status st = RunSteps(r, dir, where, device, run_ctx, doc);
    if (!st && doc.experiments.size() == before) return st;
    for (size_t k = before; k < doc.experiments.size(); ++k) {
      ExperimentResult& e = doc.experiments[k];
      e.testbed = label;
      e.loop_direct_io = dio;
      e.scheduler = sched;
    }
    if (!st) return st;
  }
  return {};
}

// The survey's recommendations, Finish, then the survey's HTML report.
int FinishPlan(const Running& r, Document& doc, const OutputOptions& out, const Status& status) {
  if (r.plan.before_finish) r.plan.before_finish(doc);
  const int code = Finish(doc, out, status);
  return r.plan.after_finish ? r.plan.after_finish(code, r.info) : code;
}

// The survey's last progress line.
void Done(const Running& r, uint64_t start) {
  if (r.plan.survey && r.speaks)
    std::fprintf(r.info, "survey done in %.0f s\n\n", static_cast<double>(NowNs() - start) / 1e9);
}

// The run under MPI: every rank in its own files in the directory,
// together, and rank 0 alone prints and writes (mpi/session.h).
int RunOnTeam(Running& r, const RunContext& ctx, Document& doc, const OutputOptions& out) {
  Team& team = *ctx.team;
  auto opened = OpenRunJournal();  // as root: the loads' groups, the run's own files
  if (!opened) {
    const int code =
        team.rank() == 0 ? Finish(doc, out, Unexpected(opened.error())) : kExitRunFailed;
    return ShareExitCode(team, code);
  }
  std::unique_ptr<UndoJournal> journal = std::move(*opened);
  OwnFilesJournaled own_files(journal.get());
  if (auto refused = MeetRanks(team, r.plan.dir, doc)) {
    if (team.rank() == 0) PrintError(*refused);
    return kExitUsage;
  }
  if (r.plan.survey)
    r.without =
        "not under MPI: its attribution is per machine and would count the other ranks' I/O";
  Announce(r, ctx);
  RunContext run_ctx = ctx;
  run_ctx.journal = journal.get();
  const uint64_t start = NowNs();
  Status status = RunSteps(r, r.plan.dir, r.plan.dir, "", run_ctx, doc);
  Done(r, start);
  const int code = team.rank() == 0 ? FinishPlan(r, doc, out, status)
                   : status         ? kExitOk
                                    : kExitRunFailed;
  return ShareExitCode(team, code);
}

}  // namespace

int Orchestrate(const Plan& plan, const RunContext& ctx, Document& doc, const OutputOptions& out) {
  Running r{plan, ToStdout(out) ? stderr : stdout, !ctx.team || ctx.team->rank() == 0, ""};
  // A team of one rank with a test bed, a scheduler, --file or --explain is
  // one machine's run: as without MPI.
  const TargetOptions& t = plan.targets;
  const bool one_machine =
      !t.testbeds.empty() || !t.schedulers.empty() || plan.has_file || t.explain;
  if (ctx.team && !one_machine) return RunOnTeam(r, ctx, doc, out);
  if (ctx.team) {
    RunContext alone = ctx;
    alone.team = nullptr;
    return Orchestrate(plan, alone, doc, out);
  }
  auto opened = OpenRunJournal();  // as root, every run may change the system
  if (!opened) return Finish(doc, out, Unexpected(opened.error()));
  std::unique_ptr<UndoJournal> journal = std::move(*opened);
  RunContext run_ctx = ctx;
  run_ctx.journal = journal.get();
  // The user's target, identified once (none with test beds: each its own).
  std::optional<Target> target = plan.target;
  if (!target && plan.beds.empty()) target = IdentifyWhere(plan.dir);
  std::unique_ptr<Explainer> attribution;
  if (plan.survey && target) attribution = AttributionIfPossible(plan, *target, &r.without);
  run_ctx.explainer = attribution ? attribution.get() : ctx.explainer;
  Announce(r, ctx);
  const uint64_t start = NowNs();
  Status status;
  if (plan.beds.empty()) {
    OwnFilesJournaled own_files(journal.get());
    status = RunUnderSchedulers(r, plan.dir, *target, "", false, journal.get(), run_ctx, doc);
  }
  const uint64_t size = *SizeOption("--testbed-size", t.testbed_size);
  for (const TestbedSpec& bed : plan.beds) {
    if (ctx.Interrupted()) {
      status = std::unexpected(PlainError("interrupted"));
      break;
    }
    auto tb = Testbed::Provision(bed, {size, t.scratch, ctx.interrupted}, *journal);
    if (!tb) {
      status = std::unexpected(PlainError("test bed " + bed.label + ": " + tb.error().Message()));
      break;
    }
    const Target bed_target = IdentifyWhere((*tb)->mount_point());
    if (auto bad = CheckDirectSizes(plan.direct, bed_target)) {
      status = std::unexpected(PlainError("test bed " + bed.label + ": " + *bad));
      break;
    }
    RunContext bed_ctx = run_ctx;
    bed_ctx.testbed = true;
    status = RunUnderSchedulers(r, (*tb)->mount_point(), bed_target, bed.label,
                                (*tb)->loop_direct_io(), journal.get(), bed_ctx, doc);
    if (!status) break;
  }
  Done(r, start);
  return FinishPlan(r, doc, out, status);
}

}  // namespace writelab
