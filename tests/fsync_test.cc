// SPDX-License-Identifier: MIT
// `writelab fsync` end to end: rows, background processes and their files.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>

#include "harness.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

class FsyncCli : public ::testing::Test {
 protected:
  ScratchDir work{"fsync"};
  ScratchDir outputs{"fsync-out"};  // what writelab writes beside its --dir
  std::string json_path = outputs.path() + "/out.json";
  void TearDown() override { std::filesystem::remove(json_path); }
  json Doc() { return json::parse(Slurp(json_path)); }
};

TEST_F(FsyncCli, EveryRowPresentAndBackgroundsGone) {
  RunResult r = RunWritelab({"fsync",
                             "--dir",
                             work.path(),
                             "--count",
                             "3",
                             "--interval",
                             "50ms",
                             "--write-size",
                             "256k",
                             "--sync",
                             "fsync,fdatasync,sfr,osync",
                             "--bg-warmup",
                             "300ms",
                             "--bg-span",
                             "16M",
                             "--bg-size",
                             "64M",
                             "--json",
                             json_path,
                             "--verbose"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(ProcessesMentioning(work.path()).empty()) << "a background process survived";
  EXPECT_TRUE(work.Entries().empty()) << "files left behind";
  json doc = Doc();
  const json& e = doc["experiments"][0];
  std::vector<std::string> names;
  for (const json& row : e["rows"]) names.push_back(row["name"]);
  std::vector<std::string> expected;
  for (const char* bg : {"none", "random", "stream"})
    for (const char* m : {"fsync", "fdatasync", "sfr", "osync"})
      expected.push_back(std::string(bg) + "/" + m);
  EXPECT_EQ(names, expected);
  for (const json& row : e["rows"]) {
    std::string name = row["name"];
    ASSERT_EQ(row["status"], "ok") << name << ": " << row["message"];
    std::map<std::string, json> lat;
    for (const json& l : row["latencies"]) lat[l["key"]] = l;
    EXPECT_EQ(lat["write"]["count"], 3) << name;
    EXPECT_EQ(lat["total"]["count"], 3) << name;
    EXPECT_EQ(lat.count("sync"), name.ends_with("osync") ? 0u : 1u) << name;
    bool iterations = false;
    for (const json& s : row["series"])
      if (s["key"] == "iterations") iterations = s["points"].size() == 3;
    EXPECT_TRUE(iterations) << name << ": every sample with its timestamp";
    bool has_bg_rate = false;
    for (const json& f : row["figures"]) has_bg_rate |= f["key"] == "bg_mb_s";
    EXPECT_EQ(has_bg_rate, !name.starts_with("none/")) << name;
  }
  // The listing in the original's shape.
  EXPECT_NE(r.out.find("write time: "), std::string::npos);
  EXPECT_NE(r.out.find(" fsync time: "), std::string::npos);
}

TEST_F(FsyncCli, CommandBackgroundRunsAndIsKilled) {
  std::string marker = work.path() + "/cmd-ran";
  std::string cmd = "touch " + marker + "; exec sleep 1000 # " + work.path();
  RunResult r = RunWritelab({"fsync", "--dir", work.path(), "--count", "2", "--interval", "10ms",
                             "--background", "cmd", "--bg-cmd", cmd, "--bg-warmup", "300ms",
                             "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(marker)) << "the command did not run";
  EXPECT_TRUE(ProcessesMentioning(work.path()).empty()) << "the command was not killed";
  EXPECT_EQ(Doc()["experiments"][0]["rows"][0]["name"], "cmd/fsync");
}

TEST_F(FsyncCli, BackgroundThatExitsAtOnceIsAnError) {
  RunResult r =
      RunWritelab({"fsync", "--dir", work.path(), "--count", "2", "--background", "none,cmd",
                   "--bg-cmd", "exit 3", "--bg-warmup", "300ms", "--json", json_path});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("exited with status 3"), std::string::npos) << r.err;
  json doc = Doc();
  const json& rows = doc["experiments"][0]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["status"], "ok");  // measured before the failure: kept
  EXPECT_EQ(rows[1]["status"], "failed");
  EXPECT_EQ(doc["errors"].size(), 1u);
  EXPECT_TRUE(work.Entries().empty());
}

TEST_F(FsyncCli, BadInputIsOneLineAndExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--count", "0"}, "--count"},
      {{"--sync", "fsync,nosuch"}, "--sync: unknown value 'nosuch'"},
      {{"--background", "disco"}, "--background: unknown value 'disco'"},
      {{"--background", "cmd"}, "--bg-cmd"},
      {{"--write-size", "1x"}, "--write-size: '1x' is not a size"},
      {{"--interval", "soon"}, "--interval: 'soon' is not a duration"},
  };
  for (const auto& [extra, expect] : cases) {
    std::vector<std::string> args = {"fsync", "--dir", work.path()};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = RunWritelab(args);
    EXPECT_EQ(r.exit_code, 2) << expect << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  }
  EXPECT_TRUE(work.Entries().empty());
}

TEST_F(FsyncCli, InterruptKillsTheBackground) {
  RunResult r = RunWritelab(
      {"fsync", "--dir", work.path(), "--count", "1000", "--interval", "100ms", "--background",
       "random", "--bg-warmup", "200ms", "--bg-span", "16M", "--json", json_path},
      1200, SIGTERM);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_TRUE(ProcessesMentioning(work.path()).empty());
  EXPECT_TRUE(work.Entries().empty());
  EXPECT_EQ(Doc()["errors"][0], "interrupted");
}

TEST_F(FsyncCli, AStreamBackgroundWithoutRoomIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: mounts a 2 MiB tmpfs";
  // A quarter of the free space is the stream load's default size: under
  // 1 MiB here, which no stream can use.
  ASSERT_EQ(mount("tmpfs", work.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=2M"), 0)
      << std::strerror(errno);
  RunResult r = RunWritelab({"fsync", "--dir", work.path(), "--count", "1", "--background",
                             "stream", "--json", json_path});
  EXPECT_EQ(umount(work.path().c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("too little free space in " + work.path() + " for a stream background"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Doc()["errors"].size(), 1u);
}

}  // namespace
}  // namespace writelab::testing
