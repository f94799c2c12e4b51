// SPDX-License-Identifier: MIT
// `writelab stream` end to end on a real directory, as a user runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

class StreamCli : public ::testing::Test {
 protected:
  ScratchDir work{"stream"};
  std::string results = work.path() + "/../writelab-stream-results-" + std::to_string(getpid());
  void TearDown() override {
    std::filesystem::remove(results + ".json");
    std::filesystem::remove(results + ".csv");
  }
};

TEST_F(StreamCli, EveryStrategyMeasuredOnARealDirectory) {
  RunResult r = RunWritelab({"stream", "--dir", work.path(), "--size", "64M", "--block", "8M",
                             "--rounds", "2", "--interval", "100ms", "--json", results + ".json",
                             "--csv", results + ".csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(work.Entries().empty()) << "stream left files behind";
  json doc = json::parse(Slurp(results + ".json"));
  EXPECT_EQ(doc["schema_version"], 1);
  const json& e = doc["experiments"][0];
  EXPECT_EQ(e["name"], "stream");
  std::vector<std::string> names;
  for (const json& row : e["rows"]) names.push_back(row["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"plain", "window", "window-drop", "dontcache",
                                             "direct", "paced", "library"}));
  for (const json& row : e["rows"]) {
    std::string name = row["name"];
    if (row["status"] == "unsupported") {
      // Only features the kernel or file system may lack can be unsupported,
      // and then with the errno that said so.
      EXPECT_TRUE(name == "dontcache" || name == "direct") << name;
      EXPECT_NE(row["errno"], 0) << name;
      EXPECT_FALSE(row["message"].get<std::string>().empty());
      continue;
    }
    ASSERT_EQ(row["status"], "ok") << name << ": " << row["message"];
    std::map<std::string, json> fig;
    for (const json& f : row["figures"]) fig[f["key"]] = f;
    EXPECT_EQ(fig["bytes"]["value"]["min"], 64.0 * 1024 * 1024) << name;
    EXPECT_EQ(fig["bytes"]["value"]["max"], 64.0 * 1024 * 1024) << name;
    EXPECT_EQ(fig["mb_s"]["value"]["n"], 2) << name;
    EXPECT_GT(fig["mb_s"]["value"]["median"].get<double>(), 0) << name;
    EXPECT_EQ(fig["mb_s"]["unit"], "MB/s");
    // The overall rate includes the final sync, so it cannot beat the write phase.
    EXPECT_LE(fig["mb_s"]["value"]["max"].get<double>(),
              fig["write_mb_s"]["value"]["max"].get<double>() * 1.0001)
        << name;
    EXPECT_TRUE(fig.count("probe_max_ms")) << name << ": no probe figures";
    // A p99 only over 100 probes or more; else the latency says why not.
    for (const json& l : row["latencies"]) {
      if (l["key"] != "probe") continue;
      // (The figure is per trial, the latency over all trials.)
      bool enough = l["count"].get<uint64_t>() >= 100;
      if (fig.count("probe_p99_ms")) {
        EXPECT_TRUE(enough) << name << ": " << l["count"];
      }
      bool said = false;
      for (const json& o : l["percentiles_omitted"]) said = said || o["p"] == 99.0;
      EXPECT_EQ(said, !enough) << name << ": " << l["percentiles_omitted"];
    }
    EXPECT_TRUE(fig.count("cached_end")) << name;
    bool has_timeline = false;
    for (const json& s : row["series"])
      if (s["key"] == "timeline" && !s["points"].empty()) has_timeline = true;
    EXPECT_TRUE(has_timeline) << name << ": empty time series";
    bool has_probe = false;
    for (const json& l : row["latencies"])
      if (l["key"] == "probe" && l["count"].get<int>() > 0) has_probe = true;
    EXPECT_TRUE(has_probe) << name;
  }
  std::string csv = Slurp(results + ".csv");
  EXPECT_NE(csv.find("stream,"), std::string::npos);
  EXPECT_NE(r.out.find("window-drop"), std::string::npos);
}

// Issue 44: the paced strategy as strace sees it, an observer of its own:
// after its first write, its file's writes are at most a block, what lies
// written but not flushed (fdatasync) never exceeds the largest window its
// row reports, across passes too (--min-time writes the 24 MiB file over
// and over, for 2 s: a pass's tail is flushed before the next begins; a
// 60 MiB file once took the whole of a 1 s minimum beside three other
// tests, with no second pass), and it flushed as many times as its row
// says; then nothing is left cached.
TEST_F(StreamCli, PacedFlushesEachWindowAsATraceShows) {
  const std::string trace = work.path() + "/../writelab-stream-trace-" + std::to_string(getpid());
  RunResult r = RunProgram("/usr/bin/strace", {"-f",
                                               "-qq",
                                               "-e",
                                               "trace=pwrite64,fdatasync,fsync",
                                               "-o",
                                               trace,
                                               WRITELAB_BINARY,
                                               "stream",
                                               "--dir",
                                               work.path(),
                                               "--strategy",
                                               "paced",
                                               "--size",
                                               "24M",
                                               "--min-time",
                                               "2s",
                                               "--rounds",
                                               "1",
                                               "--no-probe",
                                               "--interval",
                                               "100ms",
                                               "--no-history",
                                               "--json",
                                               results + ".json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(Slurp(trace));
  std::filesystem::remove(trace);
  std::string line, fd;
  uint64_t unflushed = 0, most = 0, largest_write = 0;
  int flushes = 0;
  while (std::getline(lines, line)) {
    const size_t call = line.find_first_not_of(' ', line.find(' '));  // strace pads the pid
    const size_t open = line.find('(', call);
    if (open == std::string::npos) continue;
    const std::string name = line.substr(call, open - call);
    const std::string this_fd = line.substr(open + 1, line.find_first_of(",)", open) - open - 1);
    if (name == "pwrite64") {  // "pwrite64(5, "..."..., 8388608, 0) = 8388608"
      const uint64_t size = std::stoull(line.substr(line.rfind(" = ") + 3));
      if (fd.empty() && size > 4096) fd = this_fd;  // the trial's first write (the canary's: 4 KiB)
      if (this_fd != fd) continue;
      unflushed += size;
      most = std::max(most, unflushed);
      largest_write = std::max(largest_write, size);
    } else if (!fd.empty() && this_fd == fd && name == "fdatasync") {
      ++flushes, unflushed = 0;
    } else if (!fd.empty() && this_fd == fd && name == "fsync") {
      break;  // the final sync
    }
  }
  ASSERT_FALSE(fd.empty()) << "no write of the trial in the trace";
  EXPECT_LE(largest_write, uint64_t{8} << 20) << "a write larger than --block";
  json doc = json::parse(Slurp(results + ".json"));
  const json& row = doc["experiments"][0]["rows"][0];
  ASSERT_EQ(row["status"], "ok") << row["message"];
  // "... flushed its own data N times (fdatasync), its window between A MiB and B MiB, ..."
  const std::string said = "paced flushed its own data " + std::to_string(flushes) + " times";
  std::string note;
  for (const json& n : row["notes"])
    if (n.get<std::string>().find("paced flushed") != std::string::npos) note = n;
  EXPECT_NE(note.find(said), std::string::npos) << note << " against the trace's " << flushes;
  const size_t and_at = note.find(" and ", note.find("its window between"));
  ASSERT_NE(and_at, std::string::npos) << note;
  const size_t mib_at = note.find(" MiB", and_at);
  ASSERT_NE(mib_at, std::string::npos) << note;
  // The note rounds (10.9 MiB for a window of 10.94): within half its last digit.
  const std::string largest = note.substr(and_at + 5, mib_at - and_at - 5);
  const size_t point = largest.find('.');
  const int decimals =
      point == std::string::npos ? 0 : static_cast<int>(largest.size() - point - 1);
  const double rounding = 0.5 * std::pow(10.0, -decimals);
  EXPECT_LE(static_cast<double>(most), (std::stod(largest) + rounding) * (1 << 20))
      << "more unflushed than its largest window: " << note;
  EXPECT_NE(row["notes"].dump().find("times over"), std::string::npos) << "no second pass";
  for (const json& f : row["figures"]) {
    if (f["key"] == "cached_end") {
      EXPECT_LE(f["value"]["median"], 16.0 * 1024 * 1024);
    }
  }
}

TEST_F(StreamCli, KeepLeavesTheLastFile) {
  RunResult r = RunWritelab({"stream", "--dir", work.path(), "--size", "8M", "--block", "1M",
                             "--rounds", "1", "--strategy", "plain", "--no-probe", "--keep"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto entries = work.Entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(std::filesystem::file_size(work.path() + "/" + entries[0]), 8u << 20);
}

TEST_F(StreamCli, InterruptedRunStillWritesResultsAndCleansUp) {
  for (int sig : {SIGINT, SIGTERM}) {
    RunResult r = RunWritelab({"stream", "--dir", work.path(), "--size", "512M", "--repeat", "20",
                               "--interval", "100ms", "--json", results + ".json"},
                              1500, sig);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_TRUE(work.Entries().empty()) << "interrupted stream left files behind";
    json doc = json::parse(Slurp(results + ".json"));
    ASSERT_EQ(doc["errors"].size(), 1u);
    EXPECT_EQ(doc["errors"][0], "interrupted");
    EXPECT_EQ(doc["experiments"][0]["rows"].size(), 7u);  // every row, measured or saying why not
  }
}

// GNU timeout sends SIGTERM to writelab and then to its process group,
// microseconds apart: the second is the same request, not a kill in the
// middle of the cleanup (which left the run's files; issue 40).
TEST_F(StreamCli, ASecondSigtermIsTheSameRequest) {
  for (int again_us : {10000, 50000, 200000}) {
    RunResult r = RunProgram(WRITELAB_BINARY,
                             {"stream", "--dir", work.path(), "--size", "512M", "--repeat", "20",
                              "--json", results + ".json"},
                             nullptr, 1500, SIGTERM, again_us);
    EXPECT_EQ(r.exit_code, 1) << again_us << " us apart: " << r.err;
    EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
    EXPECT_TRUE(work.Entries().empty()) << again_us << " us apart: files left behind";
    EXPECT_TRUE(std::filesystem::exists(results + ".json")) << "what was measured is written";
  }
  // And under GNU timeout itself.
  RunResult t = RunProgram("/usr/bin/timeout",
                           {"--preserve-status", "-s", "TERM", "1", WRITELAB_BINARY, "stream",
                            "--dir", work.path(), "--size", "512M", "--repeat", "20"});
  EXPECT_EQ(t.exit_code, 1) << t.err;
  EXPECT_TRUE(work.Entries().empty());
}

TEST(StreamOnTmpfs, UnsupportedFeatureIsARowWithItsErrno) {
  if (!std::filesystem::exists("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  setenv("WRITELAB_TEST_DIR", "/dev/shm", 1);
  ScratchDir work("tmpfs");
  unsetenv("WRITELAB_TEST_DIR");
  ScratchDir outputs("tmpfs-out");
  std::string json_path = outputs.path() + "/out.json";
  RunResult r =
      RunWritelab({"stream", "--dir", work.path(), "--size", "16M", "--block", "4M", "--repeat",
                   "1", "--strategy", "dontcache,library", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(Slurp(json_path));
  std::filesystem::remove(json_path);
  const json& e = doc["experiments"][0];
  EXPECT_EQ(e["target"]["fs_type"], "tmpfs");
  const json& dontcache = e["rows"][0];
  if (dontcache["status"] == "ok") GTEST_SKIP() << "this kernel takes RWF_DONTCACHE on tmpfs";
  EXPECT_EQ(dontcache["status"], "unsupported");
  EXPECT_EQ(dontcache["error_name"], "EOPNOTSUPP");
  EXPECT_NE(r.out.find("unsupported"), std::string::npos) << r.out;
  // The library falls back and says so.
  const json& library = e["rows"][1];
  ASSERT_EQ(library["status"], "ok");
  ASSERT_FALSE(library["notes"].empty());
  EXPECT_NE(library["notes"][0].get<std::string>().find("dontcache refused: EOPNOTSUPP"),
            std::string::npos)
      << library["notes"][0];
}

TEST_F(StreamCli, FileOptionWritesThePathNamed) {
  std::string path = work.path() + "/named.dat";
  RunResult r = RunWritelab({"stream", "--file", path, "--size", "8M", "--block", "1M", "--repeat",
                             "1", "--strategy", "plain,direct", "--no-probe"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(work.Entries().empty()) << "a file writelab created must be removed";
  // A file that existed stays, holding what the last trial wrote.
  { std::ofstream(path) << "user data"; }
  r = RunWritelab({"stream", "--file", path, "--size", "8M", "--block", "1M", "--repeat", "1",
                   "--strategy", "plain", "--no-probe"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::filesystem::file_size(path), 8u << 20);
  r = RunWritelab({"stream", "--file", work.path(), "--size", "8M"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  r = RunWritelab({"stream", "--file", path, "--dir", work.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
}

struct BadInput {
  std::vector<std::string> args;
  std::string expect;  // part of the one-line message
};

TEST_F(StreamCli, BadInputIsOneLineAndExitTwo) {
  const std::vector<BadInput> cases = {
      {{"--size", "0"}, "--size"},
      {{"--size", "12q"}, "--size: '12q' is not a size"},
      {{"--block", "16M", "--size", "8M"}, "--block"},
      {{"--strategy", "nosuch"}, "unknown strategy 'nosuch'"},
      {{"--interval", "3x"}, "--interval: '3x' is not a duration"},
      {{"--repeat", "0"}, "--rounds"},
  };
  for (const BadInput& c : cases) {
    std::vector<std::string> args = {"stream", "--dir", work.path()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    RunResult r = RunWritelab(args);
    EXPECT_EQ(r.exit_code, 2) << c.expect << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_TRUE(work.Entries().empty()) << c.expect;
  }
  RunResult r = RunWritelab({"stream", "--dir", "/nonexistent/writelab"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/writelab"), std::string::npos) << r.err;
}

TEST(Cli, HelpAndVersion) {
  ScratchDir work("cli");
  RunResult help = RunWritelab({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("stream"), std::string::npos);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos);
  RunResult sub = RunWritelab({"stream", "--help"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("window-drop"), std::string::npos);
  // Wrapped to 80 columns off a terminal (a pipe, help2man): no longer line
  // but for one that holds a single word too long for its room.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"},
                                               {"stream", "--help"},
                                               {"fsync", "--help"},
                                               {"history", "check", "--help"}}) {
    RunResult h = RunWritelab(args);
    std::istringstream lines(h.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.size() <= 80) continue;
      std::istringstream words(line);
      size_t longest = 0;
      for (std::string w; words >> w;) longest = std::max(longest, w.size());
      EXPECT_GT(longest, 40u) << args.front() << ": a line of " << line.size() << ": " << line;
    }
  }
  RunResult version = RunWritelab({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("writelab 0."), std::string::npos);
  RunResult none = RunWritelab({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(CountLines(none.err), 1) << none.err;
}

}  // namespace
}  // namespace writelab::testing
