// SPDX-License-Identifier: MIT
// `writelab top` beside planted culprits (tests/tools/blame_load.cc): two
// writers at 3:1 and a victim appending and fsyncing, on a test bed under a
// 32 MiB dirty limit where the writers are throttled. The observers:
//   - the writers' own byte counts, for what top says each dirtied;
//   - a private ftrace instance of writeback:balance_dirty_pages, whose
//     `pause` (ms) is each throttling sleep the kernel planned, summed per
//     process, for top's time asleep in balance_dirty_pages (from the
//     scheduler's events and the sleeper's stack: explain's split).
// And the refusals: not root, bad options.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ftrace_instance.h"
#include "harness.h"
#include "test_fs.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

// What the trace says each process was paused for: the sleeps
// balance_dirty_pages planned (its `pause`, ms) and the sleeps themselves,
// from the switch-out after a planned pause to the wake-up (ms). The two
// differ by the timer wheel's rounding up to the next jiffy, and by a tick
// that comes late (below).
struct Paused {
  double planned_ms = 0, slept_ms = 0;
  int sleeps = 0;
  long shortest_pause_ms = 0;  // a whole number of jiffies: one at least
};

// The timestamp (s) before ": EVENT:" in a line of the trace, and what follows.
bool EventOf(const std::string& line, const char* event, double* ts, std::string* rest) {
  const std::string tag = std::string(": ") + event + ": ";
  const auto at = line.find(tag);
  if (at == std::string::npos) return false;
  const auto space = line.rfind(' ', at - 1);
  *ts = std::stod(line.substr(space + 1, at - space - 1));
  *rest = line.substr(at + tag.size());
  return true;
}

long FieldOf(const std::string& rest, const char* name) {
  const auto at = rest.find(name);
  return at == std::string::npos ? -1 : std::stol(rest.substr(at + std::strlen(name)));
}

std::map<long, Paused> PausesOf(const std::string& trace) {
  std::map<long, Paused> out;
  std::map<long, bool> armed;
  std::map<long, double> asleep_since;
  std::istringstream in(trace);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    double ts = 0;
    std::string rest;
    if (EventOf(line, "balance_dirty_pages", &ts, &rest)) {
      // "  big-12345  [001] ...": the pid follows the last dash before " [".
      const auto cpu = line.find(" [");
      const auto dash = line.rfind('-', cpu);
      const long pid = std::stol(line.substr(dash + 1, cpu - dash - 1));
      const long pause = FieldOf(rest, " pause=");
      if (pause <= 0) continue;
      Paused& p = out[pid];
      p.planned_ms += static_cast<double>(pause);
      if (p.shortest_pause_ms == 0 || pause < p.shortest_pause_ms) p.shortest_pause_ms = pause;
      armed[pid] = true;
    } else if (EventOf(line, "sched_switch", &ts, &rest)) {
      const long pid = FieldOf(rest, "prev_pid=");
      if (armed[pid]) asleep_since[pid] = ts, armed[pid] = false;
    } else if (EventOf(line, "sched_wakeup", &ts, &rest)) {
      const long pid = FieldOf(rest, " pid=");
      if (auto s = asleep_since.find(pid); s != asleep_since.end()) {
        out[pid].slept_ms += (ts - s->second) * 1e3;
        ++out[pid].sleeps;
        asleep_since.erase(s);
      }
    }
  }
  return out;
}

std::map<std::string, std::map<std::string, double>> RowsOf(const json& doc,
                                                            const std::string& result) {
  std::map<std::string, std::map<std::string, double>> rows;
  for (const json& e : doc["experiments"])
    if (e["name"] == result)
      for (const json& r : e["rows"])
        for (const json& f : r["figures"]) rows[r["name"]][f["key"]] = f["value"]["median"];
  return rows;
}

class Top : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: BPF";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) GTEST_SKIP() << "no kernel BTF";
  }
  ScratchDir work{"top"};
};

