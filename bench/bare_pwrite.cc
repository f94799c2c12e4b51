// SPDX-License-Identifier: MIT
// The ceiling for bench/compare-fio.sh: pwrite BLOCK bytes COUNT times to
// PATH sequentially, nothing else. Prints the IOPS it reached (one clock
// read at each end). With "timed", each write is timed as writelab times
// its own (a clock read before and after, a log-linear histogram bucket
// counted): the loop with the same timing, which is what writelab's
// cost per write is compared with (bench/compare-fio.sh).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

uint64_t g_buckets[64 * 16];  // 16 per power of two, as writelab's Histogram

// COUNT writes of BUF at successive offsets; with kTimed, each timed and
// counted in its bucket. Two loops, so that the untimed one tests nothing
// but its own end. False when a write fails.
template <bool kTimed>
bool WriteAll(int fd, const std::vector<char>& buf, long count) {
  const auto block = static_cast<ssize_t>(buf.size());
  for (long i = 0; i < count; ++i) {
    timespec t0{}, t1{};
    if constexpr (kTimed) clock_gettime(CLOCK_MONOTONIC, &t0);
    if (pwrite(fd, buf.data(), buf.size(), static_cast<off_t>(i * block)) != block) return false;
    if constexpr (kTimed) {
      clock_gettime(CLOCK_MONOTONIC, &t1);
      const uint64_t ns =
          static_cast<uint64_t>((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
      const int msb = ns < 16 ? 0 : 63 - __builtin_clzll(ns);
      ++g_buckets[ns < 16 ? ns : (msb - 3) * 16 + ((ns >> (msb - 4)) & 15)];
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && !(argc == 5 && std::strcmp(argv[4], "timed") == 0)) {
    std::fprintf(stderr, "usage: %s PATH BLOCK_BYTES COUNT [timed]\n", argv[0]);
    return 2;
  }
  const bool timed = argc == 5;
  long block = std::atol(argv[2]);
  long count = std::atol(argv[3]);
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || block <= 0 || count <= 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<char> buf(static_cast<size_t>(block), 'x');
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  if (!(timed ? WriteAll<true>(fd, buf, count) : WriteAll<false>(fd, buf, count))) {
    std::perror("pwrite");
    return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double s =
      static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e9;
  uint64_t counted = 0;
  for (uint64_t n : g_buckets) counted += n;
  if (timed && counted != static_cast<uint64_t>(count)) return 1;  // every write counted
  std::printf("%.0f\n", static_cast<double>(count) / s);
  close(fd);
  unlink(argv[1]);
  return 0;
}
