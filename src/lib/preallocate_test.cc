// SPDX-License-Identifier: MIT
// Preallocate: each mode makes the calls it documents, kBest falls back only
// when the kernel does not offer write-zeroes and says so, and on a real
// file the extents are what the mode promises (FIEMAP).
#include "writelab/preallocate.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "port/linux_compat.h"

namespace writelab {
namespace {

// Records every call; fallocate of the flags in `refuse` fails with `err`.
class FakeOps final : public PreallocateOps {
 public:
  int Fallocate(int mode, uint64_t offset, uint64_t length) override {
    calls.push_back("fallocate " + std::to_string(mode) + " " + std::to_string(offset) + " " +
                    std::to_string(length));
    return mode == refuse ? -err : 0;
  }
  int WriteZeros(uint64_t offset, uint64_t length) override {
    calls.push_back("zeros " + std::to_string(offset) + " " + std::to_string(length));
    return 0;
  }
  int GrowTo(uint64_t size) override {
    calls.push_back("grow " + std::to_string(size));
    return 0;
  }
  long FileSystemType() override { return fs; }

  std::vector<std::string> calls;
  int refuse = -1, err = EOPNOTSUPP;
  long fs = EXT4_SUPER_MAGIC;
};

TEST(Preallocate, EachModeMakesItsCall) {
  struct Case {
    PreallocateMode mode;
    std::string call;
    bool written;
  };
  const Case cases[] = {
      {PreallocateMode::kSparse, "grow 12288", false},
      {PreallocateMode::kFallocate, "fallocate 0 4096 8192", false},
      {PreallocateMode::kKeepSize, "fallocate 1 4096 8192", false},
      {PreallocateMode::kZeroRange, "fallocate 16 4096 8192", false},
      {PreallocateMode::kWriteZeroes, "fallocate 128 4096 8192", true},
      {PreallocateMode::kZeroFill, "zeros 4096 8192", true},
  };
  for (const Case& c : cases) {
    FakeOps ops;
    auto p = Preallocate(ops, 4096, 8192, c.mode);
    ASSERT_TRUE(p) << PreallocateModeName(c.mode);
    EXPECT_EQ(p->mode, c.mode);
    EXPECT_EQ(p->written_extents, c.written) << PreallocateModeName(c.mode);
    EXPECT_EQ(p->zero_bytes, c.mode == PreallocateMode::kZeroFill ? 8192u : 0u);
    EXPECT_EQ(ops.calls, std::vector<std::string>{c.call});
    EXPECT_EQ(p->why.rfind(PreallocateModeName(c.mode), 0), 0u) << p->why;
  }
}

TEST(Preallocate, AnExplicitModeThatFailsIsAnErrorNamingTheCall) {
  FakeOps ops;
  ops.refuse = FALLOC_FL_WRITE_ZEROES;
  auto p = Preallocate(ops, 0, 4096, PreallocateMode::kWriteZeroes);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, EOPNOTSUPP);
  EXPECT_EQ(p.error().context, "fallocate FALLOC_FL_WRITE_ZEROES at 0, 4096 bytes");
  EXPECT_EQ(ops.calls.size(), 1u) << "no fallback for an explicit mode";
  EXPECT_FALSE(Preallocate(ops, 0, 0, PreallocateMode::kSparse)) << "empty range";
  EXPECT_FALSE(Preallocate(ops, UINT64_MAX, 2, PreallocateMode::kSparse)) << "wraps";
}

TEST(Preallocate, BestUsesWriteZeroesWhereOffered) {
  FakeOps ops;
  auto p = Preallocate(ops, 0, 1 << 20, PreallocateMode::kBest);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->mode, PreallocateMode::kWriteZeroes);
  EXPECT_TRUE(p->written_extents);
  EXPECT_EQ(ops.calls, std::vector<std::string>{"fallocate 128 0 1048576"});
}

