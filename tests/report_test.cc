// SPDX-License-Identifier: MIT
// `writelab report` and `writelab compare` end to end: real short runs of
// stream and fsync, a report made from them, opened in headless Chromium,
// which must draw every chart (painted canvas pixels and points) without a
// script or console error. The screenshot and the page stay in the build
// directory (report-test.png, report-test.html) for a person to look at.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "browser.h"
#include "core/document_json.h"
#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

class ReportCli : public ::testing::Test {
 protected:
  ScratchDir work{"report"};
  std::string stream_json = work.path() + "/stream.json";
  std::string fsync_json = work.path() + "/fsync.json";
  std::string html = work.path() + "/report.html";

  void Measure() {
    RunResult s = RunWritelab({"stream", "--dir", work.path(), "--size", "32M", "--repeat", "2",
                               "--interval", "100ms", "--json", stream_json});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    RunResult f = RunWritelab({"fsync", "--dir", work.path(), "--count", "4", "--interval", "100ms",
                               "--bg-warmup", "200ms", "--bg-size", "64M", "--bg-span", "32M",
                               "--json", fsync_json});
    ASSERT_EQ(f.exit_code, 0) << f.err;
  }

  std::vector<std::string> Chromium(const std::string& profile) { return ChromiumArgs(profile); }
};

