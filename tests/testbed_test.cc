// SPDX-License-Identifier: MIT
// Test beds and `writelab prealloc` on real loop devices and file systems
// (root). Each test uses a scratch directory of its own, so what it checks
// for leftovers is exactly what it made.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "figures.h"
#include "harness.h"
#include "killed_runs.h"
#include "test_fs.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

bool CanMakeTestbeds(std::string* why) {
  if (geteuid() != 0) return *why = "needs root: loop devices, mkfs, mount", false;
  if (!std::filesystem::exists("/dev/loop-control"))
    return *why = "no /dev/loop-control: loop devices unavailable", false;
  return true;
}

class Testbeds : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!CanMakeTestbeds(&why)) GTEST_SKIP() << why;
  }
  ScratchDir scratch{"testbed"};
  ScratchDir outputs{"testbed-out"};  // what writelab writes beside its --dir
  std::string json_path = outputs.path() + "/out.json";
  void TearDown() override { std::filesystem::remove(json_path); }

  void ExpectNothingLeft() {
    EXPECT_TRUE(LoopsBackedUnder(scratch.path()).empty()) << "loop device left attached";
    std::vector<std::string> images;
    for (const auto& e : std::filesystem::directory_iterator(scratch.path()))
      images.push_back(e.path().filename().string());
    EXPECT_TRUE(images.empty()) << "scratch files left: " << images.front();
    // No undo journal still names this test's scratch files: all was undone.
    std::error_code ec;
    for (const auto& j : std::filesystem::directory_iterator("/run/writelab", ec))
      EXPECT_EQ(Slurp(j.path().string()).find(scratch.path()), std::string::npos)
          << j.path() << " still has steps for this test";
  }
};

