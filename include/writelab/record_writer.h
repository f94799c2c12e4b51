// SPDX-License-Identifier: MIT
// RecordWriter: append many small records (log lines, WAL entries) to a file
// in few system calls, and make them durable by policy.
//
// Morton's writev-speed.c (LKML, 2002) showed one write(2) per line costing
// 4x more than stdio, and O_SYNC writes costing 300x more than one fsync at
// the end (docs/records.md has the measurements on your machine). A
// RecordWriter copies records into an internal buffer and hands the buffer to
// the kernel in one pwritev2 when it fills; a record larger than a quarter of
// the buffer is not copied but gathered into that same pwritev2 beside the
// buffered bytes (iovec gathering). Records land in the file contiguously in
// the order their Append() calls took effect.
//
// Durability (RecordWriterOptions::policy):
//   kNone          nothing is synced before Sync() or Close().
//   kEveryRecords  after every `every_records` records, the appender that
//                  completes the count writes the buffer and fdatasyncs.
//   kEveryInterval a background thread writes the buffer and fdatasyncs every
//                  `every_ns` (records are durable at most about that old).
//   kGroupCommit   only Append(record, Durable::kYes) syncs: the calling
//                  thread blocks until its record is durable. One thread (the
//                  leader) writes everything buffered and issues one
//                  fdatasync that covers every record appended before it;
//                  threads that append meanwhile wait for the next leader.
//                  N concurrent committers cost far fewer than N fdatasyncs
//                  (the classic write-ahead-log group commit). When fewer
//                  committers have arrived than took part in the last sync,
//                  the first waits briefly for the others (commit_wait_ns),
//                  so that one sync covers them all instead of every sync
//                  covering about half.
// Append(record, Durable::kYes) works under every policy: it returns once the
// record is durable, by leading or joining a sync as above.
//
// Log sequence numbers: Append returns the file offset at which its record
// ends (its LSN; framing included). SyncTo(lsn) returns once everything up
// to lsn is durable, joining group commit like a Durable::kYes append, so a
// caller that appends a batch with Durable::kNo waits once, for exactly
// what it needs.
//
// Guarantee: an Append(.., Durable::kYes), SyncTo(lsn) or Sync() that
// returns success means that every record appended before it (by any
// thread; up to lsn for SyncTo) has been written and covered by a completed
// fdatasync. No record is acknowledged before that. "Durable" includes the
// file's name: Open fsyncs the directory after creating the file, Rename
// fsyncs it after renaming, so a durable record cannot be lost with the
// name it lives under.
//
// Framing (RecordWriterOptions::framing): with kLengthCrc32c every record
// is written behind an 8-byte header of its length and CRC-32C, and
// LogReader (writelab/log_reader.h) reads the log back, stopping at the
// first torn, truncated or zero record: after a crash, recovery reads every
// record up to there and, when LogReader::TornTail() says only a torn tail
// lies beyond, reopens the log at LogReader::end_offset(). Damage with
// valid records behind it (LogEnd::kCorrupt) is not a tail: Reopen refuses
// to cut there.
//
// Commit latency: stats().commit_latency is the distribution of the time
// Append(.., Durable::kYes), SyncTo and Sync took to return success.
//
// Threading: every member function is safe to call from many threads at
// once. Records of one thread appear in the file in that thread's order and
// are never interleaved with other records. Writes and syncs are issued by
// one thread at a time, in record order; copying into the buffer continues
// while a sync is in progress.
//
// Errors: the first failed write or fdatasync (EIO, ENOSPC...) is final for
// the writer, because after a failed fdatasync the kernel may have dropped
// the dirty pages and a retry could report success for lost data. Every
// caller waiting for durability of a record that was not yet durable gets
// that error, and so does every later call. The Error's context names the
// call and the file offset.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "writelab/error.h"
#include "writelab/latency_histogram.h"
#include "writelab/unique_fd.h"

