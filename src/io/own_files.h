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

#include <string>

namespace writelab {

// Remembers path (a file CreateOwnFile made) until it is removed or kept.
// At most kMaxOwnFiles at once; beyond that a file is removed only by its
// owner, as before.
inline constexpr int kMaxOwnFiles = 64;
void RegisterOwnFile(const std::string& path);
// Unlinks path, unless the signal handler already did, and forgets it.
void RemoveOwnFile(const std::string& path);
// Forgets path without removing it (--keep).
void KeepOwnFile(const std::string& path);

// From a signal handler: unlinks every registered file, when enabled.
void RemoveOwnFilesNow();
void RemoveOwnFilesOnSignal(bool enable);

}  // namespace writelab
