// SPDX-License-Identifier: MIT
// Directories writelab may create files in while it runs as root among other
// users. A directory is trusted when no other user can swap what is in it or
// above it: every component of the path as given, from / down, is opened
// without following a symbolic link (openat + O_NOFOLLOW) and checked on the
// descriptor itself (fstat), so what is checked is what is used. A symbolic
// link on the way is followed only when root or the running user owns it
// (another user's link, planted in /tmp, is refused); a relative path is
// taken from the current directory.
//
// An ancestor is trusted when it is owned by root or by the running user and
// is not writable by group or others, or when it is a root-owned sticky
// directory (/tmp, /var/tmp: others cannot rename or remove what is ours).
#pragma once

#include <string>

#include "writelab/error.h"
#include "writelab/unique_fd.h"

namespace writelab {

enum class DirUse {
  // Scratch and runtime directories (test-bed images, undo journals, locks):
  // owned by the running user and writable by nobody else. Created 0700,
  // whatever the umask, when missing.
  kPrivate,
  // An experiment's --dir: owned by root or the running user, and writable by
  // others only when sticky (files in it are created O_EXCL|O_NOFOLLOW and
  // used through their descriptors).
  kShared,
};

// Opens dir (O_DIRECTORY, read-only), creating missing components 0700 when
// create is true, after checking it and every ancestor as above. The error
// says which component failed and why:
//   "/var/tmp/writelab is owned by uid 65534, not by uid 0: another user
//    controls it (remove it or choose another directory)"
Result<UniqueFd> OpenTrustedDir(const std::string& dir, DirUse use, bool create);

// The usage check of an experiment's working directory (--dir): it exists,
// is a directory this process can write, and is trusted as DirUse::kShared.
// Returns its resolved absolute path, which the caller must use from then on:
// a link in the name as given could be pointed elsewhere after the check.
// The error is one line that names the option: "--dir: '/x' is not a
// directory", "--dir: /shared is writable by group or others and not
// sticky: ...".
std::expected<std::string, std::string> CheckWorkDir(const std::string& option,
                                                     const std::string& dir);

// The resolved absolute path of a path that may not exist yet: realpath of
// its longest existing prefix, with the missing components appended.
Result<std::string> AbsolutePath(const std::string& path);

}  // namespace writelab
