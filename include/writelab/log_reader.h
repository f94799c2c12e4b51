// SPDX-License-Identifier: MIT
// LogReader: reads back a log that a RecordWriter wrote with
// RecordFraming::kLengthCrc32c, and says where its valid part ends and
// whether the rest may be cut off.
//
// Each record on disk is an 8-byte header, then the payload:
//   bytes 0..3  payload length, little-endian, 1 .. 2^32 - 1
//   bytes 4..7  CRC-32C (Castagnoli) of bytes 0..3 and the payload,
//               little-endian
// Next() returns records in order. At the first frame that is not whole and
// intact (the damage, at end_offset()) it stops and looks at what follows:
// it scans every later byte offset for a frame whose length fits in the file
// and whose CRC checks (zero runs are skipped at once). Then:
//
//   nothing valid follows: a torn tail. end_reason() names what the damaged
//     frame was:
//       kEndOfFile  the file ends exactly after the last record (no damage)
//       kZeros      a header of zero bytes: never-written space, such as the
//                   zeros a RecordWriter keeps ahead with preallocate_bytes
//       kTruncated  a header or payload that runs past the end of the file:
//                   a write cut short by a crash
//       kChecksum   a zero length or a checksum mismatch: a torn write
//     TornTail() is true, and a writer may continue the log at end_offset()
//     (RecordWriter::Reopen(path, end_offset())): only damaged or never
//     written bytes lie beyond it.
//   a valid frame follows: kCorrupt. The damage is not only a tail, and
//     damage() says where it is, what it looked like and where the next
//     valid frame starts (bytes_skipped between them). Cutting the log at
//     end_offset() would destroy the valid records behind the damage, so
//     TornTail() is false and RecordWriter::Reopen refuses to cut there.
//     A length that runs past the end of the file is kCorrupt too when a
//     valid frame follows it: a corrupted length field, not a crash.
//   the scan gave up: kCorrupt with damage().scan_complete false. The scan
//     checks at most kScanBudget bytes of checksums per damage (a frame of
//     random bytes often claims a length that fits), so a long stretch of
//     garbage cannot make recovery run for hours; since nothing was proven
//     about the rest, it is never called a tail.
//
// What to do with kCorrupt is the caller's policy, as in RocksDB's WAL
// recovery modes: stop and report (the safe default: nothing is lost), or
// use the records before the damage and keep the file, or Resume() to read
// on from the next valid frame (skipping the damaged bytes, which may have
// held records). A crash alone can leave kCorrupt too: a record that was not
// yet synced reached the disk after a later one of the same write; records
// after the damage were then never acknowledged. The reader cannot tell that
// from corruption, so it never advises cutting them off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "writelab/error.h"
#include "writelab/unique_fd.h"

namespace writelab {

enum class LogEnd { kNotYet, kEndOfFile, kZeros, kTruncated, kChecksum, kCorrupt };

// "not-yet", "end-of-file", "zeros", "truncated", "checksum", "corrupt".
const char* LogEndName(LogEnd end);

// Where the reader found damage and what lies after it.
struct LogDamage {
  uint64_t offset = 0;                   // start of the damaged frame
  LogEnd looked_like = LogEnd::kNotYet;  // kZeros, kTruncated or kChecksum
  bool scan_complete = false;            // every offset after it was checked
  bool valid_follows = false;            // a valid frame starts at resume_offset
  uint64_t resume_offset = 0;            // that frame's start (when valid_follows)
  uint64_t bytes_skipped = 0;            // resume_offset - offset
};

class LogReader {
 public:
  // Checksum bytes one scan past a damaged frame may compute.
  static constexpr uint64_t kScanBudget = 1ull << 30;

  // Reads path (O_RDONLY) from offset start, the end of a record or 0.
  static Result<LogReader> Open(const std::string& path, uint64_t start = 0);
  // Reads fd; name is for error messages. The file's size is taken now.
  static Result<LogReader> FromFd(UniqueFd fd, std::string name, uint64_t start = 0);

  // The next record, or std::nullopt once the valid part has ended (then
  // end_reason() says why). The span is valid until the next call. An
  // error is a failed read (EIO...), not a damaged record. Memory: a record
  // is held whole, but a damaged frame's claimed length is never allocated.
  Result<std::optional<std::span<const std::byte>>> Next();

  // After kCorrupt with damage().valid_follows: reads on from the next
  // valid frame (Next() continues there). Returns false, changing nothing,
  // in any other state. damaged_bytes() adds up what was skipped.
  bool Resume();

  uint64_t end_offset() const { return pos_; }  // after the last good record
  LogEnd end_reason() const { return end_; }
  // Ended, and nothing valid lies beyond end_offset(): cutting there is safe.
  bool TornTail() const { return end_ != LogEnd::kNotYet && end_ != LogEnd::kCorrupt; }
  const LogDamage& damage() const { return damage_; }  // the last damage found
  uint64_t records() const { return records_; }
  uint64_t damaged_bytes() const { return damaged_bytes_; }  // skipped by Resume()

 private:
  struct Frame {
    LogEnd bad = LogEnd::kNotYet;  // kNotYet: a valid frame
    uint32_t length = 0;
  };

  LogReader(UniqueFd fd, std::string name, uint64_t size, uint64_t start);
  Status Fill(uint64_t from, size_t n);
  const std::byte* At(uint64_t offset) const { return buf_.data() + (offset - buf_off_); }
  Result<Frame> Check(uint64_t offset, uint64_t* budget);
  Result<bool> ChecksumMatches(uint64_t offset, uint32_t length, uint32_t crc);
  Result<uint64_t> SkipZeros(uint64_t from);
  Status Damaged(LogEnd looked_like);
  std::optional<std::span<const std::byte>> Stop(LogEnd why);

  UniqueFd fd_;
  std::string name_;
  uint64_t size_ = 0, pos_ = 0, records_ = 0, damaged_bytes_ = 0;
  LogEnd end_ = LogEnd::kNotYet;
  LogDamage damage_;
  std::vector<std::byte> buf_;  // file bytes [buf_off_, buf_off_ + buf_.size())
  uint64_t buf_off_ = 0;
};

}  // namespace writelab
