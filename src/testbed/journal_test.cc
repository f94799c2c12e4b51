// SPDX-License-Identifier: MIT
// The undo journal's line parser and the sysfs knobs cleanup may write: the
// checks that stand between a journal file and root's actions.
#include "testbed/journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "expect_ok.h"

#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::TempDir;

TEST(ParseJournalLine, ReadsStepsAndDoneMarks) {
  auto step = ParseJournalLine(
      R"({"id":3,"op":"mount","path":"/run/writelab/mnt-1-0","value":"","check":"/dev/loop3"})");
  ASSERT_TRUE(step.has_value()) << step.error();
  EXPECT_EQ(step->id, 3);
  EXPECT_EQ(step->step.op, "mount");
  EXPECT_EQ(step->step.check, "/dev/loop3");
  auto done = ParseJournalLine(R"({"done":3})");
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->done, 3);
  // Journals written before identity checks have no "check".
  EXPECT_TRUE(ParseJournalLine(R"({"id":1,"op":"file","path":"/var/tmp/x","value":""})"));
}

TEST(ParseJournalLine, RefusesWrongTypesAndUnknownSteps) {
  for (const char* bad : {
           "",
           "[1,2]",
           R"({"id":"1","op":"file","path":"/x","value":""})",
           R"({"id":1,"op":7,"path":"/x","value":""})",
           R"({"id":1,"op":"file","path":["/x"],"value":""})",
           R"({"id":0,"op":"file","path":"/x","value":""})",
           R"({"id":4294967297,"op":"file","path":"/x","value":""})",
           R"({"id":1,"op":"exec","path":"/bin/sh","value":""})",
           R"({"id":1,"op":"file","path":"relative","value":""})",
           R"({"id":1,"op":"file","path":"/a/../etc/passwd","value":""})",
           R"({"id":1,"op":"loop","path":"/dev/sda","value":"/x"})",
           R"({"id":1,"op":"pgroup","path":"-1","value":"5"})",
           R"({"done":-1})",
           R"({"done":1.5})",
           R"({"done":1,"id":2})",
       }) {
    EXPECT_FALSE(ParseJournalLine(bad).has_value()) << bad;
  }
}

