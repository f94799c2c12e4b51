// SPDX-License-Identifier: MIT
// The one outcome: the first failure is kept, the feature decides
// unsupported against failed, and the row carries what the outcome says.
#include "core/outcome.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace writelab {
namespace {

TEST(Outcome, FirstFailureIsKept) {
  Outcome o;
  EXPECT_TRUE(o.ok());
  o.Fail(EIO, "pwrite at 4096");
  o.Fail(ENOSPC, "fsync");
  EXPECT_EQ(o.status, RowStatus::kFailed);
  EXPECT_EQ(o.error, EIO);
  EXPECT_EQ(o.message, "pwrite at 4096: " + std::string(strerror(EIO)));
}

TEST(Outcome, TheFeatureDecidesUnsupported) {
  Outcome a, b, c;
  a.Fail(EOPNOTSUPP, "pwritev2 RWF_DONTCACHE", Feature::kRwfDontcache);
  b.Fail(EOPNOTSUPP, "pwritev2 RWF_DONTCACHE");  // not the first call: a failure
  c.Fail(EIO, "pwritev2 RWF_DONTCACHE", Feature::kRwfDontcache);
  EXPECT_EQ(a.status, RowStatus::kUnsupported);
  EXPECT_EQ(b.status, RowStatus::kFailed);
  EXPECT_EQ(c.status, RowStatus::kFailed);
}

TEST(Outcome, PlainErrorsHaveNoErrno) {
  Outcome o;
  o.Fail(PlainError("verify: the file has 3 bytes, expected 4"));
  EXPECT_EQ(o.status, RowStatus::kFailed);
  EXPECT_EQ(o.error, 0);
  EXPECT_EQ(o.message, "verify: the file has 3 bytes, expected 4");
}

TEST(Outcome, RowCarriesStatusErrnoAndMessage) {
  Outcome o;
  o.Fail(ENOSYS, "io_uring_queue_init", Feature::kIoUring);
  Row row = MakeRow("io_uring", o);
  EXPECT_EQ(row.name, "io_uring");
  EXPECT_EQ(row.status, RowStatus::kUnsupported);
  EXPECT_EQ(row.error_code, ENOSYS);
  EXPECT_EQ(row.message, o.message);
  EXPECT_TRUE(row.figures.empty());
  Row never = MakeRow("window", Unmeasured("strategy"));
  EXPECT_EQ(never.status, RowStatus::kFailed);
  EXPECT_EQ(never.message, "not measured: the run stopped before this strategy");
}

}  // namespace
}  // namespace writelab
