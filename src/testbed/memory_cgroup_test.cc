// SPDX-License-Identifier: MIT
// run's memory cgroup (testbed/memory_cgroup.h) on the machine's real
// memory controller (cgroup v1's memory hierarchy here, v2's where its
// root offers memory), as root: made and journaled, the limit read back, a
// process placed (the kernel says so in /proc/PID/cgroup), then killed and
// the cgroup removed; and the v1 hierarchy found from the mount table.
#include "testbed/memory_cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "expect_ok.h"
#include "telemetry/procfs.h"
#include "testbed/journal.h"

#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::Slurp;
using ::writelab::testing::TempDir;

TEST(MemoryCgroup, MadeLimitedPlacedAndRemovedOnTheRealController) {
  ASSERT_EQ(geteuid(), 0u) << "the test profile runs the unit tests as root";
  auto place = FindMemoryCgroupPlace();
  ASSERT_OK(place);
  TempDir tmp("memcg-test");
  auto journal = UndoJournal::Open(tmp.path() + "/journals");
  ASSERT_OK(journal);
  auto made = MemoryCgroup::Make(uint64_t{48} << 20, **journal);
  ASSERT_OK(made);
  MemoryCgroup& g = **made;
  EXPECT_TRUE(g.path().starts_with(place->dir() + "/writelab-")) << g.path();
  EXPECT_EQ(g.limit(), uint64_t{48} << 20) << "read back from " << g.limit_file();
  EXPECT_NE(Slurp((*journal)->path()).find(R"("op":"cgroup","path":")" + g.path() + "\""),
            std::string::npos)
      << "journaled before it was made";
  const pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  ASSERT_GT(child, 0) << "fork";
  ASSERT_OK(g.Place(child));
  const std::string name = std::filesystem::path(g.path()).filename();
  EXPECT_NE(Slurp("/proc/" + std::to_string(child) + "/cgroup").find("/" + name + "\n"),
            std::string::npos)
      << "the kernel places the child in it";
  ASSERT_TRUE(g.OomKills().has_value()) << "the kernel counts OOM kills per cgroup";
  EXPECT_EQ(*g.OomKills(), 0u);
  const std::string path = g.path();
  ASSERT_OK(g.Revert());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "what was left was killed";
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(MemoryCgroup, TheV1HierarchyIsFoundByItsMountOption) {
  auto v1 = FindV1CgroupPlace("memory");
  auto v2 = FindCgroupPlace();
  const bool v2_memory =
      v2 && ListsController(ReadLine(v2->root + "/cgroup.controllers").value_or(""), "memory");
  if (v2_memory) {
    EXPECT_FALSE(v1) << "a controller is on one hierarchy at a time";
    return;
  }
  ASSERT_OK(v1);
  EXPECT_TRUE(v1->v1);
  EXPECT_TRUE(std::filesystem::exists(v1->dir() + "/memory.limit_in_bytes")) << v1->dir();
  auto none = FindV1CgroupPlace("no-such-controller");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ENOENT);
}

}  // namespace
}  // namespace writelab
