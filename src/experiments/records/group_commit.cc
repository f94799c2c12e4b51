// SPDX-License-Identifier: MIT
#include "experiments/records/group_commit.h"
#include "command/trials.h"
#include "experiments/records/figures.h"
#include "experiments/records/rows.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <optional>
#include <thread>

#include "core/clock.h"
#include "core/histogram.h"
#include "core/outcome.h"
#include "core/stats.h"
#include "core/units.h"
#include "explain/figures.h"
#include "io/engine.h"
#include "io/file.h"
#include "io/own_files.h"
#include "io/runner.h"
#include "mpi/team.h"
#include "writelab/record_writer.h"

namespace writelab {
namespace {

constexpr CommitWay kWays[] = {{false, false, "fdatasync"},
                               {false, true, "fdatasync-prealloc"},
                               {true, false, "group"},
                               {true, true, "group-prealloc"}};
constexpr size_t kWayCount = std::size(kWays);
constexpr uint64_t kLibraryChunk = 1u << 20;  // RecordWriterOptions::preallocate_bytes

struct Worker {
  Histogram latency;  // one commit: pwrite and fdatasync, or Append, until durable
  Histogram syncs;    // fdatasync rows: each fdatasync call
  uint64_t commits = 0;
  uint64_t bytes = 0;
  uint64_t sync_ns = 0;
  std::optional<Error> failure;         // what stopped this thread
  const char* what = "";                // fdatasync rows: the call that failed
  std::unique_ptr<WriteEngine> engine;  // fdatasync rows: the thread's own
  std::optional<WriteRunner> runner;
};

// The one shared state of a row's threads.
struct Shared {
  int fd;
  RecordWriter* writer;  // group rows
  std::atomic<uint64_t> offset{0};
  std::atomic<bool> go{false}, stop{false};
  uint64_t deadline = 0;
  const RunContext& ctx;
};

// pwrite the whole record at a reserved offset, then fdatasync, through the
// thread's runner; 0 or -errno (w.what names the call).
int CommitAlone(Shared& sh, const Line* l, Worker& w) {
  uint64_t off = sh.offset.fetch_add(l->len, std::memory_order_relaxed);
  if (int rc = w.runner->WriteFully(l->data, l->len, off); rc < 0) {
    w.what = "pwrite";
    return rc;
  }
  if (int rc = w.runner->Sync({SyncKind::kFdatasync}, &w.syncs); rc < 0) {
    w.what = "fdatasync";
    return rc;
  }
  w.sync_ns += w.runner->last_ns();
  return 0;
}

void WorkerLoop(bool group, Shared& sh, const Line* l, const Corpus& corpus, Worker& w) {
  while (!sh.go.load(std::memory_order_acquire)) std::this_thread::yield();
  for (;;) {
    uint64_t t0 = NowNs();  // a commit spans several calls (and the group's wait)
    if (t0 >= sh.deadline || sh.stop.load(std::memory_order_relaxed) || sh.ctx.Interrupted()) break;
    if (!group) {
      if (int rc = CommitAlone(sh, l, w); rc < 0) w.failure = ErrnoError(-rc, w.what);
    } else if (auto s = sh.writer->Append(std::string_view(l->data, l->len), Durable::kYes); !s) {
      w.failure = s.error();
    }
    if (w.failure) {
      sh.stop = true;
      break;
    }
    w.latency.Record(NowNs() - t0);
    ++w.commits;
    w.bytes += l->len;
    l = corpus.Next(l);
  }
}

// Zeros for fdatasync-prealloc, written and made durable before the clock
// starts: far more than any fdatasync-bound row commits in the time.
uint64_t ZoneBytes(const RecordsSpec& spec) {
  const uint64_t per_s = 4u << 20;
  return std::clamp<uint64_t>(spec.commit_time_ns / 1'000'000'000u * per_s, 8u << 20, 1u << 30);
}

// The library's own zero writer (RecordSink::Extend), then fdatasync.
Status WriteZoneAndSync(int fd, const std::string& path, uint64_t bytes) {
  int copy = dup(fd);
  if (copy < 0) return std::unexpected(ErrnoError(errno, "dup"));
  auto sink = MakeFileSink(UniqueFd(copy), path);
  if (int rc = sink->Extend(0, bytes); rc != 0)
    return std::unexpected(ErrnoError(-rc, "write zeros"));
  if (int rc = sink->DataSync(); rc != 0)
    return std::unexpected(ErrnoError(-rc, "fdatasync zeros"));
  return {};
}

// For group rows: a RecordWriter on a second descriptor of the row's file.
Result<RecordWriter> GroupWriter(const CommitWay& way, const RecordsSpec& spec, int fd,
                                 const std::string& path) {
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  o.buffer_bytes = spec.buffer;
  if (way.prealloc) o.preallocate_bytes = kLibraryChunk;
  int copy = dup(fd);
  if (copy < 0) return std::unexpected(ErrnoError(errno, "dup"));
  return RecordWriter::Create(MakeFileSink(UniqueFd(copy), path), o);
}

// Runs the threads until the deadline; fills the timing of run.
void RunThreads(bool group, int threads, Shared& sh, const RecordsSpec& spec, const Corpus& corpus,
                CommitRun& run, std::vector<Worker>& workers) {
  std::vector<std::thread> pool;
  const Line* start = corpus.head();
  for (int t = 0; t < threads; ++t, start = corpus.Next(start))
    pool.emplace_back(WorkerLoop, group, std::ref(sh), start, std::cref(corpus),
                      std::ref(workers[static_cast<size_t>(t)]));
  const uint64_t t0 = NowNs();
  sh.deadline = t0 + spec.commit_time_ns;
  sh.go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  run.start_ns = t0;
  run.ns = NowNs() - t0;
}

// The file must hold exactly what was committed, plus the zone's zeros for
// fdatasync-prealloc (the library cuts its own zeros off at Close).
void CheckSize(int fd, uint64_t committed, uint64_t zone, CommitRun& run) {
  struct stat st;
  if (!run.outcome.ok() || fstat(fd, &st) != 0) return;
  const uint64_t want = std::max(committed, zone);
  if (static_cast<uint64_t>(st.st_size) == want) return;
  run.outcome.Fail(PlainError("verify: the file has " + std::to_string(st.st_size) +
                              " bytes, expected " + std::to_string(want) + " (" +
                              std::to_string(committed) + " committed)"));
}

// The threads' counts into run (the writer's own for group rows), and
// closes the writer. Returns the bytes committed.
uint64_t Gather(std::vector<Worker>& workers, RecordWriter* writer, uint64_t zone, CommitRun& run) {
  uint64_t bytes = 0;
  for (Worker& w : workers) {
    run.latency.Merge(w.latency);
    run.commits += w.commits;
    run.sync_ns += w.sync_ns;
    bytes += w.bytes;
    if (w.failure) run.outcome.Fail(*w.failure);
  }
  run.syncs = run.commits;
  run.zero_bytes = zone;
  if (writer) {
    RecordWriterStats st = writer->stats();
    run.syncs = st.sync_calls;
    run.sync_ns = st.sync_ns;
    run.zero_bytes = st.zero_bytes;
    run.wait_timeouts = st.wait_timeouts;
    if (auto s = writer->Close(); !s) run.outcome.Fail(s.error());
  }
  return bytes;
}

CommitRun MeasureCommits(const CommitWay& way, int threads, const RecordsSpec& spec,
                         const Corpus& corpus, const RunContext& ctx) {
  CommitRun run;
  std::string path;
  auto fd = CreateOwnFile(spec.dir, "commit", O_WRONLY, &path);
  if (!fd) {
    run.outcome.Fail(fd.error());
    return run;
  }
  // Closed, removed, and the freed blocks' journal commit (and discards,
  // with -o discard) done before the next row starts, not during it.
  struct Remove {
    UniqueFd& fd;
    const std::string& path;
    const std::string& dir;
    ~Remove() {
      fd.Reset();
      RemoveOwnFile(path);
      UniqueFd d(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (d.get() >= 0) syncfs(d.get());
    }
  } remove_at_end{*fd, path, spec.dir};
  const uint64_t zone = !way.group && way.prealloc ? ZoneBytes(spec) : 0;
  if (Status z = zone ? WriteZoneAndSync(fd->get(), path, zone) : Status{}; !z) {
    run.outcome.Fail(z.error());
    return run;
  }
  std::optional<RecordWriter> writer;
  if (way.group) {
    auto w = GroupWriter(way, spec, fd->get(), path);
    if (!w) {
      run.outcome.Fail(w.error());
      return run;
    }
    writer.emplace(std::move(*w));
  }
  Shared sh{fd->get(), writer ? &*writer : nullptr, {}, {}, {}, 0, ctx};
  std::vector<Worker> workers(static_cast<size_t>(threads));
  if (!way.group)
    for (Worker& w : workers) {
      w.engine = ctx.Engine(MakePwriteEngine(fd->get()));
      w.runner.emplace(*w.engine);  // untimed writes: the commit is timed whole
    }
  ExplainSpan explain(ctx.explainer, kRecordsExplains);  // every commit is synchronous
  RunThreads(way.group, threads, sh, spec, corpus, run, workers);
  std::optional<ExplainCounters> seen = explain.End();
  const uint64_t bytes = Gather(workers, writer ? &*writer : nullptr, zone, run);
  if (seen)
    ExplainValues(*ctx.explainer, *seen, {run.commits, static_cast<double>(run.ns) / 1e9},
                  kRecordsExplains, run.explained);
  run.outcome.interrupted = ctx.Interrupted();
  CheckSize(fd->get(), bytes, zone, run);
  return run;  // then remove_at_end, outside the timing
}

// Runs the rows of one thread count, --rounds times, rotating their order
// (command/trials.h).
Status MeasureThreadCount(int threads, const RecordsSpec& spec, const Corpus& corpus,
                          const RunContext& ctx, CommitAcc (&accs)[kWayCount]) {
  TrialPlan plan;
  plan.cells = kWayCount;
  plan.rounds = spec.rounds;
  plan.name = [&](size_t i) { return accs[i].name; };
  plan.failure_prefix = "commit, ";
  plan.progress = true;
  return RunTrials(
      ctx, plan,
      [&](const TrialSlot& t) { return MeasureCommits(kWays[t.cell], threads, spec, corpus, ctx); },
      [&](const TrialSlot& t, CommitRun&& r) {
        if (r.outcome.ok())
          RecordTrial(ctx,
                      {accs[t.cell].name,
                       t.round,
                       Role::kMeasure,
                       r.start_ns,
                       r.start_ns + r.ns,
                       0,
                       r.commits,
                       CommitKey("commits_s").name,
                       {}},
                      {{"commit", &r.latency}});
        AddCommitTrial(r, kWays[t.cell], threads, accs[t.cell]);
      });
}

void AddCommitNotes(const RecordsSpec& spec, ExperimentResult& out) {
  out.notes.push_back(
      "fdatasync/T: T threads each pwrite a line at a reserved offset of one growing file, then "
      "fdatasync; group/T: T threads call RecordWriter::Append(line, Durable::kYes) on one "
      "group-commit writer");
  out.notes.push_back(
      "-prealloc: the records overwrite zeros written ahead (fdatasync-prealloc: " +
      FormatBytes(static_cast<double>(ZoneBytes(spec))) +
      " written and synced before the clock; group-prealloc: the library's preallocate_bytes = " +
      FormatBytes(static_cast<double>(kLibraryChunk)) +
      ", written as the records advance, in the timing except the first chunk), so a commit's "
      "fdatasync has no file size or extents to journal");
  out.notes.push_back("each row runs --commit-time; a commit is a line of the corpus");
}

}  // namespace

Status RunGroupCommit(const RecordsSpec& spec, const Corpus& corpus, const RunContext& ctx,
                      ExperimentResult& out) {
  out.table = KeyNames(KeysOf(kCommitFigures, {"commits_s", "p50_ms", "p99_ms", "records_per_sync",
                                               "sync_ms", "speedup", "ceiling_fraction"}));
  std::string list;
  for (int n : spec.threads) list += (list.empty() ? "" : ",") + std::to_string(n);
  out.params.push_back({"threads", list, ""});
  out.params.push_back({"commit_time", static_cast<double>(spec.commit_time_ns) / 1e9, "s"});
  Status status;
  for (int threads : spec.threads) {
    CommitAcc accs[kWayCount];
    for (size_t k = 0; k < kWayCount; ++k)
      accs[k].name = std::string(kWays[k].name) + "/" + std::to_string(threads);
    if (status) status = MeasureThreadCount(threads, spec, corpus, ctx, accs);
    auto base = accs[0].figures.find(CommitKey("commits_s").name);
    double median = base == accs[0].figures.end() ? 0 : Summarize(base->second).median;
    for (CommitAcc& acc : accs) {
      if (acc.figures.empty() && acc.outcome.ok()) acc.outcome = Unmeasured();
      out.rows.push_back(CommitRow(acc, &acc == &accs[0] ? 0 : median));  // [0]: the base
    }
  }
  if (ctx.progress) std::fprintf(ctx.progress, "\r%-40s\r", "");
  AddCommitNotes(spec, out);
  AddTrialNotes(ctx, RotationNote(spec.rounds), kRecordsExplains, out);
  return status;
}

}  // namespace writelab
