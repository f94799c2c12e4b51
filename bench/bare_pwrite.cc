// SPDX-License-Identifier: MIT
// The ceiling for bench/compare-fio.sh: pwrite BLOCK bytes COUNT times to
// PATH sequentially with no timing, no statistics, nothing else. Prints the
// IOPS it reached (one clock read at each end).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PATH BLOCK_BYTES COUNT\n", argv[0]);
    return 2;
  }
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
  for (long i = 0; i < count; ++i) {
    if (pwrite(fd, buf.data(), buf.size(), static_cast<off_t>(i * block)) != block) {
      std::perror("pwrite");
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double s =
      static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e9;
  std::printf("%.0f\n", static_cast<double>(count) / s);
  close(fd);
  unlink(argv[1]);
  return 0;
}
