#include "io/runner.h"

#include <cerrno>

#include "core/clock.h"

namespace writelab {

int WriteRunner::WriteFully(const void* buf, uint64_t len, uint64_t offset) {
  if (alignment_ > 1 &&
      (reinterpret_cast<uintptr_t>(buf) % alignment_ || len % alignment_ || offset % alignment_))
    return -EINVAL;
  const auto* p = static_cast<const char*>(buf);
  uint64_t done = 0;
  while (done < len) {
    IoRequest req{.buf = p + done, .len = len - done, .offset = offset + done};
    req.issue_ns = NowNs();
    engine_.Queue(req);  // synchronous engines complete here
    uint64_t elapsed = NowNs() - req.issue_ns;
    ++counters_.calls;
    if (req.res > 0) latency_.Record(elapsed);  // a refused or failed call is no latency sample
    if (req.res == -EINTR) {
      ++counters_.eintr_retries;
      continue;
    }
    if (req.res < 0) return static_cast<int>(req.res);
    if (req.res == 0) return -EIO;
    auto n = static_cast<uint64_t>(req.res);
    if (n < req.len) ++counters_.short_writes;
    done += n;
    counters_.bytes += n;
    if (progress_) progress_->store(counters_.bytes, std::memory_order_relaxed);
  }
  return 0;
}

}  // namespace writelab
