// SPDX-License-Identifier: MIT
// `writelab explain -- CMD` and `--pid PID` on real programs (root, BPF):
// calls counted and split, the scope following forks, the exit status passed
// through, nothing left attached after SIGINT, refusals in one line; and the
// three staged cases of the seeds seen from outside, on loop-device ext4
// file systems this file makes: an fsync loop beside a streamer under a
// per-device dirty limit, O_DSYNC|O_DIRECT writes into a fallocated file
// against a zero-filled one, and a buffered writer throttled by a 32 MiB
// dirty limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "browser.h"
#include "harness.h"
#include "test_fs.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

const json* RowOf(const json& doc, const std::string& experiment, const std::string& name) {
  for (const json& e : doc["experiments"])
    if (e["name"] == experiment)
      for (const json& r : e["rows"])
        if (r["name"] == name) return &r;
  return nullptr;
}

double MedianOf(const json& row, const std::string& key) {
  for (const json& f : row["figures"])
    if (f["key"] == key) return f["value"]["median"];
  return -1;
}

// Every row's parts add up to at most the whole (100%, 1% of slack).
void ExpectPartsWithinTheCalls(const json& doc) {
  for (const json& e : doc["experiments"])
    for (const json& r : e["rows"]) {
      if (MedianOf(r, "journal_pct") < 0) continue;
      const double sum =
          MedianOf(r, "journal_pct") + MedianOf(r, "flush_pct") + MedianOf(r, "data_pct");
      EXPECT_LE(sum, 101) << e["name"] << " " << r["name"];
    }
}

class ExplainProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: BPF";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) GTEST_SKIP() << "no kernel BTF";
    if (Slurp("/sys/kernel/security/lockdown").find("[confidentiality]") != std::string::npos)
      GTEST_SKIP() << "kernel lockdown (confidentiality) refuses BPF tracing";
  }
  json Explain(std::vector<std::string> args, int want_exit = 0) {
    args.insert(args.begin(), {"explain", "--quiet", "--json", json_path});
    RunResult r = RunWritelab(args);
    EXPECT_EQ(r.exit_code, want_exit) << r.err << r.out;
    if (!std::filesystem::exists(json_path)) return json::object();
    return json::parse(Slurp(json_path));
  }
  ScratchDir work{"explain-program"};
  std::string json_path = work.path() + ".json";
  void TearDown() override { std::filesystem::remove(json_path); }
};

TEST_F(ExplainProgram, CountsAndSplitsEveryCallAndPassesTheExitStatus) {
  const std::string f = work.path() + "/wal";
  json doc = Explain(
      {"--", "sh", "-c", std::string(WRITELAB_WRITERS_BINARY) + " fsync " + f + " 20 5; exit 7"},
      7);
  ASSERT_FALSE(doc.empty());
  const json* fsync = RowOf(doc, "explain", "fsync");
  const json* pwrite = RowOf(doc, "explain", "pwrite64");
  ASSERT_TRUE(fsync && pwrite) << doc["experiments"][0]["rows"];
  EXPECT_EQ(MedianOf(*fsync, "calls"), 20);
  EXPECT_EQ(MedianOf(*pwrite, "calls"), 20);
  EXPECT_NEAR(MedianOf(*pwrite, "mb"), 20 * 1.048576, 0.01) << "bytes the calls returned";
  const json* file = RowOf(doc, "explain-files", f);
  ASSERT_TRUE(file) << "the file by its path";
  EXPECT_EQ(MedianOf(*file, "calls"), 40);
  ExpectPartsWithinTheCalls(doc);
  bool exit_noted = false;
  for (const json& n : doc["experiments"][0]["notes"])
    exit_noted |= n.get<std::string>() == "the command exited with status 7";
  EXPECT_TRUE(exit_noted);
  // Every fsync is a durability call: the list has its default ten.
  EXPECT_EQ(doc["experiments"][2]["rows"].size(), 10u);
}

