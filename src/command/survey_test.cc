// SPDX-License-Identifier: MIT
// The survey's plan: every experiment is planned. (The random background's
// span is fsync's --bg-span auto, AutoStreamSize's rule, tested with it.)
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
