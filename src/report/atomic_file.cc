// SPDX-License-Identifier: MIT
#include "report/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "io/file.h"
#include "io/trusted_dir.h"
#include "port/write_all.h"

namespace writelab {
namespace {

Status WriteContents(int fd, const std::string& contents, const std::string& what) {
  if (int rc = WriteAll(fd, contents.data(), contents.size()); rc < 0)
    return std::unexpected(ErrnoError(-rc, "write " + what));
  return {};
}

std::string BaseName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// "NAME.tmp-0123456789abcdef" with 64 random bits: nobody can guess it ahead.
std::string TempName(const std::string& base) { return "." + base + ".tmp-" + RandomHex(); }

// Creates, writes and renames a temporary in path's directory.
Status ReplaceRegular(const std::string& path, const std::string& contents, mode_t mode) {
  std::string dir = ParentDir(path), base = BaseName(path);
  if (base.empty() || base == "." || base == "..")
    return std::unexpected(PlainError(path + ": not a file name"));
  // A directory another user could swap entries in is refused (sticky is
  // fine): the rename must land where the check looked.
  auto dir_fd = OpenTrustedDir(dir, DirUse::kShared, false);
  if (!dir_fd) return std::unexpected(dir_fd.error());
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = TempName(base);
    fd = openat(dir_fd->get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return std::unexpected(ErrnoError(errno, "create a temporary file in " + dir));
  UniqueFd file(fd);
  auto fail = [&](Error e) {
    unlinkat(dir_fd->get(), tmp.c_str(), 0);
    return std::unexpected(std::move(e));
  };
  if (mode != 0 && fchmod(fd, mode & 0777) != 0)  // never set-id bits onto root's file
    return fail(ErrnoError(errno, "chmod " + dir + "/" + tmp));
  if (Status s = WriteContents(fd, contents, dir + "/" + tmp); !s) return fail(s.error());
  if (fsync(fd) != 0) return fail(ErrnoError(errno, "fsync " + dir + "/" + tmp));
  file.Reset();
  if (renameat(dir_fd->get(), tmp.c_str(), dir_fd->get(), base.c_str()) != 0)
    return fail(ErrnoError(errno, "rename to " + path));
  if (fsync(dir_fd->get()) != 0) return std::unexpected(ErrnoError(errno, "fsync " + dir));
  return {};
}

// A device, FIFO or the like: written in place, as a shell redirection
// would (a FIFO's open waits for its reader; one planted by another user is
// refused before this).
Status WriteInPlace(const std::string& path, const std::string& contents, bool follow) {
  auto fd = OpenFile(path, O_WRONLY | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
  if (!fd) return std::unexpected(fd.error());
  return WriteContents(fd->get(), contents, path);
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string target = path;
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st;
    if (lstat(target.c_str(), &st) != 0) {
      if (errno == ENOENT) return ReplaceRegular(target, contents, 0);
      return std::unexpected(ErrnoError(errno, "stat " + target));
    }
    if (S_ISREG(st.st_mode)) return ReplaceRegular(target, contents, st.st_mode);
    if (S_ISDIR(st.st_mode)) return std::unexpected(PlainError(target + " is a directory"));
    // Anything of another user's (a FIFO, a link planted in /tmp) is not
    // followed or written: root would write where that user points.
    if (st.st_uid != 0 && st.st_uid != geteuid())
      return std::unexpected(PlainError(target + " belongs to uid " + std::to_string(st.st_uid) +
                                        ": refused (writelab runs as uid " +
                                        std::to_string(geteuid()) + ")"));
    if (!S_ISLNK(st.st_mode)) return WriteInPlace(target, contents, false);
    // /dev/stdout, /dev/fd/N, /proc/self/fd/N as the user typed them: links
    // to this process's open files. Never a /proc path reached through a link.
    if (hops == 0 && (target.starts_with("/proc/self/fd/") || target.starts_with("/dev/fd/") ||
                      target.starts_with("/dev/std")))
      return WriteInPlace(target, contents, true);
    char link[PATH_MAX];
    ssize_t n = readlink(target.c_str(), link, sizeof link - 1);
    if (n < 0) return std::unexpected(ErrnoError(errno, "readlink " + target));
    std::string next(link, static_cast<size_t>(n));
    target = next.starts_with('/') ? next : ParentDir(target) + "/" + next;
    if (target.starts_with("/proc/") || target.starts_with("/dev/fd/"))
      return std::unexpected(PlainError(path + ": refused: a link to " + target));
  }
  return std::unexpected(ErrnoError(ELOOP, "resolve " + path));
}

}  // namespace writelab
