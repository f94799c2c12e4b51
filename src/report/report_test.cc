// SPDX-License-Identifier: MIT
// Reporters on a fixed document: the JSON round trip is lossless and the
// text and CSV output match golden files (tests/golden/). To update a golden
// file after an intended change: WRITELAB_UPDATE_GOLDEN=1 ./unit_tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/document_json.h"
#include "fixture.h"
#include "report/csv.h"
#include "report/text.h"
#include "test_paths.h"

namespace writelab {
namespace {

void ExpectGolden(const std::string& name, const std::string& actual) {
  std::string path = std::string(WRITELAB_GOLDEN_DIR) + "/" + name;
  if (std::getenv("WRITELAB_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "updated " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path;
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "output differs from " << path;
}

TEST(JsonReport, RoundTripIsLossless) {
  Document doc = FixedDocument();
  std::string text = ToJson(doc);
  auto back = FromJson(text);
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(ToJson(*back), text);
  const Row& plain = back->experiments[0].rows[0];
  EXPECT_EQ(plain.figures[0].value.samples, (std::vector<double>{494, 411, 1853}));
  EXPECT_TRUE(plain.figures[0].value.ci95.has_value());
  EXPECT_FALSE(plain.figures[1].value.ci95.has_value());
  EXPECT_EQ(back->experiments[0].rows[1].status, RowStatus::kUnsupported);
  EXPECT_EQ(back->experiments[0].target.rotational, std::optional<bool>(false));
  EXPECT_FALSE(back->experiments[0].target.physical_block_size.has_value());
  EXPECT_EQ(std::get<int64_t>(back->experiments[0].params[0].value), int64_t{1} << 30);
}

TEST(JsonReport, RefusesOtherSchemasAndGarbage) {
  EXPECT_FALSE(FromJson("{\"schema_version\": 2}").has_value());
  EXPECT_FALSE(FromJson("not json").has_value());
  EXPECT_FALSE(FromJson("{}").has_value());
}

// Found by fuzz_reporters: a figure of 1e99 in a result file was cast to
// int64_t (undefined behaviour) by compare's and the report's tables.
TEST(TextReport, FormatValueOfHugeNumbers) {
  EXPECT_EQ(FormatValue(1e99, "writes"), "1e+99");
  EXPECT_EQ(FormatValue(-1e300, ""), "-1e+300");
  EXPECT_EQ(FormatValue(4096, "writes"), "4096");
  EXPECT_EQ(FormatValue(-3, ""), "-3");
}

TEST(JsonReport, UnsupportedRowNamesItsErrno) {
  std::string text = ToJson(FixedDocument());
  EXPECT_NE(text.find("\"error_name\": \"EOPNOTSUPP\""), std::string::npos);
}

TEST(TextReport, MatchesGolden) { ExpectGolden("stream.txt", RenderText(FixedDocument())); }

TEST(CsvReport, MatchesGolden) { ExpectGolden("stream.csv", RenderCsv(FixedDocument())); }

TEST(TextTable, AlignsColumns) {
  TextTable t({"name", "value"});
  t.AddRow({"a", "1"});
  t.AddRow({"longer", "1000"});
  EXPECT_EQ(t.Render(), "name    value\na           1\nlonger   1000\n");
}

}  // namespace
}  // namespace writelab
