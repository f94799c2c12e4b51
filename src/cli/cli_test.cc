// SPDX-License-Identifier: MIT
// Every command's command line, parsed in process through RunCli: good
// values reach the experiment (read back from the params of the run's
// --json), bad values are refused with exit code 2 and one line on stderr
// that names the option. The runs are tiny (a few MiB, milliseconds).
#include "cli/cli.h"
#include "core/exit_codes.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::TempDir;

using nlohmann::json;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

CliRun RunWritelab(std::vector<std::string> args) {
  // No test appends to the history of whoever runs the tests.
  setenv("WRITELAB_HISTORY", "off", 0);
  args.insert(args.begin(), "writelab");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliRun r;
  r.code = RunCli(static_cast<int>(args.size()), argv.data());
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

std::string Joined(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += " " + a;
  return s;
}

// The first experiment's params of a result file, as {key: value}.
json Params(const std::string& path) {
  std::ifstream in(path);
  json doc = json::parse(in, nullptr, false);
  json params = json::object();
  if (doc.is_discarded() || !doc.contains("experiments")) return params;
  for (const json& p : doc["experiments"][0]["params"])
    params[p["key"].get<std::string>()] = p["value"];
  return params;
}

class Cli : public ::testing::Test {
 protected:
  TempDir tmp_{"cli-test"};
  void SetUp() override {
    dir_ = tmp_.path();
    ASSERT_FALSE(dir_.empty());
  }

  // Runs args, expects exit 0 and nothing on stderr, and returns the params
  // of the --json file it was told to write.
  json RunOk(std::vector<std::string> args) {
    const std::string out = dir_ + "/r.json";
    std::filesystem::remove(out);
    args.insert(args.end(), {"--json", out});
    CliRun r = RunWritelab(args);
    EXPECT_EQ(r.code, kExitOk) << Joined(args) << "\n" << r.err;
    EXPECT_EQ(r.err, "") << Joined(args);
    return Params(out);
  }

  void ExpectRefused(const std::vector<std::string>& args, const std::string& want) {
    CliRun r = RunWritelab(args);
    EXPECT_EQ(r.code, kExitUsage) << Joined(args) << "\n" << r.err;
    EXPECT_TRUE(r.err.starts_with("writelab: ")) << Joined(args) << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << Joined(args) << "\n" << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << Joined(args) << "\n" << r.err;
  }

  std::string dir_;
};

TEST_F(Cli, StreamTakesItsOptions) {
  json p = RunOk({"stream", "--dir", dir_, "--size", "1M", "--block", "256K", "--strategy",
                  "plain,window", "--repeat", "2", "--interval", "10ms", "--no-probe"});
  EXPECT_EQ(p["path"], dir_);
  EXPECT_EQ(p["size"], 1 << 20);
  EXPECT_EQ(p["block"], 256 << 10);
  EXPECT_EQ(p["strategies"], "plain,window");
  EXPECT_EQ(p["rounds"], 2) << "--repeat is --rounds' old name";
  EXPECT_EQ(p["interval"], 0.01);
  EXPECT_EQ(p["probe"], false);
}

TEST_F(Cli, StreamRefusesBadValues) {
  ExpectRefused({"stream", "--dir", dir_, "--size", "12q"}, "--size: '12q' is not a size");
  ExpectRefused({"stream", "--dir", dir_, "--block", "0"}, "--block");
  ExpectRefused({"stream", "--dir", dir_, "--strategy", "nope"}, "unknown strategy 'nope'");
  ExpectRefused({"stream", "--dir", dir_, "--interval", "5parsecs"}, "--interval");
  ExpectRefused({"stream", "--dir", dir_, "--repeat", "0"}, "--rounds");
  ExpectRefused({"stream", "--dir", dir_, "--rounds", "0"}, "--rounds: must be at least 1");
  ExpectRefused({"stream", "--dir", dir_, "--file", dir_ + "/f"}, "[--dir,--file]");
  ExpectRefused({"stream", "--dir", dir_, "--probe", "--no-probe"}, "--no-probe");
  ExpectRefused({"stream", "--frobnicate"}, "--frobnicate");
}

TEST_F(Cli, FsyncTakesItsOptions) {
  json p = RunOk({"fsync", "--dir", dir_, "--count", "3", "--interval", "10ms", "--write-size",
                  "64K", "--sync", "fdatasync", "--background", "none", "--bg-warmup", "0s"});
  EXPECT_EQ(p["count"], 3);
  EXPECT_EQ(p["write_size"], 64 << 10);
  EXPECT_EQ(p["interval"], 0.01);
  EXPECT_EQ(p["sync"], "fdatasync");
  EXPECT_EQ(p["background"], "none");
}

TEST_F(Cli, FsyncRefusesBadValues) {
  ExpectRefused({"fsync", "--dir", dir_, "--count", "0"}, "--count");
  ExpectRefused({"fsync", "--dir", dir_, "--write-size", "x"}, "--write-size");
  ExpectRefused({"fsync", "--dir", dir_, "--sync", "nope"}, "--sync: unknown value 'nope'");
  ExpectRefused({"fsync", "--dir", dir_, "--background", "nope"}, "--background");
  ExpectRefused({"fsync", "--dir", dir_, "--background", "cmd"}, "needs --bg-cmd");
  ExpectRefused({"fsync", "--dir", dir_ + "/missing"}, "is not a directory");
}

TEST_F(Cli, RecordsTakesItsOptions) {
  json p = RunOk({"records", "--dir", dir_, "--corpus-size", "64K", "--total", "256K", "--method",
                  "write,gather", "--seed", "7", "--buffer", "64K"});
  EXPECT_EQ(p["methods"], "write,gather");
  EXPECT_EQ(p["total"], 256 << 10);
  EXPECT_EQ(p["seed"], 7);
  EXPECT_EQ(p["buffer"], 64 << 10);
  EXPECT_EQ(p["verify"], true);
}

TEST_F(Cli, RecordsRefusesBadValues) {
  ExpectRefused({"records", "--dir", dir_, "--method", "nope"}, "unknown method 'nope'");
  ExpectRefused({"records", "--dir", dir_, "--sync", "every:0"}, "every:N");
  ExpectRefused({"records", "--dir", dir_, "--threads", "0"}, "--threads");
  ExpectRefused({"records", "--dir", dir_, "--qd", "0"}, "--qd");
  ExpectRefused({"records", "--dir", dir_, "--total", "1M", "--repeat", "2"}, "excludes");
  ExpectRefused({"records", "--dir", dir_, "--buffer", "1q"}, "--buffer");
}

TEST_F(Cli, PreallocTakesItsOptions) {
  json p = RunOk({"prealloc", "--dir", dir_, "--file-size", "1M", "--writes", "8", "--mode",
                  "sparse,fallocate", "--flags", "none", "--stride", "4"});
  EXPECT_EQ(p["file_size"], 1 << 20);
  EXPECT_EQ(p["writes"], 8);
  EXPECT_EQ(p["stride"], 4);
  EXPECT_EQ(p["modes"], "sparse,fallocate");
  EXPECT_EQ(p["flags"], "none");
}

TEST_F(Cli, PreallocRefusesBadValues) {
  ExpectRefused({"prealloc", "--dir", dir_, "--mode", "nope"}, "unknown mode 'nope'");
  ExpectRefused({"prealloc", "--dir", dir_, "--flags", "nope"}, "unknown flag 'nope'");
  ExpectRefused({"prealloc", "--dir", dir_, "--writes", "0"}, "--writes");
  ExpectRefused({"prealloc", "--dir", dir_, "--block", "x"}, "--block");
}

TEST_F(Cli, StrideTakesItsOptions) {
  const std::string file = dir_ + "/stride.dat";
  json p = RunOk({"stride", "--file", file, "--steps", "1,8", "--duration", "20ms", "--span", "1M",
                  "--interval", "10ms"});
  EXPECT_EQ(p["path"], file);
  EXPECT_EQ(p["steps"], "1,8");
  EXPECT_EQ(p["duration"], 0.02);
  EXPECT_EQ(p["span"], 1 << 20);
  EXPECT_EQ(p["engine"], "psync");
}

TEST_F(Cli, StrideRefusesBadValues) {
  const std::string file = dir_ + "/stride.dat";
  ExpectRefused({"stride", "--file", file, "--engine", "nope"}, "--engine");
  ExpectRefused({"stride", "--file", file, "--unit", "3"}, "--unit");
  ExpectRefused({"stride", "--file", file, "--duration", "0"}, "--duration");
  ExpectRefused({"stride", "--file", file, "--qd", "0"}, "--qd");
  ExpectRefused({"stride", "--file", file, "--steps", "1-2-3"}, "is not a step");
  ExpectRefused({"stride", "--file", file, "--device", "/dev/null"}, "[--device,--file]");
  ExpectRefused({"stride"}, "give --device DEV, --file PATH, or --testbed raw");
}

// A full survey takes minutes; its one option is checked here, and the
// integration tests run it.
TEST_F(Cli, SurveyRefusesAMissingDirectory) {
  ExpectRefused({"survey", "--dir", dir_ + "/missing"}, "is not a directory");
}

TEST_F(Cli, ReportAndCompareReadResultFiles) {
  RunOk({"stream", "--dir", dir_, "--size", "1M", "--block", "256K", "--strategy", "plain",
         "--repeat", "1", "--no-probe"});
  const std::string result = dir_ + "/r.json";
  CliRun report = RunWritelab({"report", result, "-o", dir_ + "/r.html"});
  EXPECT_EQ(report.code, kExitOk) << report.err;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/r.html"));
  CliRun compare = RunWritelab({"compare", result, result});
  EXPECT_EQ(compare.code, kExitOk) << compare.err;
  EXPECT_NE(compare.out.find("A: "), std::string::npos) << compare.out;
}

TEST_F(Cli, ReportAndCompareRefuseBadValues) {
  ExpectRefused({"report"}, "results is required");
  ExpectRefused({"report", dir_ + "/missing.json"}, "No such file or directory");
  ExpectRefused({"compare", dir_ + "/missing.json"}, "B is required");
  ExpectRefused({"compare", dir_ + "/a.json", dir_ + "/b.json"}, "No such file or directory");
}

TEST_F(Cli, CleanupTakesAJournalDirectory) {
  const std::string journals = dir_ + "/journals";
  ASSERT_EQ(mkdir(journals.c_str(), 0700), 0);
  CliRun r = RunWritelab({"cleanup", "--journal-dir", journals});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("nothing to clean up"), std::string::npos) << r.out;
  ExpectRefused({"cleanup", "--journal-dir", dir_ + "/missing"}, "does not exist");
}

