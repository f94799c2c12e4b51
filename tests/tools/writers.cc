// SPDX-License-Identifier: MIT
// Small writers the integration tests run under `writelab explain` (and
// `writelab run`): each does one thing a storage engineer's program does.
//   writers fsync FILE COUNT INTERVAL_MS   COUNT x (pwrite 1 MiB at 0 + fsync)
//   writers dsync FILE COUNT STRIDE        COUNT O_DSYNC|O_DIRECT 4 KiB writes,
//                                          STRIDE blocks apart, into FILE as it is
//   writers stream FILE MIB                MIB buffered 1 MiB writes, no sync
//   writers osync FILE COUNT               COUNT appends of 4 KiB through O_DSYNC
//   writers small FILE COUNT               COUNT buffered writes of 64 bytes
//   writers fwrite FILE COUNT SIZE         COUNT fwrite()s of SIZE bytes, then fclose
//   writers semantics DIR                  what a preload must keep (O_APPEND, pwrite,
//                                          copy_file_range, errno, pipes): exit 0 when
//                                          it holds
//   writers signals FILE MIB               MIB 1 MiB appends, a SIGALRM handler writing
//                                          to the same descriptor every millisecond
//   writers forks FILE MIB                 a thread streams MIB MiB while the main
//                                          thread forks 20 children that write and exit()
//   writers forge PATH [DEV INO]           records a shim never sent, on WRITELAB_RUN_FD
//   writers swap DIR PAIRS SECONDS         descriptors 30.. swapped between two files
//                                          each, of sizes of their own, for SECONDS
//   writers uring FILE MIB                 MIB 1 MiB writes through io_uring, one at a time
//                                          (raw io_uring_setup/enter: no liburing, so
//                                          that the static build has it too)
//   writers calls FILE                     each of the other calls explain times, a
//                                          count of its own: writev 2, pwritev 3,
//                                          sync_file_range 4, msync 5 (of a MAP_SHARED
//                                          mapping of FILE), syncfs 6
// and those of tools/writers.h, where a preload is least safe (tempfiles,
// strict, filtered, sandboxed, handler, forge-many, sparse, hold,
// random-pair, readclose).
// Exit status 0, or 1 with the failed call on stderr. With WRITERS_ELAPSED
// set, prints "elapsed_ns N" (its own time, from start to exit) on stderr,
// for the benchmarks.
#include <fcntl.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "writers.h"

namespace writers {

int Fail(const char* what) {
  std::fprintf(stderr, "writers: %s: %s\n", what, std::strerror(errno));
  return 1;
}

}  // namespace writers

namespace {

using writers::Fail;

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

int Fwrite(const char* path, long count, size_t size) {
  FILE* f = std::fopen(path, "w");
  if (!f) return Fail("fopen");
  std::vector<char> buf(size, 'w');
  for (long i = 0; i < count; ++i)
    if (std::fwrite(buf.data(), 1, size, f) != size) return Fail("fwrite");
  return std::fclose(f) == 0 ? 0 : Fail("fclose");
}

// io_uring by hand: a ring of 4, each entry a 1 MiB write at the next
// offset; the writes reach the file without write(2).
int Uring(const char* path, long mib) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  io_uring_params p{};
  const int ring = static_cast<int>(syscall(__NR_io_uring_setup, 4, &p));
  if (ring < 0) return Fail("io_uring_setup");
  const size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  const size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
  auto* sq = static_cast<char*>(
      mmap(nullptr, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING));
  auto* cq = static_cast<char*>(
      mmap(nullptr, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING));
  auto* sqes =
      static_cast<io_uring_sqe*>(mmap(nullptr, p.sq_entries * sizeof(io_uring_sqe),
                                      PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQES));
  if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) return Fail("mmap");
  auto* sq_tail = reinterpret_cast<unsigned*>(sq + p.sq_off.tail);
  auto* sq_array = reinterpret_cast<unsigned*>(sq + p.sq_off.array);
  auto* cq_head = reinterpret_cast<unsigned*>(cq + p.cq_off.head);
  auto* cq_tail = reinterpret_cast<unsigned*>(cq + p.cq_off.tail);
  auto* cqes = reinterpret_cast<io_uring_cqe*>(cq + p.cq_off.cqes);
  std::vector<char> buf(1 << 20, 'u');
  for (long i = 0; i < mib; ++i) {
    const unsigned tail = __atomic_load_n(sq_tail, __ATOMIC_ACQUIRE);
    io_uring_sqe& e = sqes[tail & (p.sq_entries - 1)];
    std::memset(&e, 0, sizeof e);
    e.opcode = IORING_OP_WRITE;
    e.fd = fd;
    e.addr = reinterpret_cast<uint64_t>(buf.data());
    e.len = static_cast<uint32_t>(buf.size());
    e.off = static_cast<uint64_t>(i) << 20;
    sq_array[tail & (p.sq_entries - 1)] = tail & (p.sq_entries - 1);
    __atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
    if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, nullptr, 0) < 0)
      return Fail("io_uring_enter");
    const unsigned head = __atomic_load_n(cq_head, __ATOMIC_ACQUIRE);
    if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) return Fail("io_uring: no completion");
    const io_uring_cqe& c = cqes[head & (p.cq_entries - 1)];
    if (c.res != static_cast<int>(buf.size())) {
      errno = c.res < 0 ? -c.res : EIO;
      return Fail("io_uring write");
    }
    __atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
  }
  close(ring);
  return close(fd) == 0 ? 0 : Fail("close");
}

