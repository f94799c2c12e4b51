// SPDX-License-Identifier: MIT
// LogReader: reads back a log that a RecordWriter wrote with
// RecordFraming::kLengthCrc32c, and says where its valid part ends.
//
// Each record on disk is an 8-byte header, then the payload:
//   bytes 0..3  payload length, little-endian, 1 .. 2^32 - 1
//   bytes 4..7  CRC-32C (Castagnoli) of bytes 0..3 and the payload,
//               little-endian
// The reader returns records in order and stops at the first one that is
// not whole and intact. end_reason() says why it stopped:
//   kEndOfFile  the file ends exactly after the last record
//   kZeros      a header of zero bytes: never-written space, such as the
//               zeros a RecordWriter keeps ahead with preallocate_bytes
//   kTruncated  a header or payload that runs past the end of the file: a
//               write cut short by a crash
//   kChecksum   a checksum mismatch: a torn write inside preallocated space,
//               or corruption
// and end_offset() is the offset right after the last good record, which is
// where a writer continues the log (RecordWriter::Reopen(path, end_offset)).
// A log cut short by a crash reads back as every record up to the first
// one the crash damaged; a record acknowledged as durable is never beyond it.
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

enum class LogEnd { kNotYet, kEndOfFile, kZeros, kTruncated, kChecksum };

// "not-yet", "end-of-file", "zeros", "truncated", "checksum".
const char* LogEndName(LogEnd end);

class LogReader {
 public:
  // Reads path (O_RDONLY) from offset start, the end of a record or 0.
  static Result<LogReader> Open(const std::string& path, uint64_t start = 0);
  // Reads fd; name is for error messages. The file's size is taken now.
  static Result<LogReader> FromFd(UniqueFd fd, std::string name, uint64_t start = 0);

  // The next record, or std::nullopt once the valid part has ended (then
  // end_reason() says why). The span is valid until the next call. An
  // error is a failed read (EIO...), not a damaged record.
  Result<std::optional<std::span<const std::byte>>> Next();

  uint64_t end_offset() const { return pos_; }  // after the last good record
  LogEnd end_reason() const { return end_; }
  uint64_t records() const { return records_; }

 private:
  LogReader(UniqueFd fd, std::string name, uint64_t size, uint64_t start);
  Status Fill(uint64_t from, size_t n);
  const std::byte* At(uint64_t offset) const { return buf_.data() + (offset - buf_off_); }
  std::optional<std::span<const std::byte>> Stop(LogEnd why);

  UniqueFd fd_;
  std::string name_;
  uint64_t size_ = 0, pos_ = 0, records_ = 0;
  LogEnd end_ = LogEnd::kNotYet;
  std::vector<std::byte> buf_;  // file bytes [buf_off_, buf_off_ + buf_.size())
  uint64_t buf_off_ = 0;
};

}  // namespace writelab
