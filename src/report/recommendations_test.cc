// SPDX-License-Identifier: MIT
#include "report/recommendations.h"

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
  std::vector<std::string> lines = RecommendationTexts(Recommendations(doc));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[0].find("prefer dontcache"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("2496 MB/s"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("494 MB/s"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1], "fsync: not run");
  EXPECT_NE(lines[4].find("62.5x"), std::string::npos) << lines[4];
  EXPECT_NE(lines[4].find("keep writes contiguous"), std::string::npos) << lines[4];
  // Each says where it comes from and what it read, for the page's links.
  const std::vector<Recommendation> recs = Recommendations(doc);
  EXPECT_EQ(recs[0].experiment, "stream");
  EXPECT_EQ(recs[0].figures, (std::vector<std::string>{"mb_s", "cached_end", "probe_max_ms"}))
      << "each figure once";
  EXPECT_EQ(recs[4].experiment, "stride");
  EXPECT_EQ(recs[4].figures, (std::vector<std::string>{"mb_s", "device_kib_per_write"}));
}

TEST(Recommendations, NothingWithoutAMeasurement) {
  Document doc;
  ExperimentResult stream;
  stream.name = "stream";
  Row failed = MakeRow("dontcache", {{"mb_s", 1}});
  failed.status = RowStatus::kUnsupported;
  stream.rows = {MakeRow("plain", {{"mb_s", 494}}), failed};
  doc.experiments = {stream};
  EXPECT_EQ(Recommendations(doc)[0].text, "streaming: not enough rows measured");
}

}  // namespace
}  // namespace writelab
