// SPDX-License-Identifier: MIT
// What libwritelab-run.so tells writelab (src/shim/protocol.h), read back:
// one checked parse per line (fuzzed: tests/fuzz/run_records_fuzz.cc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace writelab {

struct ShimRecord {
  enum class Type { kHello, kClaim, kDone, kUnseen, kLeave, kHandover } type = Type::kHello;
  pid_t pid = 0;
  uint64_t dev = 0, ino = 0;          // claim, done, unseen
  uint64_t written = 0, handled = 0;  // done
  std::string mech;                   // done: how (protocol.h); leave: the reason
  std::string path;                   // claim, done, unseen: the file; hello: the executable
  // done, under paced, of a file the shim claimed: its own flushes, those
  // over half the target at the smallest window, the slowest.
  struct Paced {
    uint64_t flushes = 0, unmet = 0, slowest_ns = 0;
    // A file's records summed (several processes, or several streams of
    // one): the counts added, saturating (a record is the program's to
    // forge), the slowest kept.
    void Add(const Paced& r);
  };
  std::optional<Paced> paced;
};

// One line without its newline; an error says what is wrong with it.
std::expected<ShimRecord, std::string> ParseShimRecord(std::string_view line);

// The records of a stream of bytes, as they arrive: complete lines are
// parsed, the rest kept for the next Feed. A line longer than a record can
// be is an error and skipped to its end.
class ShimRecordReader {
 public:
  void Feed(std::string_view bytes, std::vector<ShimRecord>& records,
            std::vector<std::string>& errors);

 private:
  std::string partial_;
  bool skipping_ = false;
};

}  // namespace writelab
