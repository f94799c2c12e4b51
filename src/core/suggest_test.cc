// SPDX-License-Identifier: MIT
#include "core/suggest.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

TEST(Suggest, ASwapOfNeighboursIsOneEdit) {
  EXPECT_EQ(EditDistance("--szie", "--size"), 1u);
  EXPECT_EQ(EditDistance("survy", "survey"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("fsync", "fsync"), 0u);
}

TEST(Suggest, TheClosestWordIsSuggestedWhenItIsCloseEnough) {
  const std::vector<std::string> commands = {"survey", "stream", "fsync", "records", "stride"};
  EXPECT_EQ(Closest("survy", commands), "survey");
  EXPECT_EQ(Closest("strem", commands), "stream");
  EXPECT_EQ(Closest("fsycn", commands), "fsync");
  EXPECT_EQ(Closest("surv", commands), "survey") << "a word that starts one";
  EXPECT_EQ(Closest("banana", commands), "") << "nothing near: no guess";
  EXPECT_EQ(Closest("--szie", {"--size", "--dir", "--strategy"}), "--size");
  EXPECT_EQ(DidYouMean("survy", commands), "; did you mean 'survey'?");
  EXPECT_EQ(DidYouMean("xyzzy", commands), "");
}

}  // namespace
}  // namespace writelab
