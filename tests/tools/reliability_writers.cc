// SPDX-License-Identifier: MIT
// Writers that stand where a preload is least safe (tools/writers.h).
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "writers.h"

namespace writers {
namespace {

int WriteMiB(int fd, long mib, char fill) {
  std::vector<char> buf(1 << 20, fill);
  for (long i = 0; i < mib; ++i)
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) return Fail("write");
  return 0;
}

// A filter that returns `action` for each call in `nrs` and allows the rest.
bool InstallFilter(const std::vector<long>& nrs, unsigned action) {
  std::vector<sock_filter> f;
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
  for (long nr : nrs) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, action));
  }
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  sock_fprog prog = {static_cast<unsigned short>(f.size()), f.data()};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// What a preload makes and a plain writer does not, once it runs (the
// dynamic loader itself uses fstat and lseek, so a filter a program starts
// under cannot refuse those).
const std::vector<long> kPreloadCalls = {SYS_fcntl,     SYS_pwritev2, SYS_sync_file_range,
                                         SYS_fadvise64, SYS_readlink, SYS_readlinkat,
                                         SYS_sendmsg,   SYS_sendto};
const std::vector<long> kPreloadCallsAfterStart = {
    SYS_fcntl,     SYS_fstat,    SYS_newfstatat, SYS_lseek,   SYS_pwritev2, SYS_sync_file_range,
    SYS_fadvise64, SYS_readlink, SYS_readlinkat, SYS_sendmsg, SYS_sendto};

volatile sig_atomic_t g_fd = -1;
volatile sig_atomic_t g_ticks = 0;
volatile sig_atomic_t g_dup2 = 0;

void OnTick(int) {
  g_ticks = g_ticks + 1;
  if (g_ticks != 300) return;
  if (!g_dup2) std::exit(0);  // what a handler that "cleans up and exits" does
  const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  dup2(null, g_fd);
  close(null);
}

}  // namespace

int TempFiles(const char* dir, long count, long mib, long pause_ms) {
  for (long i = 0; i < count; ++i) {
    const std::string path = std::string(dir) + "/tmp" + std::to_string(i);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Fail("open");
    if (int rc = WriteMiB(fd, mib, 't'); rc != 0) return rc;
    if (close(fd) != 0 || unlink(path.c_str()) != 0) return Fail("close or unlink");
    usleep(static_cast<useconds_t>(pause_ms) * 1000);
  }
  return 0;
}

int Strict(const char* path, long mib) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  std::vector<char> buf(1 << 20, 'k');  // made before: no allocation afterwards
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) return Fail("prctl");
  for (long i = 0; i < mib; ++i)
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) syscall(SYS_exit, 1);
  syscall(SYS_exit, 0);  // exit_group is not allowed in strict mode
  return 0;
}

int Filtered(const char* path, long mib) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  std::vector<char> buf(1 << 20, 'q');
  if (!InstallFilter(kPreloadCallsAfterStart, SECCOMP_RET_KILL_PROCESS)) return Fail("seccomp");
  for (long i = 0; i < mib; ++i)
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) return Fail("write");
  return close(fd) == 0 ? 0 : Fail("close");
}

int Sandboxed(const char* self, const char* path, long mib) {
  if (!InstallFilter(kPreloadCalls, SECCOMP_RET_KILL_PROCESS)) return Fail("seccomp");
  const std::string count = std::to_string(mib);
  execl(self, self, "stream", path, count.c_str(), static_cast<char*>(nullptr));
  return Fail("execl");
}

int HandlerEnds(const char* path, long mib, const char* how) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  g_fd = fd;
  g_dup2 = std::strcmp(how, "dup2") == 0;
  struct sigaction sa {};
  sa.sa_handler = OnTick;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, nullptr);
  itimerval every{{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &every, nullptr);
  std::vector<char> buf(1 << 20, 'h');
  for (long i = 0; i < mib; ++i)
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) return Fail("write");
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  return close(fd) == 0 ? 0 : Fail("close");
}

int ForgeMany(const char* dir, long count) {
  const char* fd_text = std::getenv("WRITELAB_RUN_FD");
  if (!fd_text) return Fail("WRITELAB_RUN_FD");
  const int fd = std::atoi(fd_text);
  const std::string name(3000, 'n');  // long names: what costs writelab most per record
  for (long i = 0; i < count; ++i) {
    const std::string line = "WLRUN1 unseen pid=" + std::to_string(getpid()) +
                             " dev=1 ino=" + std::to_string(1000000 + i) + " path=" + dir + "/" +
                             name + std::to_string(i) + "\n";
    while (send(fd, line.data(), line.size(), MSG_NOSIGNAL) < 0 && errno == EAGAIN) usleep(100);
  }
  return 0;
}

int Sparse(const char* dir, long count, long mib) {
  std::vector<int> open_fds;
  for (long i = 0; i < count; ++i) {
    const std::string path = std::string(dir) + "/sparse" + std::to_string(i);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Fail("open");
    if (ftruncate(fd, static_cast<off_t>(mib) << 20) != 0) return Fail("ftruncate");
    open_fds.push_back(fd);  // held open, so that the supervisor sees them
  }
  usleep(300'000);
  for (int fd : open_fds) close(fd);
  return 0;
}

int Hold(const char* dir, long count, long mib) {
  std::vector<int> held;
  for (long i = 0; i < count; ++i) {
    const std::string path = std::string(dir) + "/held" + std::to_string(i);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EMFILE && !held.empty()) break;  // as many as its limit allows
    if (fd < 0) return Fail("open");
    if (int rc = WriteMiB(fd, mib, 'o'); rc != 0) return rc;
    held.push_back(fd);
  }
  std::printf("held %zu\n", held.size());
  std::fflush(stdout);
  sleep(1);
  for (int fd : held) close(fd);
  return 0;
}

int RandomPair(const char* path, long mib, long ms) {
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(mib) << 20) != 0) return Fail("open");
  std::atomic<bool> stop{false};
  std::atomic<long> writes{0};
  auto worker = [&](unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<char> block(4096, 'r');
    const uint64_t blocks = static_cast<uint64_t>(mib) << 8;
    long n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const off_t at = static_cast<off_t>((rng() % blocks) << 12);
      if (pwrite(fd, block.data(), block.size(), at) != 4096) break;
      ++n;
    }
    writes += n;
  };
  std::thread a(worker, 1), b(worker, 2);
  usleep(static_cast<useconds_t>(ms) * 1000);
  stop = true;
  a.join();
  b.join();
  std::printf("writes %ld\n", writes.load());
  return close(fd) == 0 ? 0 : Fail("close");
}

int ReadAndClose() {
  char line[64];
  if (!std::fgets(line, sizeof line, stdin)) return Fail("fgets");
  return std::fclose(stdin) == 0 ? 0 : Fail("fclose");
}

}  // namespace writers
