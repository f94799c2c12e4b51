// SPDX-License-Identifier: MIT
// The fsync loop on a real file, with injected faults (io/fault_engine.h): an unsupported method is
// a row that says so, a mid-run error is a failure, and nothing is counted that did not happen.
#include "experiments/fsync/sync_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "io/fault_engine.h"
#include "io/file.h"

namespace writelab {
namespace {

class FsyncLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fd = CreateOwnFile("/var/tmp", "fsync-loop-test", O_WRONLY, &path_);
    ASSERT_TRUE(fd.has_value());
    fd_ = std::move(*fd);
    spec_.count = 4;
    spec_.interval_ns = 0;
    spec_.write_size = 4096;
  }
  void TearDown() override { unlink(path_.c_str()); }
  // A pwrite engine on the test file, failing as plan says.
  SyncRun Measure(SyncMethod m, FaultPlan plan, uint64_t* writes = nullptr) {
    FaultInjector faults(plan);
    const SyncMethodInfo& info = InfoOf(m);
    auto engine = faults.Wrap(info.rwf_flags ? MakePwritev2Engine(fd_.get(), info.rwf_flags)
                                             : MakePwriteEngine(fd_.get()));
    SyncRun run = MeasureSyncMethod(spec_, info, *engine, data_, ctx_);
    if (writes) *writes = engine->syscalls();
    return run;
  }
  static constexpr FaultPlan kNoFault{FaultOp::kAdvise, 1, EIO};  // the loop never advises
  std::string path_;
  UniqueFd fd_;
  FsyncSpec spec_;
  RunContext ctx_;
  char data_[4096] = {};
};

TEST_F(FsyncLoop, RefusedFlagOnTheFirstWriteIsUnsupported) {
  SyncRun run = Measure(SyncMethod::kRwfDsync, {FaultOp::kWrite, 1, EOPNOTSUPP});
  EXPECT_EQ(run.outcome.status, RowStatus::kUnsupported);
  EXPECT_EQ(run.outcome.error, EOPNOTSUPP);
  EXPECT_NE(run.outcome.message.find("pwritev2"), std::string::npos) << run.outcome.message;
  EXPECT_EQ(run.total_latency.count(), 0u);
}

TEST_F(FsyncLoop, LaterWriteErrorIsAFailureAndKeepsWhatWasMeasured) {
  SyncRun run = Measure(SyncMethod::kFsync, {FaultOp::kWrite, 3, EIO});
  EXPECT_EQ(run.outcome.status, RowStatus::kFailed);
  EXPECT_EQ(run.outcome.error, EIO);
  EXPECT_EQ(run.total_latency.count(), 2u);
  EXPECT_EQ(run.sync_latency.count(), 2u);
  EXPECT_EQ(run.samples.size(), 2u);
}

TEST_F(FsyncLoop, SyncErrorIsAFailureWithItsErrno) {
  SyncRun run = Measure(SyncMethod::kFdatasync, {FaultOp::kSync, 2, ENOSPC});
  EXPECT_EQ(run.outcome.status, RowStatus::kFailed);
  EXPECT_EQ(run.outcome.error, ENOSPC);
  EXPECT_NE(run.outcome.message.find("fdatasync"), std::string::npos) << run.outcome.message;
  EXPECT_EQ(run.sync_latency.count(), 1u);
  EXPECT_EQ(run.write_latency.count(), 2u);  // the second write happened, its sync failed
}

TEST_F(FsyncLoop, SfrCountsBothCallsAsOneSync) {
  // sync:2 is the fdatasync after the first sync_file_range.
  SyncRun run = Measure(SyncMethod::kSfr, {FaultOp::kSync, 4, EIO});
  EXPECT_EQ(run.outcome.status, RowStatus::kFailed);
  EXPECT_EQ(run.sync_latency.count(), 1u);  // the first iteration's pair
}

TEST_F(FsyncLoop, WriteIsTheSyncForOsync) {
  uint64_t calls = 0;
  SyncRun run = Measure(SyncMethod::kOsync, kNoFault, &calls);
  EXPECT_EQ(run.outcome.status, RowStatus::kOk);
  EXPECT_EQ(run.sync_latency.count(), 0u);
  EXPECT_EQ(run.total_latency.count(), 4u);
  EXPECT_EQ(calls, 4u);  // four writes and no sync call
}

TEST_F(FsyncLoop, SamplesAreInTimeOrder) {
  spec_.interval_ns = 1'000'000;
  SyncRun run = Measure(SyncMethod::kFdatasync, kNoFault);
  ASSERT_EQ(run.samples.size(), 4u);
  for (size_t i = 1; i < run.samples.size(); ++i)
    EXPECT_GE(run.samples[i][0] - run.samples[i - 1][0], 0.001);
}

}  // namespace
}  // namespace writelab
