// SPDX-License-Identifier: MIT
#include "io/own_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "io/file.h"

namespace writelab {
namespace {

class OwnFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("writelab-own-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    RemoveOwnFilesOnSignal(false);
    std::filesystem::remove_all(dir_);
  }
  std::string Make() {
    std::string path;
    auto fd = CreateOwnFile(dir_, "own", O_WRONLY, &path);
    EXPECT_TRUE(fd.has_value());
    return path;
  }
  std::string dir_;
};

TEST_F(OwnFiles, TheHandlerRemovesThemOnlyWhenEnabled) {
  const std::string a = Make(), b = Make();
  RemoveOwnFilesNow();  // not enabled: a run on one machine finishes its trial first
  EXPECT_TRUE(std::filesystem::exists(a));
  RemoveOwnFilesOnSignal(true);
  RemoveOwnFilesNow();
  EXPECT_FALSE(std::filesystem::exists(a));
  EXPECT_FALSE(std::filesystem::exists(b));
  RemoveOwnFile(a);  // the owner's own removal after the handler's: nothing more happens
  RemoveOwnFile(b);
}

TEST_F(OwnFiles, RemovedAndKeptFilesAreForgotten) {
  const std::string removed = Make(), kept = Make();
  RemoveOwnFile(removed);
  KeepOwnFile(kept);
  EXPECT_FALSE(std::filesystem::exists(removed));
  RemoveOwnFilesOnSignal(true);
  RemoveOwnFilesNow();
  EXPECT_TRUE(std::filesystem::exists(kept));  // --keep: the handler leaves it
}

TEST_F(OwnFiles, ASlotIsReusedOnceItsFileIsGone) {
  for (int i = 0; i < 3 * kMaxOwnFiles; ++i) RemoveOwnFile(Make());
  const std::string last = Make();
  RemoveOwnFilesOnSignal(true);
  RemoveOwnFilesNow();
  EXPECT_FALSE(std::filesystem::exists(last));
}

TEST_F(OwnFiles, EachFileIsJournaledWithItsInodeUntilRemovedOrKept) {
  std::vector<std::string> recorded;
  std::vector<int> done;
  SetOwnFileJournal({[&](const std::string& path, uint64_t device, uint64_t inode) {
                       struct stat st;
                       EXPECT_EQ(stat(path.c_str(), &st), 0);
                       EXPECT_EQ(static_cast<uint64_t>(st.st_ino), inode);
                       EXPECT_EQ(static_cast<uint64_t>(st.st_dev), device);
                       recorded.push_back(path);
                       return static_cast<int>(recorded.size());
                     },
                     [&](int id) { done.push_back(id); }});
  const std::string removed = Make(), kept = Make();
  EXPECT_EQ(recorded, (std::vector<std::string>{removed, kept}));
  RemoveOwnFile(removed);
  KeepOwnFile(kept);
  EXPECT_EQ(done, (std::vector<int>{1, 2}));
  SetOwnFileJournal({});
  RemoveOwnFile(Make());  // no journal: nothing more recorded
  EXPECT_EQ(recorded.size(), 2u);
}

}  // namespace
}  // namespace writelab
