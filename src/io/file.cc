// SPDX-License-Identifier: MIT
#include "io/file.h"
#include "io/own_files.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace writelab {

Result<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
  return UniqueFd(fd);
}

std::string RandomHex() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != sizeof r)  // no entropy yet: still unlike any PID pattern
    r = static_cast<uint64_t>(getpid()) << 32 ^ static_cast<uint64_t>(time(nullptr));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
  return hex;
}

Result<UniqueFd> CreateOwnFile(const std::string& dir, const std::string& prefix, int extra_flags,
                               std::string* path) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = dir + "/writelab-" + prefix + "-" + std::to_string(getpid()) + "-" +
                            std::to_string(counter++) + "-" + RandomHex();
    int fd =
        ::open(candidate.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags, 0644);
    if (fd >= 0) {
      RegisterOwnFile(candidate, fd);  // removed with RemoveOwnFile, or by a signal under MPI
      *path = candidate;
      return UniqueFd(fd);
    }
    if (errno != EEXIST) return std::unexpected(ErrnoError(errno, "create " + candidate));
  }
  return std::unexpected(ErrnoError(EEXIST, "create a new file in " + dir));
}

Result<UniqueFd> ReopenFd(int fd, int flags, const std::string& path) {
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  int again = ::open(self.c_str(), (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC);
  if (again < 0) return std::unexpected(ErrnoError(errno, "reopen " + path));
  return UniqueFd(again);
}

AlignedBuffer::AlignedBuffer(size_t size, size_t alignment) : size_(size) {
  void* p = nullptr;
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  if (posix_memalign(&p, alignment, rounded ? rounded : alignment) != 0) throw std::bad_alloc();
  data_.reset(static_cast<std::byte*>(p));
}

void AlignedBuffer::Free::operator()(std::byte* p) const { std::free(p); }

void AlignedBuffer::FillPattern(uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size_; i += sizeof x) {
    x ^= x << 13;  // xorshift64
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(data_.get() + i, &x, std::min(sizeof x, size_ - i));
  }
}

std::string ParentDir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace writelab
