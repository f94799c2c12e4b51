// SPDX-License-Identifier: MIT
// Result files: what WriteFileAtomically does to each kind of destination.
#include "report/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "expect_ok.h"

#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::Slurp;
using ::writelab::testing::TempDir;
using ::writelab::testing::WriteFile;

class AtomicFile : public ::testing::Test {
 protected:
  std::string dir_ = "/var/tmp/writelab-atomic-test-" + std::to_string(getpid());
  void SetUp() override {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  size_t Entries() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir_),
                                             std::filesystem::directory_iterator()));
  }
};

TEST_F(AtomicFile, CreatesAndReplacesKeepingTheMode) {
  std::string path = dir_ + "/out.json";
  ASSERT_TRUE(WriteFileAtomically(path, "one"));
  EXPECT_EQ(Slurp(path), "one");
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "two"));
  EXPECT_EQ(Slurp(path), "two");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(Entries(), 1u) << "a temporary file was left";
}

TEST_F(AtomicFile, FollowsALinkAndWritesItsTarget) {
  std::string other = dir_ + "/sub";
  std::filesystem::create_directories(other);
  std::string target = other + "/real.json", link = dir_ + "/link.json";
  ASSERT_EQ(symlink("sub/real.json", link.c_str()), 0);  // relative, and dangling for now
  ASSERT_TRUE(WriteFileAtomically(link, "via link"));
  EXPECT_TRUE(std::filesystem::is_symlink(link)) << "the link was replaced";
  EXPECT_EQ(Slurp(target), "via link");
  ASSERT_TRUE(WriteFileAtomically(link, "again"));
  EXPECT_EQ(Slurp(target), "again");
}

TEST_F(AtomicFile, WritesAFifoInPlace) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = Slurp(fifo); });
  Status s = WriteFileAtomically(fifo, "through the pipe");
  reader.join();
  ASSERT_OK(s);
  EXPECT_EQ(got, "through the pipe");
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a file";
}

TEST_F(AtomicFile, WritesACharacterDeviceInPlace) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: mknod";
  std::string null = dir_ + "/null";
  ASSERT_EQ(mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_TRUE(WriteFileAtomically(null, "discarded"));
  struct stat st;
  ASSERT_EQ(lstat(null.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced by a file";
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(AtomicFile, RefusesALinkOfAnotherUserAndLinksIntoProc) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: lchown";
  std::string victim = dir_ + "/victim", link = dir_ + "/planted.json";
  std::ofstream(victim) << "keep";
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  ASSERT_EQ(lchown(link.c_str(), 65534, 65534), 0);
  Status s = WriteFileAtomically(link, "overwritten");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().Message().find("belongs to uid 65534"), std::string::npos);
  EXPECT_EQ(Slurp(victim), "keep");
  // A link of root's own into another process's descriptors is refused too.
  std::string proc_link = dir_ + "/proc.json";
  ASSERT_EQ(symlink("/proc/1/fd/0", proc_link.c_str()), 0);
  EXPECT_FALSE(WriteFileAtomically(proc_link, "x"));
}

TEST_F(AtomicFile, RefusesADirectory) {
  Status s = WriteFileAtomically(dir_, "x");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().Message().find("is a directory"), std::string::npos);
}

}  // namespace
}  // namespace writelab
