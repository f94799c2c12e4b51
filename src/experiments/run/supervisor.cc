// SPDX-License-Identifier: MIT
#include "experiments/run/supervisor.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "experiments/child.h"
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

// Whether /proc/PID/fdinfo/N says the descriptor may write.
bool OpenForWriting(const std::string& fdinfo) {
  auto text = ReadSmallFile(fdinfo);
  if (!text) return false;
  const size_t at = text->find("flags:");
  if (at == std::string::npos) return false;
  const unsigned long flags = std::strtoul(text->c_str() + at + 6, nullptr, 8);
  return (flags & O_ACCMODE) != O_RDONLY;
}

}  // namespace

int SuperviseRange(RunStrategy s, uint64_t window, int fd, WritebackWindow& w, uint64_t from,
                   uint64_t size, const char** what) {
  FdWindowCalls calls(fd);
  *what = "posix_fadvise";
  if (s == RunStrategy::kDropBehind) return size > window ? calls.DropCache(0, size - window) : 0;
  return size > from ? w.AfterWrite(calls, from, size - from, what) : 0;
}

Supervisor::Supervisor(const RunSpec& spec, pid_t root, int report, uint64_t start_ns)
    : spec_(spec), root_(root), report_(report), start_ns_(start_ns) {}

WatchedFile* Supervisor::Find(uint64_t dev, uint64_t ino) {
  auto it = index_.find({dev, ino});
  return it == index_.end() ? nullptr : &files_[it->second];
}

WatchedFile& Supervisor::Add(uint64_t dev, uint64_t ino, const std::string& path, int fd) {
  index_[{dev, ino}] = files_.size();
  WatchedFile& f = files_.emplace_back();
  f.dev = dev, f.ino = ino, f.path = path;
  if (fd >= 0) {
    f.fd.Reset(fd);
    struct stat st;
    if (fstat(fd, &st) == 0) f.first_size = f.size = static_cast<uint64_t>(st.st_size);
    f.created = BornSince(fd, start_ns_);
  }
  f.window = WritebackWindow(spec_.window, spec_.strategy != RunStrategy::kWindow);
  // A file that was there before CMD: only what it grows by is CMD's to
  // window (its cached pages below are not the run's to drop).
  f.base = f.created ? 0 : f.first_size;
  f.supervised_bytes = f.base;
  f.window.MarkDropped(f.base);
  return f;
}

void Supervisor::Take(const ShimRecord& r) {
  if (r.type == ShimRecord::Type::kHello) {
    shimmed_.insert(r.pid);
    processes_[r.pid] = r.path;
    return;
  }
  WatchedFile* f = Find(r.dev, r.ino);
  if (!f) {
    // A file the supervisor has not seen open (closed between two looks):
    // opened by its path, for its page cache, only if it is the same inode.
    int fd = open(r.path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 &&
        (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_dev) != r.dev || st.st_ino != r.ino)) {
      close(fd);
      fd = -1;
    }
    f = &Add(r.dev, r.ino, r.path, fd);
  }
  if (std::find(f->writers.begin(), f->writers.end(), r.pid) == f->writers.end())
    f->writers.push_back(r.pid);
  if (r.type == ShimRecord::Type::kUnseen) return;  // the supervisor's, like any file it sees
  if (r.type == ShimRecord::Type::kClaim) {
    f->shim_claimed = true;
    return;
  }
  f->shim_written += r.written;
  f->shim_handled += r.handled;
  if (r.mech != "small" && r.mech != "plain") f->shim_claimed = true;
  if (f->shim_mech.empty() || f->shim_mech == "small") f->shim_mech = r.mech;
}

void Supervisor::ReadRecords() {
  if (report_ < 0) return;
  char buf[16384];
  std::vector<ShimRecord> records;
  for (;;) {
    const ssize_t n = read(report_, buf, sizeof buf);
    if (n <= 0) break;
    reader_.Feed({buf, static_cast<size_t>(n)}, records, record_errors_);
  }
  for (const ShimRecord& r : records) Take(r);
}

void Supervisor::Scan(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  if (!processes_.count(pid)) {
    std::error_code ec;
    processes_[pid] = std::filesystem::read_symlink(proc + "/exe", ec).string();
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(proc + "/fd", ec)) {
    struct stat st;
    if (stat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const std::string fdinfo = proc + "/fdinfo/" + e.path().filename().string();
    if (!OpenForWriting(fdinfo)) continue;
    WatchedFile* f = Find(static_cast<uint64_t>(st.st_dev), st.st_ino);
    if (!f) {
      std::error_code rc;
      const std::string path = std::filesystem::read_symlink(e.path(), rc).string();
      if (!spec_.path_glob.empty() && fnmatch(spec_.path_glob.c_str(), path.c_str(), 0) != 0)
        continue;
      const int fd = open(e.path().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      f = &Add(static_cast<uint64_t>(st.st_dev), st.st_ino, path, fd);
    }
    if (std::find(f->writers.begin(), f->writers.end(), pid) == f->writers.end())
      f->writers.push_back(pid);
    if (f->fd) {
      struct stat now;
      if (fstat(f->fd.get(), &now) == 0) f->size = static_cast<uint64_t>(now.st_size);
    }
  }
}

void Supervisor::Supervise(WatchedFile& f) {
  if (!f.fd || !f.supervisor_error.empty()) return;
  const char* what = "";
  if (int rc = SuperviseRange(spec_.strategy, spec_.window, f.fd.get(), f.window,
                              f.supervised_bytes, f.size, &what);
      rc < 0) {
    f.supervisor_error = std::string(what) + ": " + std::strerror(-rc);
    return;
  }
  f.supervised = true;
  f.supervised_bytes = std::max(f.supervised_bytes, f.size);
}

void Supervisor::Poll(bool full) {
  ReadRecords();
  if (full) {
    for (pid_t pid : Descendants(root_)) Scan(pid);
  } else {
    std::vector<pid_t> known = {root_};
    for (const auto& [pid, exe] : processes_)
      if (pid != root_) known.push_back(pid);
    for (pid_t pid : known) Scan(pid);
  }
  if (spec_.strategy == RunStrategy::kPlain) return;
  for (WatchedFile& f : files_) {
    if (f.shim_claimed && !f.supervised) continue;
    if (f.size < spec_.min_file) continue;
    // Past --min-file and not the shim's at two looks in a row: the shim
    // would have claimed it within the write that crossed.
    if (!f.supervised && ++f.unclaimed_looks < 2) continue;
    Supervise(f);
  }
}

void Supervisor::Finish() {
  ReadRecords();
  if (spec_.strategy == RunStrategy::kPlain) return;
  for (WatchedFile& f : files_) {
    if (!f.fd) continue;
    struct stat st;
    if (fstat(f.fd.get(), &st) == 0) f.size = static_cast<uint64_t>(st.st_size);
    if (f.shim_claimed && !f.supervised) continue;
    if (f.size < spec_.min_file) continue;
    Supervise(f);
    if (!f.supervised || !f.supervisor_error.empty()) continue;
    FdWindowCalls calls(f.fd.get());
    const char* what = "";
    const int rc = spec_.strategy == RunStrategy::kDropBehind
                       ? calls.DropCache(0, 0)
                       : f.window.Finish(calls, f.size, &what);
    if (rc < 0) f.supervisor_error = std::string(what) + ": " + std::strerror(-rc);
  }
}

}  // namespace writelab
