// SPDX-License-Identifier: MIT
// Bad input on the command line and in result files: each is refused at
// once with exit code 2 and one line on stderr (issue 11's parser review).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>

#include "harness.h"

namespace writelab::testing {
namespace {

// Runs writelab and expects a usage error: exit 2, one line naming want,
// within a few seconds (nothing runs, nothing is read to its end).
void ExpectRefused(const std::vector<std::string>& args, const std::string& want) {
  auto start = std::chrono::steady_clock::now();
  RunResult r = RunWritelab(args);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string cmd;
  for (const auto& a : args) cmd += " '" + a + "'";
  EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << cmd << "\n" << r.err;
  EXPECT_NE(r.err.find(want), std::string::npos) << cmd << "\n" << r.err;
  EXPECT_LT(seconds, 10) << cmd;
}

class ParseCli : public ::testing::Test {
 protected:
  ScratchDir work{"parse"};
  std::string file = work.path() + "/f";
};

TEST_F(ParseCli, CompareRefusesDevicesFifosAndHugeFiles) {
  ExpectRefused({"compare", "/dev/zero", "/dev/zero"}, "/dev/zero: not a regular file");
  std::string fifo = work.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExpectRefused({"report", fifo, "-o", work.path() + "/r.html"}, "fifo: not a regular file");
}

TEST_F(ParseCli, CompareRefusesFilesOverOneGiB) {
  std::string huge = work.path() + "/huge.json";
  { std::ofstream(huge) << "{}"; }
  std::filesystem::resize_file(huge, (uint64_t{1} << 30) + 1);  // sparse
  ExpectRefused({"compare", huge, huge}, "huge.json: larger than 1 GiB");
}

TEST_F(ParseCli, CompareNamesTheBadFieldOfACraftedDocument) {
  std::string doc = work.path() + "/bad.json";
  std::ofstream(doc) << R"({"schema_version": 1, "experiments": [{"rows": [{"name": "x",
      "status": "ok", "errno": 0, "message": "", "notes": [], "latencies": [], "series": [],
      "figures": [{"key": "k", "label": "", "unit": "", "includes": "",
      "value": {"n": 1, "median": 1, "min": 1, "max": 1, "mean": 1, "samples": [1],
      "ci95": []}}]}]}]})";
  ExpectRefused({"compare", doc, doc},
                "bad.json: experiments[0].rows[0].figures[0].value.ci95: expected 2 numbers");
  std::ofstream(doc) << R"({"schema_version": 4294967297})";
  ExpectRefused({"report", doc, "-o", work.path() + "/r.html"}, "schema_version: 4294967297");
}

TEST_F(ParseCli, StrideRefusesBadStepsAndSpan) {
  ExpectRefused({"stride", "--file", file, "--steps=-1"}, "--steps: '-1' is not a step");
  ExpectRefused({"stride", "--file", file, "--steps", "99999999999999999999"},
                "is more than the largest step");
  ExpectRefused({"stride", "--file", file, "--steps", "1-2-3"}, "'1-2-3' is not a step");
  ExpectRefused({"stride", "--file", file, "--steps", "1-100000"}, "more than 4096 steps");
  ExpectRefused({"stride", "--file", file, "--span", "0"}, "--span: must be more than 0");
  ExpectRefused({"stride", "--file", file, "--qd=-1"}, "--qd");
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST_F(ParseCli, PreallocRefusesCountsThatOverflow) {
  ExpectRefused({"prealloc", "--dir", work.path(), "--writes", "3", "--stride", "2251799813685249"},
                "--stride");
  ExpectRefused({"prealloc", "--dir", work.path(), "--writes=-1"}, "--writes");
  ExpectRefused({"prealloc", "--dir", work.path(), "--rounds", "0"}, "--rounds");
  ExpectRefused({"fsync", "--dir", work.path(), "--rounds", "1001"}, "--rounds");
  ExpectRefused({"fsync", "--dir", work.path(), "--sync", "fsync,fsync"}, "--sync");
  ExpectRefused({"fsync", "--dir", work.path(), "--background", "none,none"}, "--background");
  ExpectRefused({"prealloc", "--dir", work.path(), "--writes", "0x10"}, "--writes");
  ExpectRefused({"prealloc", "--dir", work.path(), "--zeroout-kb=-5"}, "--zeroout-kb");
}

TEST_F(ParseCli, EmptyTestbedAndSchedulerAreRefused) {
  ExpectRefused({"stream", "--dir", work.path(), "--testbed", ""}, "--testbed");
  ExpectRefused({"stream", "--dir", work.path(), "--scheduler", ""}, "--scheduler");
  ExpectRefused({"stream", "--dir", work.path(), "--scheduler", ","}, "--scheduler");
  ExpectRefused({"stream", "--dir", work.path(), "--testbed", "ext4,,xfs"}, "--testbed");
}

TEST_F(ParseCli, SizesDurationsAndCountsAreChecked) {
  ExpectRefused({"stream", "--dir", work.path(), "--size", "1e999"}, "--size");
  ExpectRefused({"stream", "--dir", work.path(), "--size", "99999999999999999999T"}, "too large");
  ExpectRefused({"stream", "--dir", work.path(), "--repeat=-1"}, "--rounds");
  ExpectRefused({"fsync", "--dir", work.path(), "--count", "99999999999"}, "--count");
  ExpectRefused({"records", "--dir", work.path(), "--sync", "every:-1"}, "every:N");
  ExpectRefused({"records", "--dir", work.path(), "--sync", "every:99999999999999999999"},
                "every:N");
  ExpectRefused({"records", "--dir", work.path(), "--threads", "0"}, "--threads");
  ExpectRefused({"records", "--dir", work.path(), "--input", "/dev/zero"},
                "--input: '/dev/zero' is not a readable regular file");
}

}  // namespace
}  // namespace writelab::testing