namespace writelab {

enum class Durable { kNo, kYes };

enum class DurabilityPolicy { kNone, kEveryRecords, kEveryInterval, kGroupCommit };

// kNone: records are written as given. kLengthCrc32c: each behind a header
// of its length and CRC-32C (layout in writelab/log_reader.h).
enum class RecordFraming { kNone, kLengthCrc32c };

// "none", "every-records", "every-interval", "group-commit".
const char* DurabilityPolicyName(DurabilityPolicy policy);

// The two system calls a RecordWriter makes, behind an interface so that
// tests can count them or inject faults (after leveldb's Env). Called by one
// thread at a time.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Writes iov[0..count) at offset (pwritev2 semantics): bytes written,
  // possibly fewer than asked, or -errno.
  virtual ssize_t WriteV(const iovec* iov, int count, uint64_t offset) = 0;
  // fdatasync: 0 or -errno.
  virtual int DataSync() = 0;
  // For error messages: the file's path.
  virtual std::string name() const = 0;
  // For preallocate_bytes: makes [offset, offset + len) written zeros
  // (Preallocate kBest) and starts their writeback (0 or -errno); and cuts
  // the file to size (ftruncate).
  virtual int Extend(uint64_t /*offset*/, uint64_t /*len*/) { return -EOPNOTSUPP; }
  virtual int Truncate(uint64_t /*size*/) { return -EOPNOTSUPP; }
  // For RecordWriter::Rename: renames the file and fsyncs the directories
  // of both names (0 or -errno); name() is the new path afterwards.
  virtual int Rename(const std::string& /*to*/) { return -EOPNOTSUPP; }
};

// pwritev2(fd, .., rwf_flags) and fdatasync(fd) on a file the sink owns.
std::unique_ptr<RecordSink> MakeFileSink(UniqueFd fd, std::string path, int rwf_flags = 0);

struct RecordWriterOptions {
  size_t buffer_bytes = 1u << 20;  // at least 4 KiB
  DurabilityPolicy policy = DurabilityPolicy::kNone;
  uint64_t every_records = 0;  // kEveryRecords: > 0
  uint64_t every_ns = 0;       // kEveryInterval: > 0
  int rwf_flags = 0;           // pwritev2 flags on every write (Open only), e.g. RWF_DSYNC
  // Durable::kYes appends: how long the first committer of a cycle waits for
  // as many committers as took part in the last cycle before it syncs
  // without them. -1: half the recent fdatasync time; 0: never wait.
  int64_t commit_wait_ns = -1;
  // 0: off. Otherwise keep the file extended with written zeros, in chunks
  // of this size, at least half a chunk beyond the last record (their
  // writeback is started at once); Close() truncates the file to its records
  // and, unless the policy is kNone, syncs the new size (after a failure the
  // zeros stay, as after a crash). On file systems that overwrite in
  // place (ext4, xfs) a commit's fdatasync then has no size or extent change
  // to journal: it writes the data and flushes the device cache. Costs: the
  // zeros are written too, and after a crash the file may end in zeros
  // after the last durable record (a reader must stop at them, as a
  // length-prefixed or checksummed log format does). No gain on
  // copy-on-write file systems (btrfs). Not with O_APPEND or RWF_APPEND
  // (appending writes would land after the zeros): Create() fails, EINVAL.
  uint64_t preallocate_bytes = 0;
  RecordFraming framing = RecordFraming::kNone;
};

struct RecordWriterStats {
  uint64_t records = 0;      // records appended
  uint64_t bytes = 0;        // bytes appended
  uint64_t write_calls = 0;  // WriteV calls (retries of short writes included)
  uint64_t sync_calls = 0;   // DataSync calls
  uint64_t sync_ns = 0;      // time in DataSync calls (not the one after Close's truncate)
  uint64_t zero_bytes = 0;   // zeros written ahead (preallocate_bytes)
  // Group commit: syncs that started after waiting commit_wait_ns for
  // committers who did not come.
  uint64_t wait_timeouts = 0;
  uint64_t durable_records = 0;  // records covered by a completed sync
  uint64_t durable_lsn = 0;      // file offset up to which everything is durable
  // Time to success of every Append(.., Durable::kYes), SyncTo and Sync.
  LatencyHistogram commit_latency;
};

