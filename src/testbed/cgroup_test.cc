// SPDX-License-Identifier: MIT
// fsync's cgroup of its own (testbed/cgroup.h). Its io half runs on a fake
// cgroup tree in a temporary directory, since this machine's cgroup v2 has
// no io controller: what is written (subtree_control, the io file,
// cgroup.procs) is read back, the journal's steps are recorded and undone.
// The tree half (mkdir, a process placed, killed and the cgroup removed,
// also by `writelab cleanup` after a kill -9) runs on the machine's real
// cgroup v2 hierarchy, as root, without any controller.
#include "testbed/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "expect_ok.h"
#include "telemetry/procfs.h"

#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::Slurp;
using ::writelab::testing::TempDir;
using ::writelab::testing::WriteFile;

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A process that sleeps until killed; reaped by Reap.
pid_t StartSleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  if (pid < 0) std::abort();  // a failed fork: never kill(-1) or waitpid(-1) later
  return pid;
}

// How pid ended: the signal that killed it, or 0 while it lives (then it
// is killed and reaped here).
int HowItEnded(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(10'000);
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return 0;
  }
  return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

class CgroupTest : public ::testing::Test {
 protected:
  TempDir tmp_{"cgroup-test"};
  void SetUp() override {
    root_ = tmp_.path();
    ASSERT_FALSE(root_.empty());
    journals_ = root_ + "/journals";
    fake_ = root_ + "/cgroup";
    ASSERT_EQ(mkdir(journals_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir(fake_.c_str(), 0755), 0);
    // The fake hierarchy's root: io and memory offered, none enabled below.
    WriteText(fake_ + "/cgroup.controllers", "cpu io memory pids\n");
    WriteText(fake_ + "/cgroup.subtree_control", "");
    auto j = UndoJournal::Open(journals_);
    ASSERT_OK(j);
    journal_ = std::move(*j);
  }
  void TearDown() override { journal_.reset(); }
  // What a journal of this test says: its lines, joined.
  std::string JournalText() { return Slurp(journal_->path()); }

  std::string root_, journals_, fake_;
  std::unique_ptr<UndoJournal> journal_;
};

TEST(CgroupSteps, OnlyWritelabsCgroupsAndItsControllers) {
  EXPECT_EQ(CgroupStepProblem({"cgroup", "/sys/fs/cgroup/writelab-12-1", "", ""}), "");
  EXPECT_EQ(
      CgroupStepProblem({"cgroup-subtree", "/sys/fs/cgroup/a/cgroup.subtree_control", "-io", ""}),
      "");
  for (const UndoStep& bad : std::vector<UndoStep>{
           {"cgroup", "/sys/fs/cgroup/system.slice", "", ""},
           {"cgroup", "/sys/fs/cgroup/writelab-12", "", ""},
           {"cgroup", "/sys/fs/cgroup/writelab-x-1", "", ""},
           {"cgroup", "writelab-1-1", "", ""},
           {"cgroup-subtree", "/sys/fs/cgroup/cgroup.procs", "-io", ""},
           {"cgroup-subtree", "/sys/fs/cgroup/cgroup.subtree_control", "+io", ""},
           {"cgroup-subtree", "/sys/fs/cgroup/cgroup.subtree_control", "-cpu", ""}})
    EXPECT_NE(CgroupStepProblem(bad), "") << bad.op << " " << bad.path << " " << bad.value;
  EXPECT_TRUE(ParseJournalLine(
      R"({"id":1,"op":"cgroup","path":"/sys/fs/cgroup/writelab-3-1","value":"","check":""})"));
  EXPECT_FALSE(ParseJournalLine(
      R"({"id":1,"op":"cgroup","path":"/sys/fs/cgroup/user.slice","value":"","check":""})"));
  EXPECT_FALSE(ParseJournalLine(
      R"({"id":1,"op":"cgroup-subtree","path":"/etc/passwd","value":"-io","check":""})"));
}

TEST(ListsController, WholeWordsOnly) {
  EXPECT_TRUE(ListsController("cpu io memory", "io"));
  EXPECT_TRUE(ListsController("io\n", "io"));
  EXPECT_FALSE(ListsController("hugetlb", "io"));
  EXPECT_FALSE(ListsController("iolatency memory", "io"));
  EXPECT_FALSE(ListsController("", "io"));
}

// The whole io mechanism on the fake tree: controllers enabled (and
// journaled), the cgroup made, io.max written and read back, a pid placed;
// then all of it undone, newest first.
TEST_F(CgroupTest, EnablesMakesSetsPlacesAndUndoesOnAFakeTree) {
  auto made = OwnCgroup::Make({fake_, "/"}, {"io", "memory"}, *journal_);
  ASSERT_OK(made);
  OwnCgroup& g = **made;
  EXPECT_EQ(Slurp(fake_ + "/cgroup.subtree_control"), "+io\n+memory\n");
  EXPECT_EQ(g.enabled(), (std::vector<std::string>{"io", "memory"}));
  const std::string name = std::filesystem::path(g.path()).filename();
  EXPECT_EQ(g.path(), fake_ + "/" + name);
  EXPECT_TRUE(name.starts_with("writelab-" + std::to_string(getpid()) + "-")) << name;
  ASSERT_TRUE(std::filesystem::is_directory(g.path()));
  const std::string journal = JournalText();
  EXPECT_NE(journal.find(R"("op":"cgroup-subtree","path":")" + fake_ +
                         R"(/cgroup.subtree_control","value":"-io")"),
            std::string::npos)
      << journal;
  EXPECT_NE(journal.find(R"("op":"cgroup","path":")" + g.path() + "\""), std::string::npos)
      << journal;
  // The kernel makes a cgroup's interface files with it; the fake, here.
  WriteText(g.path() + "/io.max", "");
  WriteText(g.path() + "/cgroup.procs", "");
  auto back = g.Set("io.max", "7:0 wbps=1048576");
  ASSERT_OK(back);
  EXPECT_EQ(*back, "7:0 wbps=1048576");
  EXPECT_FALSE(g.Set("../io.max", "x")) << "only an interface file of its own";
  // A process the kernel does not place in the cgroup is listed in the
  // fake's cgroup.procs: the undo must not kill it.
  const pid_t outsider = StartSleeper();
  ASSERT_OK(g.Place(outsider));
  EXPECT_EQ(Slurp(g.path() + "/cgroup.procs"), std::to_string(outsider) + "\n");
  // What the kernel's rmdir takes with the directory, the fake leaves.
  std::filesystem::remove(g.path() + "/io.max");
  std::filesystem::remove(g.path() + "/cgroup.procs");
  const std::string path = g.path();
  ASSERT_OK(g.Revert());
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(Slurp(fake_ + "/cgroup.subtree_control"), "+io\n+memory\n-memory\n-io\n")
      << "undone newest first";
  EXPECT_EQ(HowItEnded(outsider), 0) << "a process outside the cgroup was killed";
  // Every step is marked done.
  const std::string after = JournalText();
  for (int id = 1; id <= 3; ++id)
    EXPECT_NE(after.find("{\"done\":" + std::to_string(id) + "}"), std::string::npos) << after;
  EXPECT_OK(g.Revert()) << "twice is once";
}

