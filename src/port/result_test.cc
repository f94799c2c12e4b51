// SPDX-License-Identifier: MIT
// writelab::Result (include/writelab/result.h): a value or an Error, with the
// conversions from std::expected code that the tool relies on.
#include "writelab/result.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>

#include "writelab/error.h"

namespace writelab {
namespace {

Result<std::unique_ptr<int>> MakeInt(int v) {  // a move-only value
  if (v < 0) return Unexpected(ErrnoError(EINVAL, "MakeInt"));
  return std::make_unique<int>(v);
}

Status FailWithStd() { return std::unexpected(PlainError("from std::unexpected")); }

TEST(Result, HoldsAValueOrAnError) {
  auto ok = MakeInt(7);
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(static_cast<bool>(ok));
  EXPECT_EQ(**ok, 7);
  std::unique_ptr<int> taken = std::move(*ok);
  EXPECT_EQ(*taken, 7);

  auto bad = MakeInt(-1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EINVAL);
  EXPECT_EQ(bad.error().Message(), "MakeInt: Invalid argument");
}

TEST(Result, ValueThrowsOnAnErrorAndValueOrFallsBack) {
  Result<uint64_t> lsn = 4096;  // converted from int
  EXPECT_EQ(lsn.value(), 4096u);
  EXPECT_EQ(lsn.value_or(1), 4096u);
  Result<uint64_t> failed = Unexpected(ErrnoError(EIO, "fdatasync"));
  EXPECT_THROW((void)failed.value(), BadResultAccess);
  EXPECT_EQ(failed.value_or(7), 7u);
  Result<std::string> name = "wal.log";  // from a const char*
  EXPECT_EQ(*name, "wal.log");
  EXPECT_EQ(std::move(name).value_or("other"), "wal.log");
  Status bad = Unexpected(PlainError("no"));
  EXPECT_THROW(bad.value(), BadResultAccess);
  EXPECT_NO_THROW(Status{}.value());
}

TEST(Result, StatusIsSuccessByDefault) {
  Status s;
  EXPECT_TRUE(s.has_value());
  Status failed = Unexpected(PlainError("no"));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().Message(), "no");
}

TEST(Result, TakesStdUnexpectedAndStdExpected) {
  Status s = FailWithStd();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().Message(), "from std::unexpected");
  Result<int> good = 3;
  Result<int> r = good;
  EXPECT_EQ(*r, 3);
  Result<void> none = std::unexpected(ErrnoError(EIO, "x"));
  Status from = none;
  ASSERT_FALSE(from);
  EXPECT_EQ(from.error().code, EIO);
}

}  // namespace
}  // namespace writelab
