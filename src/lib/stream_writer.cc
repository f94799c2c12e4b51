// SPDX-License-Identifier: MIT
#include "writelab/stream_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <sys/uio.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "lib/paced_window.h"
#include "lib/writeback_window.h"
#include "port/classify_errno.h"
#include "port/linux_compat.h"
#include "port/write_all.h"

namespace writelab {

const char* StreamMethodName(StreamMethod method) {
  switch (method) {
    case StreamMethod::kDontcache:
      return "dontcache";
    case StreamMethod::kWindowDrop:
      return "window-drop";
    case StreamMethod::kDirect:
      return "direct";
    case StreamMethod::kPaced:
      return "paced";
  }
  return "?";
}

struct StreamWriter::State {
  UniqueFd fd;
  std::string path;
  StreamWriterOptions options;
  bool chosen = false;
  StreamMethod method = StreamMethod::kDontcache;
  std::vector<StreamAttempt> attempts;
  uint64_t offset = 0;              // bytes handed to the kernel
  WritebackWindow window{0, true};  // window-drop; sized when the writer is made
  PacedWindow paced{0, 0};          // paced; likewise
  std::unique_ptr<std::byte, decltype(&std::free)> buffer{nullptr, &std::free};
  size_t buffered = 0;  // bytes waiting in buffer (direct)
  bool failed = false;

  Status Fail(int err, const char* what);
  // Writes all of [p, p+n) at offset with flags; 0 or -errno.
  int WriteAll(const std::byte* p, size_t n, int rwf_flags);
  int TryFirstWrite(std::span<const std::byte> data);
  Status AfterWrite(uint64_t start, uint64_t len);
  Status AppendDirect(std::span<const std::byte> data);
  Status AppendPaced(std::span<const std::byte> data);
  Status FlushDirect(bool final);
  int EnterDirect();
};

Status StreamWriter::State::Fail(int err, const char* what) {
  failed = true;
  return std::unexpected(
      ErrnoError(err, std::string(what) + " " + path + " at " + std::to_string(offset)));
}

int StreamWriter::State::WriteAll(const std::byte* p, size_t n, int rwf_flags) {
  int rc = PwriteAll(fd.get(), p, n, offset, rwf_flags);
  if (rc == 0) offset += n;
  return rc;
}

// Window-drop's or paced's bookkeeping after [start, start+len) was written.
Status StreamWriter::State::AfterWrite(uint64_t start, uint64_t len) {
  const char* what = "";
  FdWindowCalls calls(fd.get());
  int rc = 0;
  if (method == StreamMethod::kWindowDrop) rc = window.AfterWrite(calls, start, len, &what);
  if (method == StreamMethod::kPaced) rc = paced.AfterWrite(calls, start + len, &what);
  return rc < 0 ? Fail(-rc, what) : Status{};
}

int StreamWriter::State::EnterDirect() {
  int flags = fcntl(fd.get(), F_GETFL);
  if (flags < 0 || fcntl(fd.get(), F_SETFL, flags | O_DIRECT) != 0) return -errno;
  void* p = nullptr;
  size_t size = std::max<size_t>(options.window_bytes / options.direct_alignment, 1) *
                options.direct_alignment;
  if (posix_memalign(&p, options.direct_alignment, size) != 0) return -ENOMEM;
  buffer.reset(static_cast<std::byte*>(p));
  options.window_bytes = size;
  return 0;
}

// Tries the preferred methods in order on the first data. Returns 0 once one
// accepted it (the data is then written), or -errno of a real failure.
int StreamWriter::State::TryFirstWrite(std::span<const std::byte> data) {
  for (StreamMethod m : options.preference) {
    method = m;
    int rc = 0;
    if (m == StreamMethod::kDontcache) {
      size_t first = std::min<size_t>(data.size(), 4096);
      rc = WriteAll(data.data(), first, RWF_DONTCACHE);
      if (rc == 0) {
        attempts.push_back({m, 0});
        chosen = true;
        rc = WriteAll(data.data() + first, data.size() - first, RWF_DONTCACHE);
        return rc;
      }
    } else if (m == StreamMethod::kDirect) {
      rc = EnterDirect();
      if (rc == 0) {
        attempts.push_back({m, 0});
        chosen = true;
        return 0;  // the caller buffers the data
      }
    } else if (m == StreamMethod::kPaced) {
      attempts.push_back({m, 0});
      chosen = true;
      return 0;  // the caller writes the data a window at a time
    } else {
      attempts.push_back({m, 0});
      chosen = true;
      return WriteAll(data.data(), data.size(), 0);
    }
    const Feature feature =
        m == StreamMethod::kDirect ? Feature::kDirectIo : Feature::kRwfDontcache;
    if (!IsUnsupported(-rc, feature)) return rc;
    attempts.push_back({m, -rc});
  }
  return -EOPNOTSUPP;
}

Status StreamWriter::State::FlushDirect(bool final) {
  size_t align = options.direct_alignment;
  size_t aligned = buffered / align * align;
  if (aligned > 0) {
    if (int rc = WriteAll(buffer.get(), aligned, 0); rc != 0) return Fail(-rc, "O_DIRECT write");
  }
  size_t tail = buffered - aligned;
  if (tail > 0 && final) {
    // The tail cannot go through O_DIRECT: write it buffered, Finish() syncs it.
    int flags = fcntl(fd.get(), F_GETFL);
    if (flags < 0 || fcntl(fd.get(), F_SETFL, flags & ~O_DIRECT) != 0)
      return Fail(errno, "fcntl clear O_DIRECT");
    if (int rc = WriteAll(buffer.get() + aligned, tail, 0); rc != 0) return Fail(-rc, "write");
    tail = 0;
  } else if (tail > 0) {
    std::memmove(buffer.get(), buffer.get() + aligned, tail);
  }
  buffered = tail;
  return {};
}

// Paced: a window at most per write, so that no more than one window lies
// unflushed whatever the size the caller appends.
Status StreamWriter::State::AppendPaced(std::span<const std::byte> data) {
  while (!data.empty()) {
    const size_t n = std::min<uint64_t>(data.size(), paced.Room(offset));
    const uint64_t start = offset;
    if (int rc = WriteAll(data.data(), n, 0); rc != 0) return Fail(-rc, "write");
    if (auto st = AfterWrite(start, n); !st) return st;
    data = data.subspan(n);
  }
  return {};
}

Status StreamWriter::State::AppendDirect(std::span<const std::byte> data) {
  size_t capacity = options.window_bytes;
  while (!data.empty()) {
    size_t n = std::min(capacity - buffered, data.size());
    std::memcpy(buffer.get() + buffered, data.data(), n);
    buffered += n;
    data = data.subspan(n);
    if (buffered == capacity) {
      if (auto s = FlushDirect(false); !s) return s;
    }
  }
  return {};
}

Result<StreamWriter> StreamWriter::Open(const std::string& path, StreamWriterOptions options) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
  return Adopt(UniqueFd(fd), path, std::move(options));
}

