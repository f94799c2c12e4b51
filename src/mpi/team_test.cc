// SPDX-License-Identifier: MIT
#include "mpi/team.h"
#include "expect_ok.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

// A team whose all-reduce answers from a script: what the other ranks said.
class ScriptedTeam final : public Team {
 public:
  explicit ScriptedTeam(std::atomic<bool>* interrupted) : Team(interrupted) {}
  int rank() const override { return 0; }
  int size() const override { return 3; }
  std::string library() const override { return "scripted"; }
  std::optional<std::vector<std::string>> Gather(const std::string&) override { return {}; }
  std::optional<std::string> Broadcast(const std::string& s) override { return s; }
  bool MergeToRoot(Histogram&) override { return true; }
  std::vector<ClockOffset> MeasureClocks() override { return {}; }

  struct Answer {
    bool reached;  // false: the all-reduce could not finish
    int code, at;
  };
  std::deque<Answer> answers;
  std::vector<int> sent;

 protected:
  bool AllMax(int code, int* max_code, int* at_rank) override {
    sent.push_back(code);
    Answer a = answers.front();
    answers.pop_front();
    *max_code = std::max(code, a.code);
    *at_rank = code >= a.code ? 0 : a.at;
    return a.reached;
  }
};

TEST(TeamStep, GoesOnWhileEveryRankDoes) {
  std::atomic<bool> interrupted{false};
  ScriptedTeam team(&interrupted);
  team.answers = {{true, 0, 0}, {true, 0, 0}};
  EXPECT_TRUE(team.Step());
  EXPECT_TRUE(team.Step());
  EXPECT_FALSE(team.stopped());
}

TEST(TeamStep, StoppedByAnotherIsOnlyAnotherRanksFailure) {
  std::atomic<bool> interrupted{false};
  ScriptedTeam failed_here(&interrupted), failed_there(&interrupted),
      interrupted_there(&interrupted);
  failed_here.answers = {{true, 0, 0}};
  EXPECT_FALSE(failed_here.Step(true));  // rank 0 (this one) failed: its own reason counts
  EXPECT_FALSE(failed_here.stopped_by_another());
  failed_there.answers = {{true, 2, 2}};
  EXPECT_FALSE(failed_there.Step());
  EXPECT_TRUE(failed_there.stopped_by_another());
  interrupted_there.answers = {{true, 1, 1}};
  EXPECT_FALSE(interrupted_there.Step());
  EXPECT_FALSE(interrupted_there.stopped_by_another());  // an interrupt is every rank's
  EXPECT_TRUE(interrupted.load());
}

TEST(TeamStep, ARankThatFailedStopsEveryStepAfter) {
  std::atomic<bool> interrupted{false};
  ScriptedTeam team(&interrupted);
  team.answers = {{true, 2, 2}};
  EXPECT_FALSE(team.Step());
  EXPECT_EQ(team.StopReason().Message(), "stopped: rank 2 failed");
  EXPECT_FALSE(team.Step());  // no second all-reduce: every rank stopped at the same step
  EXPECT_EQ(team.sent.size(), 1u);
  EXPECT_FALSE(interrupted.load());  // a failure elsewhere is not an interrupt here
}

TEST(TeamStep, APeersInterruptInterruptsThisRankToo) {
  std::atomic<bool> interrupted{false};
  ScriptedTeam team(&interrupted);
  team.answers = {{true, 1, 1}};
  EXPECT_FALSE(team.Step());
  EXPECT_TRUE(team.interrupted());
  EXPECT_TRUE(interrupted.load());
  EXPECT_EQ(team.StopReason().Message(), "interrupted");
}

TEST(TeamStep, ThisRanksFailureAndInterruptAreWhatItSends) {
  std::atomic<bool> interrupted{false};
  ScriptedTeam team(&interrupted);
  team.answers = {{true, 0, 0}};
  EXPECT_FALSE(team.Step(true));
  EXPECT_EQ(team.sent, std::vector<int>{2});
  team.BeginExperiment();
  interrupted = true;
  team.answers = {{true, 0, 0}};
  EXPECT_FALSE(team.Step());
  EXPECT_EQ(team.sent.back(), 1);
}

TEST(TeamStep, AStepThatCannotFinishBreaksTheTeam) {
  std::atomic<bool> interrupted{true};
  ScriptedTeam team(&interrupted);
  team.answers = {{false, 0, 0}};
  EXPECT_FALSE(team.Step());
  EXPECT_TRUE(team.broken());
  EXPECT_NE(team.StopReason().Message().find("not every rank answered"), std::string::npos);
  team.BeginExperiment();
  EXPECT_FALSE(team.Step());  // broken for good: no collective is tried again
  EXPECT_EQ(team.sent.size(), 1u);
}

TEST(TeamRecord, HistogramsAddUpPerRowAndKey) {
  std::atomic<bool> interrupted{false};
  ScriptedTeam team(&interrupted);
  Histogram a, b;
  a.Record(1000);
  b.Record(2000);
  b.Record(3000);
  team.Record({"plain", 0, Role::kMeasure, 0, 1, 8, 0, "", {}}, {{"write", &a}});
  team.Record({"plain", 1, Role::kMeasure, 0, 1, 8, 0, "", {}}, {{"write", &b}});
  EXPECT_EQ(team.spans().size(), 2u);
  EXPECT_EQ(team.histograms().at({"plain", "write"}).count(), 3u);
  team.BeginExperiment();
  EXPECT_TRUE(team.spans().empty());
  EXPECT_TRUE(team.histograms().empty());
  EXPECT_EQ(team.role(), Role::kMeasure);
}

TEST(ParseRanks, ListsAndRanges) {
  EXPECT_EQ(ParseRanks("0", 4), std::vector<int>{0});
  EXPECT_EQ(ParseRanks("1-3", 4), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(ParseRanks("0,2-3", 4), (std::vector<int>{0, 2, 3}));
  EXPECT_NE(ErrorOf(ParseRanks("4", 4)).find("does not exist (4 ranks: 0-3)"), std::string::npos);
  EXPECT_NE(ErrorOf(ParseRanks("3-1", 4)).find("runs backwards"), std::string::npos);
  EXPECT_NE(ErrorOf(ParseRanks("1,1", 4)).find("given twice"), std::string::npos);
  for (const char* bad : {"", "a", "1-", "-1", "1,,2"}) EXPECT_FALSE(ParseRanks(bad, 4)) << bad;
}

TEST(LaunchFromEnvironment, OpenMpiPmixAndPmiLaunchers) {
  for (const char* v :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_NTASKS"})
    unsetenv(v);
  EXPECT_FALSE(LaunchFromEnvironment().launched);
  setenv("SLURM_NTASKS", "4", 1);  // srun without MPI: not a launch by itself
  EXPECT_FALSE(LaunchFromEnvironment().launched);
  setenv("PMI_RANK", "1", 1);
  EXPECT_TRUE(LaunchFromEnvironment().launched);
  EXPECT_EQ(LaunchFromEnvironment().size, 4);
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  EXPECT_EQ(LaunchFromEnvironment().size, 3);
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "SLURM_NTASKS"}) unsetenv(v);
}

}  // namespace
}  // namespace writelab
