// SPDX-License-Identifier: MIT
#include "experiments/prealloc/rows.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "row_figures.h"

namespace writelab {
namespace {

using test_support::FigureMedian;

// A file of the test's own in /var/tmp, removed at the end.
class OwnFile {
 public:
  OwnFile() : fd_(mkstemp(path_)) {}
  OwnFile(const OwnFile&) = delete;
  OwnFile& operator=(const OwnFile&) = delete;
  ~OwnFile() {
    if (fd_ >= 0) close(fd_);
    unlink(path_);
  }
  int fd() const { return fd_; }
  std::string path() const { return path_; }

 private:
  char path_[40] = "/var/tmp/writelab-rows-test-XXXXXX";
  int fd_;
};

TEST(PreallocRows, ExtentsBeforeAndAfterAWriteIntoFallocatedSpace) {
  OwnFile file;
  ASSERT_GE(file.fd(), 0);
  if (fallocate(file.fd(), 0, 0, 1 << 20) != 0)
    GTEST_SKIP() << "fallocate on /var/tmp: " << strerror(errno);
  PreallocTrial t;
  auto before = SnapshotExtents(file.fd(), file.path(), "before", t.figures);
  ASSERT_FALSE(before) << before->Message();
  if (!t.figures.contains("extents_before")) GTEST_SKIP() << "/var/tmp has no FIEMAP";
  char block[4096] = {1};
  ASSERT_EQ(pwrite(file.fd(), block, sizeof block, 64 * 4096), 4096);
  ASSERT_EQ(fsync(file.fd()), 0);
  auto after = SnapshotExtents(file.fd(), file.path(), "after", t.figures);
  ASSERT_FALSE(after) << after->Message();
  t.latency.Record(1'000'000);
  t.figures["workload_s"] = 0.5;

  Row row = PreallocRow("fallocate", t);  // every key measured is in the table
  EXPECT_EQ(row.status, RowStatus::kOk);
  EXPECT_GE(FigureMedian(row, "unwritten_before"), 1);
  EXPECT_EQ(FigureMedian(row, "unwritten_before"), FigureMedian(row, "extents_before"));
  EXPECT_GE(FigureMedian(row, "written_after"), 1);    // the write converted its block
  EXPECT_GE(FigureMedian(row, "unwritten_after"), 1);  // around it, still unwritten
  EXPECT_GT(FigureMedian(row, "extents_after"), FigureMedian(row, "extents_before"));
  EXPECT_EQ(FigureMedian(row, "size_after"), 1 << 20);
  EXPECT_EQ(FigureMedian(row, "allocated_before"), 1 << 20);
  EXPECT_EQ(row.FindLatency("write")->count, 1u);
  EXPECT_EQ(row.figures.front().key, "workload_s");  // table order, prep_s absent
}

TEST(PreallocRows, AnUnsupportedModeIsARowWithTheErrnoAndNoFigures) {
  PreallocTrial t;
  t.figures["prep_s"] = 0.001;  // timed before the refusal
  t.latency.Record(1000);
  t.outcome.Fail(EOPNOTSUPP, "fallocate f", Feature::kFallocateMode);
  Row row = PreallocRow("write-zeroes", t);
  EXPECT_EQ(row.status, RowStatus::kUnsupported);
  EXPECT_EQ(row.error_code, EOPNOTSUPP);
  EXPECT_TRUE(row.figures.empty());
  EXPECT_TRUE(row.latencies.empty());

  PreallocTrial bad;
  bad.outcome.Fail(EINVAL, "fallocate f", Feature::kFallocateMode);  // an unknown mode bit
  EXPECT_EQ(PreallocRow("write-zeroes", bad).status, RowStatus::kUnsupported);
  PreallocTrial io;
  io.outcome.Fail(EIO, "pwrite f at 0");
  EXPECT_EQ(PreallocRow("fallocate", io).status, RowStatus::kFailed);
}

TEST(PreallocRows, AFigureOutsideTheTableIsRefused) {
  PreallocTrial t;
  t.figures["unwriten_after"] = 1;
  EXPECT_THROW(PreallocRow("fallocate", t), std::logic_error);
}

}  // namespace
}  // namespace writelab
