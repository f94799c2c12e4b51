// SPDX-License-Identifier: MIT
// The survey's plan: the random background outgrows the dirty-background
// threshold where the free space allows, and every experiment is planned.
#include "command/survey.h"

#include "cli/commands.h"
#include "command/orchestrator.h"

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

// The plan's cost, said before it starts: what the steps write at least,
// where, and which steps write for a time instead.
TEST(SurveyPlan, SaysWhatItWritesWhereBeforeItStarts) {
  auto steps = SurveyPlan("/var/tmp", HostWith(uint64_t{8} << 30, 10, 0), Experiments());
  uint64_t bytes = 0;
  for (const SurveyStep& s : steps) bytes += s.bytes;
  EXPECT_GT(bytes, uint64_t{1} << 30) << "the stream steps alone write gigabytes";
  EXPECT_TRUE(steps[2].time_based) << "fsync's background writes for its time";
  Plan plan;
  plan.dir = "/var/tmp";
  plan.steps = {{"stream", "", 1, nullptr, 3ull << 30, false},
                {"fsync", "", 1, nullptr, 0, true},
                {"stride", "", 1, nullptr, 0, true},
                {"stride", "", 1, nullptr, 0, true}};
  EXPECT_EQ(SurveyCostLine(plan, "vda", 100ull << 30),
            "it writes at least 3.00 GiB to vda (under /var/tmp), plus what fsync and stride "
            "write in their time at the device's speed; each file is removed after its step, and "
            "a step needs at most a quarter of the 100 GiB free\n");
}

}  // namespace
}  // namespace writelab