// Every call but write, pwrite64 and the fsyncs, each a known number of
// times (so that a test can tell them apart by their counts).
int Calls(const char* path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  std::vector<char> a(4096, 'a'), b(4096, 'b');
  iovec iov[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  for (int i = 0; i < 2; ++i)
    if (writev(fd, iov, 2) != 8192) return Fail("writev");
  for (int i = 0; i < 3; ++i)
    if (pwritev(fd, iov, 2, 8192 * (2 + i)) != 8192) return Fail("pwritev");
  for (int i = 0; i < 4; ++i)
    if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0)
      return Fail("sync_file_range");
  const size_t size = 8192 * 5;
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return Fail("mmap");
  for (int i = 0; i < 5; ++i) {
    static_cast<char*>(map)[i * 4096] = 'm';
    if (msync(map, size, MS_SYNC) != 0) return Fail("msync");
  }
  munmap(map, size);
  for (int i = 0; i < 6; ++i)
    if (syncfs(fd) != 0) return Fail("syncfs");
  return close(fd) == 0 ? 0 : Fail("close");
}

// What a preload must not change: O_APPEND lands at the end, pwrite where
// asked and the position stays, a failed write keeps its errno, a write to
// a pipe is a write. In DIR; exit 0 when all hold, 1 naming the first that
// does not.
// copy_file_range as the kernel does it, past --min-file (where the shim
// copies in pieces): src is 12 MiB of 'x' and a 'p'. With offsets, only
// they move; without, the positions do; a flag it does not know is EINVAL.
int CopySemantics(const std::string& dir, const std::string& src) {
  const int in = open(src.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = open((dir + "/copied").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) return Fail("open");
  off64_t in_off = 1, out_off = 0;
  if (copy_file_range(in, &in_off, out, &out_off, SIZE_MAX >> 2, 0) != 12 << 20 ||
      in_off != (12 << 20) + 1 || out_off != 12 << 20 || lseek(in, 0, SEEK_CUR) != 0 ||
      lseek(out, 0, SEEK_CUR) != 0)
    return Fail("copy_file_range with offsets");
  char last = 0;
  if (pread(out, &last, 1, (12 << 20) - 1) != 1 || last != 'p') {
    errno = EINVAL;
    return Fail("what copy_file_range copied");
  }
  const ssize_t part = (10 << 20) + 3;
  if (copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(part), 0) != part ||
      lseek(in, 0, SEEK_CUR) != part || lseek(out, 0, SEEK_CUR) != part)
    return Fail("copy_file_range at the positions");
  errno = 0;
  if (copy_file_range(in, nullptr, out, nullptr, 1 << 20, 1) != -1 || errno != EINVAL)
    return Fail("copy_file_range's errno");
  // Within one file, overlapping: the kernel refuses it whole (and the
  // caller copies another way); in pieces each piece would be allowed.
  // ([0, 4 MiB) to 1 MiB: each 1 MiB piece alone overlaps nothing.)
  if (pwrite(out, "0123456789", 10, 0) != 10) return Fail("pwrite");
  off64_t from = 0, to = 1 << 20;
  errno = 0;
  if (copy_file_range(out, &from, out, &to, 4 << 20, 0) != -1 || errno != EINVAL || from != 0 ||
      to != 1 << 20)
    return Fail("an overlapping copy within one file");
  char head[11] = {};
  if (pread(out, head, 10, 1 << 20) != 10 || std::string(head) == "0123456789") {
    errno = EINVAL;
    return Fail("what an overlapping copy left");
  }
  close(in);
  return close(out) == 0 ? 0 : Fail("close");
}