TEST(Preallocate, BestWritesZerosWhenWriteZeroesIsNotOfferedAndSaysWhy) {
  for (int err : {EOPNOTSUPP, EINVAL, ENOSYS}) {
    FakeOps ops;
    ops.refuse = FALLOC_FL_WRITE_ZEROES;
    ops.err = err;
    auto p = Preallocate(ops, 0, 4096, PreallocateMode::kBest);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->mode, PreallocateMode::kZeroFill);
    EXPECT_EQ(p->zero_bytes, 4096u);
    EXPECT_NE(p->why.find(ErrnoName(err)), std::string::npos) << p->why;
    EXPECT_EQ(ops.calls.back(), "zeros 0 4096");
  }
}

TEST(Preallocate, BestDoesNotHideARealFailure) {
  FakeOps ops;
  ops.refuse = FALLOC_FL_WRITE_ZEROES;
  ops.err = ENOSPC;
  auto p = Preallocate(ops, 0, 4096, PreallocateMode::kBest);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ENOSPC);
  EXPECT_EQ(ops.calls.size(), 1u);
}

TEST(Preallocate, BestOnBtrfsReservesWithFallocate) {
  FakeOps ops;
  ops.fs = BTRFS_SUPER_MAGIC;
  auto p = Preallocate(ops, 0, 4096, PreallocateMode::kBest);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->mode, PreallocateMode::kFallocate);
  EXPECT_NE(p->why.find("btrfs"), std::string::npos);
}

// Extents of fd: total and unwritten.
struct Extents {
  int total = 0, unwritten = 0;
};
Extents Fiemap(int fd) {
  std::vector<char> buf(sizeof(fiemap) + 64 * sizeof(fiemap_extent));
  auto* fm = reinterpret_cast<fiemap*>(buf.data());
  fm->fm_length = FIEMAP_MAX_OFFSET;
  fm->fm_flags = FIEMAP_FLAG_SYNC;
  fm->fm_extent_count = 64;
  Extents e;
  if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0) return {-1, -1};
  e.total = static_cast<int>(fm->fm_mapped_extents);
  for (unsigned i = 0; i < fm->fm_mapped_extents; ++i)
    e.unwritten += (fm->fm_extents[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0;
  return e;
}

class PreallocateFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/var/tmp/writelab-preallocate-XXXXXX";
    fd_ = mkstemp(path);
    ASSERT_GE(fd_, 0);
    unlink(path);
  }
  void TearDown() override { close(fd_); }
  int fd_ = -1;
};

TEST_F(PreallocateFile, BestLeavesWrittenZerosAndFallocateUnwrittenExtents) {
  auto best = Preallocate(fd_, 0, 1 << 20, PreallocateMode::kBest);
  ASSERT_TRUE(best) << best.error().Message();
  struct stat st;
  ASSERT_EQ(fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  std::vector<char> back(1 << 20, 'x');
  ASSERT_EQ(pread(fd_, back.data(), back.size(), 0), 1 << 20);
  EXPECT_EQ(back, std::vector<char>(1 << 20, '\0'));
  Extents e = Fiemap(fd_);
  if (e.total < 0) GTEST_SKIP() << "FIEMAP unsupported on /var/tmp";
  EXPECT_GE(e.total, 1);
  EXPECT_EQ(e.unwritten, 0) << best->why;

  auto fa = Preallocate(fd_, 1 << 20, 1 << 20, PreallocateMode::kFallocate);
  if (!fa && fa.error().code == EOPNOTSUPP) GTEST_SKIP() << "no fallocate on /var/tmp";
  ASSERT_TRUE(fa) << fa.error().Message();
  ASSERT_EQ(fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_size, 2 << 20);
  EXPECT_GE(Fiemap(fd_).unwritten, 1) << "ext4 and xfs allocate unwritten extents";
}

TEST_F(PreallocateFile, SparseGrowsTheSizeOnlyAndAllocatesNothing) {
  auto p = Preallocate(fd_, 0, 8 << 20, PreallocateMode::kSparse);
  ASSERT_TRUE(p) << p.error().Message();
  struct stat st;
  ASSERT_EQ(fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_size, 8 << 20);
  EXPECT_EQ(st.st_blocks, 0);
  ASSERT_TRUE(Preallocate(fd_, 0, 4096, PreallocateMode::kSparse));
  ASSERT_EQ(fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_size, 8 << 20) << "sparse never shrinks";
}

}  // namespace
}  // namespace writelab
