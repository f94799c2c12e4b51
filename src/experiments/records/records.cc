// SPDX-License-Identifier: MIT
#include "experiments/records/records.h"
#include "experiments/records/def.h"
#include "io/trusted_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "command/trials.h"
#include "core/units.h"
#include "experiments/records/corpus.h"
#include "experiments/records/group_commit.h"
#include "experiments/records/methods.h"
#include "experiments/records/rows.h"
#include "explain/figures.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/team.h"
#include "port/linux_compat.h"
#include "telemetry/identify.h"
#include "telemetry/memory_budget.h"

namespace writelab {
namespace {

constexpr RecordSyncInfo kSyncs[] = {
    {RecordSync::kNone, "none", "no sync: the data ends in the page cache", 0, 0},
    {RecordSync::kEnd, "end", "one fsync after the last write, inside the timing", 0, 0},
    {RecordSync::kOsync, "osync", "file opened O_SYNC: every write is a sync", O_SYNC, 0},
    {RecordSync::kOdsync, "odsync", "file opened O_DSYNC: every write is a data sync", O_DSYNC, 0},
    {RecordSync::kEvery, "every:N", "fdatasync after every N lines (and after the last)", 0, 0},
    {RecordSync::kRwfDsync, "rwf-dsync", "pwritev2 RWF_DSYNC on every write call", 0, RWF_DSYNC},
};

std::string RowName(RecordMethod m, const RecordSyncChoice& s) {
  std::string name = NameOf(kRecordMethods, m);
  return s.id == RecordSync::kNone ? name : name + "/" + s.Name();
}

void AddParams(const RecordsSpec& spec, const Corpus& corpus, ExperimentResult& out) {
  std::string methods, syncs;
  for (RecordMethod m : spec.methods) methods += (methods.empty() ? "" : ",") + RowName(m, {});
  for (const auto& s : spec.syncs) syncs += (syncs.empty() ? "" : ",") + s.Name();
  out.params = {
      {"dir", spec.dir, ""},
      {"input", spec.input.empty() ? "generated (C source line lengths)" : spec.input, ""},
      {"corpus_bytes", static_cast<int64_t>(corpus.bytes()), "bytes"},
      {"corpus_lines", static_cast<int64_t>(corpus.lines()), "lines"},
      {"seed", static_cast<int64_t>(spec.seed), ""},
      {"methods", methods, ""},
      {"sync", syncs, ""},
      {"total", static_cast<int64_t>(spec.total), "bytes"},
      {"passes", static_cast<int64_t>(spec.passes), "passes"},
      {"sync_total", static_cast<int64_t>(spec.sync_total), "bytes"},
      {"buffer", static_cast<int64_t>(spec.buffer), "bytes"},
      {"qd", static_cast<int64_t>(spec.qd), ""},
      {"batch", spec.batch ? std::to_string(std::min(spec.batch, spec.qd)) : "qd",
       "buffers per io_uring_enter"},
      {"verify", spec.verify, ""},
      {"rounds", static_cast<int64_t>(spec.rounds), "trials"},
  };
}

struct RecordsCell {
  RecordMethod method;
  RecordSyncChoice sync;
  std::string name;
  RecordsAccumulator acc;
};

// One trial of one cell: open a new file, run, verify, remove.
MethodRun RunCell(const RecordsSpec& spec, const Corpus& corpus, const RecordsCell& c,
                  const OutputPlan& plan, const RunContext& ctx) {
  MethodRun run;
  std::string path;
  auto fd = CreateOwnFile(spec.dir, "records", O_WRONLY | InfoOf(c.sync.id).open_flags, &path);
  if (!fd) {
    // O_SYNC and O_DSYNC: a file system without them refuses the open.
    run.outcome.Fail(fd.error(),
                     InfoOf(c.sync.id).open_flags ? Feature::kSyncCall : Feature::kNone);
    return run;
  }
  MethodEnv env{corpus, plan, c.sync, fd->get(), spec.buffer, spec.qd, spec.batch, ctx};
  // --explain splits the synchronous rows' write and sync calls.
  ExplainSpan explain(c.sync.synchronous() ? ctx.explainer : nullptr, kRecordsExplains);
  run = RunRecordMethod(c.method, env);
  if (auto d = explain.End())
    ExplainValues(*ctx.explainer, *d, {plan.lines, static_cast<double>(run.ns) / 1e9},
                  kRecordsExplains, run.explained);
  fd->Reset();
  if (run.outcome.ok() && !run.outcome.interrupted && spec.verify)
    if (Status v = VerifyOutput(path, corpus, plan); !v) {
      // Under MPI a signal removes the file at once: then it is the interrupt.
      if (ctx.Interrupted())
        run.outcome.interrupted = true;
      else
        run.outcome.Fail(v.error());
    }
  RemoveOwnFile(path);
  return run;
}

}  // namespace

std::span<const RecordSyncInfo> RecordSyncs() { return kSyncs; }

const RecordSyncInfo& InfoOf(RecordSync s) {
  for (const auto& info : kSyncs)
    if (info.id == s) return info;
  return kSyncs[0];
}

std::string RecordSyncChoice::Name() const {
  if (id == RecordSync::kEvery) return "every:" + std::to_string(every);
  return InfoOf(id).name;
}

std::expected<RecordSyncChoice, std::string> ParseRecordSync(const std::string& text) {
  RecordSyncChoice c;
  if (text.starts_with("every:")) {
    auto n = ParseCount(std::string_view(text).substr(6), kMaxSyncEvery);
    if (!n || *n == 0)
      return std::unexpected("--sync: " + Quoted(text) +
                             ": every:N needs a whole number N from 1 to " +
                             std::to_string(kMaxSyncEvery));
    c.id = RecordSync::kEvery;
    c.every = *n;
    return c;
  }
  for (const auto& info : kSyncs) {
    if (info.id != RecordSync::kEvery && text == info.name) {
      c.id = info.id;
      return c;
    }
  }
  return std::unexpected("--sync: unknown value '" + text + "'");
}

namespace {

// What a records run holds at once: the corpus (one allocation per line,
// about 2.5x its bytes with the list nodes and malloc's headers), and the
// buffers of the method that needs the most (io_uring: --qd of them).
std::optional<std::string> CheckRecordsMemory(const RecordsSpec& spec) {
  uint64_t corpus = spec.corpus_size;
  struct stat st;
  if (!spec.input.empty() && stat(spec.input.c_str(), &st) == 0)
    corpus = static_cast<uint64_t>(st.st_size);
  const bool uring =
      !spec.commit && std::ranges::find(spec.methods, RecordMethod::kUring) != spec.methods.end();
  const uint64_t buffers = uring ? SaturatingMul(spec.qd, spec.buffer) : spec.buffer;
  const uint64_t threads = spec.commit ? *std::ranges::max_element(spec.threads) : 1;
  std::string what = (spec.input.empty() ? "--corpus-size " : "--input of ") +
                     FormatBytes(static_cast<double>(corpus)) + " and ";
  what += uring ? "--qd " + std::to_string(spec.qd) + " x --buffer " +
                      FormatBytes(static_cast<double>(spec.buffer)) + " (io_uring)"
                : "--buffer " + FormatBytes(static_cast<double>(spec.buffer));
  return CheckMemory(what, SaturatingAdd(SaturatingMul(corpus, 5) / 2,
                                         buffers + SaturatingMul(threads, 64 << 10)));
}

}  // namespace

std::expected<void, std::string> ValidateRecordsSpec(RecordsSpec& spec) {
  if (spec.dir.empty()) spec.dir = ".";
  auto resolved = CheckWorkDir("--dir", spec.dir);
  if (!resolved) return std::unexpected(resolved.error());
  spec.dir = *resolved;
  if (!spec.input.empty()) {
    struct stat st;
    if (stat(spec.input.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return std::unexpected("--input: '" + spec.input + "' is not a readable regular file");
    if (st.st_size == 0) return std::unexpected("--input: '" + spec.input + "' is empty");
    if (static_cast<uint64_t>(st.st_size) > Corpus::kMaxBytes)
      return std::unexpected("--input: '" + spec.input + "' is larger than 4 GiB");
    if (access(spec.input.c_str(), R_OK) != 0)
      return std::unexpected("--input: '" + spec.input + "' is not readable");
  }
  if (spec.corpus_size == 0) return std::unexpected("--corpus-size: must be greater than 0");
  if (spec.corpus_size > (4ull << 30)) return std::unexpected("--corpus-size: at most 4 GiB");
  if (spec.total == 0) return std::unexpected("--total: must be greater than 0");
  if (spec.sync_total == 0) return std::unexpected("--sync-total: must be greater than 0");
  if (spec.passes < 0) return std::unexpected("--passes: must be at least 1");
  if (spec.buffer < 4096) return std::unexpected("--buffer: at least 4 KiB");
  if (spec.buffer > (1ull << 30)) return std::unexpected("--buffer: at most 1 GiB");
  if (spec.qd < 1 || spec.qd > 4096) return std::unexpected("--qd: between 1 and 4096");
  if (spec.rounds < 1) return std::unexpected("--rounds: must be at least 1");
  if (spec.methods.empty())
    for (const auto& info : kRecordMethods) spec.methods.push_back(info.id);
  if (spec.syncs.empty()) spec.syncs.push_back({});
  if (spec.threads.empty()) spec.threads = {1, 2, 4, 8, 16};
  for (int t : spec.threads)
    if (t < 1 || t > 1024) return std::unexpected("--threads: each between 1 and 1024");
  if (spec.commit_time_ns < 10'000'000) return std::unexpected("--commit-time: at least 10ms");
  if (auto big = CheckRecordsMemory(spec)) return std::unexpected(*big);
  return {};
}

namespace {

// Every cell, spec.rounds times in rotated order (command/trials.h).
// Stops at the first failure or an interrupt.
Status RunCells(const RecordsSpec& spec, const Corpus& corpus, const OutputPlan& plan,
                const OutputPlan& sync_plan, const RunContext& ctx,
                std::vector<RecordsCell>& cells) {
  TrialPlan trials;
  trials.cells = cells.size();
  trials.rounds = spec.rounds;
  trials.name = [&](size_t i) { return cells[i].name; };
  trials.progress = true;
  auto plan_of = [&](const RecordsCell& c) -> const OutputPlan& {
    return c.sync.synchronous() ? sync_plan : plan;
  };
  return RunTrials(
      ctx, trials,
      [&](const TrialSlot& t) {
        RecordsCell& c = cells[t.cell];
        return RunCell(spec, corpus, c, plan_of(c), ctx);
      },
      [&](const TrialSlot& t, MethodRun&& run) {
        RecordsCell& c = cells[t.cell];
        const OutputPlan& p = plan_of(c);
        if (run.outcome.ok())
          RecordTrial(ctx, {c.name,
                            t.round,
                            Role::kMeasure,
                            run.start_ns,
                            run.start_ns + run.ns,
                            p.bytes,
                            p.lines,
                            RecordsKey("lines_s").name,
                            {}});
        AddMethodRun(run, p, c.acc);
      });
}

// How the rows were written, for the reader: sizes and verification.
void AddRunNotes(const RecordsSpec& spec, const OutputPlan& plan, const OutputPlan& sync_plan,
                 ExperimentResult& out) {
  out.notes.push_back("unsynchronised rows write " + FormatBytes(static_cast<double>(plan.bytes)) +
                      " (" + std::to_string(plan.lines) + " lines, " +
                      std::to_string(plan.passes).substr(0, 5) + " passes over the corpus)");
  bool any_sync = std::any_of(spec.syncs.begin(), spec.syncs.end(),
                              [](const RecordSyncChoice& s) { return s.synchronous(); });
  if (any_sync)
    out.notes.push_back("synchronous rows (osync, odsync, every:N, rwf-dsync) write only " +
                        FormatBytes(static_cast<double>(sync_plan.bytes)) + " (" +
                        std::to_string(sync_plan.lines) +
                        " lines, --sync-total): compare them by MB/s and lines/s");
  if (spec.verify) {
    size_t ok = std::count_if(out.rows.begin(), out.rows.end(),
                              [](const Row& r) { return r.status == RowStatus::kOk; });
    out.notes.push_back(ok == out.rows.size()
                            ? "every file was read back and compared byte for byte"
                            : "the files of the " + std::to_string(ok) +
                                  " ok rows were read back and compared byte for byte; failed "
                                  "and unsupported rows have no verified file");
  }
}

Result<Corpus> LoadCorpus(const RecordsSpec& spec) {
  if (spec.input.empty()) return Corpus::Generate(spec.corpus_size, spec.seed);
  return Corpus::Load(spec.input);
}

}  // namespace

Status RunRecords(const RecordsSpec& spec, const RunContext& ctx, ExperimentResult& out) {
  out.name = "records";
  out.row_label = "method";
  out.reproduces = kRecordsReproduces;
  out.target = TargetOf(ctx, spec.dir);
  auto loaded = LoadCorpus(spec);
  if (!loaded) return std::unexpected(loaded.error());
  const Corpus& corpus = *loaded;
  AddParams(spec, corpus, out);
  if (spec.commit) return RunGroupCommit(spec, corpus, ctx, out);
  out.table = KeyNames(
      KeysOf(kRecordsFigures, {"seconds", "mb_s", "lines_s", "syscalls_per_line", "speedup"}));
  std::vector<RecordsCell> cells;
  for (const auto& s : spec.syncs)
    for (RecordMethod m : spec.methods) cells.push_back({m, s, RowName(m, s), {}});
  const OutputPlan plan = PlanOutput(corpus, spec.total, spec.passes);
  const OutputPlan sync_plan = PlanOutput(corpus, spec.sync_total, 0);
  Status status = RunCells(spec, corpus, plan, sync_plan, ctx, cells);
  if (ctx.progress) std::fprintf(ctx.progress, "\r%-40s\r", "");
  for (RecordsCell& c : cells) {
    if (c.acc.outcome.ok() && c.acc.figures.empty()) c.acc.outcome = Unmeasured();
    if (c.sync.synchronous())
      c.acc.notes.push_back("synchronous: " + FormatBytes(static_cast<double>(sync_plan.bytes)) +
                            " (--sync-total), not --total");
    out.rows.push_back(RecordsRow(c.name, c.acc));
  }
  AddSpeedups(out);
  AddRunNotes(spec, plan, sync_plan, out);
  AddTrialNotes(ctx, RotationNote(spec.rounds), kRecordsExplains, out);
  return status;
}

}  // namespace writelab
