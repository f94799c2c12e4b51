// SPDX-License-Identifier: MIT
// Where the results history is, and opening its file by the rules of
// docs/security.md.
//
// The history of a run is, in order of precedence: none with --no-history;
// FILE with --history FILE; none with WRITELAB_HISTORY=off, FILE with
// WRITELAB_HISTORY=FILE; else the default:
//   as root   /var/lib/writelab/history.sqlite
//   a user    $XDG_DATA_HOME/writelab/history.sqlite, or
//             $HOME/.local/share/writelab/history.sqlite
// The default's directories are created 0700 when missing; a named file's
// directory must exist.
#pragma once

#include <expected>
#include <optional>
#include <string>

#include "history/sqlite.h"
#include "writelab/error.h"

namespace writelab {

struct HistoryLocation {
  std::string path;
  bool is_default = false;  // its missing directories may be created
};

// The default file for this user; an error when a user has neither
// XDG_DATA_HOME nor HOME (absolute paths, as the XDG specification asks).
std::expected<std::string, std::string> DefaultHistoryPath();

// The history chosen by the options and the environment (above); nullopt
// for none. The error is one line: "WRITELAB_HISTORY: give off or a file".
std::expected<std::optional<HistoryLocation>, std::string> ChooseHistory(const std::string& option,
                                                                         bool no_history);

// Opens the SQLite file at where.path, creating it (and, for the default,
// its directories) when create is true and it is missing. As for every file
// writelab writes as root among other users:
//   - its directory must be private (io/trusted_dir.h, DirUse::kPrivate):
//     SQLite creates the -wal and -shm files beside it by name, so nobody
//     else may be able to plant or swap entries there;
//   - the file is created with O_CREAT|O_EXCL|O_NOFOLLOW, 0600, through
//     the directory's descriptor; an existing one must be a regular file
//     with one link, owned by the running user;
//   - SQLite then opens the checked path with SQLITE_OPEN_NOFOLLOW (the
//     directory's entries cannot change under it). writelab's own
//     descriptor is closed before: closing a second descriptor of the file
//     would drop SQLite's POSIX locks.
// A missing file without create: "PATH: no history there (nothing recorded
// yet; see writelab help history)". The path is checked as given, never
// resolved first (io/trusted_dir.h: only root's or the user's own links
// are followed on the way, and the file itself is never a link).
// read_only: SQLite's read-only mode (what the read commands use).
Result<SqliteDb> OpenHistoryFile(const HistoryLocation& where, bool create, bool read_only);

// The history's path as given, made absolute from the current directory
// (for messages and for SQLite; never resolved through links).
std::string HistoryPathAsGiven(const std::string& path);

}  // namespace writelab
