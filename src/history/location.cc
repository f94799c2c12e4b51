// SPDX-License-Identifier: MIT
#include "history/location.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "io/file.h"
#include "io/trusted_dir.h"

namespace writelab {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The existing file, or a new one, through dir's descriptor; checked.
Status CreateOrCheck(int dir, const std::string& name, const std::string& path, bool create) {
  const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  UniqueFd fd(openat(dir, name.c_str(), flags));
  if (!fd && errno == ENOENT && create) {
    fd.Reset(openat(dir, name.c_str(), flags | O_CREAT | O_EXCL, 0600));
    if (!fd && errno == EEXIST) fd.Reset(openat(dir, name.c_str(), flags));  // another run made it
  }
  if (!fd && errno == ENOENT)
    return std::unexpected(
        PlainError(path + ": no history there (nothing recorded yet; see writelab help history)"));
  if (!fd && errno == ELOOP)
    return std::unexpected(PlainError(path + " is a symbolic link: refused (name its target)"));
  if (!fd) return std::unexpected(ErrnoError(errno, "open " + path));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + path));
  if (!S_ISREG(st.st_mode)) return std::unexpected(PlainError(path + " is not a regular file"));
  if (st.st_uid != geteuid())
    return std::unexpected(PlainError(path + " is owned by uid " + std::to_string(st.st_uid) +
                                      ": another user's file (refused: writelab runs as uid " +
                                      std::to_string(geteuid()) + ")"));
  if (st.st_nlink != 1)
    return std::unexpected(PlainError(path + " has " + std::to_string(st.st_nlink) +
                                      " links: refused (a history is one file)"));
  return {};
}

}  // namespace

std::expected<std::string, std::string> DefaultHistoryPath() {
  if (geteuid() == 0) return std::string("/var/lib/writelab/history.sqlite");
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/writelab/history.sqlite";
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.local/share/writelab/history.sqlite";
  return std::unexpected(std::string(
      "no default history: neither XDG_DATA_HOME nor HOME is an absolute path (give --history "
      "FILE, or --no-history)"));
}

std::expected<std::optional<HistoryLocation>, std::string> ChooseHistory(const std::string& option,
                                                                         bool no_history) {
  if (no_history) return std::nullopt;
  if (!option.empty()) return HistoryLocation{option, false};
  if (const char* env = std::getenv("WRITELAB_HISTORY"); env && *env) {
    if (std::string(env) == "off") return std::nullopt;
    return HistoryLocation{env, false};
  }
  auto path = DefaultHistoryPath();
  if (!path) return std::unexpected(path.error());
  return HistoryLocation{*path, true};
}

std::string HistoryPathAsGiven(const std::string& path) {
  if (path.starts_with('/')) return path;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + path : path;
}

Result<SqliteDb> OpenHistoryFile(const HistoryLocation& where, bool create, bool read_only) {
  const std::string abs = HistoryPathAsGiven(where.path);
  const std::string name = BaseName(abs);
  if (name.empty() || name == "." || name == "..")
    return std::unexpected(PlainError(where.path + ": not a file name"));
  auto dir = OpenTrustedDir(ParentDir(abs), DirUse::kPrivate, create && where.is_default);
  if (!dir)
    return std::unexpected(Error{dir.error().code, "history " + abs + ": " + dir.error().context});
  if (Status s = CreateOrCheck(dir->get(), name, abs, create); !s)
    return std::unexpected(s.error());
  sqlite3* raw = nullptr;
  const int mode = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  int rc = sqlite3_open_v2(abs.c_str(), &raw, mode | SQLITE_OPEN_NOFOLLOW, nullptr);
  SqliteDb db(raw);
  if (rc != SQLITE_OK) return std::unexpected(SqliteError(raw, rc, "open history " + abs));
  return db;
}

}  // namespace writelab
