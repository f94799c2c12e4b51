// SPDX-License-Identifier: MIT
#include "io/file_engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace writelab {

int FileEngine::Sync(const SyncOp& op) {
  int rc = 0;
  switch (op.kind) {
    case SyncKind::kFsync:
      rc = ::fsync(fd_);
      break;
    case SyncKind::kFdatasync:
      rc = ::fdatasync(fd_);
      break;
    case SyncKind::kRange:
      rc = ::sync_file_range(fd_, static_cast<off_t>(op.offset), static_cast<off_t>(op.len),
                             op.flags);
      break;
  }
  return rc == 0 ? 0 : -errno;
}

int FileEngine::Preallocate(const PreallocOp& op) {
  int rc = ::fallocate(fd_, op.mode, static_cast<off_t>(op.offset), static_cast<off_t>(op.len));
  return rc == 0 ? 0 : -errno;
}

int FileEngine::Advise(const AdviseOp& op) {
  // posix_fadvise returns the error instead of setting errno.
  return -::posix_fadvise(fd_, static_cast<off_t>(op.offset), static_cast<off_t>(op.len),
                          op.advice);
}

}  // namespace writelab