class RecordWriter {
 public:
  static constexpr uint64_t kAtEnd = UINT64_MAX;

  // Creates path, or truncates it (O_WRONLY|O_CREAT|O_TRUNC); open_flags are
  // added (O_DSYNC...), then fsyncs its directory and fdatasyncs the file (so
  // that a truncated old log cannot come back). Records are written from
  // offset 0.
  static Result<RecordWriter> Open(const std::string& path, RecordWriterOptions options = {},
                                   int open_flags = 0);
  // Opens an existing log (O_WRONLY, never creating it) and appends at
  // `at`: kAtEnd (its size), or an offset the caller verified, such as
  // LogReader::end_offset() after recovery. Whatever lies beyond `at` (a
  // torn record, preallocated zeros) is cut off first, and the file is
  // fdatasynced, so that everything before `at` is durable (the first LSN
  // is `at`) and no stale record after it can ever be read as a new one.
  // With RecordFraming::kLengthCrc32c the cut is checked first (the file is
  // opened O_RDWR to read it): if a valid record starts at `at`, or
  // LogReader finds damage there with valid records behind it (kCorrupt),
  // nothing is changed and the error is EEXIST, so that recovery never cuts
  // off acknowledged records. Without framing the caller's word is taken.
  // `at` beyond the end of the file: EINVAL. kAtEnd appends after
  // everything in the file, zeros included: after a crash of a log written
  // with preallocate_bytes, reopen at LogReader::end_offset() instead.
  static Result<RecordWriter> Reopen(const std::string& path, uint64_t at = kAtEnd,
                                     RecordWriterOptions options = {}, int open_flags = 0);
  // Writes through sink from start_offset, which is taken as durable
  // (options.rwf_flags is the sink's job).
  static Result<RecordWriter> Create(std::unique_ptr<RecordSink> sink,
                                     RecordWriterOptions options = {}, uint64_t start_offset = 0);

  RecordWriter(RecordWriter&&) noexcept;
  RecordWriter& operator=(RecordWriter&&) noexcept;
  // Close() if not closed, ignoring its error: call Close() to see it.
  ~RecordWriter();

  // Appends one record (any size, empty ignored; with framing, less than
  // 4 GiB). Returns its LSN: the file offset at which it ends (for an empty
  // record, the end of the log so far). With Durable::kYes, returns once the
  // record and all before it are durable (see Guarantee above).
  Result<uint64_t> Append(std::span<const std::byte> record, Durable durable = Durable::kNo);
  Result<uint64_t> Append(std::string_view record, Durable durable = Durable::kNo) {
    return Append(std::as_bytes(std::span(record.data(), record.size())), durable);
  }
  // Returns once everything up to lsn (an LSN that Append returned) is
  // durable, leading or joining a group commit. An lsn beyond the last
  // append: EINVAL.
  Status SyncTo(uint64_t lsn);
  // Hands everything buffered to the kernel; not durable.
  Status Flush();
  // Flush, then one fdatasync: every record appended before the call is
  // durable on success.
  Status Sync();
  // Stops the interval thread, writes what is buffered, syncs unless the
  // policy is kNone, and closes the file. Later calls fail, except Rename.
  Status Close();
  // Renames the log (rename(2); to is a path) and fsyncs the directories of
  // the old and the new name, so that the new name is durable on success.
  // Records are not synced by it: Sync() first where they must be. Also
  // after Close(), for "close, then rename into place".
  Status Rename(const std::string& to);

  RecordWriterStats stats() const;

 private:
  struct State;
  explicit RecordWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace writelab
