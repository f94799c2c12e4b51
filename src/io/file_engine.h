// SPDX-License-Identifier: MIT
// The base of every engine that writes one file descriptor: Sync, Preallocate
// and Advise are the plain system calls on it (the runner counts them;
// syscalls() stays the write path's count).
#pragma once

#include "io/engine.h"

namespace writelab {

class FileEngine : public WriteEngine {
 public:
  int Sync(const SyncOp& op) override;
  int Preallocate(const PreallocOp& op) override;
  int Advise(const AdviseOp& op) override;

 protected:
  explicit FileEngine(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace writelab
