// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "fixture.h"
#include "report/text.h"

namespace writelab {
namespace {

int BriefLineCount(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// The survey's brief output: the findings come first (verdicts, the text
// where a recommendation has none), each step's headline per row after,
// every line within the width; no table, legend or note.
TEST(TextBrief, FindingsFirstThenAHeadlineLinePerStep) {
  Document doc = FixedDocument();
  doc.experiments[0].purpose = "streaming strategies";
  doc.recommendations = {{"stream", {"mb_s"}, "a long text", "streaming: use window-drop"},
                         {"fsync", {}, "fsync: not run", ""}};
  const std::string brief = RenderBrief(doc, 60);
  ASSERT_TRUE(brief.starts_with("Findings:\n  streaming: use window-drop\n  fsync: not run\n"))
      << brief;
  const size_t findings = 0;
  EXPECT_LT(findings, brief.find("host: box")) << brief;
  EXPECT_EQ(brief.find("a long text"), std::string::npos);
  const size_t glance = brief.find("  stream (streaming strategies), MB/s: plain 494,");
  EXPECT_GT(glance, findings) << brief;
  EXPECT_NE(brief.find("dontcache unsupported"), std::string::npos) << brief;
  EXPECT_EQ(brief.find("Each cell"), std::string::npos) << "no legend in the brief";
  EXPECT_EQ(brief.find("a note"), std::string::npos) << "no notes in the brief";
  size_t at = 0;
  for (size_t nl; (nl = brief.find('\n', at)) != std::string::npos; at = nl + 1)
    EXPECT_LE(nl - at, 60u) << brief.substr(at, nl - at);
  EXPECT_LE(BriefLineCount(brief), 15) << brief;
}

}  // namespace
}  // namespace writelab
