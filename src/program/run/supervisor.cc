// SPDX-License-Identifier: MIT
#include "program/run/supervisor.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "program/spawn.h"
#include "telemetry/procfs.h"

namespace writelab {
namespace {

// A file born at or after start (realtime ns), by its birth time; false
// where the file system keeps none.
bool BornSince(int fd, uint64_t start_realtime_ns) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) != 0 || !(stx.stx_mask & STATX_BTIME))
    return false;
  const uint64_t born =
      static_cast<uint64_t>(stx.stx_btime.tv_sec) * 1'000'000'000 + stx.stx_btime.tv_nsec;
  return born >= start_realtime_ns;
}

// Whether /proc/PID/fdinfo/N says the descriptor may write, and (where the
// kernel says which inode it is, 5.14 on) is still of inode ino.
bool OpenForWriting(const std::string& fdinfo, uint64_t ino) {
  auto text = ReadSmallFile(fdinfo);
  if (!text) return false;
  const size_t at = text->find("flags:");
  if (at == std::string::npos) return false;
  const unsigned long flags = std::strtoul(text->c_str() + at + 6, nullptr, 8);
  const size_t in = text->find("\nino:");
  if (in != std::string::npos && std::strtoull(text->c_str() + in + 5, nullptr, 10) != ino)
    return false;
  return (flags & O_ACCMODE) != O_RDONLY;
}

// The parent of pid (0 when it cannot be read).
pid_t ParentOf(pid_t pid) {
  auto stat = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return 0;
  const size_t close = stat->rfind(')');
  int ppid = 0;
  char state = 0;
  if (close == std::string::npos ||
      std::sscanf(stat->c_str() + close + 1, " %c %d", &state, &ppid) != 2)
    return 0;
  return ppid;
}

}  // namespace

int SuperviseRange(RunStrategy s, uint64_t window, int fd, WritebackWindow& w, PacedWindow& p,
                   uint64_t base, uint64_t from, uint64_t size, const char** what) {
  FdWindowCalls calls(fd);
  *what = "posix_fadvise";
  if (s == RunStrategy::kDropBehind)
    return size > base + window ? calls.DropCache(base, size - window - base) : 0;
  if (s == RunStrategy::kPaced) return p.AfterWrite(calls, size, what);
  return size > from ? w.AfterWrite(calls, from, size - from, what) : 0;
}

// The end of a file the supervisor drove: drop-behind advises all of CMD's
// bytes; paced flushes and drops what is left unflushed; the windows wait
// for what is left and drop it. Then, where the strategy drops, all of
// CMD's bytes are waited for and dropped once more: a writer the
// supervisor watched from outside may have written below its windows
// after they were dropped (io_uring's writes complete out of order), and
// the kernel skips a page it finds busy.
static int FinishSupervised(RunStrategy s, FdWindowCalls& calls, WatchedFile& f,
                            const char** what) {
  const uint64_t base = std::min(f.base, f.size);
  *what = "posix_fadvise";
  if (s == RunStrategy::kDropBehind) return calls.DropCache(base, f.size - base);
  if (s == RunStrategy::kPaced) return f.paced.Flush(calls, f.size, what);
  if (int rc = f.window.Finish(calls, f.size, what); rc < 0 || s == RunStrategy::kWindow) return rc;
  *what = "sync_file_range";
  if (int rc = calls.SyncRange(
          base, f.size - base,
          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      rc < 0)
    return rc;
  *what = "posix_fadvise";
  return calls.DropCache(FolioDropStart(base), f.size - FolioDropStart(base));
}

int OpenRegularFile(const std::string& path, uint64_t dev, uint64_t ino, bool follow) {
  UniqueFd handle(open(path.c_str(), O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW)));
  if (!handle) return -1;
  struct stat st;
  if (fstat(handle.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_dev) != dev || st.st_ino != ino) {
    errno = ENOENT;  // not the file named: as if it were gone
    return -1;
  }
  const std::string again = "/proc/self/fd/" + std::to_string(handle.get());
  const int fd = open(again.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0 &&
      (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_dev) != dev || st.st_ino != ino)) {
    close(fd);
    errno = ENOENT;
    return -1;
  }
  return fd;
}

uint64_t GrowthOf(const WatchedFile& f) {
  const uint64_t base = std::min(f.base, f.min_size);
  const uint64_t grown = f.size > base ? f.size - base : 0;
  const uint64_t first_blocks = f.created ? 0 : f.first_blocks;
  const uint64_t allocated = f.blocks > first_blocks ? f.blocks - first_blocks : 0;
  return std::min(grown, allocated);
}

