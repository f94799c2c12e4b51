// SPDX-License-Identifier: MIT
// The quick tier's smoke: one small run of every command, end to end,
// through the binary as a user runs it (scripts/test.sh quick; label
// smoke). Each asserts what must hold of any run: exit 0 and a document
// that reads back with the rows of its command; the full tier tests what
// the figures mean.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

class Smoke : public ::testing::Test {
 protected:
  // writelab ARGS --json FILE: exit 0, and the document's experiments.
  json Run(std::vector<std::string> args) {
    const std::string doc = work.path() + "/doc-" + std::to_string(runs_++) + ".json";
    args.insert(args.begin() + 1, {"--json", doc});  // before a "--" and CMD
    RunResult r = RunWritelab(args);
    EXPECT_EQ(r.exit_code, 0) << args.front() << ": " << r.err;
    last_ = doc;
    return std::filesystem::exists(doc) ? json::parse(Slurp(doc)) : json::object();
  }
  static size_t Rows(const json& doc) {
    size_t n = 0;
    for (const json& e : doc.value("experiments", json::array())) n += e["rows"].size();
    return n;
  }
  ScratchDir work{"smoke"};
  std::string last_;
  int runs_ = 0;
};

TEST_F(Smoke, EveryExperimentRunsOnce) {
  const std::string d = work.path();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"stream", "--dir", d, "--size", "8M", "--strategy", "plain",
                                 "--interval", "100ms"},
        {"fsync", "--dir", d, "--count", "3", "--interval", "10ms", "--background", "none"},
        {"records", "--dir", d, "--total", "64K", "--method", "write"},
        {"prealloc", "--dir", d, "--file-size", "8M", "--writes", "16", "--mode", "keep-size"},
        {"stride", "--file", d + "/stride", "--span", "16M", "--steps", "1,8", "--duration",
         "100ms"}}) {
    const json doc = Run(args);
    EXPECT_GT(Rows(doc), 0u) << args.front();
    // Every run's noise canary, taken where it ran (stride: a file's directory).
    ASSERT_TRUE(doc.contains("canary")) << args.front();
    EXPECT_EQ(doc["canary"]["where"], d) << args.front();
    EXPECT_EQ(doc["canary"]["figures"].size(), 2u) << args.front() << doc["canary"].dump();
  }
}

TEST_F(Smoke, ReportCompareAndHistoryReadWhatARunWrote) {
  const std::string history = work.path() + "/history.sqlite";
  Run({"records", "--dir", work.path(), "--total", "64K", "--method", "write", "--history",
       history});
  const std::string a = last_;
  Run({"records", "--dir", work.path(), "--total", "64K", "--method", "write", "--history",
       history});
  EXPECT_EQ(RunWritelab({"report", a, last_, "-o", work.path() + "/r.html"}).exit_code, 0);
  EXPECT_EQ(RunWritelab({"compare", a, last_}).exit_code, 0);
  RunResult list = RunWritelab({"history", "list", "--history", history});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("2 runs"), std::string::npos) << list.out;
  RunResult canary = RunWritelab({"history", "trend", "--history", history, "--experiment",
                                  "canary", "--figure", "fdatasync_us"});
  EXPECT_EQ(canary.exit_code, 0) << canary.err;
  EXPECT_NE(canary.out.find("canary fdatasync_us (4 KiB write + fdatasync, us): 2 runs"),
            std::string::npos)
      << canary.out;
}

TEST_F(Smoke, RunAndCleanupRun) {
  const json doc = Run({"run", "--", "sh", "-c", "head -c 1M /dev/zero > " + work.path() + "/f"});
  EXPECT_GT(Rows(doc), 0u);
  const std::string journals = work.path() + "/journals";
  std::filesystem::create_directories(journals);
  std::filesystem::permissions(journals, std::filesystem::perms::owner_all);
  EXPECT_EQ(RunWritelab({"cleanup", "--journal-dir", journals}).exit_code, 0);
}

TEST_F(Smoke, ExplainRunsACommand) {
  if (geteuid() != 0) WRITELAB_SKIP_WITHOUT_PART("needs root: BPF");
  const json doc = Run({"explain", "--quiet", "--", "sh", "-c",
                        std::string(WRITELAB_WRITERS_BINARY) + " fsync " + work.path() + "/f 3 0"});
  EXPECT_GT(Rows(doc), 0u);
}

TEST_F(Smoke, TopWatchesTheMachineBesideAWriter) {
  if (geteuid() != 0) WRITELAB_SKIP_WITHOUT_PART("needs root: BPF");
  // A writer fsyncing for about 3 s beside it, so that a process is seen.
  Shell("(" + std::string(WRITELAB_WRITERS_BINARY) + " fsync " + work.path() +
        "/f 60 50 >/dev/null 2>&1 &)");
  const json doc = Run({"top", "--quiet", "--duration", "2s"});
  ASSERT_EQ(doc["experiments"].size(), 2u);
  EXPECT_EQ(doc["experiments"][0]["name"], "top");
  EXPECT_EQ(doc["experiments"][1]["name"], "top-stalls");
  EXPECT_GT(doc["experiments"][0]["rows"].size(), 0u);
}

// scripts/try.sh in a copy of the tree whose set-up and build are stubs
// that talk as much as apt and cmake do: three status lines come before the
// survey, and a failing step shows its log's tail and exits 1.
TEST_F(Smoke, TryShSaysThreeLinesBeforeTheSurvey) {
  const std::string tree = work.path() + "/tree",
                    repo = std::string(WRITELAB_DOCS_IMG_DIR) + "/../..";
  std::filesystem::create_directories(tree + "/scripts");
  std::filesystem::copy_file(repo + "/scripts/try.sh", tree + "/scripts/try.sh");
  auto stub = [&](const std::string& name, const std::string& body) {
    WriteFile(tree + "/scripts/" + name, "#!/bin/sh\n" + body);
    std::filesystem::permissions(tree + "/scripts/" + name, std::filesystem::perms::owner_all);
  };
  stub("setup.sh", "seq 1 300 | sed 's/^/apt: /'\n");
  stub("build.sh",
       "seq 1 500 | sed 's/^/cmake: /'\nmkdir -p build\n"
       "printf '#!/bin/sh\\necho survey \"$@\"\\n' > build/writelab\nchmod +x build/writelab\n");
  const std::string try_sh =
      "cd " + work.path() + " && bash " + tree + "/scripts/try.sh --verbose 2>&1";
  const std::string out = Shell(try_sh);
  const size_t survey = out.find("survey --dir");
  ASSERT_NE(survey, std::string::npos) << out;
  EXPECT_LE(CountLines(out.substr(0, survey)), 5) << out;
  EXPECT_NE(out.find("survey --dir " + work.path() + " --verbose"), std::string::npos) << out;
  EXPECT_EQ(out.find("apt: "), std::string::npos) << out;
  EXPECT_NE(Slurp(tree + "/build/try.log").find("cmake: 500"), std::string::npos);

  stub("build.sh", "echo 'cmake: error: no compiler'\nexit 3\n");
  RunResult failed = RunProgram("/bin/bash", {tree + "/scripts/try.sh"});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("cmake: error: no compiler"), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("that step failed"), std::string::npos) << failed.err;
  EXPECT_EQ((failed.out + failed.err).find("survey --dir"), std::string::npos);
}

}  // namespace
}  // namespace writelab::testing