// The HTML report draws an explain document (the calls over time, the split
// per type), and compare puts two runs side by side, call type by call type.
TEST_F(ExplainProgram, TheReportDrawsItAndCompareComparesTwoRuns) {
  const std::string f = work.path() + "/wal", second = work.path() + "-2.json";
  const std::string w = WRITELAB_WRITERS_BINARY;
  Explain({"--", w, "fsync", f, "12", "2"});
  std::filesystem::copy_file(json_path, second);
  Explain({"--", w, "fsync", f, "12", "2"});
  RunResult c = RunWritelab({"compare", second, json_path});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("fsync"), std::string::npos) << c.out;
  std::filesystem::remove(second);
  if (FindChromium().empty())
    WRITELAB_SKIP_WITHOUT_PART("chromium is not installed (scripts/setup.sh installs it)");
  const std::string html = work.path() + "/explain.html";
  ASSERT_EQ(RunWritelab({"report", json_path, "-o", html}).exit_code, 0);
  std::string why;
  json check = BrowserCheck(html, work.path() + "/profile", &why);
  ASSERT_TRUE(check.is_object()) << why;
  EXPECT_EQ(check["errors"], json::array()) << check["errors"].dump();
  EXPECT_GE(check["charts"].get<int>(), 2) << "the timeline and the split";
  for (const json& chart : check["rendered"]) {
    EXPECT_GT(chart["pixels"].get<int>(), 1000) << "chart " << chart["chart"] << " is blank";
    EXPECT_GT(chart["points"].get<int>(), 0) << "chart " << chart["chart"] << " has no data";
  }
}

TEST_F(ExplainProgram, TheScopeFollowsForksAndAPipelineIsOneScope) {
  const std::string a = work.path() + "/a", b = work.path() + "/b";
  const std::string w = WRITELAB_WRITERS_BINARY;
  json doc = Explain(
      {"--", "sh", "-c", w + " fsync " + a + " 3 0 & " + w + " fsync " + b + " 4 0 | cat; wait"});
  ASSERT_FALSE(doc.empty());
  ASSERT_TRUE(RowOf(doc, "explain-files", a)) << doc["experiments"][1]["rows"];
  ASSERT_TRUE(RowOf(doc, "explain-files", b));
  EXPECT_EQ(MedianOf(*RowOf(doc, "explain", "fsync"), "calls"), 7);
}

TEST_F(ExplainProgram, AttachesToARunningProcessForADuration) {
  const std::string f = work.path() + "/attached";
  pid_t pid = fork();
  if (pid == 0) {
    execl(WRITELAB_WRITERS_BINARY, "writers", "fsync", f.c_str(), "1000", "20", nullptr);
    _exit(127);
  }
  usleep(200'000);
  json doc = Explain({"--pid", std::to_string(pid), "--duration", "1s"});
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "the process goes on";
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_FALSE(doc.empty());
  const json* fsync = RowOf(doc, "explain", "fsync");
  ASSERT_TRUE(fsync);
  EXPECT_GE(MedianOf(*fsync, "calls"), 5) << "about one every 20 ms, for a second";
  EXPECT_LE(MedianOf(*fsync, "calls"), 60);
}

TEST_F(ExplainProgram, SigintKeepsWhatWasMeasuredAndLeavesNothingAttached) {
  const std::string f = work.path() + "/interrupted";
  RunResult r = RunWritelab({"explain", "--quiet", "--json", json_path, "--",
                             WRITELAB_WRITERS_BINARY, "fsync", f, "100000", "10"},
                            1500, SIGINT);
  EXPECT_NE(r.exit_code, 0) << r.err;
  json doc = json::parse(Slurp(json_path));
  ASSERT_TRUE(RowOf(doc, "explain", "fsync")) << "what was measured is kept";
  EXPECT_GE(MedianOf(*RowOf(doc, "explain", "fsync"), "calls"), 10);
  // The kernel frees a program after a grace period, once its last link
  // and fd are closed: give it a moment. (scope_fork is the tracer's own
  // name; the ExplainProgram tests hold a lock against each other.)
  std::string left = "?";
  for (int i = 0; i < 40 && left != "0"; ++i, usleep(50'000))
    left = Shell("bpftool prog show 2>/dev/null | grep -c scope_fork");
  EXPECT_EQ(left, "0") << "no program left attached";
  EXPECT_TRUE(ProcessesMentioning(f).empty()) << "the command stopped with writelab";
}

TEST(ExplainProgramRefusals, BadInputIsOneLineAndExitTwo) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"explain"},
                                               {"explain", "--pid", "999999"},
                                               {"explain", "--pid", "1", "--", "true"},
                                               {"explain", "--duration", "1s", "--", "true"},
                                               {"explain", "--slow", "0", "--", "true"},
                                               {"explain", "--", "/nonexistent/program"}}) {
    RunResult r = RunWritelab(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
  }
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run writelab as nobody";
  RunResult nobody = RunWritelabAsNobody({"explain", "--", "true"});
  EXPECT_EQ(nobody.exit_code, 2);
  EXPECT_NE(nobody.err.find("needs root"), std::string::npos) << nobody.err;
}

