#include "experiments/records_commit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <thread>

#include "core/clock.h"
#include "core/histogram.h"
#include "io/file.h"
#include "writelab/record_writer.h"

namespace writelab {
namespace {

enum class CommitWay { kFdatasync, kGroup };

struct Worker {
  Histogram latency;
  uint64_t commits = 0;
  uint64_t bytes = 0;
  int error = 0;
  std::string what;
};

struct CommitRun {
  RowStatus status = RowStatus::kOk;
  int error = 0;
  std::string message;
  bool interrupted = false;
  uint64_t ns = 0;
  uint64_t commits = 0;
  uint64_t syncs = 0;
  Histogram latency;
};

// The one shared state of a row's threads.
struct Shared {
  int fd;
  RecordWriter* writer;  // kGroup
  std::atomic<uint64_t> offset{0};
  std::atomic<bool> go{false}, stop{false};
  uint64_t deadline = 0;
  const RunContext& ctx;
};

// pwrite the whole record at a reserved offset, then fdatasync; 0 or errno.
int CommitAlone(Shared& sh, const Line* l, std::string& what) {
  uint64_t off = sh.offset.fetch_add(l->len, std::memory_order_relaxed);
  for (uint32_t done = 0; done < l->len;) {
    ssize_t n = pwrite(sh.fd, l->data + done, l->len - done, static_cast<off_t>(off + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return what = "pwrite", n < 0 ? errno : EIO;
    done += static_cast<uint32_t>(n);
  }
  if (fdatasync(sh.fd) != 0) return what = "fdatasync", errno;
  return 0;
}

void WorkerLoop(CommitWay way, Shared& sh, const Line* l, const Corpus& corpus, Worker& w) {
  while (!sh.go.load(std::memory_order_acquire)) std::this_thread::yield();
  for (;;) {
    uint64_t t0 = NowNs();
    if (t0 >= sh.deadline || sh.stop.load(std::memory_order_relaxed) || sh.ctx.Interrupted()) break;
    if (way == CommitWay::kFdatasync) {
      w.error = CommitAlone(sh, l, w.what);
    } else if (auto s = sh.writer->Append(std::string_view(l->data, l->len), Durable::kYes); !s) {
      w.error = s.error().code;
      w.what = s.error().Message();
    }
    if (w.error) {
      sh.stop = true;
      break;
    }
    w.latency.Record(NowNs() - t0);
    ++w.commits;
    w.bytes += l->len;
    l = corpus.Next(l);
  }
}

CommitRun MeasureCommits(CommitWay way, int threads, const RecordsSpec& spec, const Corpus& corpus,
                         const RunContext& ctx) {
  CommitRun run;
  auto fail = [&](int err, const std::string& message) {
    run.status = RowStatus::kFailed;
    run.error = err;
    run.message = message;
  };
  std::string path;
  auto fd = CreateOwnFile(spec.dir, "commit", O_WRONLY, &path);
  if (!fd) {
    fail(fd.error().code, fd.error().Message());
    return run;
  }
  struct Unlink {
    std::string p;
    ~Unlink() { unlink(p.c_str()); }
  } unlink_at_end{path};
  std::optional<RecordWriter> writer;
  if (way == CommitWay::kGroup) {
    RecordWriterOptions o;
    o.policy = DurabilityPolicy::kGroupCommit;
    o.buffer_bytes = spec.buffer;
    int copy = dup(fd->get());
    if (copy < 0) {
      fail(errno, ErrnoError(errno, "dup").Message());
      return run;
    }
    auto w = RecordWriter::Create(MakeFileSink(UniqueFd(copy), path), o);
    if (!w) {
      fail(w.error().code, w.error().Message());
      return run;
    }
    writer.emplace(std::move(*w));
  }
  Shared sh{fd->get(), writer ? &*writer : nullptr, {}, {}, {}, 0, ctx};
  std::vector<Worker> workers(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  const Line* start = corpus.head();
  for (int t = 0; t < threads; ++t, start = corpus.Next(start))
    pool.emplace_back(WorkerLoop, way, std::ref(sh), start, std::cref(corpus),
                      std::ref(workers[static_cast<size_t>(t)]));
  const uint64_t t0 = NowNs();
  sh.deadline = t0 + spec.commit_time_ns;
  sh.go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  run.ns = NowNs() - t0;
  uint64_t bytes = 0;
  for (Worker& w : workers) {
    run.latency.Merge(w.latency);
    run.commits += w.commits;
    bytes += w.bytes;
    if (w.error && run.status == RowStatus::kOk)
      fail(w.error, way == CommitWay::kGroup ? w.what : ErrnoError(w.error, w.what).Message());
  }
  run.syncs = way == CommitWay::kGroup ? writer->stats().sync_calls : run.commits;
  if (writer)
    if (auto s = writer->Close(); !s && run.status == RowStatus::kOk)
      fail(s.error().code, s.error().Message());
  run.interrupted = ctx.Interrupted();
  struct stat st;
  if (run.status == RowStatus::kOk && fstat(fd->get(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) != bytes)
    fail(0, "verify: the file has " + std::to_string(st.st_size) + " bytes, committed " +
                std::to_string(bytes));
  return run;
}

constexpr FigureSpec kCommitFigures[] = {
    {"commits_s", "commits/s", "commits/s", "records made durable per second, all threads"},
    {"p50_ms", "commit p50", "ms", "one commit: append/pwrite until durable, median"},
    {"p99_ms", "commit p99", "ms", "one commit, 99th percentile"},
    {"max_ms", "commit max", "ms", "one commit, worst"},
    {"records_per_sync", "records/sync", "records", "commits per fdatasync call"},
    {"speedup", "vs fdatasync", "x", "commits/s over per-thread fdatasync at the same threads"},
    {"commits", "commits", "records", "records committed in the row"},
    {"syncs", "fdatasyncs", "calls", "fdatasync calls"},
};

Row MakeCommitRow(const std::string& name, const CommitRun& r, std::optional<double> base) {
  Row row;
  row.name = name;
  row.status = r.status;
  row.error_code = r.error;
  row.message = r.message;
  if (r.commits == 0) return row;
  std::map<std::string, double> f;
  double s = static_cast<double>(r.ns) / 1e9;
  f["commits_s"] = static_cast<double>(r.commits) / s;
  f["p50_ms"] = static_cast<double>(r.latency.Percentile(50)) / 1e6;
  f["p99_ms"] = static_cast<double>(r.latency.Percentile(99)) / 1e6;
  f["max_ms"] = static_cast<double>(r.latency.max()) / 1e6;
  f["records_per_sync"] =
      r.syncs ? static_cast<double>(r.commits) / static_cast<double>(r.syncs) : 0;
  if (base && *base > 0) f["speedup"] = f["commits_s"] / *base;
  f["commits"] = static_cast<double>(r.commits);
  f["syncs"] = static_cast<double>(r.syncs);
  AddFigures(row.figures, kCommitFigures, f);
  row.latencies.push_back(
      Latency::From(r.latency, "commit", "commit", "append or pwrite until the record is durable"));
  return row;
}

}  // namespace

Status RunGroupCommit(const RecordsSpec& spec, const Corpus& corpus, const RunContext& ctx,
                      ExperimentResult& out) {
  out.table = {"commits_s", "p50_ms", "p99_ms", "max_ms", "records_per_sync", "speedup"};
  out.params.push_back({"threads",
                        [&] {
                          std::string t;
                          for (int n : spec.threads)
                            t += (t.empty() ? "" : ",") + std::to_string(n);
                          return t;
                        }(),
                        ""});
  out.params.push_back({"commit_time", static_cast<double>(spec.commit_time_ns) / 1e9, "s"});
  Status status;
  for (int threads : spec.threads) {
    std::string t = std::to_string(threads);
    CommitRun alone, group;
    bool measured = status.has_value();
    if (measured) {
      if (ctx.progress) std::fprintf(ctx.progress, "\rcommit, %d threads   ", threads);
      alone = MeasureCommits(CommitWay::kFdatasync, threads, spec, corpus, ctx);
      if (alone.status == RowStatus::kOk && !alone.interrupted)
        group = MeasureCommits(CommitWay::kGroup, threads, spec, corpus, ctx);
    }
    std::optional<double> base;
    if (alone.commits)
      base = static_cast<double>(alone.commits) / (static_cast<double>(alone.ns) / 1e9);
    for (auto* r : {&alone, &group}) {
      if (r->interrupted && status) status = std::unexpected(PlainError("interrupted"));
      if (r->status == RowStatus::kFailed && status)
        status = std::unexpected(PlainError("commit, " + t + " threads: " + r->message));
      if (r->commits == 0 && r->status == RowStatus::kOk) {
        r->status = RowStatus::kFailed;
        r->message = "not measured: the run stopped before this row";
      }
    }
    out.rows.push_back(MakeCommitRow("fdatasync/" + t, alone, std::nullopt));
    out.rows.push_back(MakeCommitRow("group/" + t, group, base));
  }
  if (ctx.progress) std::fprintf(ctx.progress, "\r%-40s\r", "");
  out.notes.push_back(
      "fdatasync/T: T threads each pwrite a line at a reserved offset, then "
      "fdatasync; group/T: T threads call RecordWriter::Append(line, "
      "Durable::kYes) on one group-commit writer");
  out.notes.push_back("each row runs --commit-time; a commit is a line of the corpus");
  return status;
}

}  // namespace writelab
