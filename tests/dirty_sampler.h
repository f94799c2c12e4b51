// SPDX-License-Identifier: MIT
// An observer for the tests of who made a call wait: who holds a file's
// pages that are dirty or under writeback, read with cachestat(2) from a
// thread of the test's own, beside the run it checks.
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace writelab::testing {

// The observer of who holds dirty pages: two files' pages that are dirty
// or under writeback (what dirty throttling counts), read with
// cachestat(2) (Linux 6.5) every 2 ms by a thread of the test.
class DirtySampler {
 public:
  struct Sample {
    uint64_t at = 0;                 // ns, CLOCK_MONOTONIC
    uint64_t first = 0, second = 0;  // bytes
  };
  DirtySampler(std::string first, std::string second)
      : paths_{std::move(first), std::move(second)}, thread_([this] { Run(); }) {}
  ~DirtySampler() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool unsupported() const { return unsupported_; }
  // The last sample at or before t (none: nullptr).
  const Sample* At(uint64_t t) const {
    auto it = std::upper_bound(samples_.begin(), samples_.end(), t,
                               [](uint64_t v, const Sample& s) { return v < s.at; });
    return it == samples_.begin() ? nullptr : &*std::prev(it);
  }

 private:
  struct CacheStatRange {
    uint64_t off, len;
  };
  struct CacheStat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
  };
  static constexpr long kCacheStat = 451;  // the same number on every architecture

  std::optional<uint64_t> Held(int fd) {
    CacheStatRange range{0, 0};  // the whole file
    CacheStat st{};
    if (syscall(kCacheStat, fd, &range, &st, 0) != 0) {
      if (errno == ENOSYS) unsupported_ = true;
      return std::nullopt;
    }
    return (st.nr_dirty + st.nr_writeback) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  }

  void Run() {
    int fd[2] = {-1, -1};
    while (!stop_ && !unsupported_) {
      for (int i : {0, 1})
        if (fd[i] < 0) fd[i] = open(paths_[i].c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd[0] >= 0 && fd[1] >= 0) {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        const auto a = Held(fd[0]), b = Held(fd[1]);
        if (a && b)
          samples_.push_back({static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull +
                                  static_cast<uint64_t>(ts.tv_nsec),
                              *a, *b});
      }
      usleep(2000);
    }
    for (int f : fd)
      if (f >= 0) close(f);
  }

  std::string paths_[2];
  std::vector<Sample> samples_;
  std::atomic<bool> stop_{false}, unsupported_{false};
  std::thread thread_;
};

}  // namespace writelab::testing
