// SPDX-License-Identifier: MIT
// One answer to "is this errno the feature missing?" for each feature.
#include "port/classify_errno.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace writelab {
namespace {

void ExpectUnsupported(Feature f, std::initializer_list<int> yes, std::initializer_list<int> no) {
  for (int e : yes) EXPECT_TRUE(IsUnsupported(e, f)) << "errno " << e;
  for (int e : no) EXPECT_FALSE(IsUnsupported(e, f)) << "errno " << e;
}

TEST(ClassifyErrno, IoUringRefusedByKernelSysctlOrPolicy) {
  ExpectUnsupported(Feature::kIoUring, {ENOSYS, EPERM, EACCES, EOPNOTSUPP},
                    {EIO, ENOSPC, ENOMEM, EINVAL, EAGAIN});
}

TEST(ClassifyErrno, RwfFlags) {
  for (Feature f : {Feature::kRwfDontcache, Feature::kRwfDsync})
    ExpectUnsupported(f, {EOPNOTSUPP, EINVAL, ENOSYS}, {EIO, ENOSPC, EACCES, EPERM, EBADF});
}

TEST(ClassifyErrno, FallocateModes) {
  ExpectUnsupported(Feature::kFallocateMode, {EOPNOTSUPP, EINVAL, ENOSYS},
                    {ENOSPC, EIO, EFBIG, EPERM});
}

TEST(ClassifyErrno, DirectIo) {
  ExpectUnsupported(Feature::kDirectIo, {EINVAL, EOPNOTSUPP}, {EIO, ENOSPC, ENOSYS, EACCES});
}

TEST(ClassifyErrno, Cachestat) {
  ExpectUnsupported(Feature::kCachestat, {ENOSYS, EOPNOTSUPP, EPERM}, {EBADF, EFAULT, EINVAL});
}

TEST(ClassifyErrno, SyncCalls) {
  ExpectUnsupported(Feature::kSyncCall, {EOPNOTSUPP, EINVAL, ENOSYS}, {EIO, ENOSPC, EROFS});
}

TEST(ClassifyErrno, NoFeatureIsAlwaysAFailure) {
  ExpectUnsupported(Feature::kNone, {}, {ENOSYS, EOPNOTSUPP, EINVAL, EACCES, EPERM, EIO, 0});
}

}  // namespace
}  // namespace writelab
