// SPDX-License-Identifier: MIT
// The one trial loop: its rotation, and what it does with trials that were
// cut short, unsupported or failed.
#include "command/trials.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>

namespace writelab {
namespace {

TEST(Trials, EveryRoundMeasuresEveryCellOnceAndTheFirstPlacesAreSpread) {
  for (size_t cells : {1u, 2u, 5u, 6u, 21u})
    for (int rounds : {1, 2, 3, 5, 6, 12}) {
      std::map<size_t, int> first;
      for (int r = 0; r < rounds; ++r) {
        std::set<size_t> seen;
        for (size_t k = 0; k < cells; ++k) seen.insert(CellAt(k, r, cells, rounds));
        EXPECT_EQ(seen.size(), cells) << cells << " cells, round " << r;
        ++first[CellAt(0, r, cells, rounds)];
      }
      // No cell goes first more than its share, rounded up.
      const int most = (rounds + static_cast<int>(cells) - 1) / static_cast<int>(cells);
      for (auto [cell, n] : first) EXPECT_LE(n, most) << cells << " cells, " << rounds << " rounds";
    }
  EXPECT_EQ(CellAt(0, 1, 6, 3), 2u) << "6 cells, 3 rounds: 0, 2 and 4 go first";
  EXPECT_EQ(CellAt(0, 2, 6, 3), 4u);
}

struct Fake {
  Outcome outcome;
  size_t cell = 0;
};

TEST(Trials, UnsupportedIsNotTriedAgainFailureStopsAndAnInterruptedTrialIsDropped) {
  RunContext ctx;
  std::atomic<bool> interrupted{false};
  ctx.interrupted = &interrupted;
  TrialPlan plan;
  plan.cells = 3;
  plan.rounds = 4;
  plan.name = [](size_t i) { return "cell" + std::to_string(i); };
  std::vector<size_t> measured, kept;
  int calls = 0;
  Status s = RunTrials(
      ctx, plan,
      [&](const TrialSlot& t) {
        measured.push_back(t.cell);
        Fake f{{}, t.cell};
        if (t.cell == 1) f.outcome.Fail(EOPNOTSUPP, "x", Feature::kRwfDontcache);
        if (++calls == 7) f.outcome.Fail(EIO, "pwrite");
        return f;
      },
      [&](const TrialSlot&, Fake&& f) { kept.push_back(f.cell); });
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().Message().find(": pwrite: Input/output error"), std::string::npos)
      << s.error().Message();
  EXPECT_EQ(std::count(measured.begin(), measured.end(), 1u), 1) << "unsupported: measured once";
  EXPECT_EQ(kept.size(), measured.size()) << "failed and unsupported trials are kept";

  measured.clear();
  kept.clear();
  Status cut = RunTrials(
      ctx, plan,
      [&](const TrialSlot& t) {
        measured.push_back(t.cell);
        Fake f{{}, t.cell};
        if (measured.size() == 4) {
          f.outcome.interrupted = true;
          interrupted = true;
        }
        return f;
      },
      [&](const TrialSlot&, Fake&& f) { kept.push_back(f.cell); });
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().Message(), "interrupted");
  EXPECT_EQ(measured.size(), 4u);
  EXPECT_EQ(kept.size(), 3u) << "the trial cut short is no measurement";
  EXPECT_TRUE(
      RunTrials(
          ctx, plan, [&](const TrialSlot&) { return Fake{}; }, [&](const TrialSlot&, Fake&&) {})
          .error()
          .Message() == "interrupted")
      << "an interrupt before a trial ends the loop";
}

TEST(Trials, TheRotationNoteIsForMoreThanOneRound) {
  EXPECT_EQ(RotationNote(1), "");
  EXPECT_EQ(RotationNote(3, "steps"),
            "the order of the steps rotates each round; figures are medians over rounds with "
            "min-max");
}

}  // namespace
}  // namespace writelab