TEST_F(ReportCli, EveryChartRendersInChromium) {
  std::string chromium = FindChromium();
  if (chromium.empty())
    WRITELAB_SKIP_WITHOUT_PART("chromium is not installed (scripts/setup.sh installs it)");
  Measure();
  RunResult r = RunWritelab({"report", stream_json, fsync_json, "-o", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = Slurp(html);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos) << "the page must not load anything";

  // #all: every experiment's "more charts" opened, so that every chart is
  // drawn, the folded ones too.
  std::vector<std::string> dump = Chromium(work.path() + "/profile-dump");
  dump.push_back("--dump-dom");
  dump.push_back("file://" + html + "#all");
  RunResult d = RunProgram("/usr/bin/timeout", dump);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  json check = CheckOf(d.out);
  ASSERT_TRUE(check.is_object()) << "no self-check in the page; script did not run";
  EXPECT_EQ(check["errors"], json::array()) << check["errors"].dump();
  int charts = check["charts"];
  EXPECT_GE(charts, 10);  // stream: figures, timelines, per GiB, probe; fsync: latencies
  int drawn = 0;
  EXPECT_EQ(check["folded"], 0);
  ASSERT_EQ(check["rendered"].size(), static_cast<size_t>(charts));
  ExpectReaderFirstPage(check);
  for (const json& c : check["rendered"]) {
    EXPECT_GT(c["pixels"].get<int>(), 1000) << "chart " << c["chart"] << " is blank";
    EXPECT_GT(c["points"].get<int>(), 0) << "chart " << c["chart"] << " has no data";
    drawn += c["pixels"].get<int>() > 1000 && c["points"].get<int>() > 0;
  }
  std::printf("chromium drew %d of %d charts\n", drawn, charts);

  std::string shot = std::string(WRITELAB_ARTIFACT_DIR) + "/report-test.png";
  std::vector<std::string> screenshot = Chromium(work.path() + "/profile-shot");
  screenshot.insert(screenshot.end(),
                    {"--window-size=1280,4000", "--screenshot=" + shot, "file://" + html});
  RunResult s = RunProgram("/usr/bin/timeout", screenshot);
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_TRUE(std::filesystem::file_size(shot) > 10000) << shot;
  std::filesystem::copy_file(html, std::string(WRITELAB_ARTIFACT_DIR) + "/report-test.html",
                             std::filesystem::copy_options::overwrite_existing);
}

TEST_F(ReportCli, CompareTheSameRunAndRefuseMismatches) {
  Measure();
  RunResult same = RunWritelab({"compare", stream_json, stream_json});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("+0.0%"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("too few trials to tell"), std::string::npos)
      << "2 and 2 trials cannot show a difference: " << same.out;
  RunResult mismatch = RunWritelab({"compare", stream_json, fsync_json});
  EXPECT_EQ(mismatch.exit_code, 2);
  EXPECT_EQ(CountLines(mismatch.err), 1) << mismatch.err;
  RunResult missing = RunWritelab({"compare", stream_json, work.path() + "/nope.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(CountLines(missing.err), 1) << missing.err;
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos);
  RunResult bad_report = RunWritelab({"report", html + ".missing", "-o", html});
  EXPECT_EQ(bad_report.exit_code, 2);
  EXPECT_EQ(CountLines(bad_report.err), 1) << bad_report.err;
}

// Two fixed documents, written as result files: B's throughput is 20% lower
// over 5 trials each (significant), or the same with noise.
TEST(CompareCli, VerdictsJsonAndFailOnRegression) {
  ScratchDir work("compare-cli");
  auto write = [&](const std::string& name, std::vector<double> samples) {
    Document doc;
    doc.host.hostname = "host";
    doc.label = name == "b.json" ? "after the change" : "";
    ExperimentResult e;
    e.name = "stream";
    e.table = {"mb_s"};
    Row r;
    r.name = "plain";
    r.figures = {{"mb_s", "MB/s", "MB/s", "all", Summarize(std::move(samples))}};
    e.rows.push_back(r);
    doc.experiments.push_back(e);
    const std::string path = work.path() + "/" + name;
    std::ofstream(path) << ToJson(doc);
    return path;
  };
  const std::string base = write("a.json", {100, 101, 102, 99, 98});
  const std::string slower = write("b.json", {80, 81, 82, 79, 78});
  const std::string same = write("c.json", {101, 97, 103, 100, 99});
  const std::string out = work.path() + "/cmp.json";
  RunResult r = RunWritelab({"compare", base, slower, "--json", out, "--fail-on-regression", "10"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("regression: stream: plain MB/s -20.0%"), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(Slurp(out));
  EXPECT_EQ(j["figures"][0]["verdict"], "significant");
  RunResult tolerant = RunWritelab({"compare", base, slower, "--fail-on-regression", "25"});
  EXPECT_EQ(tolerant.exit_code, 0) << "20% worse, but the budget is 25%";
  RunResult noise =
      RunWritelab({"compare", base, same, "--json", "-", "--fail-on-regression", "0"});
  EXPECT_EQ(noise.exit_code, 0) << noise.err;
  EXPECT_EQ(nlohmann::json::parse(noise.out)["figures"][0]["verdict"], "within-noise");
  EXPECT_NE(noise.err.find("within noise"), std::string::npos) << "the table goes to stderr";
  RunResult bad = RunWritelab({"compare", base, same, "--fail-on-regression", "-5"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(r.out.find("B: after the change"), std::string::npos) << "runs go by their --label";

  // -o: one page, both runs in the same chart, the significant change on top
  // and starred on the chart.
  const std::string html = work.path() + "/cmp.html";
  RunResult page = RunWritelab({"compare", base, slower, "-o", html});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  std::string text = Slurp(html);
  EXPECT_LT(text.find("id=\"comparison\""), text.find("data-chart="));
  EXPECT_NE(text.find("<tr class=\"significant\"><td>stream</td><td>plain</td>"),
            std::string::npos);
  EXPECT_NE(text.find("<figcaption class=\"changed\">* stream plain: MB/s -20.0%"),
            std::string::npos);
  EXPECT_NE(text.find("\"labels\":[\"plain *\"]"), std::string::npos) << "starred on the chart";
  EXPECT_NE(text.find("after the change"), std::string::npos);
  RunResult quiet = RunWritelab({"compare", base, same, "-o", html});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(Slurp(html).find("class=\"significant\""), std::string::npos) << "nothing changed";
}

// --label names a run in its document, its tables and in compare.
TEST(CompareCli, LabelNamesTheRun) {
  ScratchDir work("label");
  const std::string out = work.path() + "/r.json";
  RunResult r = RunWritelab({"records", "--dir", work.path(), "--total", "1M", "--method",
                             "write,writev", "--label", "kernel 6.18, bfq", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("run: kernel 6.18, bfq\n", 0), 0u) << r.out;
  EXPECT_EQ(nlohmann::json::parse(Slurp(out))["label"], "kernel 6.18, bfq");
  RunResult c = RunWritelab({"compare", out, out});
  EXPECT_NE(c.out.find("A: kernel 6.18, bfq"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace writelab::testing
