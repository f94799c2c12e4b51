// SPDX-License-Identifier: MIT
#include "writelab/error.h"

#include "port/classify_errno.h"

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <string>

namespace writelab {

std::string Error::Message() const {
  if (code == 0) return context;
  return context + ": " + std::strerror(code);
}

Error ErrnoError(int code, std::string context) { return Error{code, std::move(context)}; }

Error PlainError(std::string message) { return Error{0, std::move(message)}; }

std::string ErrnoName(int code) {
  const char* name = strerrorname_np(code);  // glibc 2.32+
  return name ? name : "E" + std::to_string(code);
}

}  // namespace writelab

namespace writelab {

ErrnoClass ClassifyErrno(int error, Feature feature) {
  auto any = [error](std::initializer_list<int> set) {
    for (int e : set)
      if (e == error) return ErrnoClass::kUnsupported;
    return ErrnoClass::kFailure;
  };
  switch (feature) {
    case Feature::kNone:
      return ErrnoClass::kFailure;
    case Feature::kIoUring:
      return any({ENOSYS, EPERM, EACCES, EOPNOTSUPP});
    case Feature::kRwfDontcache:
    case Feature::kRwfDsync:
    case Feature::kFallocateMode:
    case Feature::kSyncCall:
      return any({EOPNOTSUPP, EINVAL, ENOSYS});
    case Feature::kDirectIo:
      return any({EINVAL, EOPNOTSUPP});
    case Feature::kCachestat:
      return any({ENOSYS, EOPNOTSUPP, EPERM});
    case Feature::kKernelKnob:
      return any({ENOENT, EOPNOTSUPP, EINVAL});
  }
  return ErrnoClass::kFailure;
}

}  // namespace writelab
