// SPDX-License-Identifier: MIT
// Error values for writelab's library and tool.
//
// Setup and control paths return Status or Result<T> (writelab/result.h:
// std::expected's interface, in C++20 as in C++23). An Error
// keeps the errno that caused it (0 when none did) and the context in which it
// happened, so one line tells the whole story:
//   "pwrite /mnt/t/f0 at 8388608: No space left on device"
// Per-I/O results on hot paths stay raw (bytes or -errno) and are turned into
// an Error only when a run gives up.
#pragma once

#include <string>

#include "writelab/result.h"

namespace writelab {

struct Error {
  int code = 0;         // errno value, or 0 for errors that have none
  std::string context;  // what was being done: "open /mnt/t/f0"

  // "context: strerror(code)" or just the context when code is 0.
  std::string Message() const;
};

template <class T>
using Result = BasicResult<T, Error>;
using Status = Result<void>;

// The one place errno becomes an Error.
Error ErrnoError(int code, std::string context);
// An error without an errno (bad argument, unexpected data).
Error PlainError(std::string message);

// The symbolic name of an errno value ("EOPNOTSUPP"), or "E<number>".
std::string ErrnoName(int code);

}  // namespace writelab
