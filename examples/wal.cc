// SPDX-License-Identifier: MIT
// A write-ahead log with group commit and recovery, on writelab::RecordWriter.
//
//   wal_example LOG [THREADS] [TXNS_PER_THREAD] [--crash-after N]
//
// On start it recovers LOG if it exists: LogReader reads the framed records
// up to the first torn or zero one, the transactions whose commit record
// made it are counted, and the log is reopened where the valid part ends.
// If the log is damaged with valid records behind the damage (corrupt, not
// a torn tail), it says where and exits 1 without touching the log.
// Then THREADS threads each run TXNS_PER_THREAD transactions: a transaction
// appends its put records without waiting, then its commit record, and waits
// with SyncTo(commit LSN) until everything up to it is durable. Concurrent
// committers share fdatasyncs (group commit), and the log is kept extended
// with written zeros ahead of the records, so that a commit on ext4 or xfs
// has no size change to journal.
//
// --crash-after N stops the process with _exit(3) once N transactions were
// acknowledged, without closing the log, as a crash would: run it again to
// see the recovery. Every transaction reported acknowledged is recovered.
// Output: one "key: value" line per fact, for people and for tests.
#include <sys/stat.h>
#include <unistd.h>
#include <writelab/log_reader.h>
#include <writelab/record_writer.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kPutsPerTxn = 3;

struct Args {
  const char* log = nullptr;
  long threads = 4, txns = 100, crash_after = -1;
};

bool ParseArgs(int argc, char** argv, Args& a) {
  std::vector<const char*> pos;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--crash-after") == 0 && i + 1 < argc)
      a.crash_after = std::strtol(argv[++i], nullptr, 10);
    else
      pos.push_back(argv[i]);
  }
  if (pos.empty() || pos.size() > 3) return false;
  a.log = pos[0];
  if (pos.size() > 1) a.threads = std::strtol(pos[1], nullptr, 10);
  if (pos.size() > 2) a.txns = std::strtol(pos[2], nullptr, 10);
  return a.threads > 0 && a.txns >= 0;
}

// Reads the log; returns the offset where its valid part ends, or -1.
long long Recover(const char* log) {
  auto reader = writelab::LogReader::Open(log);
  if (!reader) {
    std::fprintf(stderr, "%s\n", reader.error().Message().c_str());
    return -1;
  }
  long long committed = 0;
  for (;;) {
    auto record = reader->Next();
    if (!record) {
      std::fprintf(stderr, "%s\n", record.error().Message().c_str());
      return -1;
    }
    if (!*record) break;
    const std::string_view r(reinterpret_cast<const char*>((*record)->data()), (*record)->size());
    committed += r.starts_with("commit ");
  }
  std::printf("recovered records: %llu\n", static_cast<unsigned long long>(reader->records()));
  std::printf("recovered transactions: %lld\n", committed);
  std::printf("log ended at: %llu (%s)\n", static_cast<unsigned long long>(reader->end_offset()),
              writelab::LogEndName(reader->end_reason()));
  if (!reader->TornTail()) {
    // Damage with valid records behind it: not a crash's torn tail. Cutting
    // the log here would lose them, so stop and let a person decide.
    const writelab::LogDamage& d = reader->damage();
    if (d.valid_follows)
      std::printf("damage: %llu bytes at %llu, then a valid record at %llu\n",
                  static_cast<unsigned long long>(d.bytes_skipped),
                  static_cast<unsigned long long>(d.offset),
                  static_cast<unsigned long long>(d.resume_offset));
    std::fprintf(stderr, "%s: corrupt at %llu with valid records behind it; not reopened\n", log,
                 static_cast<unsigned long long>(d.offset));
    return -1;
  }
  return static_cast<long long>(reader->end_offset());
}

// A new log, or the existing one reopened where its valid part ends.
writelab::Result<writelab::RecordWriter> OpenLog(const char* log,
                                                 const writelab::RecordWriterOptions& options) {
  struct stat st;
  if (stat(log, &st) != 0) return writelab::RecordWriter::Open(log, options);
  const long long end = Recover(log);
  if (end < 0) return writelab::Unexpected(writelab::PlainError("recovery failed"));
  return writelab::RecordWriter::Reopen(log, static_cast<uint64_t>(end), options);
}

// One transaction: puts without waiting, a commit record, then SyncTo.
writelab::Status Transaction(writelab::RecordWriter& wal, long thread, long txn) {
  const std::string id = std::to_string(thread) + "." + std::to_string(txn);
  for (int k = 0; k < kPutsPerTxn; ++k) {
    std::string put = "put " + id + " key" + std::to_string(k) + "=value" + std::to_string(txn);
    if (auto lsn = wal.Append(put); !lsn) return writelab::Unexpected(lsn.error());
  }
  auto commit = wal.Append("commit " + id);
  if (!commit) return writelab::Unexpected(commit.error());
  return wal.SyncTo(*commit);
}

void PrintStats(long acknowledged, const writelab::RecordWriterStats& s) {
  const writelab::LatencyHistogram& h = s.commit_latency;
  std::printf("acknowledged transactions: %ld\n", acknowledged);
  std::printf("records: %llu in %llu write calls\n", static_cast<unsigned long long>(s.records),
              static_cast<unsigned long long>(s.write_calls));
  std::printf(
      "fdatasyncs: %llu (%.1f commits each)\n", static_cast<unsigned long long>(s.sync_calls),
      s.sync_calls ? static_cast<double>(h.count) / static_cast<double>(s.sync_calls) : 0.0);
  std::printf("commit latency: p50 %.0f us, p99 %.0f us, max %.0f us\n",
              static_cast<double>(h.Percentile(50)) / 1e3,
              static_cast<double>(h.Percentile(99)) / 1e3, static_cast<double>(h.max_ns) / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, args)) {
    std::fprintf(stderr, "usage: %s LOG [THREADS] [TXNS_PER_THREAD] [--crash-after N]\n", argv[0]);
    return 2;
  }
  writelab::RecordWriterOptions options;
  options.policy = writelab::DurabilityPolicy::kGroupCommit;
  options.framing = writelab::RecordFraming::kLengthCrc32c;
  options.preallocate_bytes = 1 << 20;
  auto wal = OpenLog(args.log, options);
  if (!wal) {
    std::fprintf(stderr, "%s\n", wal.error().Message().c_str());
    return 1;
  }
  std::atomic<long> acknowledged{0}, failed{0};
  std::vector<std::thread> pool;
  for (long t = 0; t < args.threads; ++t)
    pool.emplace_back([&, t] {
      for (long i = 0; i < args.txns && !failed; ++i) {
        if (auto s = Transaction(*wal, t, i); !s) {
          std::fprintf(stderr, "%s\n", s.error().Message().c_str());
          ++failed;
          return;
        }
        if (++acknowledged == args.crash_after) {
          std::printf("acknowledged transactions: %ld\ncrash: now\n", args.crash_after);
          std::fflush(stdout);
          _exit(3);
        }
      }
    });
  for (auto& th : pool) th.join();
  auto closed = wal->Close();
  if (!closed) std::fprintf(stderr, "%s\n", closed.error().Message().c_str());
  if (!closed || failed) return 1;
  PrintStats(acknowledged.load(), wal->stats());
  return 0;
}
