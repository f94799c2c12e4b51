// SPDX-License-Identifier: MIT
// CRC-32C against the published check values (RFC 3720's test vectors), and
// the CPU path against the table path on every length and alignment.
#include "lib/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace writelab {
namespace {

TEST(Crc32c, KnownValues) {
  const char* check = "123456789";
  EXPECT_EQ(Crc32c(0, check, 9), 0xE3069283u);
  EXPECT_EQ(Crc32cPortable(0, check, 9), 0xE3069283u);
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF), up(32);
  for (int i = 0; i < 32; ++i) up[static_cast<size_t>(i)] = static_cast<unsigned char>(i);
  EXPECT_EQ(Crc32c(0, zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(0, ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(0, up.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(0, nullptr, 0), 0u);
}

TEST(Crc32c, ExtendsAndAgreesWithTheTableOnEveryLengthAndAlignment) {
  std::vector<unsigned char> buf(300);
  std::mt19937 rng(7);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  for (size_t start = 0; start < 9; ++start)
    for (size_t n = 0; start + n <= buf.size(); n += 7) {
      const uint32_t whole = Crc32c(0, buf.data() + start, n);
      ASSERT_EQ(whole, Crc32cPortable(0, buf.data() + start, n)) << start << "+" << n;
      const size_t half = n / 2;
      ASSERT_EQ(Crc32c(Crc32c(0, buf.data() + start, half), buf.data() + start + half, n - half),
                whole);
    }
}

}  // namespace
}  // namespace writelab
