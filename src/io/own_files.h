// SPDX-License-Identifier: MIT
// The files writelab made and will remove, known to the signal handler.
// Under MPI, mpirun follows its SIGTERM with SIGKILL a second later
// (odls_base_sigkill_timeout): a rank in the middle of a long fsync would
// leave its file behind. So CreateOwnFile registers every file it makes, the
// code that removes one does so through RemoveOwnFile, and, once
// RemoveOwnFilesOnSignal(true) was called, the SIGINT/SIGTERM handler
// unlinks every registered file at once (RemoveOwnFilesNow is
// async-signal-safe). The experiment then stops at its next check; its
// descriptors still work on the unlinked files.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace writelab {

// Remembers path (a file CreateOwnFile made, open as fd) until it is removed
// or kept, and journals it when a journal is set (SetOwnFileJournal). At most
// kMaxOwnFiles at once; beyond that a file is removed only by its owner.
inline constexpr int kMaxOwnFiles = 64;
void RegisterOwnFile(const std::string& path, int fd);
// Unlinks path, unless the signal handler already did, and forgets it.
void RemoveOwnFile(const std::string& path);
// Forgets path without removing it (--keep).
void KeepOwnFile(const std::string& path);

// Where own files are journaled, so that `writelab cleanup` removes what a
// kill -9 left (testbed/journal.h sets it, as root, for a run): record(path,
// device, inode) returns the step's id (0: not journaled), done(id) marks it
// done when the file is removed or kept. Null functions: none.
struct OwnFileJournal {
  std::function<int(const std::string& path, uint64_t device, uint64_t inode)> record;
  std::function<void(int id)> done;
};
void SetOwnFileJournal(OwnFileJournal journal);

// From a signal handler: unlinks every registered file, when enabled.
void RemoveOwnFilesNow();
void RemoveOwnFilesOnSignal(bool enable);

}  // namespace writelab