int Semantics(const std::string& dir) {
  const std::string log = dir + "/appended";
  std::vector<char> block(1 << 20, 'x');
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  for (int i = 0; i < 12; ++i)  // a stream past --min-file, through O_APPEND
    if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size()))
      return Fail("append");
  if (pwrite(fd, "p", 1, 0) != 1) return Fail("pwrite on O_APPEND");  // Linux: appends too
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size != (12 << 20) + 1) {
    errno = EINVAL;
    return Fail("O_APPEND size");
  }
  close(fd);
  if (int rc = CopySemantics(dir, log); rc != 0) return rc;
  fd = open((dir + "/positioned").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  if (write(fd, "abcdef", 6) != 6 || pwrite(fd, "XY", 2, 2) != 2 || lseek(fd, 0, SEEK_CUR) != 6 ||
      write(fd, "gh", 2) != 2)
    return Fail("pwrite keeps the position");
  char back[9] = {};
  if (pread(fd, back, 8, 0) != 8 || std::string(back) != "abXYefgh") {
    errno = EINVAL;
    return Fail("what pwrite wrote");
  }
  close(fd);
  errno = 0;
  if (write(fd, "x", 1) != -1 || errno != EBADF) return Fail("a closed descriptor's errno");
  int p[2];
  if (pipe(p) != 0 || write(p[1], "pipe", 4) != 4) return Fail("a pipe");
  char got[5] = {};
  if (read(p[0], got, 4) != 4 || std::string(got) != "pipe") return Fail("what the pipe got");
  return 0;
}

volatile sig_atomic_t g_signal_fd = -1;
void WriteInHandler(int) {
  const int saved = errno;
  if (g_signal_fd >= 0) (void)!write(g_signal_fd, "s", 1);  // the same descriptor
  errno = saved;
}

// MIB 1 MiB writes while SIGALRM, every millisecond, writes to the same
// descriptor from its handler: a preload that held a lock across the write
// would hang here.
int Signals(const char* path, long mib) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  g_signal_fd = fd;
  struct sigaction sa {};
  sa.sa_handler = WriteInHandler;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, nullptr);
  itimerval every{{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every, nullptr);
  std::vector<char> buf(1 << 20, 'S');
  for (long i = 0; i < mib; ++i)
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) return Fail("write");
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  return close(fd) == 0 ? 0 : Fail("close");
}

// A thread streams while the main thread forks; the child writes to the
// same descriptor and exits through exit() (destructors run), the parent
// goes on: a preload whose lock a fork's child inherited would hang.
int Forks(const char* path, long mib) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open");
  std::vector<char> buf(1 << 20, 'F');
  std::thread streamer([&] {
    for (long i = 0; i < mib; ++i) (void)!write(fd, buf.data(), buf.size());
  });
  for (int k = 0; k < 20; ++k) {
    const pid_t pid = fork();
    if (pid == 0) {
      (void)!write(fd, buf.data(), 4096);
      std::exit(0);
    }
    if (pid < 0) return Fail("fork");
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      errno = ECHILD;
      return Fail("the fork's child");
    }
  }
  streamer.join();
  return close(fd) == 0 ? 0 : Fail("close");
}

// PAIRS pairs of files DIR/aI and DIR/bI, each of its own size (aI
// (2I+1) x 512 bytes, bI (2I+2) x 512), held at descriptors from 100 up,
// and for SECONDS descriptor 30+I swapped between the two as fast as dup2
// goes: who reads a descriptor's inode and its name in two calls gives one
// file's inode the other's name (dd puts its output on fd 1 the same way).
int Swap(const char* dir, long pairs, long seconds) {
  std::vector<int> fds;
  for (long i = 0; i < 2 * pairs; ++i) {
    const std::string path = std::string(dir) + "/" + (i % 2 ? "b" : "a") + std::to_string(i / 2);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::vector<char> buf(static_cast<size_t>(i + 1) * 512, 'W');
    if (fd < 0 || write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size()))
      return Fail("open or write");
    fds.push_back(fcntl(fd, F_DUPFD_CLOEXEC, 100 + i));
    close(fd);
  }
  // A monotonic clock, not time(): a whole second of time() began up to a
  // second ago, so SECONDS 1 swapped for as little as a millisecond, before
  // the supervisor had looked at all (10 of 16 files, once in CI).
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end)
    for (int k = 0; k < 1000; ++k)
      for (long i = 0; i < pairs; ++i)
        if (dup2(fds[2 * i + k % 2], static_cast<int>(30 + i)) < 0) return Fail("dup2");
  return 0;
}

