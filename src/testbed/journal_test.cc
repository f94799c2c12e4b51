// The undo journal's line parser and the sysfs knobs cleanup may write: the
// checks that stand between a journal file and root's actions.
#include "testbed/journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace writelab {
namespace {

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
  for (const char* path : {"/proc/sys/kernel/core_pattern", "/sys/block/vda/device/delete",
                           "/sys/block/../../proc/sys/kernel/core_pattern/queue/x",
                           "/sys/fs/ext4/vda/../../../kernel/x", "/sys/block/vda/queue/a/b",
                           "/sys/kernel/mm/transparent_hugepage/enabled"}) {
    std::string line =
        std::string(R"({"id":1,"op":"sysfs","path":")") + path + R"(","value":"|x"})";
    EXPECT_FALSE(ParseJournalLine(line).has_value()) << path;
  }
}

TEST(SysfsDevice, NamesTheDevice) {
  EXPECT_EQ(SysfsDevice("/sys/block/nvme0n1/queue/scheduler"), "nvme0n1");
  EXPECT_EQ(SysfsDevice("/sys/fs/ext4/dm-0/extent_max_zeroout_kb"), "dm-0");
  EXPECT_EQ(SysfsDevice("/sys/block/vda/stat"), "");
  EXPECT_EQ(SysfsDevice("/sys/block/../queue/x"), "");
}

TEST(ProcessStartTime, KnowsLiveProcessesOnly) {
  EXPECT_GT(ProcessStartTime(getpid()), 0u);
  EXPECT_EQ(ProcessStartTime(getpid()), ProcessStartTime(getpid()));
  EXPECT_EQ(ProcessStartTime(0x3fffffff), 0u);
}

}  // namespace
}  // namespace writelab