// The writers dirty 267 MB/s together. Under a 32 MiB limit a disk that
// writes back faster than that (this VM's after a move: 406 MB/s with a
// final fdatasync) paused the big one for 24 to 128 ms in all, too little to
// test against; under 4 MiB, 1.2 to 1.6 s in 300 to 400 pauses.
TEST_F(Top, BesidePlantedWritersItCountsTheirDirtyingTheirThrottlingAndWhoStallsWhom) {
  TestFs fs(work.path() + "/limited", "data=ordered", 4 << 20);
  ASSERT_TRUE(fs.ok()) << "could not make and mount a loop-device ext4";
  // The writers' throttling, their switches out and their wake-ups.
  FtraceInstance ftrace("top",
                        {{"writeback/balance_dirty_pages", ""},
                         {"sched/sched_switch", "prev_comm == \"big\" || prev_comm == \"small\""},
                         {"sched/sched_wakeup", "comm == \"big\" || comm == \"small\""}});
  ASSERT_TRUE(ftrace.ok()) << "no private ftrace instance";
  Shell("sync");
  const std::string doc_path = work.path() + "/top.json", err = work.path() + "/top.err";
  // top first (its programs load in about a second), then the load.
  Shell(std::string(WRITELAB_BINARY) + " top --quiet --no-history --duration 60s --json " +
        doc_path + " >/dev/null 2>" + err + " & echo $! > " + work.path() + "/top.pid");
  sleep(3);
  const std::string out = Shell(std::string(paths::kBlameLoad) + " " + fs.Dir() +
                                " 6 200 67 buffered 60 100; echo rc=$?");
  ASSERT_NE(out.find("rc=0"), std::string::npos) << out;
  // Its number alone: the file's newline would end the kill's line, and the
  // shell would then refuse the wait loop after it, and not wait.
  const std::string top_pid = std::to_string(std::stol(Slurp(work.path() + "/top.pid")));
  // Ctrl-C ends it, as a user would, a second after the load.
  sleep(1);
  Shell("kill -INT " + top_pid + "; for i in $(seq 300); do kill -0 " + top_pid +
        " 2>/dev/null || break; sleep 0.1; done");
  const std::string trace = ftrace.Stop();
  ASSERT_FALSE(OverwroteEvents(trace)) << "the ftrace instance overwrote events";
  const std::map<long, Paused> paused = PausesOf(trace);
  ASSERT_TRUE(std::filesystem::exists(doc_path))
      << "top's stderr: " << Slurp(err) << "; pid " << top_pid << ": "
      << Shell("kill -0 " + top_pid + " 2>&1 && echo still running; dmesg | tail -n 3");
  const json doc = json::parse(Slurp(doc_path));
  const auto procs = RowsOf(doc, "top");
  const auto stalls = RowsOf(doc, "top-stalls");

  std::map<std::string, long> pid_of;
  for (std::istringstream in(out); !in.eof();) {
    std::string line;
    std::getline(in, line);
    char name[16];
    long pid = 0;
    unsigned long long bytes = 0;
    if (std::sscanf(line.c_str(), "writer %15s %ld %llu", name, &pid, &bytes) != 3) continue;
    pid_of[name] = pid;
    const std::string row = std::string(name) + " (pid " + std::to_string(pid) + ")";
    ASSERT_TRUE(procs.count(row)) << row << " is not among top's processes";
    const double mb = static_cast<double>(bytes) / 1e6;
    const double dirtied = procs.at(row).at("dirtied_mb");
    EXPECT_NEAR(dirtied, mb, 0.05 * mb) << row << ": dirtied, against its count of " << mb << " MB";
    const double throttled = procs.at(row).at("throttled_ms");
    const Paused p = paused.count(pid) ? paused.at(pid) : Paused{};
    std::printf(
        "top: %s wrote %.0f MB, top says dirtied %.0f MB; throttled %.0f ms; "
        "balance_dirty_pages planned %.0f ms in %d sleeps, which lasted %.0f ms\n",
        row.c_str(), mb, dirtied, throttled, p.planned_ms, p.sleeps, p.slept_ms);
    if (name == std::string("big")) {
      EXPECT_GE(p.planned_ms, 200.0) << "the limit did not throttle it";
    }
    EXPECT_NEAR(throttled, p.slept_ms, 0.10 * p.slept_ms + 1) << row << ": throttled";
    // The sleeps the tracepoint planned, never shorter; longer by the timer
    // wheel's rounding up to the next jiffy, and on a loaded VM by a tick
    // that comes a jiffy late (with both CPUs busy here, a CPU's timers ran
    // every 8 ms at 250 Hz, and the sleeps of 4 ms planned lasted 8.5 on
    // average): at most two jiffies a sleep. The shortest pause planned
    // stands for a jiffy: it is a whole number of them, so one at least.
    EXPECT_GE(p.slept_ms, 0.98 * p.planned_ms);
    const double jiffy_ms = static_cast<double>(p.shortest_pause_ms);
    EXPECT_LE(p.slept_ms, p.planned_ms + (2 * jiffy_ms + 0.5) * p.sleeps + 1);
  }
  ASSERT_EQ(pid_of.size(), 2u) << out;
  for (const json& e : doc["experiments"])
    if (e["name"] == "top")
      for (const json& n : e["notes"])
        std::printf("top's note: %s\n", n.get<std::string>().c_str());

  // Who stalls whom: the victim (wl_blame) waited on the writers' data, and
  // each throttled writer waited on who held the pages beside it.
  auto pair = [&](const std::string& victim, const std::string& culprit) {
    for (const auto& [name, f] : stalls)
      if (name.starts_with(victim) && name.find("<- " + culprit) != std::string::npos)
        return f.at("ms");
    return 0.0;
  };
  const std::string big = "big (pid " + std::to_string(pid_of["big"]) + ")";
  const std::string small = "small (pid " + std::to_string(pid_of["small"]) + ")";
  for (const auto& [name, f] : stalls)
    std::printf("top: stall %s %.1f ms\n", name.c_str(), f.at("ms"));
  // The victim's waits on the writers' data rank the big one first where
  // that data is a fair share of what it waited on; where the journal's
  // own blocks held it nearly all the time (1248 ms against 16 and 18 ms
  // to the writers, in one CI run), the remainders rank by chance, and
  // both writers must still be named.
  double victim_ms = 0;
  for (const auto& [name, f] : stalls)
    if (name.starts_with("wl_blame (pid")) victim_ms += f.at("ms");
  const double on_big = pair("wl_blame (pid", big), on_small = pair("wl_blame (pid", small);
  // Only while the big one wrote at least twice the small one's bytes: a
  // disk slower than the 267 MB/s they ask for throttles both to about the
  // same rate (564 and 402 MB in one CI run), and then their shares of the
  // victim's waits rank by chance too.
  const double big_mb = procs.at(big).at("dirtied_mb"), small_mb = procs.at(small).at("dirtied_mb");
  if (on_big + on_small >= 0.25 * victim_ms && big_mb >= 2 * small_mb) {
    EXPECT_GT(on_big, on_small) << "the victim's waits on the writers' data: the big one's first";
  } else {
    std::printf(
        "top: the writers' data %.1f of the victim's %.1f ms, their bytes %.0f and %.0f MB: "
        "not ranked\n",
        on_big + on_small, victim_ms, big_mb, small_mb);
    EXPECT_GT(on_big, 0) << "the victim waited on the big writer's data";
    EXPECT_GT(on_small, 0) << "the victim waited on the small writer's data";
  }
  // A writer asleep in balance_dirty_pages dirties nothing, so the 10 ms
  // windows its sleep overlaps hold the other's dirtying more than its own:
  // the split is not ranked (the big one's throttling went 2421 ms to itself
  // and 2460 ms to the small one in one CI run, 2790 and 961 ms here; the
  // small one's 482 ms to itself and 1413 ms to the big one). Both dirty
  // throughout, so each holds a share of either's throttling, and the two of
  // them nearly all of it.
  for (const auto& [who, other] : {std::pair{big, small}, std::pair{small, big}}) {
    const double throttled = procs.at(who).at("throttled_ms");
    const double self = pair(who, "self"), on_other = pair(who, other);
    std::printf("top: %s throttled %.0f ms: %.0f ms charged to itself, %.0f ms to %s\n",
                who.c_str(), throttled, self, on_other, other.c_str());
    EXPECT_GE(self + on_other, 0.8 * throttled) << who << ": its throttling charged to the writers";
    EXPECT_GE(self, 0.1 * throttled) << who << ": its own dirtying";
    EXPECT_GE(on_other, 0.1 * throttled) << who << ": the other's dirtying";
  }
}

TEST_F(Top, RefusesBadOptionsAndAnUnprivilegedUserWithOneLine) {
  RunResult r = RunWritelab({"top", "--interval", "10ms"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--interval: must be at least 100ms"), std::string::npos) << r.err;
  r = RunWritelab({"top", "--duration", "soon"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunWritelabAsNobody({"top", "--duration", "1s", "--no-history"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("top: "), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(Top, EndsOnCtrlCWithTheTotalsAndExitZero) {
  const RunResult r = RunWritelab({"top", "--quiet", "--no-history"}, 2500, SIGINT);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("writelab top:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("writelab top-stalls:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace writelab::testing
