// SPDX-License-Identifier: MIT
// What a streaming writer that flushes its own data can reach on this
// device (issue 44's ceiling for `paced`): MIB MiB written from memory to a
// new file in DIR, in windows of WINDOW_MIB, four ways, beside a bystander
// (a 4 KiB pwrite + fdatasync every 20 ms, its own file), ROUNDS rounds with
// the order rotated:
//   no-flush   window-drop's way: start the window's writeback, wait for
//              the one before and drop it; the device is never asked to
//              flush until the end
//   flush      paced's way at a fixed window: write it, fdatasync, drop
//   overlapped start the window's writeback, wait for the one before, flush
//              the device (fdatasync of the directory: a cache flush and
//              no file data), drop it: the next window's transfer overlaps
//              the flush
//   threaded   the same, but the flush runs on a thread of its own while
//              the writer goes on; the writer waits only for the flush
//              before it to end before it asks for the next
// Each ends with an fdatasync of the file. Prints per round and mode: MB/s
// until clean (the last wait) and until flushed (the final fdatasync), the
// flushes' mean, the bystander's p99; then the medians.
//
// Usage: flush_ceiling DIR MIB WINDOW_MIB ROUNDS. Its files are in a new
// directory under DIR (mkdtemp), removed at the end.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <vector>

