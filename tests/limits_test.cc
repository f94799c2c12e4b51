// SPDX-License-Identifier: MIT
// Bounded inputs (issue 27): options whose buffers would exhaust memory are
// refused before anything runs, with one line naming them (exit 2), under
// the machine's MemAvailable and under a process limit alike; an allocation
// that fails anyway is a failed run (exit 1) that leaves nothing behind,
// never an abort.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

// The address-space limit the child runs under (RunProgram's setup takes
// no arguments).
rlim_t g_address_space = RLIM_INFINITY;
int LimitAddressSpace() {
  rlimit rl{g_address_space, g_address_space};
  return setrlimit(RLIMIT_AS, &rl) == 0 ? 0 : 98;
}

RunResult RunLimited(const std::vector<std::string>& args, rlim_t bytes) {
  g_address_space = bytes;
  return RunProgram(WRITELAB_BINARY, args, LimitAddressSpace);
}

TEST(Limits, BuffersBeyondMemoryAreRefusedBeforeAnythingRuns) {
  ScratchDir work("limits");
  struct Case {
    std::vector<std::string> args;
    std::string names;  // what the line must name
  };
  const std::string file = work.path() + "/stride.img";
  // Depth x 1 GiB beyond this machine's MemAvailable (32 on the 23.5 GiB VM).
  const std::string meminfo = Slurp("/proc/meminfo");
  const size_t at = meminfo.find("MemAvailable:");
  ASSERT_NE(at, std::string::npos);
  const uint64_t available_gib = std::stoull(meminfo.substr(at + 13)) >> 20;
  const std::string qd = std::to_string(std::min<uint64_t>(available_gib + 1, 4096));
  for (const Case& c : std::vector<Case>{
           {{"records", "--dir", work.path(), "--qd", qd, "--buffer", "1G", "--method", "io_uring",
             "--total", "1M"},
            "--qd " + qd + " x --buffer 1.00 GiB"},
           {{"records", "--dir", work.path(), "--qd", "4096", "--buffer", "1G"}, "--qd 4096"},
           {{"stride", "--file", file, "--block", "64M", "--qd", "4096", "--engine", "io_uring"},
            "--qd 4096 x --block 64.0 MiB"}}) {
    RunResult r = RunWritelab(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(MemAvailable)"), std::string::npos) << r.err;
    EXPECT_TRUE(work.Entries().empty()) << "left: " << work.Entries().front();
  }
}

TEST(Limits, AProcessLimitCountsAsMuchAsTheMachine) {
  ScratchDir work("limits-as");
  // 2 x 1 GiB of io_uring buffers under a 3 GiB address space: the issue's
  // std::bad_alloc (exit 134) that left writelab-records-PID-0 behind.
  RunResult r = RunLimited({"records", "--dir", work.path(), "--qd", "2", "--buffer", "1G",
                            "--method", "io_uring", "--total", "1M"},
                           rlim_t{3} << 30);
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_NE(r.err.find("(RLIMIT_AS)"), std::string::npos) << r.err;
  EXPECT_TRUE(work.Entries().empty());
}

TEST(Limits, AnAllocationThatFailsAnywayIsAFailedRunThatLeavesNothing) {
  ScratchDir work("limits-oom"), outputs("limits-oom-out");
  // One-byte lines: each is a list node and a malloc chunk, 30x its size,
  // more than the check's estimate. 64 MiB of them need about 2 GiB.
  const std::string input = outputs.path() + "/lines.txt";
  {
    std::ofstream out(input);
    const std::string chunk(1 << 20, '\n');
    for (int i = 0; i < 64; ++i) out << chunk;
  }
  const std::string json = outputs.path() + "/out.json";
  RunResult r = RunLimited({"records", "--dir", work.path(), "--input", input, "--method", "write",
                            "--total", "1M", "--json", json},
                           rlim_t{1536} << 20);
  std::filesystem::remove(input);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("Cannot allocate memory"), std::string::npos) << r.err;
  EXPECT_TRUE(work.Entries().empty()) << "left: " << work.Entries().front();
  EXPECT_NE(Slurp(json).find("Cannot allocate memory"), std::string::npos)
      << "the document is still written, with the error";
  std::filesystem::remove(json);
}

// Issue 27: work files were writelab-KIND-PID-N for N = 0..99, so a user who
// pre-created those names for the next PIDs made any run fail with EEXIST.
// Now a random part follows: the same planting changes nothing.
TEST(Limits, WorkFileNamesCannotBeTakenAhead) {
  ScratchDir work("limits-names");
  const int last = std::stoi(Slurp("/proc/sys/kernel/ns_last_pid"));
  for (int pid = last + 1; pid <= last + 40; ++pid)
    for (int n = 0; n < 100; ++n)
      std::ofstream(work.path() + "/writelab-records-" + std::to_string(pid) + "-" +
                    std::to_string(n));
  RunResult r = RunWritelab({"records", "--dir", work.path(), "--method", "write", "--total",
                             "256k", "--corpus-size", "64k"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(work.Entries().size(), 4000u) << "the planted names stay; nothing else is left";
}

}  // namespace
}  // namespace writelab::testing
