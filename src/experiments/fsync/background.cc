// SPDX-License-Identifier: MIT
#include "experiments/fsync/background.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "io/file.h"
#include "io/own_files.h"
#include "lib/writeback_window.h"
#include "port/linux_compat.h"
#include "testbed/journal.h"
#include "writelab/window.h"

extern char** environ;

namespace writelab {
namespace {

// In the child: records why the load failed, for the parent's message.
[[noreturn]] void Fail(BackgroundShared* shared, const char* call, uint64_t off) {
  shared->error.store(errno ? errno : EIO, std::memory_order_relaxed);
  shared->offset.store(off, std::memory_order_relaxed);
  shared->call = call;  // a string literal: the address is the same in parent and child
  _exit(3);
}

// In the child: never returns.
[[noreturn]] void RandomWriter(int fd, uint64_t span, BackgroundShared* shared) {
  alignas(4096) static char block[4096];
  std::memset(block, 0x5a, sizeof block);
  std::mt19937_64 rng(static_cast<uint64_t>(getpid()));
  const uint64_t blocks = std::max<uint64_t>(span / 4096, 1);
  for (;;) {
    auto off = static_cast<off_t>((rng() % blocks) * 4096);
    if (pwrite(fd, block, sizeof block, off) > 0)
      shared->bytes.fetch_add(sizeof block, std::memory_order_relaxed);
    else if (errno != EINTR)
      Fail(shared, "pwrite", static_cast<uint64_t>(off));
  }
}

// The stream's 8 MiB window for StreamStyle::kWindowDrop (the stream
// experiment's window-drop).
constexpr uint64_t kStreamWindow = kDefaultWindowBytes;

[[noreturn]] void StreamWriter(int fd, uint64_t bound, StreamStyle style,
                               BackgroundShared* shared) {
  static char chunk[1 << 20];
  std::memset(chunk, 0xa5, sizeof chunk);
  FdWindowCalls calls(fd);
  WritebackWindow window(kStreamWindow, true);
  uint64_t off = 0;
  for (;;) {
    if (off + sizeof chunk > bound) {  // start over: never fill the disk
      off = 0;
      window = WritebackWindow(kStreamWindow, true);
    }
    iovec iov{chunk, sizeof chunk};
    ssize_t n = style == StreamStyle::kDontcache
                    ? pwritev2(fd, &iov, 1, static_cast<off_t>(off), RWF_DONTCACHE)
                    : pwrite(fd, chunk, sizeof chunk, static_cast<off_t>(off));
    if (n > 0) {
      const char* what = "";
      if (style == StreamStyle::kWindowDrop)
        if (int rc = window.AfterWrite(calls, off, static_cast<uint64_t>(n), &what); rc < 0) {
          errno = -rc;
          Fail(shared, what, off);
        }
      off += static_cast<uint64_t>(n);
      shared->bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    } else if (n == 0) {
      errno = ENOSPC;
      Fail(shared, "pwrite", off);
    } else if (errno != EINTR) {
      Fail(shared, style == StreamStyle::kDontcache ? "pwritev2 RWF_DONTCACHE" : "pwrite", off);
    }
  }
}

std::string DescribeStatus(int status, const BackgroundShared* shared) {
  if (WIFEXITED(status)) {
    int err = shared ? shared->error.load(std::memory_order_relaxed) : 0;
    std::string code = "exited with status " + std::to_string(WEXITSTATUS(status));
    if (err == 0) return code;
    return code + ": " + shared->call + " at " +
           std::to_string(shared->offset.load(std::memory_order_relaxed)) + ": " +
           std::strerror(err) + " (" + ErrnoName(err) + ")";
  }
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

// Journals the child's process group, so that `writelab cleanup` ends what
// a killed writelab left; the child waits for this before it starts.
Status JournalGroup(UndoJournal* journal, pid_t pid, std::optional<ScopedChange>& out) {
  if (!journal) return {};
  UndoStep step{"pgroup", std::to_string(pid), std::to_string(ProcessStartTime(pid)), ""};
  auto change = ScopedChange::Make(*journal, step, [] { return Status{}; });
  if (!change) return std::unexpected(change.error());
  out.emplace(std::move(*change));
  return {};
}

// cmd's environment: writelab's, with WRITELAB_DIR set to the directory
// under test (a test bed's mount point is named only at run time). Built
// before the fork: the child only calls what exec needs.
struct CommandEnv {
  explicit CommandEnv(const std::string& dir) {
    for (char** e = environ; *e; ++e)
      if (!std::string_view(*e).starts_with("WRITELAB_DIR=")) strings.emplace_back(*e);
    strings.push_back("WRITELAB_DIR=" + dir);
    for (std::string& v : strings) pointers.push_back(v.data());
    pointers.push_back(nullptr);
  }
  std::vector<std::string> strings;
  std::vector<char*> pointers;
};

// In the child, once started: never returns.
[[noreturn]] void RunChild(const BackgroundSpec& spec, int fd, BackgroundShared* shared,
                           const CommandEnv& env) {
  switch (spec.kind) {
    case BackgroundKind::kRandom:
      RandomWriter(fd, spec.span, shared);
    case BackgroundKind::kStream:
      StreamWriter(fd, spec.bound, spec.style, shared);
    case BackgroundKind::kCommand: {
      if (!spec.dir.empty() && chdir(spec.dir.c_str()) != 0) _exit(126);
      const char* argv[] = {"sh", "-c", spec.command.c_str(), nullptr};
      execve("/bin/sh", const_cast<char* const*>(argv), env.pointers.data());
      _exit(127);
    }
    case BackgroundKind::kNone:
      _exit(0);
  }
  _exit(0);
}

// True once pid has exited, without reaping it: as a zombie it keeps its
// id, and with it the group's, so signals to the group reach only the load.
bool LeaderExited(pid_t pid, int* status) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid == 0)
    return false;
  *status =
      info.si_code == CLD_EXITED ? W_EXITCODE(info.si_status, 0) : W_EXITCODE(0, info.si_status);
  return true;
}

}  // namespace

