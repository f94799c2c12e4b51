// SPDX-License-Identifier: MIT
// An allocation that fails anyway, after the memory check of
// telemetry/memory_budget.h let the options through (a corpus of one-byte
// lines costs far more than its size, other processes took memory since):
// a failed run with ENOMEM, never an abort. The exception unwinds through
// the RAII owners, which undo every system change; the caller still writes
// what was measured before.
#pragma once

#include <cerrno>
#include <new>
#include <string>

#include "writelab/error.h"

namespace writelab {

// fn() -> Status, with std::bad_alloc turned into "WHAT: Cannot allocate
// memory". Only for the thread that runs a command: a worker thread's
// allocations are made before it starts.
template <class Fn>
Status FailingOnNoMemory(const std::string& what, Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Unexpected(ErrnoError(ENOMEM, what));
  }
}

}  // namespace writelab