Supervisor::Supervisor(const RunSpec& spec, pid_t root, int report, uint64_t born_since_ns,
                       const RunAs& as)
    : spec_(spec), root_(root), report_(report), born_since_ns_(born_since_ns), as_(as) {}

void Supervisor::Note(WatchedFile& f, const struct stat& st) {
  f.size = static_cast<uint64_t>(st.st_size);
  f.min_size = std::min(f.min_size, f.size);
  f.blocks = static_cast<uint64_t>(st.st_blocks) * 512;
}

WatchedFile* Supervisor::Find(uint64_t dev, uint64_t ino) {
  auto it = index_.find({dev, ino});
  return it == index_.end() ? nullptr : &files_[it->second];
}

WatchedFile* Supervisor::Add(uint64_t dev, uint64_t ino, const std::string& path) {
  if (files_.size() >= kMaxFiles) {
    ++files_dropped_;
    return nullptr;
  }
  index_[{dev, ino}] = files_.size();
  WatchedFile& f = files_.emplace_back();
  f.dev = dev, f.ino = ino, f.path = path;
  f.window = WritebackWindow(spec_.window, spec_.strategy != RunStrategy::kWindow);
  f.paced = PacedWindow(spec_.pace_target_ns, spec_.window);
  return &f;
}

// Opened from the link a process of the scope holds (the file it has open)
// or, for a file only the shim named, by its path with the rights of the
// user CMD runs as; the first open fixes where CMD's bytes begin. A file
// released while CMD ran is opened again when asked for (never a deleted
// one: its name is another file's, or none).
int Supervisor::FdOf(WatchedFile& f) {
  if (f.fd) return f.fd.get();
  if ((f.opened && !f.released) || f.deleted) return -1;
  const bool first = !f.opened;
  f.opened = true;
  f.released = false;
  int fd = f.link.empty() ? -1 : OpenRegularFile(f.link, f.dev, f.ino, true);
  if (fd < 0 && !f.path.empty() && f.path.front() == '/')
    fd = OpenAsUser(as_, [&] { return OpenRegularFile(f.path, f.dev, f.ino, false); });
  if (fd < 0) {
    f.open_error = errno ? errno : ENOENT;
    return -1;
  }
  f.fd.Reset(fd);
  struct stat st;
  if (fstat(fd, &st) == 0) {
    if (first && f.first_size == 0 && f.size == 0) {
      f.first_size = static_cast<uint64_t>(st.st_size);
      f.first_blocks = static_cast<uint64_t>(st.st_blocks) * 512;
    }
    Note(f, st);
  }
  if (!first) return fd;
  f.created = f.created || BornSince(fd, born_since_ns_);
  // A file that was there before CMD: only what it grew by is CMD's to
  // window (its cached pages below are not the run's to drop).
  f.base = f.created ? 0 : std::min(f.first_size, f.size);
  f.supervised_bytes = f.base;
  f.window.MarkDropped(f.base);
  f.paced.MarkFlushed(f.base);
  return fd;
}

// In the scope: CMD, its descendants, and the orphans writelab (their
// subreaper) took in; a record from any other process is not believed.
// A process that already exited has no parents left to walk: its record
// is believed when the kernel says it sent it (see Take).
bool Supervisor::InScope(pid_t pid) const {
  for (int hops = 0; pid > 1 && hops < 64; ++hops) {
    if (pid == root_ || pid == getpid()) return pid != getpid() || hops > 0;
    pid = ParentOf(pid);
  }
  return false;
}

