// SPDX-License-Identifier: MIT
// RecordWriter on a file: the sink that writes it, and Open / Reopen, which
// make the file's name durable with its records.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "port/linux_compat.h"
#include "writelab/log_reader.h"
#include "writelab/preallocate.h"
#include "writelab/record_writer.h"

namespace writelab {
namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// fsync of the directory that holds path: makes a create or rename in it
// durable. 0 or -errno.
int SyncDirOf(const std::string& path) {
  UniqueFd dir(::open(DirOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return -errno;
  return fsync(dir.get()) == 0 ? 0 : -errno;
}

class FileSink final : public RecordSink {
 public:
  FileSink(UniqueFd fd, std::string path, int flags)
      : fd_(std::move(fd)), path_(std::move(path)), flags_(flags) {}
  ssize_t WriteV(const iovec* iov, int count, uint64_t offset) override {
    auto off = static_cast<off_t>(offset);
    ssize_t n =
        flags_ ? pwritev2(fd_.get(), iov, count, off, flags_) : pwritev(fd_.get(), iov, count, off);
    return n >= 0 ? n : -errno;
  }
  int DataSync() override { return fdatasync(fd_.get()) == 0 ? 0 : -errno; }
  int Extend(uint64_t offset, uint64_t len) override {
    // Appending writes would land after the zeros, which Close() cuts off.
    if ((flags_ & RWF_APPEND) || (fcntl(fd_.get(), F_GETFL) & O_APPEND)) return -EINVAL;
    auto p = Preallocate(fd_.get(), offset, len, PreallocateMode::kBest);
    if (!p) return -p.error().code;
    // Start writeback of zeros written through the cache now, so that the
    // commit that first needs these blocks finds them on the device.
    if (p->zero_bytes && sync_file_range(fd_.get(), static_cast<off_t>(offset),
                                         static_cast<off_t>(len), SYNC_FILE_RANGE_WRITE) != 0)
      return -errno;
    return 0;
  }
  int Truncate(uint64_t size) override {
    return ftruncate(fd_.get(), static_cast<off_t>(size)) == 0 ? 0 : -errno;
  }
  int Rename(const std::string& to) override {
    if (::rename(path_.c_str(), to.c_str()) != 0) return -errno;
    const std::string from = std::exchange(path_, to);
    if (int rc = SyncDirOf(to); rc != 0) return rc;
    return DirOf(from) == DirOf(to) ? 0 : SyncDirOf(from);
  }
  std::string name() const override { return path_; }

 private:
  UniqueFd fd_;
  std::string path_;
  int flags_;
};

}  // namespace

std::unique_ptr<RecordSink> MakeFileSink(UniqueFd fd, std::string path, int rwf_flags) {
  return std::make_unique<FileSink>(std::move(fd), std::move(path), rwf_flags);
}

namespace {

// A framed log may be cut at `at` only if what lies beyond it is a torn
// tail (writelab/log_reader.h): never a valid record, nor damage with valid
// records behind it. Reads through fd (opened O_RDWR).
Status CheckCutIsSafe(int fd, const std::string& path, uint64_t at) {
  UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!copy) return Unexpected(ErrnoError(errno, "dup " + path));
  auto reader = LogReader::FromFd(std::move(copy), path, at);
  if (!reader) return Unexpected(reader.error());
  auto next = reader->Next();
  if (!next) return Unexpected(next.error());
  const std::string where = "RecordWriter: reopen " + path + " at " + std::to_string(at);
  if (*next)
    return Unexpected(
        ErrnoError(EEXIST, where + " would cut off the valid record that starts there"));
  if (reader->TornTail()) return {};
  const LogDamage& d = reader->damage();
  if (!d.valid_follows)
    return Unexpected(ErrnoError(EEXIST, where + " would cut off bytes that could not all be "
                                                 "checked (the scan stopped at its budget)"));
  return Unexpected(ErrnoError(
      EEXIST, where + " would cut off valid records: damage there, then a valid record at " +
                  std::to_string(d.resume_offset) + " (LogReader says corrupt, not a torn tail)"));
}

}  // namespace

Result<RecordWriter> RecordWriter::Open(const std::string& path, RecordWriterOptions options,
                                        int open_flags) {
  if (options.preallocate_bytes && (open_flags & O_APPEND))
    return Unexpected(PlainError("RecordWriter: preallocate_bytes cannot be used with O_APPEND"));
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | open_flags, 0644));
  if (!fd) return Unexpected(ErrnoError(errno, "open " + path));
  if (int rc = SyncDirOf(path); rc != 0)
    return Unexpected(ErrnoError(-rc, "fsync the directory of " + path));
  // The truncation too: a crash must not bring an old log's records back.
  if (fdatasync(fd.get()) != 0) return Unexpected(ErrnoError(errno, "fdatasync " + path));
  return Create(MakeFileSink(std::move(fd), path, options.rwf_flags), options);
}

Result<RecordWriter> RecordWriter::Reopen(const std::string& path, uint64_t at,
                                          RecordWriterOptions options, int open_flags) {
  if (options.preallocate_bytes && (open_flags & O_APPEND))
    return Unexpected(PlainError("RecordWriter: preallocate_bytes cannot be used with O_APPEND"));
  const bool framed = options.framing == RecordFraming::kLengthCrc32c;
  UniqueFd fd(::open(path.c_str(), (framed ? O_RDWR : O_WRONLY) | O_CLOEXEC |
                                       (open_flags & ~(O_CREAT | O_TRUNC | O_ACCMODE))));
  if (!fd) return Unexpected(ErrnoError(errno, "open " + path));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Unexpected(ErrnoError(errno, "fstat " + path));
  const auto size = static_cast<uint64_t>(st.st_size);
  if (at == kAtEnd) at = size;
  if (at > size)
    return Unexpected(ErrnoError(EINVAL, "RecordWriter: reopen " + path + " at " +
                                             std::to_string(at) + ", beyond its end (" +
                                             std::to_string(size) + " bytes)"));
  if (framed && at < size)
    if (auto safe = CheckCutIsSafe(fd.get(), path, at); !safe) return Unexpected(safe.error());
  if (at < size && ftruncate(fd.get(), static_cast<off_t>(at)) != 0)
    return Unexpected(ErrnoError(errno, "truncate " + path + " to " + std::to_string(at)));
  if (fdatasync(fd.get()) != 0) return Unexpected(ErrnoError(errno, "fdatasync " + path));
  return Create(MakeFileSink(std::move(fd), path, options.rwf_flags), options, at);
}

}  // namespace writelab
