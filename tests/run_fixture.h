// SPDX-License-Identifier: MIT
// The fixture and helpers of the `writelab run` tests (run_test.cc, and
// run_strategies_test.cc for paced and direct): writelab run OPTIONS --
// CMD in a scratch directory on a real file system, its document, and the
// checks every strategy's tests share.
#pragma once

#include <gtest/gtest.h>
#include <sys/vfs.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "figures.h"
#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {

using nlohmann::json;

inline constexpr double kWindow = 8 << 20;  // the default window

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    struct statfs fs;
    ASSERT_EQ(statfs(work.path().c_str(), &fs), 0);
    if (fs.f_type == 0x01021994) GTEST_SKIP() << "the work directory is on tmpfs: no writeback";
  }
  // writelab run OPTIONS -- CMD, with its document.
  json Run(std::vector<std::string> options, const std::vector<std::string>& cmd,
           RunResult* result = nullptr) {
    options.insert(options.end(), {"--json", json_path, "--"});
    options.insert(options.end(), cmd.begin(), cmd.end());
    options.insert(options.begin(), "run");
    RunResult r = RunWritelab(options);
    if (result) *result = r;
    EXPECT_TRUE(std::filesystem::exists(json_path)) << r.err << r.out;
    if (!std::filesystem::exists(json_path)) return json::object();
    json doc = json::parse(Slurp(json_path));
    std::filesystem::remove(json_path);
    return doc;
  }
  // writelab run --strategy STRATEGY -- CMD under strace -ff (each
  // process's CALLS to TRACE.PID, read with ProcessTraces), with its document.
  json RunTraced(const std::string& trace, const std::string& calls, const std::string& strategy,
                 const std::vector<std::string>& cmd) {
    std::vector<std::string> args = {"-ff",    "-qq",           "-e",  "trace=" + calls, "-o",
                                     trace,    WRITELAB_BINARY, "run", "--strategy",     strategy,
                                     "--json", json_path,       "--"};
    args.insert(args.end(), cmd.begin(), cmd.end());
    RunResult r = RunProgram("/usr/bin/strace", args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (!std::filesystem::exists(json_path)) return json::object();
    json doc = json::parse(Slurp(json_path));
    std::filesystem::remove(json_path);
    return doc;
  }
  std::string Path(const std::string& name) const { return work.path() + "/" + name; }
  ScratchDir work{"run"};
  ScratchDir outputs{"run-out"};  // what writelab writes beside its --dir
  std::string json_path = outputs.path() + "/out.json";
};

inline const json* Result(const json& doc, const std::string& name) {
  for (const json& e : doc["experiments"])
    if (e["name"] == name) return &e;
  return nullptr;
}

// The row of the file at path in run-files ("STRATEGY: " before it with
// --compare).
inline const json* FileRow(const json& doc, const std::string& path) {
  const json* files = Result(doc, "run-files");
  if (!files) return nullptr;
  for (const json& r : (*files)["rows"])
    if (r["name"].get<std::string>().ends_with(path)) return &r;
  return nullptr;
}

inline std::string How(const json& row) { return row["notes"].empty() ? "" : row["notes"][0]; }

inline std::string Sha256(const std::string& path) {
  return Shell("sha256sum < " + path + " | cut -d' ' -f1");
}

// A file of random bytes, for copies whose result can be checked.
inline void RandomFile(const std::string& path, int mib) {
  Shell("head -c " + std::to_string(mib) + "M /dev/urandom > " + path);
}

// The strategy's promise on a file: all of it handled, at most two windows
// left cached when CMD exited (under dontcache too: RWF_DONTCACHE does not
// wait for its writeback, and the shim waits at close for what is left).
inline void ExpectHandled(const json& doc, const std::string& path, const std::string& how) {
  const json* row = FileRow(doc, path);
  ASSERT_TRUE(row) << "no row for " << path << ": " << doc.dump().substr(0, 2000);
  const auto f = Figures(*row);
  EXPECT_NE(How(*row).find(how), std::string::npos) << How(*row);
  EXPECT_EQ(f.at("handled"), f.at("written")) << How(*row);
  ASSERT_TRUE(f.count("cached_end")) << "cache measured";
  EXPECT_LE(f.at("cached_end"), 2 * kWindow) << path << ": " << How(*row);
  const auto run = Figures((*Result(doc, "run"))["rows"].back());
  EXPECT_EQ(run.at("coverage_pct"), 100);
}

// Each process's strace -ff output for TRACE (TRACE.PID), read and removed.
inline std::vector<std::string> ProcessTraces(const std::string& trace) {
  std::vector<std::string> out;
  for (const auto& file :
       std::filesystem::directory_iterator(std::filesystem::path(trace).parent_path())) {
    if (!file.path().string().starts_with(trace + ".")) continue;
    out.push_back(Slurp(file.path()));
    std::filesystem::remove(file.path());
  }
  return out;
}

}  // namespace writelab::testing