// A record is believed when the pid it names is the one the kernel stamped
// on its message (SO_PASSCRED: no process can name another), and that
// process is in the scope, or has exited since it sent it: only processes
// holding CMD's end of the socket can send, and a short-lived child (a dd
// under `sh -c`) is often gone and reaped before the next look.
void Supervisor::Take(const ShimRecord& r, pid_t sender) {
  const bool gone = sender > 0 && kill(sender, 0) != 0 && errno == ESRCH;
  if (r.pid != sender || !(gone || InScope(r.pid))) {
    ++out_of_scope_;
    return;
  }
  if (r.type == ShimRecord::Type::kHello) {
    shimmed_.insert(r.pid);
    processes_[r.pid] = r.path;
    live_.insert(r.pid);
    return;
  }
  if (r.type == ShimRecord::Type::kLeave) {  // its streams ended: its files are ours now
    left_[r.pid] = r.mech;
    for (WatchedFile& f : files_)
      if (std::find(f.writers.begin(), f.writers.end(), r.pid) != f.writers.end())
        f.shim_left = true;
    return;
  }
  WatchedFile* f = Find(r.dev, r.ino);
  if (!f) f = Add(r.dev, r.ino, r.path);  // closed between two looks: opened when needed
  if (!f) return;
  if (std::find(f->writers.begin(), f->writers.end(), r.pid) == f->writers.end())
    f->writers.push_back(r.pid);
  if (r.type == ShimRecord::Type::kUnseen) return;  // the supervisor's, like any file it sees
  if (r.type == ShimRecord::Type::kHandover) {
    f->shim_left = true;
    return;
  }
  if (r.type == ShimRecord::Type::kClaim) {
    f->shim_claimed = true;
    return;
  }
  f->shim_written += r.written;
  f->shim_handled += r.handled;
  if (r.paced) f->shim_paced.Add(*r.paced);
  if (r.mech != "small" && r.mech != "plain") f->shim_claimed = true;
  if (f->shim_mech.empty() || f->shim_mech == "small") f->shim_mech = r.mech;
}

void Supervisor::ReadRecords() {
  if (report_ < 0) return;
  char buf[8192];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  std::vector<ShimRecord> records;
  std::vector<std::string> errors;
  for (;;) {  // a message a record (SOCK_SEQPACKET), each with its sender's credentials
    iovec iov{buf, sizeof buf};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(report_, &m, MSG_CMSG_CLOEXEC);
    if (n <= 0) break;
    pid_t sender = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
          c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
        ucred cred;
        std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
        sender = cred.pid;
      }
    records.clear();
    reader_.Feed({buf, static_cast<size_t>(n)}, records, errors);
    for (const ShimRecord& r : records) Take(r, sender);
  }
  for (std::string& e : errors) {
    if (record_errors_.size() < kMaxRecordErrors)
      record_errors_.push_back(std::move(e));
    else
      ++errors_dropped_;
  }
}

void Supervisor::Scan(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  if (!processes_.count(pid)) {
    std::error_code ec;
    processes_[pid] = std::filesystem::read_symlink(proc + "/exe", ec).string();
  }
  std::error_code ec;
  auto it = std::filesystem::directory_iterator(proc + "/fd", ec);
  if (ec) {
    if (ec.value() == ENOENT || ec.value() == ESRCH)
      live_.erase(pid);  // gone: the fast looks stop asking after it
    else
      ++scan_errors_;  // EMFILE, EACCES
    return;
  }
  live_.insert(pid);
  for (const auto& e : it) {
    // Identity, name and birth of one object (procfs.h): a descriptor CMD
    // replaces between two calls cannot give one file's inode another's name.
    auto view = ViewDescriptor(e.path());
    if (!view || !S_ISREG(view->st.st_mode)) continue;
    const struct stat& st = view->st;
    const std::string fdinfo = proc + "/fdinfo/" + e.path().filename().string();
    if (!OpenForWriting(fdinfo, st.st_ino)) continue;
    WatchedFile* f = Find(static_cast<uint64_t>(st.st_dev), st.st_ino);
    if (!f) {
      const std::string& path = view->path;
      if (!spec_.path_glob.empty() && fnmatch(spec_.path_glob.c_str(), path.c_str(), 0) != 0)
        continue;
      f = Add(static_cast<uint64_t>(st.st_dev), st.st_ino, path);
      if (!f) continue;
      f->first_size = static_cast<uint64_t>(st.st_size);
      f->first_blocks = static_cast<uint64_t>(st.st_blocks) * 512;
      f->created = BornSince(view->handle.get(), born_since_ns_);
      f->base = f->created ? 0 : f->first_size;
    }
    f->link = e.path().string();
    f->seen = true;
    Note(*f, st);
    if (std::find(f->writers.begin(), f->writers.end(), pid) == f->writers.end())
      f->writers.push_back(pid);
  }
}

