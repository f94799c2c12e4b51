// SPDX-License-Identifier: MIT
// The writeback window on a real file: what lies more than a window behind
// the newest write is written back and, with drop, out of the page cache.
#include "lib/writeback_window.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace writelab {
namespace {

// Resident pages of [off, off+len) of fd.
size_t ResidentPages(int fd, uint64_t off, uint64_t len) {
  void* p = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(off));
  if (p == MAP_FAILED) return SIZE_MAX;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((len + page - 1) / page);
  size_t resident = 0;
  if (mincore(p, len, vec.data()) == 0)
    for (unsigned char v : vec) resident += v & 1;
  munmap(p, len);
  return resident;
}

class WindowTest : public ::testing::Test {
 protected:
  std::string path_ = "/var/tmp/writelab-window-test-" + std::to_string(getpid());
  int fd_ = -1;
  void SetUp() override {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    ASSERT_GE(fd_, 0);
    struct statfs fs;
    ASSERT_EQ(fstatfs(fd_, &fs), 0);
    if (fs.f_type == 0x01021994) GTEST_SKIP() << "tmpfs keeps pages whatever DONTNEED says";
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  // Writes `windows` windows of 1 MiB, calling AfterWrite after each.
  void Write(WritebackWindow& w, int windows) {
    std::vector<char> block(1 << 20, 'x');
    for (int i = 0; i < windows; ++i) {
      uint64_t off = static_cast<uint64_t>(i) << 20;
      ASSERT_EQ(pwrite(fd_, block.data(), block.size(), static_cast<off_t>(off)),
                static_cast<ssize_t>(block.size()));
      const char* what = "";
      FdWindowCalls calls(fd_);
      ASSERT_EQ(w.AfterWrite(calls, off, block.size(), &what), 0) << what;
    }
  }
};

TEST_F(WindowTest, DropKeepsOnlyTheNewestWindowsCached) {
  WritebackWindow w(1 << 20, true);
  Write(w, 8);
  // Everything up to one window behind the newest is dropped; the newest two
  // windows may stay.
  EXPECT_EQ(ResidentPages(fd_, 0, 6u << 20), 0u);
}

// Finish at the end of a stream leaves nothing of it cached with drop, and
// nothing dirty without: what writeback would have written, waited for.
TEST_F(WindowTest, FinishDropsTheTailWithoutAnFsync) {
  WritebackWindow w(1 << 20, true);
  Write(w, 8);
  FdWindowCalls calls(fd_);
  const char* what = "";
  ASSERT_EQ(w.Finish(calls, 8u << 20, &what), 0) << what;
  EXPECT_EQ(ResidentPages(fd_, 0, 8u << 20), 0u);
  EXPECT_EQ(w.Finish(calls, 8u << 20, &what), 0) << "twice is nothing";
}

// A window smaller than the writes' folios: each drop reaches back to the
// folio the last one cut (a 4 KiB window behind 1 MiB writes once left 57
// of 64 MiB cached, though every range was waited for and dropped).
TEST_F(WindowTest, ASmallWindowStillDropsWholeFolios) {
  WritebackWindow w(4096, true);
  Write(w, 16);
  EXPECT_LE(ResidentPages(fd_, 0, 16u << 20), (3u << 20) / 4096) << "at most the newest folios";
  FdWindowCalls calls(fd_);
  const char* what = "";
  ASSERT_EQ(w.Finish(calls, 16u << 20, &what), 0) << what;
  EXPECT_EQ(ResidentPages(fd_, 0, 16u << 20), 0u);
}

TEST_F(WindowTest, WithoutDropPagesStayButAreClean) {
  WritebackWindow w(1 << 20, false);
  Write(w, 8);
  EXPECT_GT(ResidentPages(fd_, 0, 6u << 20), 0u);
}

TEST_F(WindowTest, AFailedCallIsReturnedAndNamed) {
  WritebackWindow w(1 << 20, true);
  const char* what = "";
  FdWindowCalls bad(-1);
  EXPECT_EQ(w.AfterWrite(bad, 0, 4096, &what), -EBADF);
  EXPECT_STREQ(what, "sync_file_range");
}

// A DONTNEED that fails stops the window: the experiment and the library
// report it the same way (docs/library.md).
TEST_F(WindowTest, AFailedDropIsReturnedAndNamed) {
  struct FailingDrop final : WindowCalls {
    explicit FailingDrop(int fd) : fd_calls(fd) {}
    int SyncRange(uint64_t o, uint64_t l, unsigned f) override {
      return fd_calls.SyncRange(o, l, f);
    }
    int DropCache(uint64_t, uint64_t) override { return -EIO; }
    int Datasync() override { return fd_calls.Datasync(); }
    FdWindowCalls fd_calls;
  } calls(fd_);
  WritebackWindow w(1 << 20, true);
  std::vector<char> block(1 << 20, 'x');
  int rc = 0;
  const char* what = "";
  for (int i = 0; i < 4 && rc == 0; ++i) {
    ASSERT_EQ(pwrite(fd_, block.data(), block.size(), static_cast<off_t>(i) << 20),
              static_cast<ssize_t>(block.size()));
    rc = w.AfterWrite(calls, static_cast<uint64_t>(i) << 20, block.size(), &what);
  }
  EXPECT_EQ(rc, -EIO);
  EXPECT_STREQ(what, "posix_fadvise");
}

}  // namespace
}  // namespace writelab