Result<StreamWriter> StreamWriter::Adopt(UniqueFd fd, std::string path,
                                         StreamWriterOptions options) {
  if (options.preference.empty()) return std::unexpected(PlainError("no stream method to try"));
  if (options.window_bytes == 0) return std::unexpected(PlainError("window_bytes is 0"));
  if (options.pace_target_ns == 0) return std::unexpected(PlainError("pace_target_ns is 0"));
  size_t a = options.direct_alignment;
  if (a == 0 || (a & (a - 1)) != 0)
    return std::unexpected(PlainError("direct_alignment must be a power of two"));
  auto state = std::make_unique<State>();
  state->fd = std::move(fd);
  state->path = std::move(path);
  state->options = std::move(options);
  state->window = WritebackWindow(state->options.window_bytes, true);
  state->paced = PacedWindow(state->options.pace_target_ns, state->options.window_bytes);
  return StreamWriter(std::move(state));
}

StreamWriter::StreamWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
StreamWriter::StreamWriter(StreamWriter&&) noexcept = default;
StreamWriter& StreamWriter::operator=(StreamWriter&&) noexcept = default;
StreamWriter::~StreamWriter() = default;

Status StreamWriter::Append(std::span<const std::byte> data) {
  State& s = *state_;
  if (s.failed) return std::unexpected(PlainError("StreamWriter used after an error"));
  if (data.empty()) return {};
  uint64_t start = s.offset;
  if (!s.chosen) {
    int rc = s.TryFirstWrite(data);
    if (rc != 0) return s.Fail(-rc, "stream write");
    if (s.method == StreamMethod::kDirect) return s.AppendDirect(data);
    if (s.method == StreamMethod::kPaced) return s.AppendPaced(data);
    return s.AfterWrite(start, s.offset - start);
  }
  switch (s.method) {
    case StreamMethod::kDirect:
      return s.AppendDirect(data);
    case StreamMethod::kDontcache:
      if (int rc = s.WriteAll(data.data(), data.size(), RWF_DONTCACHE); rc != 0)
        return s.Fail(-rc, "pwritev2 RWF_DONTCACHE");
      return {};
    case StreamMethod::kWindowDrop:
      if (int rc = s.WriteAll(data.data(), data.size(), 0); rc != 0) return s.Fail(-rc, "write");
      return s.AfterWrite(start, s.offset - start);
    case StreamMethod::kPaced:
      return s.AppendPaced(data);
  }
  return {};
}

Status StreamWriter::Finish() {
  State& s = *state_;
  if (s.failed) return std::unexpected(PlainError("StreamWriter used after an error"));
  if (s.chosen && s.method == StreamMethod::kDirect) {
    if (auto st = s.FlushDirect(true); !st) return st;
  }
  if (fsync(s.fd.get()) != 0) return s.Fail(errno, "fsync");
  // After fsync every page is clean, so DONTNEED drops them all.
  posix_fadvise(s.fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  s.window.MarkDropped(s.offset);
  s.paced.MarkFlushed(s.offset);
  return {};
}

StreamMethod StreamWriter::method() const { return state_->method; }
const std::vector<StreamAttempt>& StreamWriter::attempts() const { return state_->attempts; }
uint64_t StreamWriter::bytes_appended() const { return state_->offset + state_->buffered; }

std::string StreamWriter::choice() const {
  const State& s = *state_;
  if (!s.chosen) return "none chosen yet";
  std::string refused;
  for (const StreamAttempt& a : s.attempts) {
    if (a.error == 0) continue;
    if (!refused.empty()) refused += ", ";
    refused += std::string(StreamMethodName(a.method)) + " refused: " + ErrnoName(a.error);
  }
  return std::string(StreamMethodName(s.method)) +
         (refused.empty() ? " (first choice, accepted)" : " (" + refused + ")");
}

}  // namespace writelab
