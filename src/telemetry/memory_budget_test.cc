// SPDX-License-Identifier: MIT
#include "telemetry/memory_budget.h"

#include <gtest/gtest.h>

#include "telemetry/procfs.h"

namespace writelab {
namespace {

TEST(MemoryBudget, HalfOfTheRoomPassesAndMoreIsOneLineNamingTheOptions) {
  const MemoryRoom room{8ull << 30, "MemAvailable"};
  EXPECT_FALSE(CheckMemory("--block 4 GiB", 4ull << 30, room));
  auto refused = CheckMemory("--qd 8 x --buffer 1.00 GiB", (4ull << 30) + 1, room);
  ASSERT_TRUE(refused);
  EXPECT_EQ(
      *refused,
      "--qd 8 x --buffer 1.00 GiB would take 4.00 GiB of memory, more than half of the 8.00 GiB "
      "available (MemAvailable)");
  EXPECT_NE(CheckMemory("x", UINT64_MAX, room)->find("more than 16 EiB"), std::string::npos);
}

TEST(MemoryBudget, ArithmeticSaturatesInsteadOfWrapping) {
  EXPECT_EQ(SaturatingMul(4096, 1ull << 30), 4096ull << 30);
  EXPECT_EQ(SaturatingMul(1ull << 40, 1ull << 40), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd(UINT64_MAX - 1, 5), UINT64_MAX);
}

// The process limits are checked end to end in tests/limits_test.cc (a
// child under RLIMIT_AS); here, that MemAvailable bounds the room.
TEST(MemoryBudget, TheRoomIsAtMostMemAvailable) {
  const MemoryRoom now = AvailableMemory();
  EXPECT_GT(now.bytes, 0u);
  EXPECT_FALSE(now.limit.empty());
  const std::string meminfo = ReadSmallFile("/proc/meminfo").value_or("");
  const size_t at = meminfo.find("MemAvailable:");
  ASSERT_NE(at, std::string::npos);
  const uint64_t available = std::stoull(meminfo.substr(at + 13)) << 10;
  EXPECT_LE(now.bytes, available + (256ull << 20)) << "MemAvailable moves a little meanwhile";
}

}  // namespace
}  // namespace writelab
