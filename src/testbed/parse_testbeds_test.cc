// SPDX-License-Identifier: MIT
// ParseTestbeds on what users type: empty lists and items are refused.
#include <gtest/gtest.h>

#include "testbed/testbed.h"

namespace writelab {
namespace {

TEST(ParseTestbeds, RefusesEmptyListsAndItems) {
  EXPECT_EQ(ParseTestbeds("").error(), "--testbed: empty; give e.g. ext4:data=ordered,xfs");
  EXPECT_EQ(ParseTestbeds("ext4,,xfs").error(), "--testbed: an empty test bed in 'ext4,,xfs'");
  EXPECT_FALSE(ParseTestbeds(",").has_value());
  EXPECT_FALSE(ParseTestbeds("ext4,").has_value());
  EXPECT_FALSE(ParseTestbeds("ext4:").has_value());
  EXPECT_FALSE(ParseTestbeds(":").has_value());
  EXPECT_EQ(ParseTestbeds("ext4:data=journal,xfs").value().size(), 2u);
}

}  // namespace
}  // namespace writelab
