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
    case LogEnd::kCorrupt:
      return "corrupt";
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
// reading ahead up to kReadAhead. Fewer come back only if the file shrank.
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

// The CRC of the frame at offset, read in kReadAhead pieces, so that a
// claimed length is never allocated before it is known to be true.
Result<bool> LogReader::ChecksumMatches(uint64_t offset, uint32_t length, uint32_t crc) {
  if (auto st = Fill(offset, kFrameHeader); !st) return Unexpected(st.error());
  if (buf_off_ + buf_.size() < offset + kFrameHeader) return false;
  uint32_t c = Crc32c(0, At(offset), 4);
  for (uint64_t at = offset + kFrameHeader, end = at + length; at < end;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(end - at, kReadAhead));
    if (auto st = Fill(at, n); !st) return Unexpected(st.error());
    if (buf_off_ + buf_.size() < at + n) return false;  // shrank
    c = Crc32c(c, At(at), n);
    at += n;
  }
  return c == crc;
}

// Whether a valid frame starts at offset (< size_), and if not, what it
// looks like. With a budget, a checksum longer than what is left of it is
// not computed: the frame comes back kCorrupt (unknown).
Result<LogReader::Frame> LogReader::Check(uint64_t offset, uint64_t* budget) {
  const size_t head = static_cast<size_t>(std::min<uint64_t>(kFrameHeader, size_ - offset));
  if (auto st = Fill(offset, head); !st) return Unexpected(st.error());
  if (buf_off_ + buf_.size() < offset + head) return Frame{LogEnd::kTruncated};
  if (AllZero(At(offset), head)) return Frame{LogEnd::kZeros};
  if (head < kFrameHeader) return Frame{LogEnd::kTruncated};
  const FrameHeader h = DecodeFrameHeader(At(offset));
  if (h.length == 0) return Frame{LogEnd::kChecksum};
  if (h.length > size_ - offset - kFrameHeader) return Frame{LogEnd::kTruncated, h.length};
  if (budget) {
    if (*budget < h.length) return Frame{LogEnd::kCorrupt, h.length};
    *budget -= h.length;
  }
  auto ok = ChecksumMatches(offset, h.length, h.crc);
  if (!ok) return Unexpected(ok.error());
  return Frame{*ok ? LogEnd::kNotYet : LogEnd::kChecksum, h.length};
}

// The first offset >= from at which a frame's length field is not all
// zeros (size_ if there is none): no frame starts inside a run of zeros.
Result<uint64_t> LogReader::SkipZeros(uint64_t from) {
  for (uint64_t at = from; at < size_;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size_ - at, kReadAhead));
    if (auto st = Fill(at, n); !st) return Unexpected(st.error());
    const size_t have = static_cast<size_t>(std::min<uint64_t>(n, buf_off_ + buf_.size() - at));
    if (have == 0) return size_;
    const std::byte* p = At(at);
    const std::byte* nz = std::find_if(p, p + have, [](std::byte b) { return b != std::byte{0}; });
    if (nz != p + have) {
      const uint64_t z = at + static_cast<uint64_t>(nz - p);
      return std::max(from, z >= 3 ? z - 3 : 0);
    }
    at += have;
  }
  return size_;
}

// The frame at pos_ is damaged: scans what follows it for a valid frame
// and ends as a torn tail (looked_like) or as kCorrupt.
Status LogReader::Damaged(LogEnd looked_like) {
  damage_ = LogDamage{pos_, looked_like};
  uint64_t budget = kScanBudget;
  damage_.scan_complete = true;
  for (uint64_t q = pos_ + 1; q + kFrameHeader < size_;) {
    auto next = SkipZeros(q);
    if (!next) return Unexpected(next.error());
    q = *next;
    if (q + kFrameHeader >= size_) break;
    auto frame = Check(q, &budget);
    if (!frame) return Unexpected(frame.error());
    if (frame->bad == LogEnd::kCorrupt) {
      damage_.scan_complete = false;
      break;
    }
    if (frame->bad == LogEnd::kNotYet) {
      damage_.valid_follows = true;
      damage_.resume_offset = q;
      damage_.bytes_skipped = q - pos_;
      break;
    }
    ++q;
  }
  end_ = damage_.valid_follows || !damage_.scan_complete ? LogEnd::kCorrupt : looked_like;
  return {};
}

std::optional<std::span<const std::byte>> LogReader::Stop(LogEnd why) {
  end_ = why;
  return std::nullopt;
}

Result<std::optional<std::span<const std::byte>>> LogReader::Next() {
  if (end_ != LogEnd::kNotYet) return std::optional<std::span<const std::byte>>();
  if (pos_ == size_) return Stop(LogEnd::kEndOfFile);
  auto frame = Check(pos_, nullptr);
  if (!frame) return Unexpected(frame.error());
  if (frame->bad != LogEnd::kNotYet) {
    if (auto st = Damaged(frame->bad); !st) return Unexpected(st.error());
    return std::optional<std::span<const std::byte>>();
  }
  const size_t whole = kFrameHeader + frame->length;
  if (auto st = Fill(pos_, whole); !st) return Unexpected(st.error());
  if (buf_off_ + buf_.size() < pos_ + whole) return Stop(LogEnd::kTruncated);  // shrank
  const std::byte* p = At(pos_);
  pos_ += whole;
  ++records_;
  return std::optional(std::span<const std::byte>(p + kFrameHeader, frame->length));
}

bool LogReader::Resume() {
  if (end_ != LogEnd::kCorrupt || !damage_.valid_follows) return false;
  damaged_bytes_ += damage_.bytes_skipped;
  pos_ = damage_.resume_offset;
  end_ = LogEnd::kNotYet;
  return true;
}

}  // namespace writelab
