// SPDX-License-Identifier: MIT
// `writelab survey` end to end: the README's first command.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "browser.h"
#include "harness.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

// Whether a document has a row that was not measured.
bool HasUnsupportedRow(const json& doc) {
  for (const json& e : doc["experiments"])
    for (const json& r : e["rows"])
      if (r["status"] != "ok") return true;
  return false;
}

// The survey's page in headless Chromium, as a new user opens it: no script
// or console error, the recommendations before any chart, every line chart
// with at least 5 points, no axis in raw bytes, rows not measured marked. A
// screenshot of each experiment's main picture goes to the build directory,
// and to docs/img with WRITELAB_UPDATE_SCREENSHOTS=1.
void CheckPageInBrowser(const std::string& page, const json& doc, const std::string& scratch) {
  std::string why;
  json check = BrowserCheck(page, scratch + "/profile", &why);
  ASSERT_TRUE(check.is_object()) << "no self-check in the page: " << why;
  EXPECT_EQ(check["errors"], json::array()) << check["errors"].dump();
  EXPECT_TRUE(check["recommendations_first"]) << "recommendations must come before the charts";
  ASSERT_GE(check["rendered"].size(), 5u);
  for (const json& c : check["rendered"]) {
    std::string title = c["title"];
    EXPECT_GT(c["pixels"].get<int>(), 1000) << title << " is blank";
    if (c["kind"] != "bar") {
      EXPECT_GE(c["points"].get<int>(), 5) << title;
    }
    for (const json& a : c["axes"]) {
      std::string axis = a["title"];
      if (axis.find("bytes") != std::string::npos) {
        EXPECT_LT(a["max_tick"].get<double>(), 1e6) << title << ": raw bytes on " << axis;
      }
    }
  }
  if (HasUnsupportedRow(doc)) {
    EXPECT_GT(check["unsupported_marked"].get<int>(), 0) << "a row not measured is not marked";
  }
  const char* update = std::getenv("WRITELAB_UPDATE_SCREENSHOTS");
  std::string dir = update && *update == '1' ? WRITELAB_DOCS_IMG_DIR : WRITELAB_ARTIFACT_DIR;
  for (const char* picture : {"stream", "fsync", "records", "prealloc", "stride"}) {
    std::string png = dir + "/report-" + picture + ".png";
    RunResult s = Screenshot("file://" + page + "#only=picture-" + picture, png,
                             scratch + "/profile-" + picture, "1000,340");
    EXPECT_EQ(s.exit_code, 0) << picture << ": " << s.err;
    EXPECT_GT(std::filesystem::file_size(png), 5000u) << png;
  }
}

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
  // The page, kept for a person (and the browser test below).
  std::string kept = std::string(WRITELAB_ARTIFACT_DIR) + "/survey-test.html";
  std::filesystem::copy_file(html_path, kept, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(html_path);
  // Chart specifications for the page's script (drawn in a browser below).
  EXPECT_NE(html.find("<script id=\"writelab-charts\""), std::string::npos);
  for (const char* name : {"stream", "fsync", "records", "prealloc", "stride"})
    EXPECT_NE(html.find(std::string("<h2>") + name + "</h2>"), std::string::npos) << name;
  std::vector<std::string> names;
  for (const json& e : doc["experiments"]) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"stream", "fsync", "records", "prealloc", "stride"}));
  // 5 trials of each headline row, so that compare can conclude.
  const std::map<std::string, std::string> headline = {{"stream", "mb_s"},
                                                       {"fsync", "total_max_ms"},
                                                       {"records", "lines_s"},
                                                       {"prealloc", "workload_s"},
                                                       {"stride", "mb_s"}};
  for (const json& e : doc["experiments"]) {
    if (!headline.count(e["name"])) continue;
    for (const json& row : e["rows"])
      for (const json& f : row["figures"])
        if (f["key"] == headline.at(e["name"])) {
          EXPECT_EQ(f["value"]["n"], 5) << e["name"] << " " << row["name"];
        }
  }
  ASSERT_EQ(doc["recommendations"].size(), 5u);
  for (const json& line : doc["recommendations"]) {
    std::string s = line["text"];
    EXPECT_FALSE(line["experiment"].get<std::string>().empty()) << s;
    EXPECT_FALSE(line["figures"].empty()) << "the figures it read: " << s;
    EXPECT_EQ(s.find("not "), std::string::npos) << s;
    EXPECT_NE(s.find_first_of("0123456789"), std::string::npos) << "no number behind: " << s;
  }
  EXPECT_NE(r.out.find("[5/5] stride"), std::string::npos) << "no progress lines";
  EXPECT_NE(r.out.find("Recommendations"), std::string::npos);
  if (FindChromium().empty())
    WRITELAB_SKIP_WITHOUT_PART(
        "the page in a browser: chromium is not installed (scripts/setup.sh installs it)");
  ScratchDir scratch("survey-browser");
  CheckPageInBrowser(kept, doc, scratch.path());
}

TEST(Survey, BadDirectoryIsAUsageError) {
  RunResult r = RunWritelab({"survey", "--dir", "/nonexistent/writelab"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
}

}  // namespace
}  // namespace writelab::testing
