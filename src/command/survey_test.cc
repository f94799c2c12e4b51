// SPDX-License-Identifier: MIT
// The survey's plan: the random background outgrows the dirty-background
// threshold where the free space allows, and every experiment is planned.
#include "command/survey.h"

#include "cli/commands.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

Host HostWith(uint64_t memory, int64_t ratio, int64_t bytes) {
  Host h;
  h.memory_bytes = memory;
  h.vm["dirty_background_ratio"] = ratio;
  h.vm["dirty_background_bytes"] = bytes;
  return h;
}

TEST(SurveyPlan, RandomSpanOutgrowsTheDirtyBackgroundThreshold) {
  const uint64_t gib = uint64_t{1} << 30;
  uint64_t span = RandomSpan(HostWith(24 * gib, 10, 0), 1000 * gib);
  EXPECT_GT(span, 24 * gib / 10);
  EXPECT_EQ(span % 4096, 0u);
  // dirty_background_bytes, when set, wins over the ratio.
  EXPECT_GT(RandomSpan(HostWith(24 * gib, 10, 512 << 20), 1000 * gib), uint64_t{512} << 20);
  EXPECT_LT(RandomSpan(HostWith(24 * gib, 10, 512 << 20), 1000 * gib), 3 * gib / 2);
  // Little free space: at most a quarter of it, never under 256 MiB.
  EXPECT_EQ(RandomSpan(HostWith(24 * gib, 10, 0), 4 * gib), gib);
  EXPECT_EQ(RandomSpan(HostWith(24 * gib, 10, 0), 0), uint64_t{256} << 20);
}

// Stream twice (short trials, then past the dirty limit with the
// bystander), stride twice (queue depth 1, then io_uring at 32).
TEST(SurveyPlan, PlansAllFiveExperiments) {
  auto plan = SurveyPlan("/var/tmp", HostWith(uint64_t{8} << 30, 10, 0), Experiments());
  std::vector<std::string> names;
  for (const SurveyStep& s : plan) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"stream", "stream", "fsync", "records", "prealloc",
                                             "stride", "stride"}));
}

}  // namespace
}  // namespace writelab
