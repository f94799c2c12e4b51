// SPDX-License-Identifier: MIT
// The planted culprits of tests/explain_blame_test.cc, built as `wl_blame`:
//
//   wl_blame DIR SECONDS BIG_MBPS SMALL_MBPS direct|buffered CALLS GAP_MS
//
// forks two writers, "big" and "small", that write DIR/big and DIR/small
// in 256 KiB pieces at their paces (MB/s, 10^6 bytes) for SECONDS and then
// fsync; meanwhile this process, the victim, makes CALLS appends of 4 KiB
// to DIR/victim, each followed by fsync and a pause of GAP_MS. When all
// are done it prints one line per writer: "writer NAME PID BYTES", the
// bytes it wrote by its own count.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr size_t kPiece = 256 * 1024;

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Writes at mbps for seconds; reports its bytes through the pipe.
int Writer(const std::string& path, double seconds, double mbps, bool direct, int report) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | (direct ? O_DIRECT : 0), 0644);
  void* buf = nullptr;
  if (fd < 0 || posix_memalign(&buf, 4096, kPiece) != 0) return 1;
  std::memset(buf, 'w', kPiece);
  const double start = Now();
  unsigned long long bytes = 0;
  while (Now() - start < seconds) {
    const double due = start + static_cast<double>(bytes) / (mbps * 1e6);
    if (double wait = due - Now(); wait > 0) usleep(static_cast<useconds_t>(wait * 1e6));
    if (pwrite(fd, buf, kPiece, static_cast<off_t>(bytes)) != static_cast<ssize_t>(kPiece))
      return 1;
    bytes += kPiece;
  }
  if (fsync(fd) != 0 || close(fd) != 0) return 1;
  return write(report, &bytes, sizeof bytes) == sizeof bytes ? 0 : 1;
}

int Victim(const std::string& path, int calls, int gap_ms) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW, 0644);
  if (fd < 0) return 1;
  char block[4096];
  std::memset(block, 'v', sizeof block);
  for (int i = 0; i < calls; ++i) {
    if (write(fd, block, sizeof block) != sizeof block || fsync(fd) != 0) return 1;
    usleep(static_cast<useconds_t>(gap_ms) * 1000);
  }
  return close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr,
                 "usage: wl_blame DIR SECONDS BIG_MBPS SMALL_MBPS direct|buffered CALLS GAP_MS\n");
    return 2;
  }
  const std::string dir = argv[1];
  const double seconds = std::atof(argv[2]);
  const bool direct = std::string(argv[5]) == "direct";
  const char* names[2] = {"big", "small"};
  const double rates[2] = {std::atof(argv[3]), std::atof(argv[4])};
  pid_t pids[2];
  int pipes[2][2];
  for (int i = 0; i < 2; ++i) {
    if (pipe(pipes[i]) != 0) return 1;
    pids[i] = fork();
    if (pids[i] < 0) return 1;
    if (pids[i] == 0) {
      prctl(PR_SET_NAME, names[i]);
      const int failed = Writer(dir + "/" + names[i], seconds, rates[i], direct, pipes[i][1]);
      if (failed) std::fprintf(stderr, "wl_blame: writer %s: %s\n", names[i], std::strerror(errno));
      _exit(failed);
    }
    // Its writer's end is the writer's alone: a writer that fails without
    // reporting ends the read below instead of leaving it waiting.
    close(pipes[i][1]);
  }
  int rc = Victim(dir + "/victim", std::atoi(argv[6]), std::atoi(argv[7]));
  for (int i = 0; i < 2; ++i) {
    int status = 0;
    unsigned long long bytes = 0;
    if (read(pipes[i][0], &bytes, sizeof bytes) != sizeof bytes) rc = 1;
    if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) || WEXITSTATUS(status))
      rc = 1;
    std::printf("writer %s %d %llu\n", names[i], static_cast<int>(pids[i]), bytes);
  }
  return rc;
}
