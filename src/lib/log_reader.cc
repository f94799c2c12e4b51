// SPDX-License-Identifier: MIT
#include "writelab/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lib/crc32c.h"
#include "lib/framing.h"

namespace writelab {
namespace {

constexpr size_t kReadAhead = 1u << 20;

bool AllZero(const std::byte* p, size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

const char* LogEndName(LogEnd end) {
  switch (end) {
    case LogEnd::kNotYet:
      return "not-yet";
    case LogEnd::kEndOfFile:
      return "end-of-file";
    case LogEnd::kZeros:
      return "zeros";
    case LogEnd::kTruncated:
      return "truncated";
    case LogEnd::kChecksum:
      return "checksum";
  }
  return "?";
}

LogReader::LogReader(UniqueFd fd, std::string name, uint64_t size, uint64_t start)
    : fd_(std::move(fd)), name_(std::move(name)), size_(size), pos_(start), buf_off_(start) {}

Result<LogReader> LogReader::Open(const std::string& path, uint64_t start) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unexpected(ErrnoError(errno, "open " + path));
  return FromFd(UniqueFd(fd), path, start);
}

Result<LogReader> LogReader::FromFd(UniqueFd fd, std::string name, uint64_t start) {
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Unexpected(ErrnoError(errno, "fstat " + name));
  const auto size = static_cast<uint64_t>(st.st_size);
  if (start > size)
    return Unexpected(ErrnoError(EINVAL, "LogReader: start " + std::to_string(start) +
                                             " is beyond the end of " + name + " (" +
                                             std::to_string(size) + " bytes)"));
  return LogReader(std::move(fd), std::move(name), size, start);
}

// Makes file bytes [from, from + n) available in buf_ (n <= size_ - from),
// reading ahead up to kReadAhead.
Status LogReader::Fill(uint64_t from, size_t n) {
  if (from >= buf_off_ && from + n <= buf_off_ + buf_.size()) return {};
  const size_t want =
      static_cast<size_t>(std::min<uint64_t>(std::max(n, kReadAhead), size_ - from));
  buf_.resize(want);
  buf_off_ = from;
  size_t got = 0;
  while (got < want) {
    ssize_t r = pread(fd_.get(), buf_.data() + got, want - got, static_cast<off_t>(from + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      return Unexpected(ErrnoError(errno, "pread " + name_ + " at " + std::to_string(from + got)));
    if (r == 0) break;  // the file shrank meanwhile: what is missing reads as truncated
    got += static_cast<size_t>(r);
  }
  buf_.resize(got);
  return {};
}

std::optional<std::span<const std::byte>> LogReader::Stop(LogEnd why) {
  end_ = why;
  return std::nullopt;
}

Result<std::optional<std::span<const std::byte>>> LogReader::Next() {
  if (end_ != LogEnd::kNotYet) return std::optional<std::span<const std::byte>>();
  if (pos_ == size_) return Stop(LogEnd::kEndOfFile);
  const size_t head = static_cast<size_t>(std::min<uint64_t>(kFrameHeader, size_ - pos_));
  if (auto st = Fill(pos_, head); !st) return Unexpected(st.error());
  if (buf_off_ + buf_.size() < pos_ + head) return Stop(LogEnd::kTruncated);
  if (AllZero(At(pos_), head)) return Stop(LogEnd::kZeros);
  if (head < kFrameHeader) return Stop(LogEnd::kTruncated);
  const FrameHeader h = DecodeFrameHeader(At(pos_));
  if (h.length == 0) return Stop(LogEnd::kChecksum);
  if (h.length > size_ - pos_ - kFrameHeader) return Stop(LogEnd::kTruncated);
  const size_t whole = kFrameHeader + h.length;
  if (auto st = Fill(pos_, whole); !st) return Unexpected(st.error());
  if (buf_off_ + buf_.size() < pos_ + whole) return Stop(LogEnd::kTruncated);
  const std::byte* p = At(pos_);
  if (FrameChecksum(p, p + kFrameHeader, h.length) != h.crc) return Stop(LogEnd::kChecksum);
  pos_ += whole;
  ++records_;
  return std::optional(std::span<const std::byte>(p + kFrameHeader, h.length));
}

}  // namespace writelab