TEST(ParseJournalLine, SysfsOnlyUnderQueueAndExt4) {
  EXPECT_TRUE(ParseJournalLine(
      R"({"id":1,"op":"sysfs","path":"/sys/block/vda/queue/scheduler","value":"none"})"));
  EXPECT_TRUE(ParseJournalLine(
      R"({"id":1,"op":"sysfs","path":"/sys/fs/ext4/loop3/extent_max_zeroout_kb","value":"32"})"));
  EXPECT_TRUE(ParseJournalLine(
      R"({"id":1,"op":"sysfs","path":"/sys/block/loop3/bdi/strict_limit","value":"0","check":"loop:12"})"));
  EXPECT_FALSE(ParseJournalLine(
      R"({"id":1,"op":"sysfs","path":"/sys/block/loop3/bdi/strict_limit","value":"0"})"))
      << "a bdi step without its image check could be replayed onto another run's device";
  EXPECT_TRUE(ParseJournalLine(
      R"({"id":1,"op":"sysfs","path":"/sys/block/vda/bdi/strict_limit","value":"0","check":"diskseq:9"})"));
  EXPECT_FALSE(ParseJournalLine(
      R"({"id":1,"op":"sysfs","path":"/sys/block/vda/bdi/strict_limit","value":"0","check":"loop:12"})"))
      << "a disk's bdi step is checked by its disk sequence number";
  for (const char* path : {"/proc/sys/kernel/core_pattern", "/sys/block/vda/device/delete",
                           "/sys/block/../../proc/sys/kernel/core_pattern/queue/x",
                           "/sys/fs/ext4/vda/../../../kernel/x", "/sys/block/vda/queue/a/b",
                           "/sys/kernel/mm/transparent_hugepage/enabled"}) {
    std::string line =
        std::string(R"({"id":1,"op":"sysfs","path":")") + path + R"(","value":"|x"})";
    EXPECT_FALSE(ParseJournalLine(line).has_value()) << path;
  }
}

TEST(ParseJournalLine, AnOwnFilesCheckIsItsInode) {
  EXPECT_TRUE(ParseJournalLine(
      R"({"id":1,"op":"file","path":"/var/tmp/d/writelab-stream-7-0","value":"","check":"inode:2049:131"})"));
  for (const char* check : {"inode:", "inode:1", "inode:x:2", "inode:1:", "ino:1:2", "1:2"})
    EXPECT_FALSE(ParseJournalLine(
        std::string(R"({"id":1,"op":"file","path":"/d/f","value":"","check":")") + check + "\"}"))
        << check;
}

TEST(UndoFile, RemovesTheJournaledFileAndNoOtherByItsName) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("writelab-undo-file-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/writelab-stream-1-0";
  auto check_of = [&](const std::string& p) {
    struct stat st;
    EXPECT_EQ(lstat(p.c_str(), &st), 0);
    return "inode:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  };
  std::ofstream(path) << "x";
  const std::string journaled = check_of(path);
  EXPECT_OK(Undo({"file", path, "", journaled}));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_OK(Undo({"file", path, "", journaled}));  // gone already: done
  // Another file by that name since (a later run's, another host's on
  // shared storage): left alone, and said so.
  std::ofstream(path + ".other") << "y";
  std::filesystem::rename(path + ".other", path);
  std::string why;
  EXPECT_OK(Undo({"file", path, "", journaled == check_of(path) ? "inode:0:0" : journaled}, &why));
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(why, "it is another file now");
  // Nor a link in its place.
  std::filesystem::remove(path);
  std::filesystem::create_symlink("/etc/hostname", path);
  EXPECT_OK(Undo({"file", path, "", journaled}, &why));
  EXPECT_TRUE(std::filesystem::is_symlink(path));
  std::filesystem::remove_all(dir);
}

TEST(SysfsDevice, NamesTheDevice) {
  EXPECT_EQ(SysfsDevice("/sys/block/nvme0n1/queue/scheduler"), "nvme0n1");
  EXPECT_EQ(SysfsDevice("/sys/fs/ext4/dm-0/extent_max_zeroout_kb"), "dm-0");
  EXPECT_EQ(SysfsDevice("/sys/block/vda/stat"), "");
  EXPECT_EQ(SysfsDevice("/sys/block/loop3/bdi/strict_limit"), "loop3");
  EXPECT_EQ(SysfsDevice("/sys/block/loop12/bdi/max_ratio_fine"), "loop12");
  EXPECT_EQ(SysfsDevice("/sys/block/vda/bdi/strict_limit"), "vda") << "fsync's bdi=SIZE";
  EXPECT_EQ(SysfsDevice("/sys/block/loop3/bdi/max_bytes"), "") << "restored through its ratio";
  EXPECT_EQ(SysfsDevice("/sys/block/loop3/bdi/read_ahead_kb"), "");
  EXPECT_EQ(SysfsDevice("/sys/class/bdi/7:3/strict_limit"), "");
  EXPECT_EQ(SysfsDevice("/sys/block/../queue/x"), "");
}

TEST(ProcessStartTime, KnowsLiveProcessesOnly) {
  EXPECT_GT(ProcessStartTime(getpid()), 0u);
  EXPECT_EQ(ProcessStartTime(getpid()), ProcessStartTime(getpid()));
  EXPECT_EQ(ProcessStartTime(0x3fffffff), 0u);
}

// A run that crashes: the journal replayed by `writelab cleanup` must leave
// nothing behind whatever the step the run died after. The run makes a tree
// of directories and files, recording each step before making it and
// undoing one of them itself (as the RAII owners do) before it goes on.
class JournalReplay : public ::testing::Test {
 protected:
  TempDir tmp_{"journal-test"};
  void SetUp() override {
    root_ = tmp_.path();
    ASSERT_FALSE(root_.empty());
    journals_ = root_ + "/journals";
    tree_ = root_ + "/tree";
    ASSERT_EQ(mkdir(journals_.c_str(), 0700), 0);
  }

  // The run, as a list of actions; each returns false when it failed.
  std::vector<std::function<bool(UndoJournal&)>> Actions() {
    std::vector<std::function<bool(UndoJournal&)>> a;
    auto step = [&a, this](const char* op, const std::string& rel) {
      std::string path = tree_ + rel;
      a.push_back([op, path](UndoJournal& j) { return j.Record({op, path, "", ""}).has_value(); });
      a.push_back([op, path](UndoJournal&) {
        if (std::string(op) == "dir") return mkdir(path.c_str(), 0700) == 0;
        return static_cast<bool>(std::ofstream(path) << "x");
      });
    };
    step("dir", "");
    step("file", "/a");
    step("dir", "/sub");
    step("file", "/sub/b");
    // The run undoes /sub/b itself (step 4) and marks it done.
    a.push_back([this](UndoJournal&) { return unlink((tree_ + "/sub/b").c_str()) == 0; });
    a.push_back([](UndoJournal& j) { return j.Done(4), true; });
    step("file", "/sub/c");
    return a;
  }

  // Forks a run that performs the first `steps` actions and dies without
  // any destructor running, as a crash or SIGKILL would leave it.
  void CrashAfter(size_t steps) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto journal = UndoJournal::Open(journals_);
      if (!journal) _exit(2);
      auto actions = Actions();
      for (size_t i = 0; i < steps; ++i)
        if (!actions[i](**journal)) _exit(3);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the run failed: " << status;
  }

  size_t JournalFiles() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(journals_))
      n += e.path().filename().string().starts_with("journal-");
    return n;
  }

  std::string root_, journals_, tree_;
};

