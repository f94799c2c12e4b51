// SPDX-License-Identifier: MIT
#include "io/trusted_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

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
  auto abs = AbsolutePath(dir);
  if (!abs) return std::unexpected(option + ": " + abs.error().Message());
  if (auto fd = OpenTrustedDir(*abs, DirUse::kShared, false); !fd)
    return std::unexpected(option + ": " + fd.error().Message());
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

Result<UniqueFd> OpenTrustedDir(const std::string& dir, DirUse use, bool create) {
  auto abs = AbsolutePath(dir);
  if (!abs) return std::unexpected(abs.error());
  UniqueFd fd(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return std::unexpected(ErrnoError(errno, "open /"));
  std::vector<std::string> parts = Components(*abs);
  std::string at = "";
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat /"));
  if (std::string why = WhyUntrusted(st, parts.empty(), use); !why.empty())
    return std::unexpected(PlainError("/ " + why));
  for (size_t i = 0; i < parts.size(); ++i) {
    at += "/" + parts[i];
    bool made = false;
    int next = openat(fd.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create) {
      if (mkdirat(fd.get(), parts[i].c_str(), 0700) == 0)
        made = true;
      else if (errno != EEXIST)
        return std::unexpected(ErrnoError(errno, "create " + at));
      next = openat(fd.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0 && (errno == ELOOP || errno == ENOTDIR))
      return std::unexpected(PlainError(at + " is a symbolic link or not a directory: refused"));
    if (next < 0) return std::unexpected(ErrnoError(errno, "open " + at));
    fd.Reset(next);
    if (fstat(fd.get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + at));
    if (made && st.st_uid == geteuid() && fchmod(fd.get(), 0700) != 0)  // the umask may have cut it
      return std::unexpected(ErrnoError(errno, "chmod 0700 " + at));
    if (made && fstat(fd.get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + at));
    if (std::string why = WhyUntrusted(st, i + 1 == parts.size(), use); !why.empty())
      return std::unexpected(PlainError(at + " " + why + " (refused: writelab runs as uid " +
                                        std::to_string(geteuid()) + ")"));
  }
  return fd;
}

}  // namespace writelab
