#include "experiments/background.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <random>

#include "core/clock.h"
#include "io/file.h"

namespace writelab {
namespace {

// In the child: never returns.
[[noreturn]] void RandomWriter(int fd, uint64_t span, std::atomic<uint64_t>* bytes) {
  alignas(4096) static char block[4096];
  std::memset(block, 0x5a, sizeof block);
  std::mt19937_64 rng(static_cast<uint64_t>(getpid()));
  const uint64_t blocks = std::max<uint64_t>(span / 4096, 1);
  for (;;) {
    auto off = static_cast<off_t>((rng() % blocks) * 4096);
    if (pwrite(fd, block, sizeof block, off) > 0)
      bytes->fetch_add(sizeof block, std::memory_order_relaxed);
    else if (errno != EINTR)
      _exit(3);
  }
}

[[noreturn]] void StreamWriter(int fd, uint64_t bound, std::atomic<uint64_t>* bytes) {
  static char chunk[1 << 20];
  std::memset(chunk, 0xa5, sizeof chunk);
  uint64_t off = 0;
  for (;;) {
    if (off + sizeof chunk > bound) off = 0;  // start over: never fill the disk
    ssize_t n = pwrite(fd, chunk, sizeof chunk, static_cast<off_t>(off));
    if (n > 0) {
      off += static_cast<uint64_t>(n);
      bytes->fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    } else if (errno != EINTR) {
      _exit(3);
    }
  }
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

}  // namespace

const char* BackgroundName(BackgroundKind k) {
  switch (k) {
    case BackgroundKind::kNone:
      return "none";
    case BackgroundKind::kRandom:
      return "random";
    case BackgroundKind::kStream:
      return "stream";
    case BackgroundKind::kCommand:
      return "cmd";
  }
  return "?";
}

std::expected<std::unique_ptr<BackgroundLoad>, Error> BackgroundLoad::Start(
    const BackgroundSpec& spec) {
  std::unique_ptr<BackgroundLoad> load(new BackgroundLoad());
  UniqueFd fd;
  if (spec.kind == BackgroundKind::kRandom || spec.kind == BackgroundKind::kStream) {
    auto f = CreateOwnFile(spec.dir, std::string("bg-") + BackgroundName(spec.kind), O_WRONLY,
                           &load->path_);
    if (!f) return std::unexpected(f.error());
    fd = std::move(*f);
    if (spec.kind == BackgroundKind::kRandom && ftruncate(fd.get(), static_cast<off_t>(spec.span)))
      return std::unexpected(ErrnoError(errno, "ftruncate " + load->path_));
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return std::unexpected(ErrnoError(errno, "mmap shared counter"));
    load->shared_bytes_ = new (page) std::atomic<uint64_t>(0);
    load->counts_bytes_ = true;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return std::unexpected(ErrnoError(errno, "fork background load"));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(4);  // the parent died before prctl
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    switch (spec.kind) {
      case BackgroundKind::kRandom:
        RandomWriter(fd.get(), spec.span, load->shared_bytes_);
      case BackgroundKind::kStream:
        StreamWriter(fd.get(), spec.bound, load->shared_bytes_);
      case BackgroundKind::kCommand:
        execl("/bin/sh", "sh", "-c", spec.command.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      case BackgroundKind::kNone:
        _exit(0);
    }
    _exit(0);
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before any kill
  load->pid_ = pid;
  return load;
}

BackgroundLoad::~BackgroundLoad() {
  Stop();
  if (shared_bytes_) munmap(shared_bytes_, 4096);
}

std::optional<uint64_t> BackgroundLoad::bytes_written() const {
  if (!counts_bytes_) return std::nullopt;
  return shared_bytes_->load(std::memory_order_relaxed);
}

std::optional<std::string> BackgroundLoad::Exited() {
  if (reaped_) return exit_reason_;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  reaped_ = true;
  exit_reason_ = DescribeStatus(status);
  return exit_reason_;
}

void BackgroundLoad::Stop() {
  if (pid_ > 0 && !reaped_) {
    kill(-pid_, SIGTERM);
    uint64_t deadline = NowNs() + 2'000'000'000ull;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (NowNs() > deadline) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      usleep(10'000);
    }
    reaped_ = true;
  }
  if (pid_ > 0) kill(-pid_, SIGKILL);  // anything the command left in its group
  if (!path_.empty()) {
    unlink(path_.c_str());
    path_.clear();
  }
}

}  // namespace writelab
