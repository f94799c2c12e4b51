// SPDX-License-Identifier: MIT
#include "io/trusted_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

namespace writelab {
namespace {

std::vector<std::string> Components(const std::string& abs) {
  std::vector<std::string> parts;
  size_t pos = 1;
  while (pos < abs.size()) {
    size_t end = abs.find('/', pos);
    if (end == std::string::npos) end = abs.size();
    if (end > pos) parts.push_back(abs.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

bool WritableByOthers(const struct stat& st) { return st.st_mode & (S_IWGRP | S_IWOTH); }
bool RootSticky(const struct stat& st) { return st.st_uid == 0 && (st.st_mode & S_ISVTX); }

// "" when the directory described by st may sit above or be used as `use`.
std::string WhyUntrusted(const struct stat& st, bool leaf, DirUse use) {
  const uid_t me = geteuid();
  const std::string owner = "owned by uid " + std::to_string(st.st_uid);
  if (!S_ISDIR(st.st_mode)) return "is not a directory";
  if (leaf && use == DirUse::kPrivate) {
    if (st.st_uid != me)
      return "is " + owner + ", not by uid " + std::to_string(me) + ": another user controls it";
    if (WritableByOthers(st)) return "is writable by group or others";
    return "";
  }
  if (st.st_uid != 0 && st.st_uid != me) return "is " + owner + ": another user controls it";
  if (WritableByOthers(st) && !RootSticky(st) && !(leaf && (st.st_mode & S_ISVTX)))
    return "is writable by group or others and not sticky: another user could swap its entries";
  return "";
}

}  // namespace

std::expected<std::string, std::string> CheckWorkDir(const std::string& option,
                                                     const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return std::unexpected(option + ": '" + dir + "' is not a directory");
  if (access(dir.c_str(), W_OK) != 0)
    return std::unexpected(option + ": '" + dir + "' is not writable");
  if (auto fd = OpenTrustedDir(dir, DirUse::kShared, false); !fd)
    return std::unexpected(option + ": " + fd.error().Message());
  auto abs = AbsolutePath(dir);  // every link in it trusted: it stays where it points
  if (!abs) return std::unexpected(option + ": " + abs.error().Message());
  return *abs;
}

Result<std::string> AbsolutePath(const std::string& path) {
  std::string head = path.empty() ? "." : path;
  std::string tail;
  for (int depth = 0; depth < 64; ++depth) {
    char buf[PATH_MAX];
    if (realpath(head.c_str(), buf)) {
      std::string out = buf;
      if (!tail.empty()) out += (out == "/" ? "" : "/") + tail;
      return out;
    }
    if (errno != ENOENT) return std::unexpected(ErrnoError(errno, "resolve " + path));
    size_t slash = head.find_last_of('/');
    std::string last = slash == std::string::npos ? head : head.substr(slash + 1);
    if (last == "." || last == "..") return std::unexpected(ErrnoError(ENOENT, "resolve " + path));
    if (!last.empty()) tail = tail.empty() ? last : last + "/" + tail;
    head = slash == std::string::npos ? "." : (slash == 0 ? "/" : head.substr(0, slash));
  }
  return std::unexpected(ErrnoError(ELOOP, "resolve " + path));
}

namespace {

// One step of the walk: the directory `name` under fd, made 0700 when
// missing and create is set; *link holds a symbolic link's target instead
// (fd unchanged) when name is a link.
Result<UniqueFd> WalkStep(int fd, const std::string& name, const std::string& at, bool create,
                          std::string* link) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  bool made = false;
  int next = openat(fd, name.c_str(), kFlags);
  if (next < 0 && errno == ENOENT && create) {
    if (mkdirat(fd, name.c_str(), 0700) == 0)
      made = true;
    else if (errno != EEXIST)
      return std::unexpected(ErrnoError(errno, "create " + at));
    next = openat(fd, name.c_str(), kFlags);
  }
  if (next < 0 && (errno == ELOOP || errno == ENOTDIR)) {
    struct stat lst;
    if (fstatat(fd, name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(lst.st_mode))
      return std::unexpected(PlainError(at + " is not a directory: refused"));
    // A link only root or this user could have made (in a directory
    // already checked) is followed; anyone else's is refused.
    if (lst.st_uid != 0 && lst.st_uid != geteuid())
      return std::unexpected(
          PlainError(at + " is a symbolic link of uid " + std::to_string(lst.st_uid) +
                     ": refused (writelab runs as uid " + std::to_string(geteuid()) + ")"));
    char target[PATH_MAX];
    const ssize_t n = readlinkat(fd, name.c_str(), target, sizeof target - 1);
    if (n <= 0) return std::unexpected(ErrnoError(n < 0 ? errno : ENOENT, "readlink " + at));
    *link = std::string(target, static_cast<size_t>(n));
    return UniqueFd();
  }
  if (next < 0) return std::unexpected(ErrnoError(errno, "open " + at));
  UniqueFd out(next);
  struct stat st;
  if (made && (fstat(next, &st) != 0 || (st.st_uid == geteuid() && fchmod(next, 0700) != 0)))
    return std::unexpected(ErrnoError(errno, "chmod 0700 " + at));  // the umask may have cut it
  return out;
}

}  // namespace

// The path as given is walked from /, a component at a time, each opened
// with O_NOFOLLOW and checked on its descriptor: a symbolic link is followed
// only when root or this user owns it (its directory checked before), so
// that no other user's link decides where writelab goes.
Result<UniqueFd> OpenTrustedDir(const std::string& dir, DirUse use, bool create) {
  std::string abs = dir.empty() ? "." : dir;
  if (abs.front() != '/') {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return std::unexpected(ErrnoError(errno, "getcwd"));
    abs = std::string(cwd) + "/" + abs;
  }
  std::vector<std::string> todo = Components(abs);
  std::reverse(todo.begin(), todo.end());  // a stack: the next component at the back
  UniqueFd fd(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return std::unexpected(ErrnoError(errno, "open /"));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat /"));
  if (std::string why = WhyUntrusted(st, todo.empty(), use); !why.empty())
    return std::unexpected(PlainError("/ " + why));
  std::string at;
  for (int links = 0; !todo.empty();) {
    const std::string name = todo.back();
    todo.pop_back();
    if (name == ".") continue;
    at += "/" + name;
    std::string link;
    auto next = WalkStep(fd.get(), name, at, create, &link);
    if (!next) return std::unexpected(next.error());
    if (!link.empty()) {
      if (++links > 40) return std::unexpected(ErrnoError(ELOOP, "resolve " + dir));
      std::vector<std::string> more = Components(link.front() == '/' ? link : "/" + link);
      todo.insert(todo.end(), more.rbegin(), more.rend());
      if (link.front() == '/') fd.Reset(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      at += " -> " + link;
      continue;
    }
    fd = std::move(*next);
    if (fstat(fd.get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + at));
    if (std::string why = WhyUntrusted(st, todo.empty(), use); !why.empty())
      return std::unexpected(PlainError(at + " " + why + " (refused: writelab runs as uid " +
                                        std::to_string(geteuid()) + ")"));
  }
  return fd;
}

}  // namespace writelab