const char* StreamStyleName(StreamStyle s) {
  switch (s) {
    case StreamStyle::kPlain:
      return "plain";
    case StreamStyle::kDontcache:
      return "dontcache";
    case StreamStyle::kWindowDrop:
      return "window-drop";
  }
  return "?";
}

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

Result<std::unique_ptr<BackgroundLoad>> BackgroundLoad::Start(
    const BackgroundSpec& spec, UndoJournal* journal, const std::function<Status(pid_t)>& place) {
  std::unique_ptr<BackgroundLoad> load(new BackgroundLoad());
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return std::unexpected(ErrnoError(errno, "mmap shared counter"));
  load->shared_ = new (page) BackgroundShared();
  UniqueFd fd;
  if (spec.kind == BackgroundKind::kRandom || spec.kind == BackgroundKind::kStream) {
    auto f = CreateOwnFile(spec.dir, std::string("bg-") + BackgroundName(spec.kind), O_WRONLY,
                           &load->path_);
    if (!f) return std::unexpected(f.error());
    fd = std::move(*f);
    if (spec.kind == BackgroundKind::kRandom && ftruncate(fd.get(), static_cast<off_t>(spec.span)))
      return std::unexpected(ErrnoError(errno, "ftruncate " + load->path_));
    load->counts_bytes_ = true;
  }
  const CommandEnv env(spec.dir);
  int gate[2];  // the child starts once its group is journaled
  if (pipe2(gate, O_CLOEXEC) != 0) return std::unexpected(ErrnoError(errno, "pipe"));
  UniqueFd gate_read(gate[0]), gate_write(gate[1]);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return std::unexpected(ErrnoError(errno, "fork background load"));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(4);  // the parent died before prctl
    gate_write.Reset();
    char go = 0;
    while (read(gate_read.get(), &go, 1) < 0 && errno == EINTR) {
    }
    if (go != 'g') _exit(5);  // the parent could not journal the group
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    RunChild(spec, fd.get(), load->shared_, env);
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before any kill
  load->pid_ = pid;
  gate_read.Reset();
  if (Status s = JournalGroup(journal, pid, load->journaled_); !s)
    return std::unexpected(s.error());  // ~load kills the group
  if (place)
    if (Status s = place(pid); !s) return std::unexpected(s.error());
  if (write(gate_write.get(), "g", 1) != 1) return std::unexpected(ErrnoError(errno, "start load"));
  return load;
}

BackgroundLoad::~BackgroundLoad() {
  Stop();
  if (shared_) munmap(shared_, 4096);
}

std::optional<uint64_t> BackgroundLoad::bytes_written() const {
  if (!counts_bytes_) return std::nullopt;
  return shared_->bytes.load(std::memory_order_relaxed);
}

std::optional<std::string> BackgroundLoad::Exited() {
  if (exited_) return exit_reason_;
  int status = 0;
  if (!LeaderExited(pid_, &status)) return std::nullopt;
  exited_ = true;
  exit_reason_ = DescribeStatus(status, shared_);
  return exit_reason_;
}

void BackgroundLoad::Stop() {
  if (pid_ > 0 && !exited_) {
    kill(-pid_, SIGTERM);
    uint64_t deadline = NowNs() + 2'000'000'000ull;
    int status = 0;
    while (!LeaderExited(pid_, &status)) {
      if (NowNs() > deadline) {
        kill(-pid_, SIGKILL);
        break;
      }
      usleep(10'000);
    }
    exited_ = true;
  }
  if (pid_ > 0 && !reaped_) {
    // The leader is not reaped yet, so the group's id cannot have been
    // reused: whatever is still in the group is the command's.
    kill(-pid_, SIGKILL);
    journaled_.reset();  // undone: the journal's step is done
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  if (!path_.empty()) {
    RemoveOwnFile(path_);
    path_.clear();
  }
}

}  // namespace writelab
