// SPDX-License-Identifier: MIT
// Is an errno the kernel saying "this feature is not here", or a failure?
// One answer for the whole tool (docs/results.md, "unsupported"): a row whose
// feature the kernel, file system or a security policy refuses is
// `unsupported`, with the errno; any other error is `failed`.
//
// Classify only the first use of the feature in a row (the open, the setup,
// the first write with the flag): an error after the feature has worked is a
// failure whatever its errno. Callers pass Feature::kNone then.
#pragma once

namespace writelab {

enum class Feature {
  kNone,           // no feature: every error is a failure
  kIoUring,        // io_uring_setup: ENOSYS, EPERM (io_uring_disabled), EACCES (seccomp, LSM)
  kRwfDontcache,   // pwritev2 RWF_DONTCACHE: EOPNOTSUPP, EINVAL (older kernels), ENOSYS
  kRwfDsync,       // pwritev2 RWF_DSYNC: EOPNOTSUPP, EINVAL, ENOSYS
  kFallocateMode,  // fallocate FALLOC_FL_* modes: EOPNOTSUPP, EINVAL (unknown bit), ENOSYS
  kDirectIo,       // open O_DIRECT or its first write: EINVAL, EOPNOTSUPP
  kCachestat,      // cachestat(2): ENOSYS, EOPNOTSUPP, EPERM (seccomp)
  kSyncCall,       // a sync method's first call: EOPNOTSUPP, EINVAL, ENOSYS
  kKernelKnob,     // a sysfs or cgroup knob: ENOENT (absent), EOPNOTSUPP, EINVAL (refused)
};

enum class ErrnoClass { kFailure, kUnsupported };

ErrnoClass ClassifyErrno(int error, Feature feature);
inline bool IsUnsupported(int error, Feature feature) {
  return ClassifyErrno(error, feature) == ErrnoClass::kUnsupported;
}

}  // namespace writelab
