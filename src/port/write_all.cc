// SPDX-License-Identifier: MIT
#include "port/write_all.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace writelab {

void AdvanceIov(iovec*& iov, int& count, uint64_t n) {
  while (count > 0) {
    const uint64_t take = std::min<uint64_t>(n, iov->iov_len);
    iov->iov_base = static_cast<char*>(iov->iov_base) + take;
    iov->iov_len -= take;
    n -= take;
    if (iov->iov_len > 0) break;
    ++iov;
    --count;
  }
}

int WriteAll(int fd, const void* buf, size_t len) {
  const auto* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return -EIO;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

int PwriteAll(int fd, const void* buf, size_t len, uint64_t offset, int rwf_flags,
              uint64_t* calls) {
  const auto* p = static_cast<const char*>(buf);
  while (len > 0) {
    iovec iov{const_cast<char*>(p), len};
    ssize_t n = rwf_flags ? pwritev2(fd, &iov, 1, static_cast<off_t>(offset), rwf_flags)
                          : pwrite(fd, p, len, static_cast<off_t>(offset));
    if (calls) ++*calls;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return -EIO;
    p += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return 0;
}

int FillZeros(int fd, uint64_t from, uint64_t to, const std::atomic<bool>* stop) {
  static const char zeros[1 << 20] = {};
  constexpr int kChunks = 4;  // 4 MiB a call: few calls, one static page of zeros
  iovec iov[kChunks];
  while (from < to) {
    if (stop && stop->load(std::memory_order_relaxed)) return -EINTR;
    int count = 0;
    for (uint64_t ask = 0; count < kChunks && from + ask < to; ++count) {
      iov[count] = {const_cast<char*>(zeros), std::min<uint64_t>(sizeof zeros, to - from - ask)};
      ask += iov[count].iov_len;
    }
    ssize_t n = pwritev(fd, iov, count, static_cast<off_t>(from));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return -EIO;
    from += static_cast<uint64_t>(n);
  }
  return 0;
}

}  // namespace writelab
