// SPDX-License-Identifier: MIT
// ParseTestbeds on what users type: empty lists and items are refused.
#include <gtest/gtest.h>

#include "expect_ok.h"
#include "testbed/testbed.h"

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

TEST(ParseTestbeds, RefusesEmptyListsAndItems) {
  EXPECT_EQ(ErrorOf(ParseTestbeds("")), "--testbed: empty; give e.g. ext4:data=ordered,xfs");
  EXPECT_EQ(ErrorOf(ParseTestbeds("ext4,,xfs")), "--testbed: an empty test bed in 'ext4,,xfs'");
  EXPECT_FALSE(ParseTestbeds(",").has_value());
  EXPECT_FALSE(ParseTestbeds("ext4,").has_value());
  EXPECT_FALSE(ParseTestbeds("ext4:").has_value());
  EXPECT_FALSE(ParseTestbeds(":").has_value());
  EXPECT_EQ(ParseTestbeds("ext4:data=journal,xfs").value().size(), 2u);
}

}  // namespace
TEST(ParseTestbeds, DirtyLimitIsASizeOnALoopDevice) {
  auto ok = ParseTestbeds("ext4:dirty=32M:data=ordered");
  ASSERT_TRUE(ok.has_value()) << ok.error();
  EXPECT_EQ((*ok)[0].dirty_max, 32u << 20);
  EXPECT_EQ((*ok)[0].mount_options, std::vector<std::string>{"data=ordered"})
      << "not a mount option";
  for (const char* bad : {"ext4:dirty=", "ext4:dirty=lots", "ext4:dirty=4k", "tmpfs:dirty=32M"})
    EXPECT_FALSE(ParseTestbeds(bad).has_value()) << bad;
}

}  // namespace writelab