TEST_F(CgroupTest, AnEnabledControllerIsLeftAsItIs) {
  WriteText(fake_ + "/cgroup.subtree_control", "io\n");
  auto made = OwnCgroup::Make({fake_, "/"}, {"io"}, *journal_);
  ASSERT_OK(made);
  EXPECT_TRUE((*made)->enabled().empty());
  EXPECT_EQ(JournalText().find("cgroup-subtree"), std::string::npos);
  made->reset();
  EXPECT_EQ(Slurp(fake_ + "/cgroup.subtree_control"), "io\n") << "not disabled after";
}

TEST_F(CgroupTest, AControllerNotOfferedIsAnErrorThatLeavesNothing) {
  WriteText(fake_ + "/cgroup.controllers", "hugetlb\n");
  auto made = OwnCgroup::Make({fake_, "/"}, {"io"}, *journal_);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, ENOENT);
  EXPECT_NE(made.error().Message().find("'hugetlb'"), std::string::npos) << made.error().Message();
  EXPECT_EQ(Slurp(fake_ + "/cgroup.subtree_control"), "");
  for (const auto& e : std::filesystem::directory_iterator(fake_))
    EXPECT_FALSE(e.path().filename().string().starts_with("writelab-")) << e.path();
}

// Two runs never hold cgroups at once (one could disable io under the other).
TEST_F(CgroupTest, ASecondRunWaitsForTheFirstsCgroupToGo) {
  auto first = OwnCgroup::Make({fake_, "/"}, {"io"}, *journal_);
  ASSERT_OK(first);
  pid_t pid = fork();
  if (pid == 0) {
    auto j = UndoJournal::Open(journals_);
    if (!j) _exit(2);
    auto second = OwnCgroup::Make({fake_, "/"}, {"io"}, **j);
    _exit(second ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "refused while the first lives";
}

// A run killed with its cgroup made: `writelab cleanup` disables io again
// and removes the cgroup (the fake tree).
TEST_F(CgroupTest, CleanupUndoesAKilledRunsCgroupOnAFakeTree) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  if (pid == 0) {
    auto j = UndoJournal::Open(journals_);
    if (!j) _exit(2);
    auto g = OwnCgroup::Make({fake_, "/"}, {"io"}, **j);
    const char c = g ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(3);
    for (;;) pause();
  }
  ASSERT_GT(pid, 0) << "fork";  // never kill(-1) below
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_EQ(c, 'y');
  EXPECT_EQ(Slurp(fake_ + "/cgroup.subtree_control"), "+io\n");
  auto report = CleanupStale(journals_);
  ASSERT_OK(report);
  EXPECT_TRUE(report->errors.empty()) << report->errors.front();
  ASSERT_EQ(report->undone.size(), 2u);
  EXPECT_TRUE(report->undone[0].starts_with("cgroup " + fake_ + "/writelab-")) << report->undone[0];
  EXPECT_EQ(report->undone[1], "cgroup-subtree " + fake_ + "/cgroup.subtree_control");
  EXPECT_EQ(Slurp(fake_ + "/cgroup.subtree_control"), "+io\n-io\n");
  for (const auto& e : std::filesystem::directory_iterator(fake_))
    EXPECT_FALSE(e.path().filename().string().starts_with("writelab-")) << e.path();
}

// The machine's own cgroup v2 hierarchy, as root: no controller is
// enabled, only the tree is used.
class RealCgroupTest : public CgroupTest {
 protected:
  void SetUp() override {
    CgroupTest::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "needs root: makes a cgroup";
    auto place = FindCgroupPlace();
    if (!place) GTEST_SKIP() << "no cgroup v2 here: " << place.error().Message();
    place_ = *place;
    if (access(place_.dir().c_str(), W_OK) != 0)
      GTEST_SKIP() << place_.dir() << " is not writable here";
  }
  CgroupPlace place_;
};

TEST_F(RealCgroupTest, APlacedProcessIsKilledAndTheCgroupRemoved) {
  auto made = OwnCgroup::Make(place_, {}, *journal_);
  ASSERT_OK(made);
  const std::string path = (*made)->path();
  const pid_t child = StartSleeper();
  ASSERT_OK((*made)->Place(child));
  const std::string in = ReadLine("/proc/" + std::to_string(child) + "/cgroup").value_or("");
  EXPECT_NE(Slurp("/proc/" + std::to_string(child) + "/cgroup")
                .find(std::filesystem::path(path).filename().string()),
            std::string::npos)
      << "the kernel places it there: " << in;
  EXPECT_TRUE(Slurp(path + "/cgroup.procs").starts_with(std::to_string(child)));
  ASSERT_OK((*made)->Revert());
  EXPECT_EQ(HowItEnded(child), SIGKILL) << "what was left in it is killed";
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(RealCgroupTest, CleanupRemovesAKilledRunsCgroupAndWhatRanInIt) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t run = fork();
  if (run == 0) {  // the run: a cgroup with a process of its own in it
    auto j = UndoJournal::Open(journals_);
    if (!j) _exit(2);
    auto g = OwnCgroup::Make(place_, {}, **j);
    if (!g) _exit(3);
    // The load holds the run's lock (fork shares it) until its exec closes
    // it: the run reports only once the exec happened, as a command's run
    // would be killed only after its command started.
    int execd[2];
    if (pipe2(execd, O_CLOEXEC) != 0) _exit(6);
    pid_t load = fork();
    if (load == 0) {  // a command, as cmd's: exec closes the run's lock
      execl("/bin/sleep", "sleep", "1000", nullptr);
      _exit(127);
    }
    close(execd[1]);
    char none;
    while (read(execd[0], &none, 1) < 0 && errno == EINTR) {
    }
    if (!(*g)->Place(load)) _exit(4);
    const std::string said = (*g)->path() + " " + std::to_string(load) + "\n";
    if (write(ready[1], said.data(), said.size()) < 0) _exit(5);
    for (;;) pause();
  }
  ASSERT_GT(run, 0) << "fork";  // never kill(-1) below
  close(ready[1]);
  char buf[512] = {};
  const ssize_t n = read(ready[0], buf, sizeof buf - 1);
  close(ready[0]);
  kill(run, SIGKILL);
  waitpid(run, nullptr, 0);
  ASSERT_GT(n, 0) << "the run could not make its cgroup";
  std::istringstream said(buf);
  std::string path;
  pid_t load = 0;
  said >> path >> load;
  ASSERT_TRUE(std::filesystem::exists(path));
  ASSERT_GT(load, 0);
  auto report = CleanupStale(journals_);
  ASSERT_OK(report);
  EXPECT_TRUE(report->errors.empty()) << report->errors.front();
  EXPECT_EQ(report->undone, std::vector<std::string>{"cgroup " + path})
      << (report->skipped.empty() ? "" : report->skipped.back());
  EXPECT_FALSE(std::filesystem::exists(path));
  // The load was the killed run's child: it is gone, or a zombie of init's.
  const std::string state = Slurp("/proc/" + std::to_string(load) + "/stat");
  EXPECT_TRUE(state.empty() || state.find(") Z ") != std::string::npos) << state;
  // Never leave it behind when cleanup did not kill it: it would hold the
  // test runner's output open for its 1000 s.
  if (!state.empty() && state.find(") Z ") == std::string::npos) kill(load, SIGKILL);
}

}  // namespace
}  // namespace writelab