std::vector<std::string> Supervisor::Losses() const {
  std::vector<std::string> out;
  if (out_of_scope_)
    out.push_back(std::to_string(out_of_scope_) +
                  " records of the shim came from processes outside the scope: not believed");
  if (errors_dropped_)
    out.push_back(std::to_string(errors_dropped_) + " more records of the shim not understood");
  if (files_dropped_)
    out.push_back(std::to_string(files_dropped_) + " files not watched: more than " +
                  std::to_string(kMaxFiles));
  if (scan_errors_)
    out.push_back(std::to_string(scan_errors_) +
                  " looks at a process's descriptors failed (descriptors or rights)");
  return out;
}

void Supervisor::Supervise(WatchedFile& f) {
  if (!f.supervisor_error.empty() || FdOf(f) < 0) return;
  const char* what = "";
  if (int rc = SuperviseRange(spec_.strategy, spec_.window, f.fd.get(), f.window, f.paced, f.base,
                              f.supervised_bytes, f.size, &what);
      rc < 0) {
    f.supervisor_error = std::string(what) + ": " + std::strerror(-rc);
    return;
  }
  f.supervised = true;
  f.supervised_bytes = std::max(f.supervised_bytes, f.size);
}

void Supervisor::Conclude(WatchedFile& f) {
  Supervise(f);
  if (!f.supervised || !f.supervisor_error.empty()) return;
  FdWindowCalls calls(f.fd.get());
  const char* what = "";
  const int rc = FinishSupervised(spec_.strategy, calls, f, &what);
  if (rc < 0) f.supervisor_error = std::string(what) + ": " + std::strerror(-rc);
}

// A file is the strategy's when what CMD wrote to it (from its base) is at
// least --min-file.
static bool Grown(const WatchedFile& f, uint64_t min_file) { return GrowthOf(f) >= min_file; }

void Supervisor::Release(WatchedFile& f, bool deleted) {
  if (!deleted && f.supervised && f.supervisor_error.empty()) {
    // What CMD wrote between the last look and its close is the strategy's
    // too: the file's size now, not the last look's (a fast writer's last
    // look can be tens of MB behind: those pages would stay cached).
    struct stat st;
    if (fstat(f.fd.get(), &st) == 0) Note(f, st);
    Conclude(f);
  }
  f.fd.Reset();
  f.released = true;
  f.deleted |= deleted;
}

// A descriptor of writelab's must not keep a file alive (a deleted
// temporary file keeps its blocks while anyone holds it) nor a file
// nobody of the scope writes any more open: each look checks the link
// count, and each full look whether a process of the scope still holds it.
void Supervisor::ReleaseUnused(bool full) {
  for (WatchedFile& f : files_) {
    if (!f.fd) continue;
    struct stat st;
    if (fstat(f.fd.get(), &st) == 0 && st.st_nlink == 0)
      Release(f, true);
    else if (full && !f.seen)
      Release(f, false);
  }
}

void Supervisor::Poll(bool full) {
  ReadRecords();
  if (full)
    for (WatchedFile& f : files_) f.seen = false;
  if (full) {
    // CMD's descendants, and the orphans writelab (their subreaper) took in.
    for (pid_t pid : Descendants(getpid()))
      if (pid != getpid()) Scan(pid);
  } else {
    // CMD and the processes seen alive (a shell that ran 3,000 commands
    // has 3,000 dead ones: asking after each at every look cost more than
    // the commands).
    std::vector<pid_t> known = {root_};
    for (pid_t pid : live_)
      if (pid != root_) known.push_back(pid);
    for (pid_t pid : known) Scan(pid);
  }
  ReleaseUnused(full);
  // direct needs the writer's own calls: nothing for the supervisor to do.
  if (spec_.strategy == RunStrategy::kPlain || spec_.strategy == RunStrategy::kDirect) return;
  for (WatchedFile& f : files_) {
    if (f.shim_claimed && !f.supervised && !f.shim_left) continue;
    if (!Grown(f, spec_.min_file)) continue;
    // Past --min-file and not the shim's at two looks in a row: the shim
    // would have claimed it within the write that crossed.
    if (!f.supervised && ++f.unclaimed_looks < 2) continue;
    Supervise(f);
  }
}

void Supervisor::Finish() {
  ReadRecords();
  if (spec_.strategy == RunStrategy::kPlain || spec_.strategy == RunStrategy::kDirect) return;
  for (WatchedFile& f : files_) {
    if (f.shim_claimed && !f.supervised && !f.shim_left) continue;
    if (FdOf(f) < 0) continue;
    struct stat st;
    if (fstat(f.fd.get(), &st) == 0) Note(f, st);
    if (Grown(f, spec_.min_file)) Conclude(f);
  }
}

}  // namespace writelab
