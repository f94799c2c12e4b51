// SPDX-License-Identifier: MIT
// The spec of `writelab records` and the tables its options choose from: the
// types its own files share (methods.h, group_commit.h), apart from the orchestrator's
// Validate and Run, so that the arrows between its files run one way.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>
#include "core/choice.h"
#include "core/result.h"
#include "writelab/error.h"

namespace writelab {

enum class RecordMethod { kWrite, kFwrite, kFwriteUnlocked, kWritev, kGather, kUring, kLibrary };

using RecordMethodInfo = Choice<RecordMethod>;

// The table that feeds --help, --method parsing and the default order.
inline constexpr RecordMethodInfo kRecordMethods[] = {
    {RecordMethod::kWrite, "write", "one write system call (pwrite) per line"},
    {RecordMethod::kFwrite, "fwrite", "fwrite per line into glibc's FILE buffer"},
    {RecordMethod::kFwriteUnlocked, "fwrite_unlocked", "fwrite_unlocked per line (no FILE lock)"},
    {RecordMethod::kWritev, "writev", "pwritev of IOV_MAX lines at a time, straight from the list"},
    {RecordMethod::kGather, "gather", "copy lines into a --buffer, one write per full buffer"},
    {RecordMethod::kUring, "io_uring",
     "gathered --buffer buffers through io_uring, --qd in flight"},
    {RecordMethod::kLibrary, "library", "writelab::RecordWriter::Append per line"},
};

enum class RecordSync { kNone, kEnd, kOsync, kOdsync, kEvery, kRwfDsync };

struct RecordSyncInfo {
  RecordSync id;
  const char* name;
  const char* summary;
  int open_flags;  // added when the file is opened
  int rwf_flags;   // pwritev2 / io_uring flags on every write
};

std::span<const RecordSyncInfo> RecordSyncs();
const RecordSyncInfo& InfoOf(RecordSync s);

struct RecordSyncChoice {
  RecordSync id = RecordSync::kNone;
  uint64_t every = 0;  // kEvery: lines between fdatasyncs
  // "none", "every:100"...
  std::string Name() const;
  bool synchronous() const { return id != RecordSync::kNone && id != RecordSync::kEnd; }
};

// The largest N of every:N (a billion lines between syncs).
inline constexpr uint64_t kMaxSyncEvery = 1'000'000'000;

// "every:N" or a name from RecordSyncs(); the error names the option.
std::expected<RecordSyncChoice, std::string> ParseRecordSync(const std::string& text);

struct RecordsSpec {
  std::string dir;    // files are made here
  std::string input;  // lines from this file, or a generated corpus when empty
  uint64_t corpus_size = 8u << 20;
  uint64_t seed = 1;
  std::vector<RecordMethod> methods;    // empty: all, in table order
  std::vector<RecordSyncChoice> syncs;  // empty: none
  uint64_t total = 256u << 20;          // bytes per row (unsynchronised variants)...
  int passes = 0;                       // ...or this many passes over the corpus
  uint64_t sync_total = 4u << 20;       // bytes per row of synchronous variants
  uint64_t buffer = 1u << 20;           // gather, io_uring, library
  unsigned qd = 8;                      // io_uring
  unsigned batch = 0;                   // io_uring: buffers per io_uring_enter; 0: qd
  bool verify = true;
  int rounds = 1;
  // Group commit mode.
  bool commit = false;
  std::vector<int> threads;  // empty: 1,2,4,8,16
  uint64_t commit_time_ns = 2'000'000'000;
};

}  // namespace writelab