// The 2009 effect from outside: an fsync loop beside a buffered streamer on a
// device whose dirty pages are bounded, so that the stream reaches the disk.
TEST_F(ExplainProgram, AnFsyncBesideAStreamerWaitsForTheJournalAndTheDevice) {
  TestFs fs(work.path() + "-ordered", "data=ordered", 256ull << 20);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  const std::string w = WRITELAB_WRITERS_BINARY;
  json doc = Explain({"--", "sh", "-c",
                      w + " stream " + fs.Path("big") + " 1536 & " + w + " fsync " +
                          fs.Path("wal") + " 30 30; wait"});
  ASSERT_FALSE(doc.empty());
  const json* fsync = RowOf(doc, "explain", "fsync");
  ASSERT_TRUE(fsync);
  EXPECT_GT(MedianOf(*fsync, "journal_pct") + MedianOf(*fsync, "data_pct") +
                MedianOf(*fsync, "flush_pct"),
            50)
      << "an fsync beside a stream waits for the journal and the device";
  int named = 0;
  for (const json& r : doc["experiments"][2]["rows"])
    if (MedianOf(r, "journal_pct") + MedianOf(r, "data_pct") > 50) ++named;
  EXPECT_GE(named, 1) << "the slow calls name the journal commit and the device writes";
  // The goal (issue 29): for calls of 10 ms and more, little of their time
  // is left as "other": weighted by their time over the slow-call list, so
  // that one call beside other tests' I/O and CPU, waiting on what the
  // split does not name, does not decide it (docs/explain.md).
  double slow_ms = 0, other_ms = 0;
  for (const json& r : doc["experiments"][2]["rows"])
    if (const double ms = MedianOf(r, "ms"); ms >= 10) {
      slow_ms += ms;
      other_ms += ms * MedianOf(r, "other_pct") / 100;
    }
  if (slow_ms > 0) {
    EXPECT_LT(100 * other_ms / slow_ms, 20) << "of " << slow_ms << " ms of calls of 10 ms or more";
  } else {
    EXPECT_LT(MedianOf(*fsync, "other_pct"), 20) << "no call of 10 ms or more: the whole row";
  }
  ExpectPartsWithinTheCalls(doc);
}

// The 2012 effect: synchronous direct writes into unwritten extents need a
// conversion and a commit each; into written zeros, none.
TEST_F(ExplainProgram, WritesIntoAFallocatedFileConvertAndCommitEachTime) {
  TestFs fs(work.path() + "-prealloc", "data=ordered", 0);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  Shell("fallocate -l 64M " + fs.Path("falloc") + "; dd if=/dev/zero of=" + fs.Path("zeros") +
        " bs=1M count=64 conv=fsync 2>/dev/null");
  const std::string w = WRITELAB_WRITERS_BINARY;
  for (const auto& [file, want] : {std::pair{"falloc", 1.0}, {"zeros", 0.0}}) {
    SCOPED_TRACE(file);
    json doc = Explain({"--", w, "dsync", fs.Path(file), "100", "16"});
    ASSERT_FALSE(doc.empty());
    const json* row = RowOf(doc, "explain", "pwrite64 (direct, synchronous)");
    ASSERT_TRUE(row) << doc["experiments"][0]["rows"];
    EXPECT_EQ(MedianOf(*row, "calls"), 100);
    EXPECT_NEAR(MedianOf(*row, "conversions_per_call"), want, 0.1);
    EXPECT_NEAR(MedianOf(*row, "commits_per_call"), want, 0.15);
  }
}

TEST_F(ExplainProgram, ABufferedWriterUnderA32MiBDirtyLimitIsThrottled) {
  TestFs fs(work.path() + "-throttled", "data=ordered", 32ull << 20);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  json doc = Explain({"--", WRITELAB_WRITERS_BINARY, "stream", fs.Path("big"), "512"});
  ASSERT_FALSE(doc.empty());
  const json* write = RowOf(doc, "explain", "write");
  ASSERT_TRUE(write);
  EXPECT_GT(MedianOf(*write, "throttled_pct"), 1) << "balance_dirty_pages paused the writes";
}

}  // namespace
}  // namespace writelab::testing
