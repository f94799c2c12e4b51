// SPDX-License-Identifier: MIT
// The memcg:SIZE anchor (issue 44), in `writelab run` and in the stream
// experiment: the writer runs in a memory cgroup of writelab's own, with
// the limit CMD itself reads back from inside it; the cgroup is gone after
// the row, and after a kill -9 once `writelab cleanup` ran; a writer the
// OOM killer ends is the row's outcome, said as such. And run's time until
// durable beside its time to exit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "figures.h"
#include "harness.h"
#include "killed_runs.h"
#include "telemetry/pagecache.h"
#include "test_paths.h"
#include "testbed/memory_cgroup.h"
#include "writelab/unique_fd.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

class Memcg : public ::testing::Test {
 protected:
  void SetUp() override {
    auto found = FindMemoryCgroupPlace();
    ASSERT_TRUE(found) << "the test profile's machines have a memory controller: "
                       << found.error().Message();
    place = *found;
  }
  // writelab run OPTIONS -- CMD, with its document.
  json Run(std::vector<std::string> options, const std::vector<std::string>& cmd,
           RunResult* result = nullptr) {
    options.insert(options.begin(), "run");
    options.insert(options.end(), {"--json", json_path, "--"});
    options.insert(options.end(), cmd.begin(), cmd.end());
    RunResult r = RunWritelab(options);
    if (result) *result = r;
    EXPECT_TRUE(std::filesystem::exists(json_path)) << r.err;
    if (!std::filesystem::exists(json_path)) return json::object();
    json doc = json::parse(Slurp(json_path));
    std::filesystem::remove(json_path);
    return doc;
  }
  // A shell line that writes the memory cgroup the shell runs in, from the
  // hierarchy's root, to file.
  std::string OwnCgroupTo(const std::string& file) const {
    return place.v1 ? "sed -n 's/^[0-9]*:[a-z,]*memory[a-z,]*://p' /proc/self/cgroup > " + file
                    : "sed -n 's/^0:://p' /proc/self/cgroup > " + file;
  }
  std::string LimitFile() const { return place.v1 ? "memory.limit_in_bytes" : "memory.max"; }
  std::string Path(const std::string& name) const { return work.path() + "/" + name; }

  CgroupPlace place;
  ScratchDir work{"run-memcg"};
  ScratchDir outputs{"run-memcg-out"};  // what writelab writes beside its --dir
  std::string json_path = outputs.path() + "/out.json";
};

const json* RowOf(const json& doc, const std::string& name) {
  for (const json& e : doc["experiments"])
    if (e["name"] == "run")
      for (const json& r : e["rows"])
        if (r["name"] == name) return &r;
  return nullptr;
}

std::string Notes(const json& row) {
  std::string all;
  for (const json& n : row["notes"]) all += n.get<std::string>() + "\n";
  return all;
}

// Rows in --strategy's order after plain; CMD, inside the memcg row's
// cgroup, reads the limit back; the cgroup is gone after the row; what the
// file keeps cached is within the limit, plain's is the whole file.
TEST_F(Memcg, CmdRunsInACgroupOfTheLimitGoneAfterTheRow) {
  const std::string script = OwnCgroupTo(Path("cg")) + "; cat " + place.root + "\"$(cat " +
                             Path("cg") + ")\"/" + LimitFile() + " > " + Path("limit") +
                             "; dd if=/dev/zero of=" + Path("dst") + " bs=1M count=160 status=none";
  json doc = Run({"--compare", "--rounds", "1", "--strategy", "window-drop,memcg:64M"},
                 {"sh", "-c", script});
  const json* plain = RowOf(doc, "plain");
  const json* memcg = RowOf(doc, "memcg:64M");
  ASSERT_TRUE(plain && memcg && RowOf(doc, "window-drop")) << doc.dump().substr(0, 3000);
  EXPECT_EQ(doc["experiments"][0]["rows"][2]["name"], "memcg:64M") << "in --strategy's order";
  // The memcg row ran last: the files hold what CMD saw inside its cgroup.
  const std::string cgroup = Shell("cat " + Path("cg"));
  EXPECT_NE(cgroup.find("/writelab-"), std::string::npos) << "CMD ran in writelab's cgroup";
  EXPECT_EQ(Shell("cat " + Path("limit")), std::to_string(64 << 20));
  struct stat st;
  EXPECT_NE(stat((place.root + cgroup).c_str(), &st), 0) << place.root + cgroup << " left behind";
  const auto m = Figures(*memcg), p = Figures(*plain);
  if (m.count("oom_kills") && m.at("oom_kills") > 0) {  // v1's reclaim may give up on dirty pages
    EXPECT_NE(Notes(*memcg).find("OOM killer"), std::string::npos) << Notes(*memcg);
    EXPECT_NE(m.at("exit_status"), 0);
    return;
  }
  EXPECT_EQ(m.at("exit_status"), 0) << Notes(*memcg);
  EXPECT_LE(m.at("cached_end"), 64 << 20) << "its page cache is charged to the cgroup";
  ASSERT_TRUE(m.count("memcg_peak"));
  EXPECT_LE(m.at("memcg_peak"), 64 << 20);
  EXPECT_GE(p.at("cached_end"), 150 << 20) << "plain keeps the whole file cached";
  EXPECT_NE(Notes(*memcg).find("limited to 64.0 MiB"), std::string::npos) << Notes(*memcg);
}

