// SPDX-License-Identifier: MIT
#include "testbed/cgroup.h"

#include <fcntl.h>
#include <libmount/libmount.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <sstream>

#include "core/clock.h"
#include "telemetry/procfs.h"

namespace writelab {
namespace {

// A cgroup mount (v2, or a v1 hierarchy): its mount point and the cgroup it
// shows as its root.
struct CgroupMount {
  std::string target, fs_root;
};

std::optional<CgroupMount> FindCgroupMount() {
  libmnt_table* tb = mnt_new_table_from_file("/proc/self/mountinfo");
  if (!tb) return std::nullopt;
  libmnt_iter* it = mnt_new_iter(MNT_ITER_FORWARD);
  libmnt_fs* fs = nullptr;
  std::optional<CgroupMount> out;
  while (!out && it && mnt_table_next_fs(tb, it, &fs) == 0) {
    const char* type = mnt_fs_get_fstype(fs);
    if (!type || std::string_view(type) != "cgroup2" || !mnt_fs_get_target(fs)) continue;
    const char* root = mnt_fs_get_root(fs);
    out = CgroupMount{mnt_fs_get_target(fs), root ? root : "/"};
  }
  mnt_free_iter(it);
  mnt_unref_table(tb);
  return out;
}

// The cgroup of pid in the hierarchy whose /proc/PID/cgroup line has
// controllers ("" for cgroup v2's "0::/a/b", "memory" for v1's
// "4:memory:/a/b"), "" if none.
std::string CgroupOf(const std::string& pid, std::string_view controller = "") {
  std::istringstream lines(ReadSmallFile("/proc/" + pid + "/cgroup").value_or(""));
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string names = "," + line.substr(a + 1, b - a - 1) + ",";
    const bool match = controller.empty()
                           ? line.starts_with("0::")
                           : names.find("," + std::string(controller) + ",") != std::string::npos;
    if (match) return line.substr(b + 1);
  }
  return "";
}

// Whether the kernel places pid in the cgroup at dir, in any hierarchy.
bool PlacedIn(const std::string& pid, const std::string& dir) {
  std::istringstream lines(ReadSmallFile("/proc/" + pid + "/cgroup").value_or(""));
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string in = line.substr(b + 1);
    if (in.size() > 1 && in.starts_with('/') && dir.ends_with(in)) return true;
  }
  return false;
}

Status WriteTo(const std::string& path, const std::string& value, int extra_flags = 0) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | extra_flags);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n < 0) return std::unexpected(ErrnoError(err, "write '" + value + "' to " + path));
  return {};
}

// A member that the kernel places in the cgroup at dir is killed: never
// pid 1, never the caller, never a process listed in a file that only
// looks like a cgroup's.
void KillMembers(const std::string& dir) {
  if (WriteTo(dir + "/cgroup.kill", "1")) return;  // Linux 5.14: the kernel kills them all
  std::istringstream pids(ReadSmallFile(dir + "/cgroup.procs").value_or(""));
  for (std::string pid; pids >> pid;) {
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
    const int id = std::stoi(pid);
    if (id <= 1 || id == getpid()) continue;
    if (PlacedIn(pid, dir)) kill(id, SIGKILL);
  }
}

bool IsCgroupName(std::string_view name) {  // writelab-PID-N
  if (!name.starts_with("writelab-")) return false;
  name.remove_prefix(9);
  const size_t dash = name.find('-');
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 10 &&
           s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return dash != std::string_view::npos && digits(name.substr(0, dash)) &&
         digits(name.substr(dash + 1));
}

}  // namespace

bool ListsController(std::string_view list, std::string_view name) {
  std::istringstream words{std::string(list)};
  for (std::string w; words >> w;)
    if (w == name) return true;
  return false;
}

Result<CgroupPlace> FindCgroupPlace() {
  auto mount = FindCgroupMount();
  if (!mount) return std::unexpected(ErrnoError(ENOENT, "no cgroup v2 hierarchy is mounted"));
  std::string own = CgroupOf("self");
  if (own.empty())
    return std::unexpected(ErrnoError(ENOENT, "/proc/self/cgroup has no cgroup v2 line"));
  // A mount of a cgroup below the hierarchy's root shows that cgroup as its root.
  if (mount->fs_root != "/") {
    if (!own.starts_with(mount->fs_root))
      return std::unexpected(
          ErrnoError(ENOENT, "writelab's cgroup " + own + " is not under " + mount->target));
    own = own.substr(mount->fs_root.size());
    if (own.empty()) own = "/";
  }
  return CgroupPlace{mount->target, own};
}

Result<CgroupPlace> FindV1CgroupPlace(std::string_view controller) {
  libmnt_table* tb = mnt_new_table_from_file("/proc/self/mountinfo");
  if (!tb) return std::unexpected(ErrnoError(ENOENT, "/proc/self/mountinfo cannot be read"));
  libmnt_iter* it = mnt_new_iter(MNT_ITER_FORWARD);
  libmnt_fs* fs = nullptr;
  std::optional<CgroupMount> mount;
  const std::string option(controller);
  while (!mount && it && mnt_table_next_fs(tb, it, &fs) == 0) {
    const char* type = mnt_fs_get_fstype(fs);
    if (!type || std::string_view(type) != "cgroup" || !mnt_fs_get_target(fs)) continue;
    if (mnt_fs_get_option(fs, option.c_str(), nullptr, nullptr) != 0) continue;
    const char* root = mnt_fs_get_root(fs);
    mount = CgroupMount{mnt_fs_get_target(fs), root ? root : "/"};
  }
  mnt_free_iter(it);
  mnt_unref_table(tb);
  if (!mount)
    return std::unexpected(
        ErrnoError(ENOENT, "no cgroup v1 hierarchy has the " + option + " controller"));
  std::string own = CgroupOf("self", controller);
  if (own.empty() || !own.starts_with(mount->fs_root))
    return std::unexpected(
        ErrnoError(ENOENT, "writelab's " + option + " cgroup is not under " + mount->target));
  own = own.substr(mount->fs_root == "/" ? 0 : mount->fs_root.size());
  if (own.empty()) own = "/";
  return CgroupPlace{mount->target, own, true};
}

