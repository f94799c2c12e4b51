// SPDX-License-Identifier: MIT
// writelab as root beside a hostile local user (issue 11): every case a
// security review reproduced, run for real. The hostile side is played with
// files owned by nobody (uid 65534) and with journals and links planted the
// way such a user would.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <tuple>

#include "bed_journal.h"
#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

constexpr uid_t kNobody = 65534;

bool IsRoot(std::string* why) {
  if (geteuid() != 0) return *why = "needs root: chown, loop devices, test beds", false;
  return true;
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class Security : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!IsRoot(&why)) GTEST_SKIP() << why;
  }
  ScratchDir work{"security"};
  std::string Dir(const std::string& name, mode_t mode, uid_t owner = 0) {
    std::string p = work.path() + "/" + name;
    std::filesystem::create_directories(p);
    EXPECT_EQ(chmod(p.c_str(), mode), 0);
    EXPECT_EQ(chown(p.c_str(), owner, owner), 0);
    return p;
  }
};

TEST_F(Security, ScratchDirectoryOfAnotherUserIsRefused) {
  for (auto [name, mode, owner] :
       {std::tuple{"theirs", 0755u, kNobody}, std::tuple{"open", 0777u, 0u},
        std::tuple{"sticky", 01777u, 0u}}) {
    std::string scratch = Dir(name, mode, owner);
    RunResult r = RunWritelab({"stream", "--testbed", "ext4", "--testbed-size", "64M", "--scratch",
                               scratch, "--size", "8M"});
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err << r.out;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--scratch: " + scratch), std::string::npos) << r.err;
    EXPECT_TRUE(LoopsBackedUnder(scratch).empty()) << name;
    EXPECT_TRUE(std::filesystem::is_empty(scratch)) << name << ": something was created";
  }
  // Below another user's directory, a directory of root's own is no better.
  std::string inner = Dir("theirs/inner", 0700, 0);
  RunResult r = RunWritelab(
      {"stream", "--testbed", "ext4", "--testbed-size", "64M", "--scratch", inner, "--size", "8M"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("owned by uid 65534"), std::string::npos) << r.err;
}

TEST_F(Security, ScratchDirectoryIsCreated0700UnderUmask000) {
  std::string scratch = work.path() + "/new/scratch";
  RunResult r = RunProgram(WRITELAB_BINARY,
                           {"prealloc", "--testbed", "ext4", "--testbed-size", "64M", "--scratch",
                            scratch, "--file-size", "1M", "--writes", "4", "--mode", "sparse"},
                           [] {
                             umask(0);
                             return 0;
                           });
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  for (const std::string& d : {work.path() + "/new", scratch}) {
    struct stat st;
    ASSERT_EQ(stat(d.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u) << d;
  }
  EXPECT_TRUE(std::filesystem::is_empty(scratch));
}

TEST_F(Security, ResultFilesNeverReplaceDevicesOrLinks) {
  std::string null = work.path() + "/null", link = work.path() + "/link.csv";
  ASSERT_EQ(mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  std::filesystem::create_directories(work.path() + "/sub");
  ASSERT_EQ(symlink("sub/real.csv", link.c_str()), 0);
  RunResult r = RunWritelab({"records", "--dir", work.path(), "--total", "64K", "--method", "write",
                             "--json", null, "--csv", link});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(null.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "--json replaced a device node with a file";
  EXPECT_TRUE(std::filesystem::is_symlink(link)) << "--csv replaced the link";
  EXPECT_NE(Slurp(work.path() + "/sub/real.csv").find("experiment"), std::string::npos);
  // Nothing else: no temporary left beside either.
  std::vector<std::string> names = work.Entries();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"link.csv", "null", "sub"}));
}

TEST_F(Security, WorkDirectoryOthersCanWriteIsRefusedUnlessSticky) {
  for (auto [name, mode, owner] :
       {std::tuple{"open", 0777u, 0u}, std::tuple{"theirs", 0755u, kNobody}}) {
    std::string dir = Dir(name, mode, owner);
    RunResult r = RunWritelab({"prealloc", "--dir", dir, "--file-size", "1M", "--writes", "4"});
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find("--dir: " + dir), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << name;
  }
  std::string sticky = Dir("sticky", 01777, 0);
  RunResult r = RunWritelab({"prealloc", "--dir", sticky, "--file-size", "1M", "--writes", "4",
                             "--mode", "sparse,fallocate"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(sticky));
}

TEST_F(Security, StrideFileIsNeverFollowedThroughALink) {
  std::string victim = work.path() + "/victim", link = work.path() + "/stride.dat";
  WriteText(victim, "keep");
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  RunResult r =
      RunWritelab({"stride", "--file", link, "--steps", "8", "--duration", "50ms", "--span", "1M"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_EQ(Slurp(victim), "keep") << "stride wrote through a link";
}

// The device under dir, as writelab identifies it ("" when none).
std::string DeviceOf(const std::string& dir, const std::string& json_path) {
  RunResult r = RunWritelab(
      {"records", "--dir", dir, "--total", "16K", "--method", "write", "--json", json_path});
  if (r.exit_code != 0) return "";
  return json::parse(Slurp(json_path))["experiments"][0]["target"].value("device", "");
}

TEST_F(Security, SecondRunChangingTheSameDeviceIsRefused) {
  std::string json_path = work.path() + "/r.json";
  std::string dev = DeviceOf(work.path(), json_path);
  if (dev.empty() || !std::filesystem::exists("/sys/block/" + dev + "/queue/scheduler"))
    GTEST_SKIP() << "no block device with a scheduler under " << work.path();
  std::string before = Slurp("/sys/block/" + dev + "/queue/scheduler");
  // This test holds the lock as another writelab run would.
  int lock = open(("/run/writelab/lock-" + dev).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(flock(lock, LOCK_EX | LOCK_NB), 0);
  RunResult r = RunWritelab({"records", "--dir", work.path(), "--total", "16K", "--method", "write",
                             "--scheduler", "none"});
  close(lock);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("another writelab run is changing " + dev), std::string::npos) << r.err;
  EXPECT_EQ(Slurp("/sys/block/" + dev + "/queue/scheduler"), before);
}

// A PID no process has now: a child that has exited and been reaped.
int DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

class Cleanup : public Security {
 protected:
  std::string journals = Dir("journals", 0700, 0);
  std::string marker = work.path() + "/marker";
  std::string FileStep(int id, const std::string& path) {
    return json{{"id", id}, {"op", "file"}, {"path", path}, {"value", ""}}.dump() + "\n";
  }
  RunResult Run() { return RunWritelab({"cleanup", "--journal-dir", journals}); }
};

TEST_F(Cleanup, MissingJournalDirectoryIsAnError) {
  RunResult r = RunWritelab({"cleanup", "--journal-dir", work.path() + "/missing"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST_F(Cleanup, JournalDirectoryOthersCanWriteIsRefused) {
  ASSERT_EQ(chmod(journals.c_str(), 0777), 0);
  WriteText(marker, "x");
  WriteText(journals + "/journal-" + std::to_string(DeadPid()) + "-1", FileStep(1, marker));
  RunResult r = Run();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("writable by group or others"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(marker)) << "a journal in an open directory was obeyed";
}

TEST_F(Cleanup, JournalOfAnotherUserOrALinkIsRefused) {
  WriteText(marker, "x");
  std::string theirs = journals + "/journal-" + std::to_string(DeadPid()) + "-1";
  WriteText(theirs, FileStep(1, marker));
  ASSERT_EQ(chown(theirs.c_str(), kNobody, kNobody), 0);
  std::string elsewhere = work.path() + "/planted";
  WriteText(elsewhere, FileStep(1, marker));
  std::string link = journals + "/journal-" + std::to_string(DeadPid()) + "-2";
  ASSERT_EQ(symlink(elsewhere.c_str(), link.c_str()), 0);
  RunResult r = Run();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("not a journal of this user's"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Too many levels of symbolic links"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST_F(Cleanup, MalformedLinesAreReportedAndTheRestUndone) {
  WriteText(marker, "x");
  std::string knob = "/proc/sys/vm/dirty_ratio";
  std::string before = Slurp(knob);
  std::string lines = std::string("{\"id\":\"one\",\"op\":\"file\"}\n") + "not json\n" +
                      json{{"id", 2}, {"op", "sysfs"}, {"path", knob}, {"value", "1"}}.dump() +
                      "\n" + FileStep(3, marker) + "{\"done\":[1]}\n";
  WriteText(journals + "/journal-" + std::to_string(DeadPid()) + "-1", lines);
  RunResult r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the good step was not undone: " << r.out;
  EXPECT_EQ(Slurp(knob), before) << "a sysfs step outside the allowed knobs was written";
  for (const char* line : {"line 1", "line 2", "line 3", "line 5"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " not reported: " << r.out;
}

TEST_F(Cleanup, ReusedPidIsRecognisedByItsStartTime) {
  WriteText(marker, "x");
  // PID 1 is alive, but it did not start at tick 999999999: the run is dead.
  WriteText(journals + "/journal-1-999999999", FileStep(1, marker));
  RunResult r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << r.out;
  // The same PID with its true start time is a live run: left alone.
  WriteText(marker, "x");
  std::string stat = Slurp("/proc/1/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string start;
  for (int i = 3; i <= 22; ++i) fields >> start;
  WriteText(journals + "/journal-1-" + start, FileStep(1, marker));
  r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(marker));
  EXPECT_NE(r.out.find("is still running"), std::string::npos) << r.out;
}

TEST_F(Cleanup, LoopDeviceTakenByAnotherRunIsLeftAlone) {
  std::string backing = work.path() + "/disk.img";
  Shell("truncate -s 64M " + backing);
  std::string dev = Shell("losetup -f --show " + backing);
  if (!dev.starts_with("/dev/loop")) GTEST_SKIP() << "losetup failed: " << dev;
  const BedStep loop_step =
      BedJournal::Record({"loop", dev, backing, BedJournal::BackingInode(backing)});
  std::string name = dev.substr(5), sched = "/sys/block/" + name + "/queue/scheduler";
  Shell("echo mq-deadline > " + sched);
  std::string before = Slurp(sched);
  // A dead run's journal for the same device and backing file name, but
  // another inode: the device is someone else's now.
  std::string lines =
      json{{"id", 1}, {"op", "loop"}, {"path", dev}, {"value", backing}, {"check", "1"}}.dump() +
      "\n" +
      json{{"id", 2}, {"op", "sysfs"}, {"path", sched}, {"value", "none"}, {"check", "loop:1"}}
          .dump() +
      "\n";
  WriteText(journals + "/journal-" + std::to_string(DeadPid()) + "-1", lines);
  RunResult r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Slurp(sched), before) << "cleanup restored a scheduler onto another run's device";
  EXPECT_EQ(LoopsBackedUnder(backing).size(), 1u) << "cleanup detached another run's device";
  EXPECT_NE(r.out.find("left: loop " + dev + " (not writelab's: it backs another inode now)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("undone:"), std::string::npos) << r.out;
  if (Shell("losetup -d " + dev + " && echo ok") == "ok") BedJournal::Done(loop_step);
}

// A dead run left a loop device's scheduler changed. A live run on the same
// device takes the lock, and cleanup runs meanwhile: cleanup must keep the
// dead run's journal (it skipped the step), and the live run must undo the
// dead run's step before it reads the "before" it restores, or the change
// stays for good (issue 40).
TEST_F(Security, ALiveRunUndoesADeadRunsChangeBeforeItsOwn) {
  std::string backing = work.path() + "/disk.img";
  Shell("truncate -s 256M " + backing);
  std::string dev = Shell("losetup -f --show " + backing);
  ASSERT_TRUE(dev.starts_with("/dev/loop")) << "losetup failed: " << dev;
  const BedStep loop_step =
      BedJournal::Record({"loop", dev, backing, BedJournal::BackingInode(backing)});
  const std::string sched = "/sys/block/" + dev.substr(5) + "/queue/scheduler";
  Shell("echo none > " + sched);
  const std::string original = Slurp(sched);
  Shell("echo mq-deadline > " + sched);  // the dead run's change, journaled below
  struct stat st {};
  ASSERT_EQ(stat(backing.c_str(), &st), 0);
  const std::string dead = "/run/writelab/journal-" + std::to_string(DeadPid()) + "-1";
  std::filesystem::create_directories("/run/writelab");
  WriteText(dead, json{{"id", 1},
                       {"op", "sysfs"},
                       {"path", sched},
                       {"value", "none"},
                       {"check", "loop:" + std::to_string(st.st_ino)}}
                          .dump() +
                      "\n");
  RunResult live, cleanup;
  std::thread run([&] {
    live = RunWritelab({"stride", "--device", dev, "--scheduler", "kyber", "--steps", "1,8",
                        "--duration", "1s", "--span", "64M"});
  });
  usleep(700'000);  // it holds the device's lock now
  cleanup = RunWritelab({"cleanup"});
  run.join();
  EXPECT_EQ(live.exit_code, 0) << live.err;
  EXPECT_EQ(cleanup.exit_code, 0) << cleanup.err;
  EXPECT_EQ(Slurp(sched), original) << "the dead run's change outlived both";
  if (std::filesystem::exists(dead)) {  // kept by cleanup: then nothing may be left in it
    EXPECT_NE(RunWritelab({"cleanup"}).exit_code, 1);
  }
  if (Shell("losetup -d " + dev + " && echo ok") == "ok") BedJournal::Done(loop_step);
  std::filesystem::remove(dead);
}

TEST_F(Security, BackgroundCommandDescendantsAreEndedByCleanup) {
  std::string mark = "writelab-sec-mark-" + std::to_string(getpid());
  // The command's own child survives PR_SET_PDEATHSIG; only its group can be found.
  std::string cmd = "sh -c 'sleep 1000; : " + mark + "' & wait";
  RunResult r = RunWritelab({"fsync", "--dir", work.path(), "--count", "200", "--interval", "100ms",
                             "--background", "cmd", "--bg-cmd", cmd, "--bg-warmup", "200ms"},
                            1500, SIGKILL);
  ASSERT_EQ(r.exit_code, 128 + SIGKILL);
  usleep(200'000);
  ASSERT_FALSE(ProcessesMentioning(mark).empty()) << "nothing survived: nothing to test";
  RunResult c = RunWritelab({"cleanup"});
  EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
  EXPECT_NE(c.out.find("undone: pgroup"), std::string::npos) << c.out;
  for (int i = 0; i < 50 && !ProcessesMentioning(mark).empty(); ++i) usleep(20'000);
  EXPECT_TRUE(ProcessesMentioning(mark).empty()) << "the command's descendants survived cleanup";
}

TEST_F(Security, BackgroundLoadFailureNamesTheCallAndErrno) {
  RunResult r =
      RunWritelab({"fsync", "--testbed", "tmpfs", "--testbed-size", "64M", "--background", "stream",
                   "--bg-size", "1G", "--count", "20", "--interval", "50ms", "--bg-warmup", "2s"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("pwrite at"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left on device (ENOSPC)"), std::string::npos) << r.err;
}

TEST_F(Security, StrideOnTheMountedRootDiskSaysWhereItIsMounted) {
  std::string root;
  std::istringstream mounts(Slurp("/proc/self/mounts"));
  for (std::string src, target, rest; mounts >> src >> target && std::getline(mounts, rest);)
    if (target == "/") root = src;
  struct stat st;
  if (stat(root.c_str(), &st) != 0 || !S_ISBLK(st.st_mode))
    GTEST_SKIP() << "/ is not on a block device here (" << root << ")";
  RunResult r = RunWritelab({"stride", "--device", root, "--steps", "1", "--duration", "100ms"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("is mounted at /"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace writelab::testing