// Records a shim could have sent, forged: PATH named as a file the program
// "wrote" (unseen and done, with PATH's own device and inode), and a hello
// from pid 1, written to the descriptor WRITELAB_RUN_FD names.
// (With DEV and INO, those: a file the program cannot stat, whose numbers
// it guessed.)
int Forge(const char* path, const char* dev, const char* ino) {
  const char* fd_text = std::getenv("WRITELAB_RUN_FD");
  struct stat st {};
  if (!fd_text || (!dev && stat(path, &st) != 0)) return Fail("WRITELAB_RUN_FD or stat");
  const int fd = std::atoi(fd_text);
  const std::string id = " dev=" + (dev ? std::string(dev) : std::to_string(st.st_dev)) +
                         " ino=" + (ino ? std::string(ino) : std::to_string(st.st_ino));
  for (const std::string& line :
       {"WLRUN1 unseen pid=" + std::to_string(getpid()) + id + " path=" + path + "\n",
        "WLRUN1 done pid=" + std::to_string(getpid()) + id +
            " written=99999999 handled=99999999 mech=window-drop path=" + path + "\n",
        std::string("WLRUN1 hello pid=1 exe=/sbin/init\n")})
    (void)!send(fd, line.data(), line.size(), MSG_NOSIGNAL);
  return 0;
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
  if (mode == "fwrite" && argc == 5) return Fwrite(argv[2], n(3), static_cast<size_t>(n(4)));
  if (mode == "uring" && argc == 4) return Uring(argv[2], n(3));
  if (mode == "semantics" && argc == 3) return Semantics(argv[2]);
  if (mode == "signals" && argc == 4) return Signals(argv[2], n(3));
  if (mode == "forks" && argc == 4) return Forks(argv[2], n(3));
  if (mode == "forge" && argc == 3) return Forge(argv[2], nullptr, nullptr);
  if (mode == "forge" && argc == 5) return Forge(argv[2], argv[3], argv[4]);
  if (mode == "swap" && argc == 5) return Swap(argv[2], n(3), n(4));
  if (mode == "calls" && argc == 3) return Calls(argv[2]);
  if (mode == "tempfiles" && argc == 6) return writers::TempFiles(argv[2], n(3), n(4), n(5));
  if (mode == "strict" && argc == 4) return writers::Strict(argv[2], n(3));
  if (mode == "filtered" && argc == 4) return writers::Filtered(argv[2], n(3));
  if (mode == "sandboxed" && argc == 4) return writers::Sandboxed(argv[0], argv[2], n(3));
  if (mode == "handler" && argc == 5) return writers::HandlerEnds(argv[2], n(3), argv[4]);
  if (mode == "forge-many" && argc == 4) return writers::ForgeMany(argv[2], n(3));
  if (mode == "sparse" && argc == 5) return writers::Sparse(argv[2], n(3), n(4));
  if (mode == "hold" && argc == 5) return writers::Hold(argv[2], n(3), n(4));
  if (mode == "random-pair" && argc == 5) return writers::RandomPair(argv[2], n(3), n(4));
  if (mode == "readclose" && argc == 2) return writers::ReadAndClose();
  std::fprintf(stderr,
               "usage: writers fsync FILE COUNT INTERVAL_MS | dsync FILE COUNT STRIDE | "
               "stream FILE MIB | osync FILE COUNT | small FILE COUNT | fwrite FILE COUNT SIZE | "
               "uring FILE MIB | calls FILE | semantics DIR | signals FILE MIB | forks FILE MIB | "
               "forge PATH [DEV INO] | swap DIR PAIRS SECONDS | tempfiles DIR COUNT MIB PAUSE_MS | "
               "strict FILE MIB | filtered FILE MIB | sandboxed FILE MIB | handler FILE MIB "
               "exit|dup2 | forge-many DIR COUNT | sparse DIR COUNT MIB | hold DIR COUNT MIB | "
               "random-pair FILE MIB MS "
               "| readclose\n");
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
