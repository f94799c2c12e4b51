// SPDX-License-Identifier: MIT
// A command writelab runs for the user (`explain -- CMD`, `run -- CMD`):
// as the invoking user, held at a gate until writelab is ready to watch it
// (so that its first write is seen), with what writelab adds to its
// environment and descriptors; and the processes under it.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <expected>
#include <string>
#include <thread>
#include <vector>

#include "writelab/error.h"

namespace writelab {

// The credentials CMD runs with: --user, else SUDO_USER under sudo, else
// writelab's own (change false). With change, CMD gets the user's
// supplementary groups (never root's) and HOME, USER and LOGNAME.
struct RunAs {
  bool change = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
  std::vector<gid_t> groups;  // the user's supplementary groups (getgrouplist)
  std::string home;
};
std::expected<RunAs, std::string> ResolveUser(const std::string& user);

// Opens what open() opens, with the user's rights: fsuid, fsgid and the
// supplementary groups of `as`, set in a thread of its own by raw system
// calls (Linux keeps credentials per thread; glibc's wrappers would change
// every thread's), so that root's own groups never open for the user what
// the user could not. open() returns a descriptor or -1 with errno set.
template <class Open>
int OpenAsUser(const RunAs& as, Open open);

struct SpawnExtras {
  std::vector<std::string> env;  // "NAME=VALUE", replacing NAME where it is set
  int keep_fd = -1;              // dup2'd to keep_as in CMD (kept across exec)
  int keep_as = -1;
};

// A child at a gate: it runs the command once Release() opens the gate.
struct Child {
  pid_t pid = -1;
  int gate = -1;   // write one byte to let it run
  int error = -1;  // its exec's errno, or EOF once it ran
  // Lets it run; waits until it has exec'd. On a failed exec it is reaped
  // and the error names `what` ("run dd"): ENOENT, EACCES...
  Status Release(const std::string& what);
};

// Forks command (argv[0] looked up in PATH) at a gate, with the
// environment and descriptor of extras. Everything exec needs is built
// before the fork: the child calls nothing that allocates.
Result<Child> Spawn(const std::vector<std::string>& command, const RunAs& as,
                    const SpawnExtras& extras = {});

// ---- implementation

// Sets this thread's filesystem credentials to as's; false if the kernel
// refused one of them.
bool BecomeUserInThisThread(const RunAs& as);

template <class Open>
int OpenAsUser(const RunAs& as, Open open) {
  if (!as.change) return open();
  int fd = -1, err = EPERM;
  std::thread([&] {
    if (!BecomeUserInThisThread(as)) return;
    fd = open();
    err = errno;
  }).join();
  if (fd < 0) errno = err;
  return fd;
}

}  // namespace writelab