// A writer over its limit with memory it cannot give back (no swap, no
// page cache: a shell's own string) is ended by the OOM killer: that is
// the row's outcome, said as such, and the cgroup still goes.
TEST_F(Memcg, AnOomKilledWriterIsTheRowsOutcome) {
  RunResult r;
  json doc = Run({"--strategy", "memcg:16M"},
                 {"sh", "-c", "x=$(head -c 96M /dev/zero | tr '\\0' a); echo ${#x}"}, &r);
  const json* row = RowOf(doc, "memcg:16M");
  ASSERT_TRUE(row) << r.err;
  const auto f = Figures(*row);
  ASSERT_TRUE(f.count("oom_kills")) << "the kernel counts OOM kills per cgroup";
  EXPECT_GE(f.at("oom_kills"), 1);
  EXPECT_NE(Notes(*row).find("the OOM killer ended"), std::string::npos) << Notes(*row);
  EXPECT_NE(r.exit_code, 0) << "CMD's status, as without writelab";
  EXPECT_EQ(r.out.find(std::to_string(96 << 20)), std::string::npos) << "sh never finished";
}

// kill -9 while CMD runs in its cgroup: `writelab cleanup` kills what is
// in it and removes it.
TEST_F(Memcg, CleanupRemovesAKilledRunsCgroupAndWhatRanInIt) {
  const std::string marker = "61.4321";
  const std::string hierarchy = place.dir();
  auto steps = KillOnceJournaled({"run", "--strategy", "memcg:64M", "--", "sleep", marker},
                                 hierarchy + "/writelab-", hierarchy + "/writelab-", "cgroup");
  const std::string cgroup = StepPath(steps, "cgroup");
  ASSERT_FALSE(cgroup.empty()) << "the cgroup was journaled before it was made";
  usleep(200'000);
  struct stat st;
  ASSERT_EQ(stat(cgroup.c_str(), &st), 0) << "killed with the cgroup in place";
  EXPECT_FALSE(ProcessesMentioning(marker).empty()) << "CMD outlived writelab, in the cgroup";
  RunResult c = RunWritelab({"cleanup"});
  EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
  EXPECT_NE(stat(cgroup.c_str(), &st), 0) << cgroup << " left behind";
  for (int i = 0; i < 100 && !ProcessesMentioning(marker).empty(); ++i) usleep(20'000);
  EXPECT_TRUE(ProcessesMentioning(marker).empty()) << "what ran in the cgroup was killed";
}

// With --measure (or --compare), a run waits until what CMD wrote is
// written back: plain's file, far below the background threshold, would
// otherwise stay dirty until the kernel's expiry (30 s); its MB/s until
// durable counts the wait.
TEST_F(Memcg, AMeasuredRunWaitsUntilPlainsPagesAreWrittenBack) {
  json doc = Run({"--strategy", "plain", "--measure", "--probe-dir", work.path()},
                 {"dd", "if=/dev/zero", "of=" + Path("dst"), "bs=1M", "count=16", "status=none"});
  UniqueFd fd(open(Path("dst").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  ASSERT_TRUE(fd);
  auto r = MeasureResidency(fd.get(), Path("dst"));
  ASSERT_TRUE(r && r->dirty_pages && r->writeback_pages) << "cachestat (Linux 6.5)";
  EXPECT_EQ(*r->dirty_pages + *r->writeback_pages, 0u) << "plain's pages settled before the exit";
  const json* row = RowOf(doc, "plain");
  ASSERT_TRUE(row);
  const auto f = Figures(*row);
  ASSERT_TRUE(f.count("durable_mb_s") && f.count("settle_s")) << Notes(*row);
  EXPECT_NEAR(f.at("durable_mb_s"), f.at("bytes") / (f.at("elapsed_s") + f.at("settle_s")) / 1e6,
              f.at("durable_mb_s") / 100);
  EXPECT_LT(f.at("durable_mb_s"), f.at("mb_s")) << "the wait after the exit counts";
}

// The memory cgroups below dir that hold a process, while a run lasts.
class CgroupWatch {
 public:
  explicit CgroupWatch(std::string dir)
      : dir_(std::move(dir)), thread_([this] {
          while (!stop_) {
            std::error_code ec;
            for (const auto& e : std::filesystem::directory_iterator(dir_, ec))
              if (e.path().filename().string().starts_with("writelab-") &&
                  !Slurp(e.path().string() + "/cgroup.procs").empty()) {
                std::lock_guard lock(mu_);
                seen_.insert(e.path().string());
              }
            usleep(20'000);
          }
        }) {}
  std::set<std::string> Stop() {
    stop_ = true;
    thread_.join();
    return seen_;
  }

 private:
  std::string dir_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> seen_;
  std::thread thread_;
};

// The stream experiment's memcg row: its writer is a process in a cgroup
// of the limit while the row runs, the file's page cache stays within it
// (plain's is the whole file), and the cgroup is gone after the row.
TEST_F(Memcg, TheStreamExperimentsRowWritesFromACgroupGoneAfterIt) {
  CgroupWatch watch(place.dir());
  json doc = json::parse(Shell(std::string(WRITELAB_BINARY) + " stream --dir " + work.path() +
                               " --strategy plain,memcg:64M --size 192M --rounds 1 --no-probe "
                               "--json - 2>/dev/null"));
  const std::set<std::string> seen = watch.Stop();
  EXPECT_FALSE(seen.empty()) << "no cgroup of writelab's held a process during the run";
  struct stat st;
  for (const std::string& dir : seen) EXPECT_NE(stat(dir.c_str(), &st), 0) << dir << " left";
  const json& rows = doc["experiments"][0]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["name"], "memcg:64M");
  if (rows[1]["status"] != "ok") {  // v1's reclaim may give up on dirty pages
    EXPECT_NE(rows[1]["message"].get<std::string>().find("OOM killer"), std::string::npos)
        << rows[1].dump();
    return;
  }
  const auto m = Figures(rows[1]), p = Figures(rows[0]);
  EXPECT_EQ(m.at("bytes"), 192 << 20);
  EXPECT_LE(m.at("cached_end"), 64 << 20) << "its page cache is charged to the cgroup";
  ASSERT_TRUE(m.count("memcg_peak"));
  EXPECT_LE(m.at("memcg_peak"), 64 << 20);
  EXPECT_GE(p.at("cached_end"), 150 << 20) << "plain keeps the whole file cached";
  EXPECT_NE(Notes(rows[1]).find("limited to 64.0 MiB"), std::string::npos) << Notes(rows[1]);
}

// kill -9 of writelab in the stream experiment's memcg row: its writer
// goes on in the cgroup; `writelab cleanup` kills it and removes the cgroup.
TEST_F(Memcg, CleanupEndsAKilledStreamsWriterAndItsCgroup) {
  const std::string hierarchy = place.dir();
  auto steps = KillOnceJournaled({"stream", "--dir", work.path(), "--strategy", "memcg:64M",
                                  "--size", "4G", "--rounds", "1", "--no-probe"},
                                 hierarchy + "/writelab-", hierarchy + "/writelab-", "cgroup");
  const std::string cgroup = StepPath(steps, "cgroup");
  ASSERT_FALSE(cgroup.empty()) << "the cgroup was journaled before it was made";
  EXPECT_FALSE(Slurp(cgroup + "/cgroup.procs").empty()) << "the writer outlived writelab";
  RunResult c = RunWritelab({"cleanup"});
  EXPECT_EQ(c.exit_code, 0) << c.err << c.out;
  struct stat st;
  EXPECT_NE(stat(cgroup.c_str(), &st), 0) << cgroup << " left behind, its writer with it";
  for (const std::string& e : work.Entries())
    EXPECT_EQ(e.find("writelab-"), std::string::npos) << e << ": the killed run's file left behind";
}

}  // namespace
}  // namespace writelab::testing
