// SPDX-License-Identifier: MIT
#include "report/recommendations.h"

#include "cli/commands.h"
#include "command/survey.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

Row MakeRow(const std::string& name, std::vector<std::pair<std::string, double>> figures,
            const std::string& unit = "MB/s") {
  Row r;
  r.name = name;
  for (const auto& [key, v] : figures) r.figures.push_back({key, key, unit, "", Summarize({v})});
  return r;
}

TEST(Recommendations, EachLineCarriesItsNumbers) {
  Document doc;
  ExperimentResult stream;
  stream.name = "stream";
  stream.rows = {MakeRow("plain", {{"mb_s", 494}}), MakeRow("window-drop", {{"mb_s", 1942}}),
                 MakeRow("dontcache", {{"mb_s", 2496}})};
  stream.rows[2].figures.push_back({"cached_end", "", "bytes", "", Summarize({0})});
  ExperimentResult stride;
  stride.name = "stride";
  stride.params = {{"block", int64_t{4096}, "bytes"}, {"unit", int64_t{512}, "bytes"}};
  stride.rows = {MakeRow("8", {{"mb_s", 75}}), MakeRow("512", {{"mb_s", 1.2}})};
  doc.experiments = {stream, stride};
  std::vector<std::string> lines = RecommendationTexts(Recommendations(doc, Experiments()));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[0].find("prefer dontcache"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("2496 MB/s"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("494 MB/s"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1], "fsync: not run");
  EXPECT_NE(lines[4].find("62.5x"), std::string::npos) << lines[4];
  EXPECT_NE(lines[4].find("keep writes contiguous"), std::string::npos) << lines[4];
  // Each says where it comes from and what it read, for the page's links.
  const std::vector<Recommendation> recs = Recommendations(doc, Experiments());
  EXPECT_EQ(recs[0].experiment, "stream");
  EXPECT_EQ(recs[0].figures, (std::vector<std::string>{"mb_s", "cached_end"}))
      << "each figure once";
  EXPECT_NE(lines[0].find("short trials"), std::string::npos) << "its condition: " << lines[0];
  EXPECT_NE(lines[0].find("not measured past the writeback threshold"), std::string::npos)
      << lines[0];
  EXPECT_EQ(recs[4].experiment, "stride");
  EXPECT_EQ(recs[4].figures, (std::vector<std::string>{"mb_s", "device_kib_per_write"}));
}

// Issue 33: the stall is concluded on only from trials that wrote past
// the writeback threshold; a run that did not says it could not be provoked.
TEST(Recommendations, TheStallOnlyFromTrialsPastTheDirtyLimit) {
  auto pressure = [](double written) {
    ExperimentResult e;
    e.name = "stream";
    e.params = {{"writeback_threshold", int64_t{4000}, "bytes"}, {"size", int64_t{5000}, "bytes"}};
    e.rows = {MakeRow("plain", {{"mb_s", 391}}), MakeRow("window-drop", {{"mb_s", 2468}})};
    for (Row& r : e.rows) {
      r.figures.push_back({"bytes", "", "bytes", "", Summarize({written})});
      r.figures.push_back({"vs_threshold", "", "x", "", Summarize({written / 4000})});
    }
    e.rows[0].figures.push_back({"probe_max_ms", "", "ms", "", Summarize({444})});
    e.rows[1].figures.push_back({"probe_max_ms", "", "ms", "", Summarize({7.9})});
    return e;
  };
  ExperimentResult short_trials;
  short_trials.name = "stream";
  short_trials.rows = {MakeRow("plain", {{"mb_s", 1749}}), MakeRow("dontcache", {{"mb_s", 2000}})};
  Document doc;
  doc.experiments = {short_trials, pressure(5000)};
  std::string line = Recommendations(doc, Experiments())[0].text;
  EXPECT_NE(line.find("past the writeback threshold"), std::string::npos) << line;
  EXPECT_NE(line.find("444 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("7.90 ms"), std::string::npos) << line;
  doc.experiments = {short_trials, pressure(3000)};
  line = Recommendations(doc, Experiments())[0].text;
  EXPECT_NE(line.find("could not be provoked"), std::string::npos) << line;
  EXPECT_EQ(line.find("444 ms"), std::string::npos) << "no conclusion from it: " << line;
}

// Issue 44: the bystander's verdict is a rank test over at least five
// trials per strategy, never one trial's worst: a strategy beside which
// every trial was calmer than every one of plain's is named with what it
// cost; overlapping trials are no conclusion, said as such; one trial
// each concludes nothing.
Figure Trials(const std::string& key, const std::string& unit, std::vector<double> v) {
  return Figure{key, key, unit, "", Summarize(std::move(v))};
}

// The stream's trials past the writeback threshold: plain and one bounded
// strategy, the bystander's p99 per trial beside each, the strategy's
// speed per trial (plain's 1200 MB/s, the strategy's 900 unless given).
ExperimentResult PastTheThreshold(std::vector<double> plain_p99, std::vector<double> other_p99,
                                  std::vector<double> other_mbs = {},
                                  const std::string& other = "paced", double plain_mbs = 1200) {
  ExperimentResult e;
  e.name = "stream";
  e.params = {{"writeback_threshold", int64_t{4000}, "bytes"}, {"size", int64_t{5000}, "bytes"}};
  const size_t n = plain_p99.size();
  e.rows = {Row{}, Row{}};
  e.rows[0].name = "plain";
  e.rows[1].name = other;
  for (Row& r : e.rows) {
    const bool plain = r.name == "plain";
    const std::vector<double> mbs =
        plain || other_mbs.empty() ? std::vector<double>(n, plain ? plain_mbs : 900) : other_mbs;
    r.figures = {Trials("mb_s", "MB/s", mbs),
                 Trials("bytes", "bytes", std::vector<double>(n, 6000)),
                 Trials("vs_threshold", "x", std::vector<double>(n, 1.5)),
                 Trials("probe_p99_ms", "ms", plain ? plain_p99 : other_p99),
                 Trials("probe_max_ms", "ms", plain ? plain_p99 : other_p99)};
  }
  return e;
}

TEST(Recommendations, TheBystandersVerdictIsARankTestOverFiveTrials) {
  ExperimentResult short_trials;
  short_trials.name = "stream";
  short_trials.rows = {MakeRow("plain", {{"mb_s", 1749}}), MakeRow("paced", {{"mb_s", 1000}}),
                       MakeRow("window-drop", {{"mb_s", 2000}})};
  Document doc;
  doc.experiments = {short_trials,
                     PastTheThreshold({180, 190, 170, 200, 185}, {12, 15, 11, 14, 13})};
  Recommendation rec = Recommendations(doc, Experiments())[0];
  EXPECT_NE(rec.text.find("prefer paced (beside it the bystander was significantly calmer"),
            std::string::npos)
      << rec.text;
  EXPECT_NE(rec.text.find("rank test p = 0.008, 5 trials each"), std::string::npos) << rec.text;
  EXPECT_NE(rec.text.find("p = 0.008: a cost"), std::string::npos) << "900 against 1200 MB/s";
  EXPECT_NE(rec.verdict.find("the bystander's p99 13.0 ms vs plain's 185 ms (p = 0.008)"),
            std::string::npos)
      << rec.verdict;
  EXPECT_LE(rec.verdict.size(), 200u) << rec.verdict;
  // The writer's speed as its own rank test found it: faster, or the same
  // within the trials' spread (never a negation: the survey's rule).
  const std::vector<double> calm = {12, 15, 11, 14, 13}, loud = {180, 190, 170, 200, 185};
  doc.experiments = {short_trials, PastTheThreshold(loud, calm, {1500, 1510, 1490, 1505, 1495})};
  rec = Recommendations(doc, Experiments())[0];
  EXPECT_NE(rec.text.find("(p = 0.008: faster)"), std::string::npos) << rec.text;
  doc.experiments = {short_trials, PastTheThreshold(loud, calm, {1100, 1300, 1150, 1250, 1200})};
  rec = Recommendations(doc, Experiments())[0];
  EXPECT_NE(rec.text.find("(the same within the trials' spread, p = "), std::string::npos)
      << rec.text;
  EXPECT_EQ(rec.text.find("not "), std::string::npos) << rec.text;
  doc.experiments = {short_trials,
                     PastTheThreshold({180, 12, 170, 14, 185}, {12, 190, 11, 200, 13})};
  rec = Recommendations(doc, Experiments())[0];
  EXPECT_NE(rec.text.find("prefer window-drop"), std::string::npos) << "the fastest: " << rec.text;
  EXPECT_NE(rec.verdict.find("the bystander was no calmer (p99: paced"), std::string::npos)
      << rec.verdict;
  EXPECT_NE(rec.text.find("no strategy calmed the bystander significantly"), std::string::npos)
      << rec.text;
  // Every trial beside the strategy louder than every one beside plain: the
  // bystander was calmest beside plain, said as such (not "none calmed it",
  // which would hide the direction), in the verdict's 200 characters.
  doc.experiments = {short_trials, PastTheThreshold(calm, loud)};
  rec = Recommendations(doc, Experiments())[0];
  EXPECT_NE(rec.verdict.find("the bystander was calmest beside plain (p99: plain 13.0 ms, paced "
                             "185 ms, p = 0.008)"),
            std::string::npos)
      << rec.verdict;
  EXPECT_LE(rec.verdict.size(), 200u) << rec.verdict;
  EXPECT_NE(rec.text.find("the bystander was calmest beside plain: its fdatasync p99 13.0 ms "
                          "against 185 ms beside paced"),
            std::string::npos)
      << rec.text;
  EXPECT_EQ(rec.text.find("not "), std::string::npos) << rec.text;
  doc.experiments = {short_trials, PastTheThreshold({180, 190, 170, 200}, {12, 15, 11, 14})};
  rec = Recommendations(doc, Experiments())[0];
  EXPECT_NE(rec.verdict.find("(4, 5 needed)"), std::string::npos)
      << "four trials each, however apart, are too few: " << rec.verdict;
  doc.experiments = {short_trials, PastTheThreshold({444}, {7.9})};
  rec = Recommendations(doc, Experiments())[0];
  EXPECT_NE(rec.verdict.find("too few trials to judge stalls (1, 5 needed)"), std::string::npos)
      << "one trial's worst is no verdict: " << rec.verdict;
  EXPECT_NE(rec.text.find("fewer than the 5 a rank test needs"), std::string::npos) << rec.text;
  EXPECT_EQ(rec.text.find("prefer paced"), std::string::npos) << rec.text;
}

// Issue 45: each verdict fits its 200 characters at the widest it can
// be: the longest strategy's name, five-digit MB/s (an NVMe array), a
// page cache left in GiB and stalls of seconds, in each of its forms.
TEST(Recommendations, TheStreamVerdictFitsAtItsWidest) {
  ExperimentResult short_trials;
  short_trials.name = "stream";
  short_trials.rows = {MakeRow("plain", {{"mb_s", 12345}}),
                       MakeRow("window-drop", {{"mb_s", 23456}})};
  for (Row& r : short_trials.rows)
    r.figures.push_back(Trials("cached_end", "bytes", {1000.0 * 1024 * 1024}));
  const std::vector<double> calm = {121, 151, 111, 141, 131}, loud = {999, 998, 997, 996, 995},
                            mixed = {121, 998, 111, 996, 131}, fast = std::vector<double>(5, 98765);
  Document doc;
  for (const auto& [plain, other] :
       {std::pair{loud, calm}, std::pair{calm, loud}, std::pair{mixed, loud},
        std::pair{loud, std::vector<double>{1}}}) {
    doc.experiments = {short_trials, PastTheThreshold(plain, other, fast, "window-drop", 87654)};
    const Recommendation rec = Recommendations(doc, Experiments())[0];
    EXPECT_NE(rec.verdict.find("window-drop"), std::string::npos) << rec.verdict;
    EXPECT_LE(rec.verdict.size(), 200u) << rec.verdict;
  }
}

// Issue 34: mitigation rows are quoted against none with their verdict,
// but never one whose background stayed in the page cache.
TEST(Recommendations, FsyncQuotesOnlyMitigationsWhoseBackgroundReachedTheDevice) {
  ExperimentResult fsync;
  fsync.name = "fsync";
  auto row = [](const std::string& name, double worst, double device_pct) {
    Row r = MakeRow(name, {{"total_max_ms", worst}}, "ms");
    r.figures.push_back({"bg_device_pct", "", "%", "", Summarize({device_pct})});
    if (!name.ends_with("/none")) {
      r.figures.push_back({"vs_none_pct", "", "%", "", Summarize({-80})});
      r.figures.push_back({"vs_none_p", "", "", "", Summarize({0.008})});
    }
    return r;
  };
  fsync.rows = {MakeRow("none/fdatasync", {{"total_max_ms", 2}}, "ms"),
                row("stream/fdatasync/none", 404, 95), row("stream/fdatasync/wbt=2ms", 81, 90),
                row("stream/fdatasync/bdi=256M", 3, 2)};
  Document doc;
  doc.experiments = {fsync};
  const std::string line = Recommendations(doc, Experiments())[1].text;
  EXPECT_NE(line.find("stream/fdatasync/wbt=2ms 81.0 ms (-80%, significant)"), std::string::npos)
      << line;
  EXPECT_EQ(line.find("bdi=256M 3"), std::string::npos) << "stayed in the page cache: " << line;
}

// A row without a background that came out slower than those with one (a
// noisy machine) is not "the worst beside a background": the line compares
// the background row, and says whether its background reached the device.
TEST(Recommendations, FsyncsWorstRowIsOneWithABackground) {
  ExperimentResult fsync;
  fsync.name = "fsync";
  Row bg = MakeRow("stream/fdatasync", {{"total_max_ms", 60}}, "ms");
  bg.figures.push_back({"bg_device_pct", "", "%", "", Summarize({97})});
  fsync.rows = {MakeRow("none/fdatasync", {{"total_max_ms", 53}}, "ms"),
                MakeRow("none/fsync", {{"total_max_ms", 76}}, "ms"), bg};
  Document doc;
  doc.experiments = {fsync};
  const std::string line = Recommendations(doc, Experiments())[1].text;
  EXPECT_NE(line.find("alone but 60.0 ms as stream/fdatasync"), std::string::npos) << line;
  EXPECT_NE(line.find("reached the device: 97%"), std::string::npos) << line;
}

TEST(Recommendations, NothingWithoutAMeasurement) {
  Document doc;
  ExperimentResult stream;
  stream.name = "stream";
  Row failed = MakeRow("dontcache", {{"mb_s", 1}});
  failed.status = RowStatus::kUnsupported;
  stream.rows = {MakeRow("plain", {{"mb_s", 494}}), failed};
  doc.experiments = {stream};
  EXPECT_EQ(Recommendations(doc, Experiments())[0].text, "streaming: not enough rows measured");
}

}  // namespace
}  // namespace writelab
