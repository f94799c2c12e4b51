// SPDX-License-Identifier: MIT
// What dead runs left, undone from their journals: `writelab cleanup`
// (CleanupStale), and a live run about to change a device a dead run left
// changed (UndoDeadRunsOn, called by UndoJournal::LockDevice).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <map>

#include "io/trusted_dir.h"
#include "testbed/cgroup.h"
#include "testbed/journal.h"

namespace writelab {
namespace {

constexpr size_t kMaxJournalBytes = 1 << 20;  // a run records a few dozen steps

struct JournalContents {
  std::vector<std::pair<int, UndoStep>> pending;  // id and step, in the order recorded
  std::vector<std::string> malformed;             // "PATH line N: why"
};

// Reads a journal through dir_fd, refusing anything but a regular file of
// ours (a link planted in its place, or another user's file).
Result<JournalContents> ReadJournal(int dir_fd, const std::string& name, const std::string& path) {
  int raw = openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (raw < 0) return std::unexpected(ErrnoError(errno, "open " + path));
  UniqueFd fd(raw);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + path));
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
    return std::unexpected(PlainError(path + ": not a journal of this user's (refused)"));
  if (static_cast<uint64_t>(st.st_size) > kMaxJournalBytes)
    return std::unexpected(PlainError(path + ": larger than 1 MiB (refused)"));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = pread(fd.get(), text.data(), text.size(), 0);
  if (n < 0) return std::unexpected(ErrnoError(errno, "read " + path));
  text.resize(static_cast<size_t>(n));
  JournalContents out;
  std::map<int, UndoStep> open;
  size_t pos = 0;
  for (int number = 1; pos < text.size(); ++number) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    auto parsed = ParseJournalLine(line);
    if (!parsed) {
      out.malformed.push_back(path + " line " + std::to_string(number) + ": " + parsed.error());
    } else if (parsed->done) {
      open.erase(parsed->done);
    } else {
      open[parsed->id] = std::move(parsed->step);
    }
  }
  for (auto& [id, step] : open) out.pending.emplace_back(id, std::move(step));
  return out;
}

// A journal name's PID and start time ("journal-PID-START"; older
// journals have no start time: 0).
std::optional<std::pair<int, unsigned long long>> JournalOwner(std::string_view name) {
  if (!name.starts_with("journal-")) return std::nullopt;
  name.remove_prefix(8);
  size_t dash = name.find('-');
  auto pid = ParseUnsigned(name.substr(0, dash));
  auto start = dash == std::string_view::npos ? std::optional<unsigned long long>(0)
                                              : ParseUnsigned(name.substr(dash + 1));
  if (!pid || !start || *pid < 1 || *pid > INT_MAX) return std::nullopt;
  return std::pair{static_cast<int>(*pid), *start};
}

bool RunIsAlive(int pid, unsigned long long start) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  // An old journal (no start time) with our own PID is a dead run's.
  return start == 0 ? pid != getpid() : ProcessStartTime(pid) == start;
}

// The lock a step's undo needs: its device's, cgroups' for a cgroup step;
// "" for none.
std::string LockOf(const UndoStep& s) {
  if (s.op == "sysfs") return SysfsDevice(s.path);
  if (s.op.starts_with("cgroup")) return std::string(kCgroupLock);
  return "";
}

