// SPDX-License-Identifier: MIT
// The ground floor's vectored write-all on a scripted write function: short
// writes continue where they stopped, EINTR is retried, and a failure says
// where it happened.
#include "port/write_all.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace writelab {
namespace {

// Takes at most `step` bytes per call; the calls listed in fail return it.
struct Script {
  size_t step;
  std::vector<std::pair<int, ssize_t>> fail;  // call index, what it returns
  std::string out;
  int calls = 0;
  ssize_t operator()(const iovec* iov, int count, uint64_t offset) {
    int call = calls++;
    for (auto [i, res] : fail)
      if (i == call) return res;
    EXPECT_EQ(offset, out.size());
    size_t left = step;
    for (int i = 0; i < count && left > 0; ++i) {
      size_t take = std::min(left, iov[i].iov_len);
      out.append(static_cast<const char*>(iov[i].iov_base), take);
      left -= take;
    }
    return static_cast<ssize_t>(step - left);
  }
};

TEST(WriteVecAll, ShortWritesAndEintrContinue) {
  std::string a = "hello ", b = "", c = "world";
  iovec iov[3] = {{a.data(), a.size()}, {b.data(), 0}, {c.data(), c.size()}};
  Script s{4, {{1, -EINTR}}, {}};
  uint64_t offset = 0, calls = 0;
  EXPECT_EQ(WriteVecAll(iov, 3, offset, s, &calls), 0);
  EXPECT_EQ(s.out, "hello world");
  EXPECT_EQ(offset, 11u);
  EXPECT_EQ(calls, 4u);  // 4 bytes, EINTR, 4 bytes, 3 bytes
}

TEST(WriteVecAll, FailureStopsWhereItHappened) {
  std::string a(10, 'x');
  iovec iov[1] = {{a.data(), a.size()}};
  Script s{4, {{2, -ENOSPC}}, {}};
  uint64_t offset = 0;
  EXPECT_EQ(WriteVecAll(iov, 1, offset, s), -ENOSPC);
  EXPECT_EQ(offset, 8u);
}

TEST(WriteVecAll, ZeroBytesIsAnError) {
  std::string a(3, 'x');
  iovec iov[1] = {{a.data(), a.size()}};
  Script s{0, {}, {}};
  uint64_t offset = 0;
  EXPECT_EQ(WriteVecAll(iov, 1, offset, s), -EIO);
}

}  // namespace
}  // namespace writelab
