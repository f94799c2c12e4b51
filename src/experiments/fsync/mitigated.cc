// SPDX-License-Identifier: MIT
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

bool AppliesTo(const Mitigation& m, BackgroundKind bg) {
  if (m.kind == MitigationKind::kCgroup) return bg != BackgroundKind::kNone;
  return m.kind != MitigationKind::kBackground || bg == BackgroundKind::kStream;
}

namespace {

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
}  // namespace

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

}  // namespace writelab