Result<std::unique_ptr<OwnCgroup>> OwnCgroup::Make(const CgroupPlace& place,
                                                   const std::vector<std::string>& controllers,
                                                   UndoJournal& journal) {
  static std::atomic<int> made{0};
  std::unique_ptr<OwnCgroup> g(new OwnCgroup(journal));
  if (!place.v1) {  // two runs never enable and disable a controller under each other
    if (Status s = journal.LockDevice(kCgroupLock); !s) return std::unexpected(s.error());
    g->locked_ = true;
  }
  const std::string dir = place.dir();
  const std::string offered = ReadLine(dir + "/cgroup.controllers").value_or("");
  const std::string control = dir + "/cgroup.subtree_control";
  for (const std::string& c : place.v1 ? std::vector<std::string>{} : controllers) {
    if (!ListsController(offered, c))
      return std::unexpected(ErrnoError(ENOENT, "the cgroup " + place.own + " is not offered the " +
                                                    c + " controller (it is offered: '" + offered +
                                                    "')"));
    if (ListsController(ReadLine(control).value_or(""), c)) continue;
    auto change = ScopedChange::Make(journal, {"cgroup-subtree", control, "-" + c, ""},
                                     [&] { return WriteTo(control, "+" + c + "\n", O_APPEND); });
    if (!change) return std::unexpected(change.error());  // ~g undoes what was done
    g->subtree_.push_back(std::move(*change));
    g->enabled_.push_back(c);
  }
  const std::string path =
      dir + "/writelab-" + std::to_string(getpid()) + "-" + std::to_string(made.fetch_add(1) + 1);
  auto made_dir = ScopedChange::Make(journal, {"cgroup", path, "", ""}, [&]() -> Status {
    if (mkdir(path.c_str(), 0755) != 0) return std::unexpected(ErrnoError(errno, "mkdir " + path));
    return {};
  });
  if (!made_dir) return std::unexpected(made_dir.error());
  g->dir_.emplace(std::move(*made_dir));
  g->path_ = path;
  return g;
}

OwnCgroup::~OwnCgroup() { Revert(); }

Result<std::string> OwnCgroup::Set(const std::string& file, const std::string& value) {
  if (file.empty() || file.find('/') != std::string::npos || file.starts_with('.'))
    return std::unexpected(PlainError("not a cgroup interface file: " + file));
  const std::string at = path_ + "/" + file;
  if (Status s = WriteTo(at, value + "\n"); !s) return std::unexpected(s.error());
  auto back = ReadSmallFile(at);
  if (!back) return std::unexpected(ErrnoError(errno ? errno : EIO, "read " + at));
  while (!back->empty() && std::isspace(static_cast<unsigned char>(back->back()))) back->pop_back();
  return *back;
}

Status OwnCgroup::Place(pid_t pid) {
  return WriteTo(path_ + "/cgroup.procs", std::to_string(pid) + "\n", O_APPEND);
}

Status OwnCgroup::Revert() {
  Status first;
  auto keep = [&](Status s) {
    if (!s && first) first = std::move(s);
  };
  if (dir_) keep(dir_->Revert());
  dir_.reset();
  for (auto it = subtree_.rbegin(); it != subtree_.rend(); ++it) keep(it->Revert());
  subtree_.clear();
  if (locked_) journal_->UnlockDevice(kCgroupLock);
  locked_ = false;
  return first;
}

Status UndoCgroup(const UndoStep& step) {
  struct stat st;
  if (lstat(step.path.c_str(), &st) != 0)
    return errno == ENOENT ? Status{} : std::unexpected(ErrnoError(errno, "stat " + step.path));
  if (!S_ISDIR(st.st_mode)) return std::unexpected(PlainError(step.path + ": not a cgroup"));
  // Its members die at once, but leave the cgroup only as they finish
  // exiting: rmdir says EBUSY until then.
  const uint64_t deadline = NowNs() + 2'000'000'000ull;
  while (true) {
    KillMembers(step.path);
    if (rmdir(step.path.c_str()) == 0 || errno == ENOENT) return {};
    if (errno != EBUSY || NowNs() > deadline)
      return std::unexpected(ErrnoError(errno, "remove cgroup " + step.path));
    usleep(10'000);
  }
}

Status UndoCgroupSubtree(const UndoStep& step) {
  Status s = WriteTo(step.path, step.value + "\n", O_APPEND);
  if (!s && s.error().code == ENOENT) return {};  // the parent cgroup is gone: nothing to undo
  return s;
}

std::string CgroupStepProblem(const UndoStep& step) {
  const std::string_view path = step.path;
  if (step.op == "cgroup") {
    const size_t slash = path.find_last_of('/');
    if (slash == 0 || slash == std::string_view::npos || !IsCgroupName(path.substr(slash + 1)))
      return "a cgroup step must name a writelab-PID-N cgroup";
    return "";
  }
  if (step.op == "cgroup-subtree") {
    if (!path.ends_with("/cgroup.subtree_control"))
      return "a cgroup-subtree step must name a cgroup.subtree_control";
    if (step.value != "-io" && step.value != "-memory")
      return "a cgroup-subtree step writes -io or -memory back";
    return "";
  }
  return "not a cgroup step";
}

}  // namespace writelab
