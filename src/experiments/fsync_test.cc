// The fsync loop with fault-injecting engines: an unsupported method is a
// row that says so, a mid-run error is a failure, and nothing is counted
// that did not happen.
#include "experiments/fsync.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "io/file.h"

namespace writelab {
namespace {

class ScriptedEngine final : public WriteEngine {
 public:
  ScriptedEngine(int fail_call, int err) : fail_call_(fail_call), err_(err) {}
  Submit Queue(IoRequest& req) override {
    req.res = calls_++ == fail_call_ ? -err_ : static_cast<int64_t>(req.len);
    return Submit::kCompleted;
  }
  EngineCaps caps() const override { return {}; }
  std::string_view name() const override { return "scripted"; }
  int calls_ = 0;

 private:
  int fail_call_;
  int err_;
};

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
  std::string path_;
  UniqueFd fd_;
  FsyncSpec spec_;
  RunContext ctx_;
  char data_[4096] = {};
};

TEST_F(FsyncLoop, RefusedFlagOnTheFirstWriteIsUnsupported) {
  ScriptedEngine engine(0, EOPNOTSUPP);
  SyncRun run =
      MeasureSyncMethod(spec_, InfoOf(SyncMethod::kRwfDsync), fd_.get(), engine, data_, ctx_);
  EXPECT_EQ(run.status, RowStatus::kUnsupported);
  EXPECT_EQ(run.error, EOPNOTSUPP);
  EXPECT_NE(run.message.find("pwritev2"), std::string::npos) << run.message;
  EXPECT_EQ(run.total_latency.count(), 0u);
}

TEST_F(FsyncLoop, LaterErrorIsAFailureAndKeepsWhatWasMeasured) {
  ScriptedEngine engine(2, EIO);
  SyncRun run =
      MeasureSyncMethod(spec_, InfoOf(SyncMethod::kFsync), fd_.get(), engine, data_, ctx_);
  EXPECT_EQ(run.status, RowStatus::kFailed);
  EXPECT_EQ(run.error, EIO);
  EXPECT_EQ(run.total_latency.count(), 2u);
  EXPECT_EQ(run.sync_latency.count(), 2u);
  EXPECT_EQ(run.samples.size(), 2u);
}

TEST_F(FsyncLoop, WriteIsTheSyncForOsync) {
  ScriptedEngine engine(-1, 0);
  SyncRun run =
      MeasureSyncMethod(spec_, InfoOf(SyncMethod::kOsync), fd_.get(), engine, data_, ctx_);
  EXPECT_EQ(run.status, RowStatus::kOk);
  EXPECT_EQ(run.sync_latency.count(), 0u);
  EXPECT_EQ(run.total_latency.count(), 4u);
  EXPECT_EQ(engine.calls_, 4);
}

TEST_F(FsyncLoop, SamplesAreInTimeOrder) {
  ScriptedEngine engine(-1, 0);
  spec_.interval_ns = 1'000'000;
  SyncRun run =
      MeasureSyncMethod(spec_, InfoOf(SyncMethod::kFdatasync), fd_.get(), engine, data_, ctx_);
  ASSERT_EQ(run.samples.size(), 4u);
  for (size_t i = 1; i < run.samples.size(); ++i)
    EXPECT_GE(run.samples[i][0] - run.samples[i - 1][0], 0.001);
}

}  // namespace
}  // namespace writelab
