// SPDX-License-Identifier: MIT
// Small writers the integration tests run under `writelab explain` (and
// `writelab run`): each does one thing a storage engineer's program does.
//   writers fsync FILE COUNT INTERVAL_MS   COUNT x (pwrite 1 MiB at 0 + fsync)
//   writers dsync FILE COUNT STRIDE        COUNT O_DSYNC|O_DIRECT 4 KiB writes,
//                                          STRIDE blocks apart, into FILE as it is
//   writers stream FILE MIB                MIB buffered 1 MiB writes, no sync
//   writers osync FILE COUNT               COUNT appends of 4 KiB through O_DSYNC
//   writers small FILE COUNT               COUNT buffered writes of 64 bytes
// Exit status 0, or 1 with the failed call on stderr. With WRITERS_ELAPSED
// set, prints "elapsed_ns N" (its own time, from start to exit) on stderr,
// for the benchmarks.
#include <fcntl.h>
#include <unistd.h>

#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int Fail(const char* what) {
  std::fprintf(stderr, "writers: %s: %s\n", what, std::strerror(errno));
  return 1;
}

int Fsync(const char* path, long count, long interval_ms) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  std::vector<char> buf(1 << 20, 'f');
  for (long i = 0; i < count; ++i) {
    if (pwrite(fd, buf.data(), buf.size(), 0) != static_cast<ssize_t>(buf.size()))
      return Fail("pwrite");
    if (fsync(fd) != 0) return Fail("fsync");
    if (interval_ms) usleep(static_cast<useconds_t>(interval_ms) * 1000);
  }
  return close(fd) == 0 ? 0 : Fail("close");
}

int Dsync(const char* path, long count, long stride) {
  int fd = open(path, O_WRONLY | O_DSYNC | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return Fail("open");
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, 4096) != 0) return Fail("posix_memalign");
  std::memset(buf, 'd', 4096);
  for (long i = 0; i < count; ++i)
    if (pwrite(fd, buf, 4096, static_cast<off_t>(i * stride * 4096)) != 4096) return Fail("pwrite");
  std::free(buf);
  return close(fd) == 0 ? 0 : Fail("close");
}

int Stream(const char* path, long mib) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  std::vector<char> buf(1 << 20, 's');
  for (long i = 0; i < mib; ++i)
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) return Fail("write");
  return close(fd) == 0 ? 0 : Fail("close");
}

// COUNT writes of size bytes, through an fd opened with flags.
int Appends(const char* path, long count, size_t size, int flags) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | flags, 0644);
  if (fd < 0) return Fail("open");
  std::vector<char> buf(size, 'a');
  for (long i = 0; i < count; ++i)
    if (write(fd, buf.data(), size) != static_cast<ssize_t>(size)) return Fail("write");
  return close(fd) == 0 ? 0 : Fail("close");
}

}  // namespace

int Run(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  auto n = [&](int i) { return argc > i ? std::strtol(argv[i], nullptr, 10) : 0; };
  if (mode == "fsync" && argc == 5) return Fsync(argv[2], n(3), n(4));
  if (mode == "dsync" && argc == 5) return Dsync(argv[2], n(3), n(4));
  if (mode == "stream" && argc == 4) return Stream(argv[2], n(3));
  if (mode == "osync" && argc == 4) return Appends(argv[2], n(3), 4096, O_DSYNC);
  if (mode == "small" && argc == 4) return Appends(argv[2], n(3), 64, 0);
  std::fprintf(stderr,
               "usage: writers fsync FILE COUNT INTERVAL_MS | dsync FILE COUNT STRIDE | "
               "stream FILE MIB | osync FILE COUNT | small FILE COUNT\n");
  return 2;
}

int main(int argc, char** argv) {
  timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const int rc = Run(argc, argv);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (std::getenv("WRITERS_ELAPSED"))
    std::fprintf(stderr, "elapsed_ns %lld\n",
                 (t1.tv_sec - t0.tv_sec) * 1'000'000'000LL + (t1.tv_nsec - t0.tv_nsec));
  return rc;
}
