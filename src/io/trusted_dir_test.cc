// SPDX-License-Identifier: MIT
// Trusted directories on real directories: ownership and modes made by the
// test (chown needs root; those cases skip without it).
#include "io/trusted_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "expect_ok.h"

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

class TrustedDir : public ::testing::Test {
 protected:
  std::string base_ = "/var/tmp/writelab-trusted-test-" + std::to_string(getpid());
  void SetUp() override {
    std::filesystem::remove_all(base_);
    ASSERT_EQ(mkdir(base_.c_str(), 0755), 0);
  }
  void TearDown() override { std::filesystem::remove_all(base_); }
  std::string Make(const std::string& name, mode_t mode) {
    std::string p = base_ + "/" + name;
    EXPECT_EQ(mkdir(p.c_str(), 0700), 0);
    EXPECT_EQ(chmod(p.c_str(), mode), 0);
    return p;
  }
};

TEST_F(TrustedDir, CreatesMissingDirectories0700WhateverTheUmask) {
  mode_t old = umask(0);
  auto fd = OpenTrustedDir(base_ + "/a/b", DirUse::kPrivate, true);
  umask(old);
  ASSERT_OK(fd);
  struct stat st;
  ASSERT_EQ(fstat(fd->get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat((base_ + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(TrustedDir, RefusesWritableByOthersForPrivateUse) {
  std::string open = Make("open", 0777);
  auto fd = OpenTrustedDir(open, DirUse::kPrivate, false);
  ASSERT_FALSE(fd.has_value());
  EXPECT_NE(fd.error().Message().find(open + " is writable by group or others"), std::string::npos)
      << fd.error().Message();
  std::string sticky = Make("sticky", 01777);
  EXPECT_FALSE(OpenTrustedDir(sticky, DirUse::kPrivate, false).has_value());
}

TEST_F(TrustedDir, SharedUseAcceptsStickyRefusesOpen) {
  EXPECT_TRUE(OpenTrustedDir(Make("sticky", 01777), DirUse::kShared, false).has_value());
  auto open = OpenTrustedDir(Make("open", 0777), DirUse::kShared, false);
  ASSERT_FALSE(open.has_value());
  EXPECT_NE(open.error().Message().find("not sticky"), std::string::npos);
  // Below an open directory, even a private one is refused: its entry could
  // be swapped.
  std::string inner = base_ + "/open/inner";
  ASSERT_EQ(mkdir(inner.c_str(), 0700), 0);
  EXPECT_FALSE(OpenTrustedDir(inner, DirUse::kPrivate, false).has_value());
  EXPECT_EQ(ErrorOf(CheckWorkDir("--dir", inner)).substr(0, 7), "--dir: ");
}

TEST_F(TrustedDir, RefusesASymbolicLinkInThePath) {
  std::string real = Make("real", 0700);
  std::string link = base_ + "/link";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  // A link of this user's (or root's) is followed; a component that is not a
  // directory is refused.
  EXPECT_TRUE(OpenTrustedDir(link, DirUse::kPrivate, false).has_value());
  std::string file = base_ + "/file";
  ASSERT_EQ(close(creat(file.c_str(), 0600)), 0);
  EXPECT_FALSE(OpenTrustedDir(file, DirUse::kShared, false).has_value());
}

// Another user's link, in a sticky directory as in /tmp, decides nothing:
// refused whatever it points to, and the path is never resolved first.
TEST_F(TrustedDir, RefusesAnotherUsersSymbolicLink) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: lchown";
  std::string sticky = Make("sticky", 01777);
  std::string real = Make("real", 0700);
  std::string link = sticky + "/theirs";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  ASSERT_EQ(lchown(link.c_str(), 65534, 65534), 0);
  auto fd = OpenTrustedDir(link, DirUse::kPrivate, false);
  ASSERT_FALSE(fd.has_value());
  EXPECT_NE(fd.error().Message().find("symbolic link of uid 65534"), std::string::npos)
      << fd.error().Message();
  EXPECT_FALSE(OpenTrustedDir(link + "/below", DirUse::kPrivate, true).has_value());
  EXPECT_FALSE(std::filesystem::exists(real + "/below")) << "created through their link";
  // Root's own link in the same place is followed.
  std::string ours = sticky + "/ours";
  ASSERT_EQ(symlink(real.c_str(), ours.c_str()), 0);
  EXPECT_TRUE(OpenTrustedDir(ours, DirUse::kPrivate, false).has_value());
}

TEST_F(TrustedDir, RefusesADirectoryOwnedByAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: chown";
  std::string theirs = Make("theirs", 0755);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  auto fd = OpenTrustedDir(theirs, DirUse::kPrivate, false);
  ASSERT_FALSE(fd.has_value());
  EXPECT_NE(fd.error().Message().find("owned by uid 65534"), std::string::npos)
      << fd.error().Message();
  EXPECT_FALSE(OpenTrustedDir(theirs, DirUse::kShared, false).has_value());
  // Nor anything below it.
  ASSERT_EQ(mkdir((theirs + "/mine").c_str(), 0700), 0);
  EXPECT_FALSE(OpenTrustedDir(theirs + "/mine", DirUse::kPrivate, false).has_value());
}

TEST(AbsolutePath, ResolvesTheExistingPrefix) {
  EXPECT_EQ(AbsolutePath("/").value(), "/");
  EXPECT_EQ(AbsolutePath("/var/tmp/../tmp/no-such-writelab-dir").value(),
            "/var/tmp/no-such-writelab-dir");
  EXPECT_FALSE(AbsolutePath("/var/tmp/no-such-writelab-dir/..").has_value());
  EXPECT_EQ(AbsolutePath("/var/tmp/no-such-writelab-dir/x").value(),
            "/var/tmp/no-such-writelab-dir/x");
}

}  // namespace
}  // namespace writelab