// True when a live run holds the lock of the device the step changes (for
// a cgroup step: the lock of cgroups).
bool DeviceHeldByLiveRun(int dir_fd, const UndoStep& s) {
  const std::string dev = LockOf(s);
  if (dev.empty()) return false;
  UniqueFd fd(openat(dir_fd, ("lock-" + dev).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  return fd && flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

// The names of the journals in dir_fd whose runs are dead, sorted (and in
// *live those of live runs).
Result<std::vector<std::string>> DeadJournals(int dir_fd, const std::string& dir,
                                              std::vector<std::string>* live = nullptr) {
  std::vector<std::string> names;
  const int listing = dup(dir_fd);
  DIR* d = listing >= 0 ? fdopendir(listing) : nullptr;
  if (!d) {
    const int err = errno;
    if (listing >= 0) close(listing);
    return std::unexpected(ErrnoError(err, "list " + dir));
  }
  while (dirent* e = readdir(d)) {
    auto owner = JournalOwner(e->d_name);
    if (!owner) continue;
    if (!RunIsAlive(owner->first, owner->second))
      names.emplace_back(e->d_name);
    else if (live)
      live->emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  if (live) std::sort(live->begin(), live->end());
  return names;
}

// Marks steps of a dead run's journal done, as the run itself would have.
Status MarkDone(int dir_fd, const std::string& name, const std::vector<int>& ids) {
  UniqueFd fd(openat(dir_fd, name.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return std::unexpected(ErrnoError(errno, "open " + name));
  std::string lines;
  for (int id : ids) lines += "{\"done\":" + std::to_string(id) + "}\n";
  if (write(fd.get(), lines.data(), lines.size()) != static_cast<ssize_t>(lines.size()) ||
      fdatasync(fd.get()) != 0)
    return std::unexpected(ErrnoError(errno ? errno : EIO, "write " + name));
  return {};
}

void UndoJournalFile(int dir_fd, const std::string& name, const std::string& path,
                     CleanupReport& report) {
  auto contents = ReadJournal(dir_fd, name, path);
  if (!contents && contents.error().code == ENOENT) return;  // its writelab just finished
  if (!contents) return report.errors.push_back(contents.error().Message());
  for (const std::string& m : contents->malformed) report.skipped.push_back(m);
  // The journal is kept while a step is left to do: one that failed, or one
  // skipped for a live run's lock (its run may read the dead run's value as
  // its "before"; the step is undone when it takes the lock, or by a later
  // cleanup).
  bool keep = false;
  auto undo = [&](const UndoStep& step) {
    if (DeviceHeldByLiveRun(dir_fd, step)) {
      report.skipped.push_back(step.op + " " + step.path + " (a live writelab run holds " +
                               LockOf(step) + " now; the journal is kept)");
      keep = true;
      return;
    }
    std::string left, note;
    if (Status s = Undo(step, &left, &note); !s) {
      report.errors.push_back(s.error().Message());
      keep = true;
    } else if (!left.empty()) {
      report.skipped.push_back(step.op + " " + step.path + " (not writelab's: " + left + ")");
    } else {
      report.undone.push_back(step.op + " " + step.path + (note.empty() ? "" : " (" + note + ")"));
    }
  };
  // Device settings first, newest first, while a test bed's loop device is
  // still mounted and so still bound to its image: unmounting lets an
  // autoclear loop device go, and another program that binds it before its
  // settings are restored would keep them (the step would be theirs then).
  auto& pending = contents->pending;
  for (auto it = pending.rbegin(); it != pending.rend(); ++it)
    if (it->second.op == "sysfs") undo(it->second);
  for (auto it = pending.rbegin(); it != pending.rend(); ++it)
    if (it->second.op != "sysfs") undo(it->second);
  if (!keep) unlinkat(dir_fd, name.c_str(), 0);
}

}  // namespace

Status UndoDeadRunsOn(int dir_fd, const std::string& dir, const std::string& lock) {
  auto dead = DeadJournals(dir_fd, dir);
  if (!dead) return std::unexpected(dead.error());
  for (const std::string& name : *dead) {
    const std::string path = dir + "/" + name;
    auto contents = ReadJournal(dir_fd, name, path);
    if (!contents) continue;  // cleanup reports it
    std::vector<int> done;
    for (auto it = contents->pending.rbegin(); it != contents->pending.rend(); ++it) {
      if (LockOf(it->second) != lock) continue;
      if (Status s = Undo(it->second); !s)
        return std::unexpected(PlainError("a dead writelab run (" + path + ") left " + lock +
                                          "'s settings changed, and undoing it failed (" +
                                          s.error().Message() +
                                          "): run writelab cleanup, then again"));
      done.push_back(it->first);
    }
    if (done.empty()) continue;
    if (Status s = MarkDone(dir_fd, name, done); !s) return s;
    if (done.size() == contents->pending.size()) unlinkat(dir_fd, name.c_str(), 0);
  }
  return {};
}

Result<CleanupReport> CleanupStale(const std::string& dir) {
  auto dir_fd = OpenTrustedDir(dir, DirUse::kPrivate, false);
  if (!dir_fd) return std::unexpected(dir_fd.error());
  CleanupReport report;
  std::vector<std::string> live;
  auto dead = DeadJournals(dir_fd->get(), dir, &live);
  if (!dead) return std::unexpected(dead.error());
  for (const std::string& name : live) {
    auto owner = JournalOwner(name);
    report.skipped.push_back(dir + "/" + name + " (writelab " + std::to_string(owner->first) +
                             " is still running)");
  }
  for (const std::string& name : *dead)
    UndoJournalFile(dir_fd->get(), name, dir + "/" + name, report);
  return report;
}

}  // namespace writelab