TEST_F(JournalReplay, CleanupLeavesNothingAfterACrashAtEveryStep) {
  const size_t total = Actions().size();
  for (size_t steps = 0; steps <= total; ++steps) {
    SCOPED_TRACE("crash after " + std::to_string(steps) + " of " + std::to_string(total) +
                 " actions");
    CrashAfter(steps);
    ASSERT_EQ(JournalFiles(), 1u);
    auto report = CleanupStale(journals_);
    ASSERT_OK(report);
    EXPECT_TRUE(report->errors.empty()) << report->errors.front();
    EXPECT_TRUE(report->skipped.empty()) << report->skipped.front();
    EXPECT_FALSE(std::filesystem::exists(tree_)) << "left behind: " << tree_;
    EXPECT_EQ(JournalFiles(), 0u) << "the journal stays after a complete cleanup";
    // Replaying again finds nothing to do.
    auto again = CleanupStale(journals_);
    ASSERT_OK(again);
    EXPECT_TRUE(again->undone.empty());
  }
}

TEST_F(JournalReplay, UndoesEveryRecordedStepNotMarkedDoneInReverseOrder) {
  CrashAfter(Actions().size());
  auto report = CleanupStale(journals_);
  ASSERT_OK(report);
  // Step 4 (/sub/b) was done by the run itself; the rest, newest first.
  std::vector<std::string> want = {"file " + tree_ + "/sub/c", "dir " + tree_ + "/sub",
                                   "file " + tree_ + "/a", "dir " + tree_};
  EXPECT_EQ(report->undone, want);
}

TEST_F(JournalReplay, ATornLastLineIsReportedAndTheRestUndone) {
  CrashAfter(4);  // tree and tree/a made
  std::string journal;
  for (const auto& e : std::filesystem::directory_iterator(journals_)) journal = e.path();
  std::ofstream(journal, std::ios::app) << R"({"id":3,"op":"di)";  // the write the crash cut
  auto report = CleanupStale(journals_);
  ASSERT_OK(report);
  ASSERT_EQ(report->skipped.size(), 1u);
  EXPECT_NE(report->skipped[0].find("line 3"), std::string::npos) << report->skipped[0];
  EXPECT_EQ(report->undone.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(tree_));
}

TEST_F(JournalReplay, ALiveRunsJournalIsLeftAlone) {
  auto journal = UndoJournal::Open(journals_);
  ASSERT_OK(journal);
  ASSERT_OK((*journal)->Record({"dir", tree_, "", ""}));
  ASSERT_EQ(mkdir(tree_.c_str(), 0700), 0);
  auto report = CleanupStale(journals_);
  ASSERT_OK(report);
  EXPECT_TRUE(report->undone.empty());
  ASSERT_EQ(report->skipped.size(), 1u);
  EXPECT_NE(report->skipped[0].find("still running"), std::string::npos) << report->skipped[0];
  EXPECT_TRUE(std::filesystem::exists(tree_));
}

}  // namespace
}  // namespace writelab
