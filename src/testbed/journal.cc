// SPDX-License-Identifier: MIT
#include "testbed/journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <libmount/libmount.h>
#include <linux/loop.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <nlohmann/json.hpp>

#include "io/file.h"
#include "io/own_files.h"
#include "io/trusted_dir.h"
#include "telemetry/procfs.h"
#include "testbed/cgroup.h"

namespace writelab {
namespace {

using nlohmann::json;

// Fields of /proc/PID/stat after the command name: index 0 is field 3.
std::vector<std::string_view> StatFields(const std::string& text) {
  std::vector<std::string_view> fields;
  size_t pos = text.rfind(')');
  if (pos == std::string::npos) return fields;
  std::string_view rest(text.c_str() + pos + 1);
  while (!rest.empty()) {
    size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  return fields;
}

// Loop: detach only while the device still has the backing file and inode
// the journal recorded; it may be another run's now.
Status UndoLoop(const UndoStep& s, std::string& left) {
  std::string name = s.path.substr(s.path.find_last_of('/') + 1);
  auto backing = ReadLine("/sys/block/" + name + "/loop/backing_file");
  if (!backing || *backing != s.value) return {};  // detached already, or someone else's now
  auto fd = OpenFile(s.path, O_RDONLY | O_NOFOLLOW);
  if (!fd) return std::unexpected(fd.error());
  if (!s.check.empty()) {
    loop_info64 info{};
    if (ioctl(fd->get(), LOOP_GET_STATUS64, &info) != 0) return {};  // detached meanwhile
    if (std::to_string(info.lo_inode) != s.check) {                  // a new file, same name
      left = "it backs another inode now";
      return {};
    }
  }
  if (ioctl(fd->get(), LOOP_CLR_FD, 0) != 0 && errno != ENXIO)
    return std::unexpected(ErrnoError(errno, "detach " + s.path));
  return {};
}

// The source mounted last at target ("" when nothing is).
std::string MountedSource(const std::string& target) {
  libmnt_table* tb = mnt_new_table_from_file("/proc/self/mountinfo");
  if (!tb) return "";
  libmnt_fs* fs = mnt_table_find_target(tb, target.c_str(), MNT_ITER_BACKWARD);
  const char* src = fs ? mnt_fs_get_source(fs) : nullptr;
  std::string out = src ? src : "";
  mnt_unref_table(tb);
  return out;
}

Status UndoMount(const UndoStep& s, std::string& left) {
  if (!s.check.empty()) {
    std::string source = MountedSource(s.path);
    if (source.empty()) return {};  // not mounted
    if (source != s.check) {
      left = source + " is mounted there now";
      return {};
    }
  }
  if (umount2(s.path.c_str(), UMOUNT_NOFOLLOW) == 0 || errno == EINVAL || errno == ENOENT)
    return {};
  if (errno == EBUSY && umount2(s.path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0) return {};
  return std::unexpected(ErrnoError(errno, "unmount " + s.path));
}

// Whose a loop device's knob is now, against the step's "loop:INODE".
enum class LoopOwner { kOurs, kUnbound, kTheirs };
LoopOwner SysfsLoopOwner(const UndoStep& s) {
  if (s.check.starts_with("diskseq:")) {  // another disk's knob: the same disk still?
    auto seq = ReadLine("/sys/block/" + SysfsDevice(s.path) + "/diskseq");
    return seq && "diskseq:" + *seq == s.check ? LoopOwner::kOurs : LoopOwner::kTheirs;
  }
  if (!s.check.starts_with("loop:")) return LoopOwner::kOurs;
  std::string dev = SysfsDevice(s.path);
  auto fd = OpenFile("/dev/" + dev, O_RDONLY | O_NOFOLLOW);
  if (!fd) return LoopOwner::kTheirs;  // no such device to restore: nothing to do either way
  loop_info64 info{};
  if (ioctl(fd->get(), LOOP_GET_STATUS64, &info) != 0)
    // ENXIO: nothing is bound. The run that set the knob died and
    // LO_FLAGS_AUTOCLEAR let the device go; nobody took it since, so the
    // knob is still the run's change and goes back to what it was.
    return errno == ENXIO ? LoopOwner::kUnbound : LoopOwner::kTheirs;
  return "loop:" + std::to_string(info.lo_inode) == s.check ? LoopOwner::kOurs : LoopOwner::kTheirs;
}

Status UndoSysfs(const UndoStep& s, std::string& left, std::string& note) {
  if (SysfsDevice(s.path).empty())
    return std::unexpected(PlainError("refused to write " + s.path + ": not a knob writelab sets"));
  const LoopOwner owner = SysfsLoopOwner(s);
  if (owner == LoopOwner::kTheirs) {
    left = "the device backs another inode now";
    return {};
  }
  int fd = ::open(s.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return errno == ENOENT ? Status{} : std::unexpected(ErrnoError(errno, "open " + s.path));
  UniqueFd guard(fd);
  if (write(fd, s.value.data(), s.value.size()) < 0)
    return std::unexpected(ErrnoError(errno, "restore " + s.path + " to " + s.value));
  if (owner == LoopOwner::kUnbound)
    note = "restored to '" + s.value + "' on the unbound " + SysfsDevice(s.path);
  return {};
}

// A background command's process group: path is the group id, value the
// leader's start time. Members started before the leader are not ours.
Status UndoProcessGroup(const UndoStep& s, std::string& left) {
  auto pgid = ParseUnsigned(s.path);
  auto start = ParseUnsigned(s.value);
  if (!pgid || !start || *pgid < 2 || *pgid > INT_MAX)
    return std::unexpected(PlainError("bad process group step " + s.path));
  // A process with the group's id that started at another time means the
  // id was free and has been reused (the kernel never hands out an id that
  // a group still holds): that group is someone else's.
  if (unsigned long long leader = ProcessStartTime(static_cast<int>(*pgid));
      leader != 0 && leader != *start) {
    left = "the group id belongs to another process now";
    return {};
  }
  DIR* d = opendir("/proc");
  if (!d) return std::unexpected(ErrnoError(errno, "open /proc"));
  while (dirent* e = readdir(d)) {
    auto pid = ParseUnsigned(e->d_name);
    if (!pid || *pid > INT_MAX) continue;
    auto stat = ReadSmallFile("/proc/" + std::string(e->d_name) + "/stat");
    if (!stat) continue;
    auto f = StatFields(*stat);
    if (f.size() < 20 || ParseUnsigned(f[2]) != *pgid) continue;
    auto started = ParseUnsigned(f[19]);
    if (started && *started >= *start && (*pid != *pgid || *started == *start))
      kill(static_cast<pid_t>(*pid), SIGKILL);
  }
  closedir(d);
  return {};
}

// "inode:DEV:INO", the check of an experiment's own file.
std::string InodeCheck(uint64_t device, uint64_t inode) {
  return "inode:" + std::to_string(device) + ":" + std::to_string(inode);
}

// A file step: unlinked only while path is still the regular file journaled
// (its inode, when the step has a check), never another file by that name.
Status UndoFile(const UndoStep& s, std::string& left) {
  if (!s.check.empty()) {
    struct stat st;
    if (lstat(s.path.c_str(), &st) != 0) {
      if (errno == ENOENT) return {};
      return std::unexpected(ErrnoError(errno, "stat " + s.path));
    }
    if (!S_ISREG(st.st_mode) ||
        InodeCheck(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)) != s.check) {
      left = "it is another file now";
      return {};
    }
  }
  if (unlink(s.path.c_str()) == 0 || errno == ENOENT) return {};
  return std::unexpected(ErrnoError(errno, "remove " + s.path));
}

bool ValidPath(std::string_view p) {
  if (!p.starts_with('/') || p.find("/../") != std::string_view::npos || p.ends_with("/..") ||
      p.find('\0') != std::string_view::npos)
    return false;
  return true;
}

std::optional<int> PositiveInt(const json& j) {
  if (j.is_number_unsigned() && j.get<uint64_t>() >= 1 && j.get<uint64_t>() <= INT_MAX)
    return static_cast<int>(j.get<uint64_t>());
  if (j.is_number_integer() && j.get<int64_t>() >= 1 && j.get<int64_t>() <= INT_MAX)
    return static_cast<int>(j.get<int64_t>());
  return std::nullopt;
}

}  // namespace

std::optional<unsigned long long> ParseUnsigned(std::string_view s) {
  unsigned long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string SysfsDevice(std::string_view path) {
  // /sys/block/DEV/queue/KNOB or /sys/fs/ext4/DEV/KNOB, names without
  // slashes, dots or anything a shell or a path could misread.
  auto name_ok = [](std::string_view n) {
    if (n.empty() || n.size() > 64 || n == "." || n == "..") return false;
    for (char c : n)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
            c == ':'))
        return false;
    return true;
  };
  for (std::string_view prefix : {"/sys/block/", "/sys/fs/ext4/"}) {
    if (!path.starts_with(prefix)) continue;
    std::string_view rest = path.substr(prefix.size());
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return "";
    std::string_view dev = rest.substr(0, slash), knob = rest.substr(slash + 1);
    if (prefix == "/sys/block/") {
      // A disk's writeback limits (a test bed's dirty=SIZE, fsync's
      // bdi=SIZE): its bdi's max_ratio_fine and strict_limit, reached
      // through /sys/block/DEV/bdi.
      bool bdi = knob == "bdi/max_ratio_fine" || knob == "bdi/strict_limit";
      if (!bdi && !knob.starts_with("queue/")) return "";
      knob.remove_prefix(bdi ? 4 : 6);
    }
    if (!name_ok(dev) || !name_ok(knob)) return "";
    return std::string(dev);
  }
  return "";
}

std::expected<JournalLine, std::string> ParseJournalLine(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::unexpected("not a JSON object");
  JournalLine line;
  if (j.contains("done")) {
    auto done = PositiveInt(j["done"]);
    if (!done || j.size() != 1) return std::unexpected("\"done\" must be a step id alone");
    line.done = *done;
    return line;
  }
  auto id = j.contains("id") ? PositiveInt(j["id"]) : std::nullopt;
  if (!id) return std::unexpected("\"id\" must be a positive integer");
  line.id = *id;
  for (const char* key : {"op", "path", "value", "check"}) {
    if (!j.contains(key)) {
      if (std::string_view(key) == "check") continue;  // journals before 0.2 have none
      return std::unexpected(std::string("\"") + key + "\" is missing");
    }
    if (!j[key].is_string())
      return std::unexpected(std::string("\"") + key + "\" must be a string");
  }
  UndoStep& s = line.step;
  s = {j["op"], j["path"], j["value"], j.value("check", "")};
  static constexpr std::string_view kOps[] = {"file",  "dir",    "loop",   "mount",
                                              "sysfs", "pgroup", "cgroup", "cgroup-subtree"};
  if (std::find(std::begin(kOps), std::end(kOps), s.op) == std::end(kOps))
    return std::unexpected("unknown op \"" + s.op + "\"");
  if (s.op == "pgroup") {
    if (!ParseUnsigned(s.path) || !ParseUnsigned(s.value))
      return std::unexpected("a pgroup step needs a group id and a start time");
  } else if (!ValidPath(s.path)) {
    return std::unexpected("\"path\" must be an absolute path without ..");
  }
  if (s.op == "file" && !s.check.empty()) {  // "inode:DEV:INO"
    std::string_view c = s.check;
    const size_t colon = c.find(':', 6);
    if (!c.starts_with("inode:") || colon == std::string_view::npos ||
        !ParseUnsigned(c.substr(6, colon - 6)) || !ParseUnsigned(c.substr(colon + 1)))
      return std::unexpected("a file step's check is inode:DEVICE:INODE");
  }
  if (s.op == "sysfs" && SysfsDevice(s.path).empty())
    return std::unexpected("sysfs path " + s.path +
                           " is outside /sys/block/*/queue, /sys/block/loop*/bdi and "
                           "/sys/fs/ext4/*");
  // A loop device's writeback limits are restored only onto the same image.
  if (s.op == "sysfs" && s.path.find("/bdi/") != std::string::npos &&
      !s.check.starts_with(SysfsDevice(s.path).starts_with("loop") ? "loop:" : "diskseq:"))
    return std::unexpected(
        "a bdi step needs its \"check\" (loop:INODE for a loop device, diskseq:N for a disk)");
  if (s.op == "loop" && !s.path.starts_with("/dev/loop"))
    return std::unexpected("a loop step must name a /dev/loopN");
  if (s.op.starts_with("cgroup"))
    if (std::string why = CgroupStepProblem(s); !why.empty()) return std::unexpected(why);
  return line;
}

Status Undo(const UndoStep& s, std::string* left_alone, std::string* note) {
  std::string unused, unused_note;
  std::string& left = left_alone ? *left_alone : unused;
  if (s.op == "file") return UndoFile(s, left);
  if (s.op == "dir") {
    if (rmdir(s.path.c_str()) == 0 || errno == ENOENT) return {};
    return std::unexpected(ErrnoError(errno, "remove directory " + s.path));
  }
  if (s.op == "loop") return UndoLoop(s, left);
  if (s.op == "mount") return UndoMount(s, left);
  if (s.op == "sysfs") return UndoSysfs(s, left, note ? *note : unused_note);
  if (s.op == "pgroup") return UndoProcessGroup(s, left);
  if (s.op == "cgroup") return UndoCgroup(s);
  if (s.op == "cgroup-subtree") return UndoCgroupSubtree(s);
  return std::unexpected(PlainError("unknown undo step '" + s.op + "'"));
}

OwnFilesJournaled::OwnFilesJournaled(UndoJournal* journal) {
  if (!journal) return;
  set_ = true;
  SetOwnFileJournal({[journal](const std::string& path, uint64_t device, uint64_t inode) {
                       auto id = journal->Record({"file", path, "", InodeCheck(device, inode)});
                       return id ? *id : 0;  // not journaled: only a kill -9 would leave it
                     },
                     [journal](int id) { journal->Done(id); }});
}

OwnFilesJournaled::~OwnFilesJournaled() {
  if (set_) SetOwnFileJournal({});
}

unsigned long long ProcessStartTime(int pid) {
  auto stat = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return 0;
  auto f = StatFields(*stat);
  return f.size() >= 20 ? ParseUnsigned(f[19]).value_or(0) : 0;
}

Result<std::unique_ptr<UndoJournal>> UndoJournal::Open(const std::string& dir) {
  auto dir_fd = OpenTrustedDir(dir, DirUse::kPrivate, true);
  if (!dir_fd) return std::unexpected(dir_fd.error());
  std::string name =
      "journal-" + std::to_string(getpid()) + "-" + std::to_string(ProcessStartTime(getpid()));
  std::string path = dir + "/" + name;
  int fd = openat(dir_fd->get(), name.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "create " + path));
  return std::unique_ptr<UndoJournal>(new UndoJournal(path, std::move(*dir_fd), UniqueFd(fd)));
}

UndoJournal::~UndoJournal() {
  if (pending_ == 0) unlinkat(dir_.get(), path_.substr(path_.find_last_of('/') + 1).c_str(), 0);
}

Status UndoJournal::Append(const std::string& line) {
  std::string text = line + "\n";
  if (write(fd_.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return std::unexpected(ErrnoError(errno ? errno : EIO, "write " + path_));
  if (fdatasync(fd_.get()) != 0) return std::unexpected(ErrnoError(errno, "fdatasync " + path_));
  return {};
}

Result<int> UndoJournal::Record(const UndoStep& step) {
  int id = next_id_++;
  json j = {{"id", id},
            {"op", step.op},
            {"path", step.path},
            {"value", step.value},
            {"check", step.check}};
  if (Status s = Append(j.dump()); !s) return std::unexpected(s.error());
  ++pending_;
  return id;
}

void UndoJournal::Done(int id) {
  if (Append(json{{"done", id}}.dump())) --pending_;
}

Status UndoJournal::LockDevice(const std::string& device) {
  Held& held = locks_[device];
  if (held.count++ > 0) return {};
  std::string name = "lock-" + device;
  int fd = openat(dir_.get(), name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
    held.fd.Reset(fd);
    if (Status s = UndoDeadRunsOn(dir_.get(), dir(), device); !s) {
      locks_.erase(device);  // closing unlocks
      return s;
    }
    return {};
  }
  int err = errno;
  if (fd >= 0) close(fd);
  locks_.erase(device);
  if (err == EWOULDBLOCK)
    return std::unexpected(PlainError("another writelab run is changing " + device +
                                      "'s settings (it holds " + ParentDir(path_) + "/" + name +
                                      "); try again when it ends"));
  return std::unexpected(ErrnoError(err, "lock " + ParentDir(path_) + "/" + name));
}

void UndoJournal::UnlockDevice(const std::string& device) {
  auto it = locks_.find(device);
  if (it != locks_.end() && --it->second.count == 0) locks_.erase(it);  // closing unlocks
}

}  // namespace writelab