namespace {

constexpr const char* kModes[] = {"no-flush", "flush", "overlapped", "threaded"};
constexpr int kNumModes = 4;
constexpr uint64_t kMiB = uint64_t{1} << 20;

double NowS() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// A new file in the run's own directory, through its descriptor.
int Create(int dir_fd, const char* name) {
  return openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

// The bystander, in a child: until `stop` is readable, a 4 KiB pwrite +
// fdatasync every 20 ms; writes its p99 in ms to `out` and exits.
[[noreturn]] void Bystander(int dir_fd, int stop, int out) {
  const int fd = Create(dir_fd, "bystander");
  std::vector<double> ms;
  ms.reserve(1 << 16);
  char block[4096];
  std::memset(block, 1, sizeof block);
  char c;
  fcntl(stop, F_SETFL, O_NONBLOCK);
  while (fd >= 0 && read(stop, &c, 1) <= 0 && ms.size() < (1 << 16)) {
    const double t = NowS();
    if (pwrite(fd, block, sizeof block, static_cast<off_t>(ms.size() % 256) * 4096) < 0 ||
        fdatasync(fd) != 0)
      break;
    ms.push_back((NowS() - t) * 1e3);
    usleep(20000);
  }
  std::sort(ms.begin(), ms.end());
  const double p99 = ms.empty() ? -1 : ms[ms.size() * 99 / 100];
  _exit(write(out, &p99, sizeof p99) == sizeof p99 ? 0 : 1);
}

struct Trial {
  double clean_mb_s = 0, flushed_mb_s = 0, flush_ms = 0, bystander_p99_ms = 0;
};

// Writes mib MiB to fd in windows of `window` bytes, the mode's way; the
// time until clean and until flushed in *t.
bool Stream(int fd, int dir_fd, const char* mode, uint64_t mib, uint64_t window, Trial* t) {
  std::vector<char> buf(kMiB, 7);
  const bool flush = !std::strcmp(mode, "flush"), overlapped = !std::strcmp(mode, "overlapped");
  const bool threaded = !std::strcmp(mode, "threaded");
  std::future<int> pending;  // threaded: the flush in flight
  uint64_t end = 0, started = 0, dropped = 0, flushes = 0;
  double flush_s = 0;
  const double t0 = NowS();
  auto device_flush = [&](int on) {
    const double a = NowS();
    const bool ok = fdatasync(on) == 0;
    flush_s += NowS() - a, ++flushes;
    return ok;
  };
  for (uint64_t i = 0; i < mib; ++i) {
    if (pwrite(fd, buf.data(), kMiB, static_cast<off_t>(end)) != static_cast<ssize_t>(kMiB))
      return false;
    end += kMiB;
    if (end - started < window && i + 1 < mib) continue;
    if (flush) {
      if (!device_flush(fd)) return false;
      posix_fadvise(fd, static_cast<off_t>(started), static_cast<off_t>(end - started),
                    POSIX_FADV_DONTNEED);
      started = dropped = end;
      continue;
    }
    sync_file_range(fd, static_cast<off_t>(started), static_cast<off_t>(end - started),
                    SYNC_FILE_RANGE_WRITE);
    const unsigned wait =
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
    // The window before (or, at the end, everything) waited for and dropped.
    const uint64_t upto = i + 1 < mib ? started : end;
    if (upto > dropped) {
      sync_file_range(fd, static_cast<off_t>(dropped), static_cast<off_t>(upto - dropped), wait);
      if (overlapped && !device_flush(dir_fd)) return false;
      if (threaded) {
        const double a = NowS();
        if (pending.valid() && pending.get() != 0) return false;
        flush_s += NowS() - a, ++flushes;
        pending = std::async(std::launch::async, [dir_fd] { return fdatasync(dir_fd); });
      }
      posix_fadvise(fd, static_cast<off_t>(dropped), static_cast<off_t>(upto - dropped),
                    POSIX_FADV_DONTNEED);
      dropped = upto;
    }
    started = end;
  }
  if (pending.valid() && pending.get() != 0) return false;
  const double clean = NowS();
  if (fdatasync(fd) != 0) return false;
  const double flushed = NowS();
  const double mb = static_cast<double>(end) / 1e6;
  t->clean_mb_s = mb / (clean - t0);
  t->flushed_mb_s = mb / (flushed - t0);
  t->flush_ms = flushes ? flush_s / static_cast<double>(flushes) * 1e3 : 0;
  return true;
}

// One trial: the bystander started, the stream, the bystander stopped.
bool RunTrial(int dir_fd, const char* mode, uint64_t mib, uint64_t window, Trial* t) {
  int stop[2], out[2];
  if (pipe(stop) != 0 || pipe(out) != 0) return false;
  const pid_t child = fork();
  if (child == 0) Bystander(dir_fd, stop[0], out[1]);
  // The child's ends closed here: a bystander that dies without its p99
  // gives the read below an end of file, not a wait for ever.
  close(stop[0]);
  close(out[1]);
  bool ok = false, got = false;
  if (child > 0) {
    usleep(200000);  // its first calls alone
    const int fd = Create(dir_fd, "stream");
    ok = fd >= 0 && Stream(fd, dir_fd, mode, mib, window, t);
    if (fd >= 0) close(fd);
    ok &= write(stop[1], "x", 1) == 1;
    got = read(out[0], &t->bystander_p99_ms, sizeof(double)) == sizeof(double);
    waitpid(child, nullptr, 0);
  }
  close(stop[1]);
  close(out[0]);
  unlinkat(dir_fd, "stream", 0);
  unlinkat(dir_fd, "bystander", 0);
  return ok && got;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s DIR MIB WINDOW_MIB ROUNDS\n", argv[0]);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // a bystander gone: its pipe's write fails, said as such
  const uint64_t mib = std::strtoull(argv[2], nullptr, 10);
  const uint64_t window = std::strtoull(argv[3], nullptr, 10) * kMiB;
  const int rounds = std::atoi(argv[4]);
  std::string dir = std::string(argv[1]) + "/writelab-ceiling.XXXXXX";
  if (mib == 0 || window == 0 || rounds <= 0 || !mkdtemp(dir.data())) {
    std::fprintf(stderr, "flush_ceiling: bad arguments or no directory in %s\n", argv[1]);
    return 2;
  }
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  std::vector<Trial> by_mode[kNumModes];
  std::printf("round\tmode\tclean_mb_s\tflushed_mb_s\tflush_ms\tbystander_p99_ms\n");
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < kNumModes; ++k) {
      const int m = (k + r) % kNumModes;  // rotated
      Trial t;
      sync();
      if (dir_fd < 0 || !RunTrial(dir_fd, kModes[m], mib, window, &t)) {
        std::fprintf(stderr, "flush_ceiling: %s failed: %s\n", kModes[m], std::strerror(errno));
        rmdir(dir.c_str());
        return 1;
      }
      by_mode[m].push_back(t);
      std::printf("%d\t%s\t%.0f\t%.0f\t%.1f\t%.1f\n", r + 1, kModes[m], t.clean_mb_s,
                  t.flushed_mb_s, t.flush_ms, t.bystander_p99_ms);
      std::fflush(stdout);
    }
  std::printf("median\tmode\tclean_mb_s\tflushed_mb_s\tflush_ms\tbystander_p99_ms\n");
  for (int m = 0; m < kNumModes; ++m) {
    auto med = [&](double Trial::*f) {
      std::vector<double> v;
      for (const Trial& t : by_mode[m]) v.push_back(t.*f);
      return Median(v);
    };
    std::printf("%d\t%s\t%.0f\t%.0f\t%.1f\t%.1f\n", rounds, kModes[m], med(&Trial::clean_mb_s),
                med(&Trial::flushed_mb_s), med(&Trial::flush_ms), med(&Trial::bystander_p99_ms));
  }
  close(dir_fd);
  rmdir(dir.c_str());
  return 0;
}
