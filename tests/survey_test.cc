// SPDX-License-Identifier: MIT
// `writelab survey` end to end: the README's first command.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

TEST(Survey, RunsEveryExperimentAndRecommendsFromItsNumbers) {
  ScratchDir work("survey");
  std::string json_path = work.path() + ".json";
  std::string html_path = work.path() + ".html";
  RunResult r = RunWritelab({"survey", "--dir", work.path(), "--json", json_path, "-o", html_path});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(work.Entries().empty()) << "survey left files in the surveyed directory";
  json doc = json::parse(Slurp(json_path));
  std::filesystem::remove(json_path);
  std::string html = Slurp(html_path);
  std::filesystem::remove(html_path);
  // Chart specifications for the page's script (rendering is checked in a
  // browser by report_test.cc).
  EXPECT_NE(html.find("<script id=\"writelab-charts\""), std::string::npos);
  for (const char* name : {"stream", "fsync", "records", "prealloc", "stride"})
    EXPECT_NE(html.find(std::string("<h2>") + name + "</h2>"), std::string::npos) << name;
  std::vector<std::string> names;
  for (const json& e : doc["experiments"]) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"stream", "fsync", "records", "prealloc", "stride"}));
  ASSERT_EQ(doc["recommendations"].size(), 5u);
  for (const json& line : doc["recommendations"]) {
    std::string s = line;
    EXPECT_EQ(s.find("not "), std::string::npos) << s;
    EXPECT_NE(s.find_first_of("0123456789"), std::string::npos) << "no number behind: " << s;
  }
  EXPECT_NE(r.out.find("[5/5] stride"), std::string::npos) << "no progress lines";
  EXPECT_NE(r.out.find("Recommendations"), std::string::npos);
}

TEST(Survey, BadDirectoryIsAUsageError) {
  RunResult r = RunWritelab({"survey", "--dir", "/nonexistent/writelab"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
}

}  // namespace
}  // namespace writelab::testing
