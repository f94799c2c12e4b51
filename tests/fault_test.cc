// SPDX-License-Identifier: MIT
// Injected faults, end to end (WRITELAB_FAULT, io/fault_engine.h): for every
// experiment, a write, sync or preallocate that fails part-way through a run
// gives a failed row with that errno, exit code 1, an `errors` line, and the
// rows measured before it in the result file.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

class FaultCli : public ::testing::Test {
 protected:
  ScratchDir work{"fault"};
  ScratchDir outputs{"fault-out"};  // what writelab writes beside its --dir
  std::string json_path = outputs.path() + "/out.json";
  void TearDown() override { std::filesystem::remove(json_path); }

  // Runs writelab ARGS --json with WRITELAB_FAULT=plan in its environment.
  RunResult RunWithFault(const std::string& plan, std::vector<std::string> args) {
    args.insert(args.end(), {"--json", json_path});
    setenv("WRITELAB_FAULT", plan.c_str(), 1);
    RunResult r = RunWritelab(args);
    unsetenv("WRITELAB_FAULT");
    return r;
  }

  // The run failed as a failing disk would make it fail: exit 1, the row
  // named `failed` carries the errno, every row before it was measured, and
  // the document says a fault was injected.
  void ExpectFailedRow(const RunResult& r, const std::string& failed, const char* errno_name,
                       size_t ok_before) {
    EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
    json doc = json::parse(Slurp(json_path));
    EXPECT_FALSE(doc["errors"].empty());
    EXPECT_TRUE(doc["command_line"].get<std::string>().starts_with("WRITELAB_FAULT="));
    const json& rows = doc["experiments"][0]["rows"];
    size_t ok = 0;
    bool found = false;
    for (const json& row : rows) {
      if (row["name"] == failed) {
        found = true;
        EXPECT_EQ(row["status"], "failed") << row.dump();
        EXPECT_EQ(row["error_name"], errno_name) << row.dump();
        EXPECT_FALSE(row["message"].get<std::string>().empty());
        break;
      }
      EXPECT_EQ(row["status"], "ok") << row.dump();
      EXPECT_FALSE(row["figures"].empty()) << row["name"];
      ++ok;
    }
    EXPECT_TRUE(found) << failed << " not in " << rows.dump();
    EXPECT_EQ(ok, ok_before);
  }
};

TEST_F(FaultCli, FsyncReportsAFailedSync) {
  // fsync: syncs 1-3; fdatasync: its second sync is the fifth.
  RunResult r = RunWithFault(
      "sync:5:EIO", {"fsync", "--dir", work.path(), "--count", "3", "--interval", "0",
                     "--write-size", "4k", "--sync", "fsync,fdatasync", "--background", "none"});
  ExpectFailedRow(r, "none/fdatasync", "EIO", 1);
}

TEST_F(FaultCli, StreamReportsAFailedWindowSync) {
  // plain's one sync is its final fsync; window's first sync_file_range fails.
  RunResult r = RunWithFault("sync:2:ENOSPC",
                             {"stream", "--dir", work.path(), "--size", "4M", "--block", "1M",
                              "--strategy", "plain,window", "--repeat", "1", "--no-probe"});
  ExpectFailedRow(r, "window", "ENOSPC", 1);
  EXPECT_TRUE(work.Entries().empty()) << "files left behind";
}

TEST_F(FaultCli, RecordsReportsAFailedWrite) {
  // writev issues a few hundred-line calls; the 100th write is write's.
  RunResult r =
      RunWithFault("write:100:EIO", {"records", "--dir", work.path(), "--method", "writev,write",
                                     "--corpus-size", "64k", "--total", "256k", "--sync", "none"});
  ExpectFailedRow(r, "write", "EIO", 1);
  EXPECT_TRUE(work.Entries().empty()) << "files left behind";
}

TEST_F(FaultCli, PreallocReportsAFailedFallocate) {
  RunResult r =
      RunWithFault("preallocate:2:ENOSPC", {"prealloc", "--dir", work.path(), "--file-size", "1M",
                                            "--writes", "8", "--block", "4k", "--stride", "2",
                                            "--flags", "dsync", "--mode", "fallocate,keep-size"});
  ExpectFailedRow(r, "keep-size", "ENOSPC", 1);
  EXPECT_TRUE(work.Entries().empty()) << "files left behind";
}

TEST_F(FaultCli, StrideReportsAFailedWriteInTheSecondStep) {
  // Steps run for a time, so the fault counts in the second step's engine.
  const std::string file = work.path() + "/target";
  RunResult r = RunWithFault("write:3:EIO@2", {"stride", "--file", file, "--span", "1M", "--steps",
                                               "1,2", "--duration", "200ms", "--engine", "psync"});
  ExpectFailedRow(r, "2", "EIO", 1);
}

// A container policy that refuses io_uring with EACCES: one classification
// (ClassifyErrno), so every experiment calls it unsupported, not failed.
TEST_F(FaultCli, IoUringRefusedWithEaccesIsUnsupportedEverywhere) {
  RunResult records =
      RunWithoutUring<EACCES>({"records", "--dir", work.path(), "--corpus-size", "64k", "--total",
                               "256k", "--method", "io_uring", "--json", json_path});
  if (records.exit_code == 99) GTEST_SKIP() << "cannot install a seccomp filter here";
  EXPECT_EQ(records.exit_code, 0) << records.err;
  json row = json::parse(Slurp(json_path))["experiments"][0]["rows"][0];
  EXPECT_EQ(row["status"], "unsupported") << row.dump();
  EXPECT_EQ(row["error_name"], "EACCES");
  RunResult stride = RunWithoutUring<EACCES>(
      {"stride", "--file", work.path() + "/target", "--span", "1M", "--steps", "1", "--duration",
       "50ms", "--engine", "io_uring", "--qd", "4", "--json", json_path});
  EXPECT_EQ(stride.exit_code, 0) << stride.err;
  row = json::parse(Slurp(json_path))["experiments"][0]["rows"][0];
  EXPECT_EQ(row["status"], "unsupported") << row.dump();
  EXPECT_EQ(row["error_name"], "EACCES");
}

TEST_F(FaultCli, BadPlanIsAUsageError) {
  RunResult r = RunWithFault("sync:zero:EIO", {"fsync", "--dir", work.path(), "--count", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("WRITELAB_FAULT"), std::string::npos) << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
}

}  // namespace
}  // namespace writelab::testing