TEST_F(Testbeds, PreallocExtentStatesAreRight) {
  RunResult r = RunWritelab({"prealloc", "--testbed", "ext4", "--testbed-size", "256M", "--scratch",
                             scratch.path(), "--file-size", "8M", "--writes", "40", "--mode",
                             "sparse,fallocate,zero-fill,write-zeroes", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  ExpectNothingLeft();
  json doc = json::parse(Slurp(json_path));
  const json& e = doc["experiments"][0];
  EXPECT_EQ(e["testbed"], "ext4");
  EXPECT_TRUE(e["target"]["device"].get<std::string>().starts_with("loop"));
  std::map<std::string, json> rows;
  for (const json& row : e["rows"]) rows[row["name"]] = row;

  auto sparse = Figures(rows["sparse"]);
  EXPECT_EQ(sparse["extents_before"], 0) << "ftruncate allocates nothing";
  EXPECT_EQ(sparse["unwritten_after"], 0);
  EXPECT_GE(sparse["extents_after"], 1);

  auto falloc = Figures(rows["fallocate"]);
  EXPECT_GE(falloc["unwritten_before"], 1);
  EXPECT_EQ(falloc["unwritten_before"], falloc["extents_before"]) << "all unwritten before";
  EXPECT_GE(falloc["written_after"], 1) << "the workload's blocks became written";
  EXPECT_GE(falloc["unwritten_after"], 1) << "the gaps between them stay unwritten";
  EXPECT_EQ(falloc["allocated_before"], 8 << 20);

  auto zero = Figures(rows["zero-fill"]);
  EXPECT_EQ(zero["unwritten_before"], 0);
  EXPECT_EQ(zero["unwritten_after"], 0);
  EXPECT_EQ(zero["size_after"], 8 << 20);

  // Plain loop devices offer no unmapping write-zeroes: refused, with errno.
  if (e["target"]["write_zeroes_unmap_max_bytes"] == 0) {
    EXPECT_EQ(rows["write-zeroes"]["status"], "unsupported");
    EXPECT_EQ(rows["write-zeroes"]["error_name"], "EOPNOTSUPP");
  }
}

// The runs below are signalled 2.5 s in: their workload (60,000 synchronous
// 4 KiB writes) takes longer than that even where a flush costs 50 us.
TEST_F(Testbeds, SigtermMidwayLeavesNothing) {
  RunResult r =
      RunWritelab({"prealloc", "--testbed", "ext4", "--testbed-size", "512M", "--scratch",
                   scratch.path(), "--file-size", "256M", "--writes", "60000", "--stride", "1",
                   "--mode", "fallocate", "--scheduler", "mq-deadline", "--json", json_path},
                  2500, SIGTERM);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ExpectNothingLeft();
  EXPECT_EQ(json::parse(Slurp(json_path))["errors"][0], "interrupted");
}

TEST_F(Testbeds, CleanupUndoesWhatAKilledRunLeft) {
  // SIGKILL: no destructor runs; the journal is all that is left.
  RunResult r = RunWritelab({"prealloc", "--testbed", "ext4", "--testbed-size", "512M", "--scratch",
                             scratch.path(), "--file-size", "256M", "--writes", "60000", "--stride",
                             "1", "--mode", "fallocate", "--scheduler", "mq-deadline"},
                            2500, SIGKILL);
  ASSERT_EQ(r.exit_code, 128 + SIGKILL);
  auto loops = LoopsBackedUnder(scratch.path());
  ASSERT_EQ(loops.size(), 1u) << "the killed run should have left its loop device";
  std::string sched = Slurp("/sys/block/" + loops[0] + "/queue/scheduler");
  EXPECT_NE(sched.find("[mq-deadline]"), std::string::npos) << sched;
  RunResult c = RunWritelab({"cleanup"});
  EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
  EXPECT_NE(c.out.find("undone: mount"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("undone: sysfs"), std::string::npos) << c.out;
  ExpectNothingLeft();
  RunResult again = RunWritelab({"cleanup"});
  EXPECT_EQ(again.exit_code, 0);
}

TEST_F(Testbeds, StreamAndFsyncRunOnTestbeds) {
  RunResult r =
      RunWritelab({"stream", "--testbed", "xfs,tmpfs", "--testbed-size", "512M", "--scratch",
                   scratch.path(), "--size", "16M", "--block", "4M", "--repeat", "1", "--strategy",
                   "plain,direct", "--no-probe", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectNothingLeft();
  json doc = json::parse(Slurp(json_path));
  ASSERT_EQ(doc["experiments"].size(), 2u);
  EXPECT_EQ(doc["experiments"][0]["target"]["fs_type"], "xfs");
  EXPECT_EQ(doc["experiments"][1]["target"]["fs_type"], "tmpfs");
  EXPECT_NE(r.out.find("stream side by side"), std::string::npos) << r.out;
  RunResult f =
      RunWritelab({"fsync", "--testbed", "ext4:nojournal", "--testbed-size", "256M", "--scratch",
                   scratch.path(), "--count", "2", "--interval", "10ms", "--background",
                   "none,random", "--bg-warmup", "100ms", "--bg-span", "8M"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  ExpectNothingLeft();
}

TEST_F(Testbeds, RecordsCommitRunsOnATestbed) {
  RunResult r =
      RunWritelab({"records", "--commit", "--threads", "2", "--commit-time", "200ms",
                   "--corpus-size", "64k", "--testbed", "ext4:data=journal", "--testbed-size",
                   "256M", "--scratch", scratch.path(), "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectNothingLeft();
  json e = json::parse(Slurp(json_path))["experiments"][0];
  EXPECT_EQ(e["testbed"], "ext4:data=journal");
  EXPECT_EQ(e["target"]["fs_type"], "ext4");
  ASSERT_EQ(e["rows"].size(), 4u);
  for (const json& row : e["rows"]) {
    EXPECT_EQ(row["status"], "ok") << row["name"] << ": " << row["message"];
    EXPECT_GT(Figures(row)["commits"], 0) << row["name"];
  }
}

// Issue 27: a test bed's loop device is attached with LO_FLAGS_AUTOCLEAR,
// so it unbinds itself once a killed run's last user is gone. Its settings
// are still that run's change: cleanup restores them, and leaves a device
// alone that another file has been bound to since.
TEST_F(Testbeds, CleanupRestoresTheSettingsOfALoopDeviceThatUnboundItself) {
  for (const bool taken_in_between : {false, true}) {
    SCOPED_TRACE(taken_in_between ? "bound to another file after the kill" : "left unbound");
    auto steps = KillOnceJournaled(
        {"stride", "--testbed", "raw", "--testbed-size", "256M", "--scratch", scratch.path(),
         "--scheduler", "kyber", "--steps", "1", "--duration", "60s"},
        scratch.path(), "/queue/scheduler");
    const std::string loop = StepPath(steps, "loop");
    ASSERT_TRUE(loop.starts_with("/dev/loop")) << "no loop step journaled";
    const std::string dev = loop.substr(5);
    const std::string sched = "/sys/block/" + dev + "/queue/scheduler";
    std::string original;
    for (const json& s : steps)
      if (s.value("path", "") == sched) original = s["value"];
    ASSERT_FALSE(original.empty());
    ASSERT_NE(original, "kyber") << "the test needs a device that was not on kyber";
    for (int i = 0; i < 50 && !Slurp("/sys/block/" + dev + "/loop/backing_file").empty(); ++i)
      usleep(100'000);
    ASSERT_TRUE(Slurp("/sys/block/" + dev + "/loop/backing_file").empty())
        << dev << " should have unbound itself (LO_FLAGS_AUTOCLEAR)";
    EXPECT_EQ(Bracketed(sched), "kyber") << "the killed run's change is still there";
    const std::string other = outputs.path() + "/other.img";
    if (taken_in_between) {
      Shell("truncate -s 64M " + other);
      ASSERT_EQ(Shell("losetup " + loop + " " + other + " && echo ok"), "ok");
    }
    RunResult c = RunWritelab({"cleanup"});
    EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
    if (taken_in_between) {
      EXPECT_EQ(Bracketed(sched), "kyber") << "another file's device is not writelab's";
      EXPECT_NE(c.out.find("not writelab's"), std::string::npos) << c.out;
      Shell("losetup -d " + loop);
      std::filesystem::remove(other);
      Shell("echo " + original + " > " + sched);
    } else {
      EXPECT_EQ(Bracketed(sched), original) << c.out;
      EXPECT_NE(c.out.find("on the unbound " + dev), std::string::npos) << c.out;
    }
    ExpectNothingLeft();
  }
}

TEST_F(Testbeds, CleanupRestoresTheDirtyLimitsOfAnUnmountedAndUnboundBed) {
  auto steps = KillOnceJournaled(
      {"fsync", "--testbed", "ext4:dirty=16M", "--testbed-size", "256M", "--scratch",
       scratch.path(), "--count", "100000", "--interval", "10ms", "--background", "none"},
      scratch.path(), "/bdi/strict_limit");
  const std::string loop = StepPath(steps, "loop"), mnt = StepPath(steps, "mount");
  ASSERT_TRUE(loop.starts_with("/dev/loop")) << "no loop step journaled";
  ASSERT_FALSE(mnt.empty());
  const std::string bdi = "/sys/block/" + loop.substr(5) + "/bdi/";
  std::string fine;
  for (const json& s : steps)
    if (s.value("path", "") == bdi + "max_ratio_fine") fine = s["value"];
  EXPECT_EQ(Slurp(bdi + "strict_limit"), "1\n");
  ASSERT_EQ(Shell("umount " + mnt + " && echo ok"), "ok");  // as the reviewer did
  for (int i = 0; i < 50 && !Slurp("/sys/block/" + loop.substr(5) + "/loop/backing_file").empty();
       ++i)
    usleep(100'000);
  RunResult c = RunWritelab({"cleanup"});
  EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
  EXPECT_EQ(Slurp(bdi + "strict_limit"), "0\n") << c.out;
  EXPECT_EQ(Slurp(bdi + "max_ratio_fine"), fine + "\n") << c.out;
  ExpectNothingLeft();
}

// Issue 45: stream's default size is past the writeback threshold, within
// a quarter of the free space: here the test bed's.
TEST_F(Testbeds, StreamSizesItselfPastTheThresholdWithinTheFreeSpace) {
  RunResult r = RunWritelab({"stream", "--testbed", "ext4", "--testbed-size", "512M", "--scratch",
                             scratch.path(), "--repeat", "1", "--strategy", "plain", "--no-probe",
                             "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectNothingLeft();
  json doc = json::parse(Slurp(json_path));
  std::map<std::string, json> params;
  for (const json& p : doc["experiments"][0]["params"]) params[p["key"]] = p["value"];
  const uint64_t size = params["size"].get<uint64_t>();
  EXPECT_EQ(size % (8u << 20), 0u) << "whole --block writes";
  EXPECT_LE(size, 512u << 20 >> 2) << "a quarter of the 512 MiB test bed at most";
  EXPECT_GE(size, 64u << 20);
  const std::string from = params["size_from"].get<std::string>();
  EXPECT_TRUE(from.starts_with("auto: 2.5x the dirty background threshold of ")) << from;
  const json& row = doc["experiments"][0]["rows"][0];
  for (const json& f : row["figures"])
    if (f["key"] == "bytes") {
      EXPECT_EQ(f["value"]["median"].get<double>(), size);
    }
}

// Issue 27: --testbed-size 1T with 77 GiB free was taken without a word.
TEST_F(Testbeds, ATestbedLargerThanTheScratchsFreeSpaceIsRefused) {
  const auto space = std::filesystem::space(scratch.path());
  const std::string size = std::to_string((space.available >> 30) + 64) + "G";
  RunResult r = RunWritelab({"stream", "--testbed", "ext4", "--testbed-size", size, "--scratch",
                             scratch.path(), "--size", "8M"});
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("free under --scratch " + scratch.path()), std::string::npos) << r.err;
  ExpectNothingLeft();
}

TEST(TestbedRefusals, NeedRootAndValidSpecs) {
  RunResult bad = RunWritelab({"prealloc", "--testbed", "ext3"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("ext3"), std::string::npos) << bad.err;
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run writelab as another user";
  RunResult r = RunWritelabAsNobody({"prealloc", "--dir", "/tmp", "--testbed", "ext4"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("test beds need root"), std::string::npos) << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
}

// The tests' own beds are journaled too (bed_journal.h): a test process
// killed with its bed made (a child here, with an ext4 on a loop device
// under a dirty limit, killed with SIGKILL as ctest's timeout kills)
// leaves it in place, and `writelab cleanup` undoes all of it: the limit,
// the mount, the loop device, the image and the mount point. Asserted on
// the machine's state, not on cleanup's words. One at a time, as the
// other Cleanup tests (tests/CMakeLists.txt): cleanup undoes every dead
// process's journal, which a test beside it may be about to read.
TEST_F(Testbeds, CleanupUndoesTheBedOfAKilledTest) {
  const std::string base = scratch.path() + "/bed", mnt = base + ".mnt", image = base + ".img";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    // A group of its own: the kill below ends a mkfs or mount it may still
    // be running too, which would otherwise make the bed after cleanup.
    setpgid(0, 0);
    close(ready[0]);
    TestFs fs(base, "data=ordered", 16 << 20);
    const std::string said = fs.ok() ? fs.DeviceName() + " " + fs.Found() : "";
    if (write(ready[1], said.data(), said.size()) < 0) _exit(1);
    close(ready[1]);
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0) << "fork";  // never kill(-1) below
  close(ready[1]);
  std::string said;
  char buf[64];
  pollfd p{ready[0], POLLIN, 0};
  while (poll(&p, 1, 60'000) == 1) {  // the bed made, or the child gone: at most a minute
    const ssize_t n = read(ready[0], buf, sizeof buf);
    if (n <= 0) break;
    said.append(buf, n);
  }
  close(ready[0]);
  const std::string dev = said.substr(0, said.find(' '));
  const std::string found = said.empty() ? "" : said.substr(said.find(' ') + 1);
  kill(-child, SIGKILL);
  kill(child, SIGKILL);  // had setpgid not run yet
  waitpid(child, nullptr, 0);
  const std::string bdi = "/sys/block/" + dev + "/bdi/";
  // What the kill left, read before cleanup, asserted after it: a failed
  // assertion must not leave the bed for the tests after this one.
  const std::string left_mount = Shell("findmnt -n -o SOURCE " + mnt);
  const std::string left_limit = dev.empty() ? "" : Slurp(bdi + "strict_limit");
  RunResult c = RunWritelab({"cleanup"});
  ASSERT_FALSE(dev.empty()) << "the child made no bed";
  EXPECT_EQ(left_mount, "/dev/" + dev) << "the killed test's mount";
  EXPECT_EQ(left_limit, "1\n") << "the killed test's dirty limit";
  EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
  EXPECT_EQ(Shell("findmnt -n -o SOURCE " + mnt), "") << c.out;
  EXPECT_TRUE(LoopsBackedUnder(image).empty()) << "loop device left bound: " << c.out;
  EXPECT_FALSE(std::filesystem::exists(image)) << c.out;
  EXPECT_FALSE(std::filesystem::exists(mnt)) << c.out;
  // Once let go, the device may be bound by a test beside this one, which
  // may set a limit of its own: read only while nothing is bound to it.
  const std::string limit = Shell("cat " + bdi + "max_ratio_fine " + bdi + "strict_limit");
  if (LoopDeviceFree(dev)) {
    EXPECT_EQ(limit, found) << dev << "'s dirty limit: " << c.out;
  }
}

// A forked child's journal numbers its steps from 1 again: a step its
// parent recorded, marked done in the child (a parent's destructor run
// there), must not mark the child's step of the same number done.
TEST_F(Testbeds, AForkedChildNeverTakesItsParentsStepForItsOwn) {
  const BedStep parents = BedJournal::Record({"dir", scratch.path() + "/parent", "", ""});
  ASSERT_NE(parents, 0) << "no journal (root only)";
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t child = fork();
  if (child == 0) {
    std::vector<BedStep> own;  // as many as the parent's number, so that one has it
    while (own.size() < static_cast<size_t>(parents & 0xffffffff))
      own.push_back(BedJournal::Record({"dir", scratch.path() + "/child", "", ""}));
    BedJournal::Done(parents);
    std::string journal;
    for (const auto& j : std::filesystem::directory_iterator("/run/writelab"))
      if (j.path().filename().string().starts_with("journal-" + std::to_string(getpid()) + "-"))
        journal = Slurp(j.path().string());
    for (BedStep s : own) BedJournal::Done(s);
    const char said = journal.empty()                                 ? 'n'
                      : journal.find("\"done\"") == std::string::npos ? 'y'
                                                                      : 'x';
    _exit(write(report[1], &said, 1) == 1 ? 0 : 1);
  }
  close(report[1]);
  char said = 0;
  const bool got = read(report[0], &said, 1) == 1;
  close(report[0]);
  waitpid(child, nullptr, 0);
  // The child's journal, every step done, is the test's to remove.
  for (const auto& j : std::filesystem::directory_iterator("/run/writelab"))
    if (j.path().filename().string().starts_with("journal-" + std::to_string(child) + "-"))
      std::filesystem::remove(j.path());
  BedJournal::Done(parents);
  ASSERT_TRUE(got) << "the child said nothing";
  EXPECT_NE(said, 'n') << "the child's journal was not found";
  EXPECT_EQ(said, 'y') << "the parent's step marked one of the child's done";
}

}  // namespace
}  // namespace writelab::testing