TEST_F(Cli, NoCommandOrAnUnknownOneIsAUsageError) {
  ExpectRefused({}, "A subcommand is required");
  ExpectRefused({"nosuch"}, "'nosuch' is not a writelab command");
  ExpectRefused({"help", "nosuch"}, "'nosuch' is not a writelab command");
}

TEST_F(Cli, AMistypedCommandOptionOrChoiceGetsTheClosestOneAndItsHelp) {
  ExpectRefused({"survy"}, "'survy' is not a writelab command; did you mean 'survey'?");
  ExpectRefused(
      {"stream", "--dir", dir_, "--szie", "1G"},
      "--szie: not an option of stream; did you mean '--size'? (see writelab help stream)");
  ExpectRefused({"stream", "--dir", dir_, "--strategy", "windw-drop"},
                "--strategy: unknown strategy 'windw-drop' (plain, window, window-drop, dontcache, "
                "direct, paced, library or memcg); did you mean 'window-drop'?");
  ExpectRefused({"run", "--strategy", "nope", "true"}, "(window-drop, dontcache, window,");
}

TEST_F(Cli, HelpNamesACommandsOptions) {
  CliRun r = RunWritelab({"help", "stride"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("Usage: writelab stride"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--scheduler"), std::string::npos);
  r = RunWritelab({"help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("Subcommands:"), std::string::npos) << r.out;
}

TEST_F(Cli, CountsSayTheirBound) {
  ExpectRefused({"fsync", "--dir", dir_, "--count", "-3"}, "--count: must be at least 1");
  ExpectRefused({"records", "--dir", dir_, "--qd", "5000"}, "--qd: must be at most 4096");
}

TEST_F(Cli, OutputsThatCannotBeWrittenAreRefusedBeforeTheRun) {
  ExpectRefused({"stream", "--dir", dir_, "--json", dir_ + "/missing/r.json"},
                "--json: directory '" + dir_ + "/missing' does not exist");
  ExpectRefused({"fsync", "--dir", dir_, "--csv", dir_}, "--csv: '" + dir_ + "' is a directory");
  ExpectRefused({"stream", "--dir", dir_, "--json", "-", "--csv", "-"}, "only one can be stdout");
  ExpectRefused({"report", dir_ + "/r.json", "-o", dir_ + "/missing/r.html"},
                "--output: directory '" + dir_ + "/missing' does not exist");
  ExpectRefused({"survey", "--dir", dir_, "--html", dir_ + "/missing/s.html"},
                "--html: directory '" + dir_ + "/missing' does not exist");
  ExpectRefused({"survey", "--dir", dir_, "--html", "-"}, "--html: - (stdout) is not supported");
  ExpectRefused({"report", dir_ + "/r.json", "-o", "-"}, "--output: - (stdout) is not supported");
}

TEST_F(Cli, JsonToStdoutSendsTheTablesToStderr) {
  CliRun r = RunWritelab({"records", "--dir", dir_, "--corpus-size", "16K", "--total", "64K",
                          "--method", "write", "--json", "-"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  json doc = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out.substr(0, 200);
  EXPECT_EQ(doc["experiments"][0]["name"], "records");
  EXPECT_NE(r.err.find("lines/s"), std::string::npos) << r.err;
}

TEST_F(Cli, DirectBlocksThatCannotWorkAreRefusedUpFront) {
  ExpectRefused({"stream", "--dir", dir_, "--block", "3", "--size", "9"},
                "--block: 3 bytes is not a multiple of 4096");
  ExpectRefused({"prealloc", "--dir", dir_, "--block", "1000"},
                "--block: 1000 bytes is not a multiple of");
  ExpectRefused({"stride", "--file", dir_}, "is not a regular file");
  // On a test bed, before the bed is made.
  if (geteuid() == 0)
    ExpectRefused({"stride", "--testbed", "raw", "--block", "1000"},
                  "--block: O_DIRECT needs a multiple of 512 bytes");
}

}  // namespace
}  // namespace writelab
