// SPDX-License-Identifier: MIT
// A document from a run under MPI in every reporter: its ranks and clock
// check survive the JSON round trip, the terminal shows the aggregate in
// full and each rank as a line, the CSV names the rank, and the survey's
// recommendations say how the figures scale.
#include <gtest/gtest.h>

#include <set>

#include "cli/commands.h"
#include "command/survey.h"
#include "core/document_json.h"
#include "fixture.h"
#include "report/compare.h"
#include "report/csv.h"
#include "report/recommendations.h"
#include "report/text.h"

namespace writelab {
namespace {

Row RowWith(const std::string& name, std::vector<std::pair<std::string, double>> figures) {
  Row r;
  r.name = name;
  for (const auto& [key, v] : figures) {
    const std::string unit = key.ends_with("_ms") ? "ms"
                             : key == "lines_s"   ? "lines/s"
                             : key == "ranks"     ? "ranks"
                                                  : "MB/s";
    r.figures.push_back({key, key, unit, "", Summarize({v})});
  }
  return r;
}

ExperimentResult Experiment(const std::string& name, int rank, int ranks, std::vector<Row> rows) {
  ExperimentResult e;
  e.name = name;
  e.rank = rank;
  e.ranks = ranks;
  e.target.path = "/shared";
  e.table = {rows.front().figures.front().key};
  e.rows = std::move(rows);
  return e;
}

Document MpiDocument() {
  Document doc = FixedDocument();
  doc.experiments.clear();
  doc.mpi_library = "Open MPI v4.1.4";
  for (int r = 0; r < 3; ++r) {
    RankInfo info;
    info.rank = r;
    info.host.hostname = "node" + std::to_string(r);
    info.host.kernel = "6.18.44";
    info.host.cpus = 16;
    info.dir = "/shared";
    info.clock_offset_ns = r * 1500 - 1500;
    info.clock_rtt_ns = r ? 24000 : 0;
    doc.ranks.push_back(info);
  }
  doc.ranks[0].clock_offset_ns = 0;
  auto stream = [](int ranks, double window_drop, double plain) {
    return Experiment(
        "stream", -1, ranks,
        {RowWith("plain", {{"mb_s", plain}}), RowWith("window-drop", {{"mb_s", window_drop}})});
  };
  doc.experiments.push_back(stream(1, 900, 500));
  doc.experiments.push_back(
      Experiment("stream", 0, 0,
                 {RowWith("plain", {{"mb_s", 500}}), RowWith("window-drop", {{"mb_s", 900}})}));
  doc.experiments.push_back(stream(3, 2400, 700));
  for (int r = 0; r < 3; ++r)
    doc.experiments.push_back(
        Experiment("stream", r, 0,
                   {RowWith("plain", {{"mb_s", 240}}), RowWith("window-drop", {{"mb_s", 800}})}));
  doc.experiments.push_back(
      Experiment("fsync", -1, 1,
                 {RowWith("none/fsync", {{"total_max_ms", 4}}),
                  RowWith("stream/fsync", {{"total_max_ms", 280}, {"bg_mb_s", 650}})}));
  return doc;
}

TEST(RanksDocument, SurvivesTheJsonRoundTrip) {
  Document doc = MpiDocument();
  auto back = FromJson(ToJson(doc));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(back->mpi_library, "Open MPI v4.1.4");
  ASSERT_EQ(back->ranks.size(), 3u);
  EXPECT_EQ(back->ranks[2].host.hostname, "node2");
  EXPECT_EQ(back->ranks[2].clock_offset_ns, 1500);
  EXPECT_EQ(back->ranks[1].clock_rtt_ns, 24000u);
  EXPECT_EQ(back->experiments[2].ranks, 3);
  EXPECT_EQ(back->experiments[2].rank, -1);
  EXPECT_EQ(back->experiments[3].rank, 0);
  EXPECT_EQ(back->experiments[3].ranks, 0);
  // A document from one machine has neither, and reads back without them.
  auto plain = FromJson(ToJson(FixedDocument()));
  ASSERT_TRUE(plain.has_value());
  EXPECT_TRUE(plain->ranks.empty());
  EXPECT_EQ(ToJson(FixedDocument()).find("\"mpi\""), std::string::npos);
}

TEST(RanksDocument, TheTerminalShowsEachRankAsALineOfItsAggregate) {
  const std::string text = RenderText(MpiDocument());
  EXPECT_NE(text.find("ranks: 3 under MPI (Open MPI v4.1.4)"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2: node2, Linux 6.18.44, 16 CPUs, /shared; clock +1.5 us against "
                      "rank 0 (+-12.0 us)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ranks: the aggregate of 3 measuring ranks"), std::string::npos);
  EXPECT_NE(text.find("stream per rank"), std::string::npos);
  EXPECT_NE(text.find("rank 2 (node2)"), std::string::npos);
  // Two full stream tables, the aggregates; none of a rank's own.
  size_t tables = 0;
  for (size_t at = 0; (at = text.find("writelab stream:", at)) != std::string::npos; ++at) ++tables;
  EXPECT_EQ(tables, 2u) << text;
  // The aggregates side by side: one rank against three.
  EXPECT_NE(text.find("stream side by side"), std::string::npos);
  EXPECT_NE(text.find("/shared (3 ranks)"), std::string::npos);
}

TEST(RanksDocument, CsvLinesNameTheirRankAndItsHost) {
  const std::string csv = RenderCsv(MpiDocument());
  EXPECT_NE(csv.find(",run,rank\n"), std::string::npos);
  EXPECT_NE(csv.find(",all 3\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("node2"), std::string::npos);
}

TEST(RanksDocument, CompareJudgesTheAggregatesByTheirThroughput) {
  Document a = MpiDocument(), b = MpiDocument();
  b.experiments[2].rows[1].figures[0].value = Summarize({1200});  // window-drop on 3 ranks halved
  auto c = Compare(a, b);
  ASSERT_TRUE(c.has_value()) << c.error();
  EXPECT_TRUE(c->only.empty());
  std::set<std::string> experiments;
  for (const FigureComparison& f : c->figures) {
    experiments.insert(f.experiment);
    if (f.experiment == "stream on 3 ranks" && f.row == "window-drop") {
      EXPECT_TRUE(f.headline);  // mb_s, not the count of ranks
      EXPECT_DOUBLE_EQ(f.b, 1200);
    }
  }
  // Each rank's own rows are there to read, not to judge.
  EXPECT_EQ(experiments,
            (std::set<std::string>{"stream on 1 rank", "stream on 3 ranks", "fsync on 1 rank"}));
}

TEST(RanksDocument, RecommendationsSayHowTheFiguresScale) {
  std::vector<std::string> lines =
      RecommendationTexts(Recommendations(MpiDocument(), Experiments()));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_NE(lines[0].find("streaming across 3 clients: window-drop is the fastest"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("2400 MB/s together against 900 MB/s"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("2.7x rank 0 alone, 89% of linear: it scales with the clients"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("4.00 ms while no client writes, 280 ms as stream/fsync (70x)"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("ranks 1-2 run the background load"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2], "small records across clients: not enough ranks measured");
  EXPECT_NE(lines[3].find("not run under MPI"), std::string::npos);
  EXPECT_EQ(lines.size(), 4u);  // three hosts: no one-machine caveat
}

}  // namespace
}  // namespace writelab
