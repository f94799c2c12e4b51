// SPDX-License-Identifier: MIT
// The noise canary (issue 46): its two parts measured in a real directory,
// which it leaves as it found it; a place without a file system for it gets
// the CPU part and says why; and it survives the result file's round trip.
#include "telemetry/canary.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "core/document_json.h"
#include "support.h"

namespace writelab {
namespace {

using ::writelab::testing::TempDir;

TEST(Canary, MeasuresTheLoopAndTheSyncsAndLeavesNoFile) {
  TempDir dir("canary");
  const Canary c = MeasureCanary(dir.path());
  EXPECT_EQ(c.where, dir.path());
  EXPECT_TRUE(c.note.empty()) << c.note;
  ASSERT_EQ(c.figures.size(), 2u);
  EXPECT_EQ(c.figures[0].key, "cpu_loop_ms");
  EXPECT_EQ(c.figures[0].value.samples.size(), static_cast<size_t>(kCanaryLoops));
  EXPECT_GT(c.figures[0].value.min, 0);
  EXPECT_EQ(c.figures[1].key, "fdatasync_us");
  EXPECT_EQ(c.figures[1].unit, "us");
  EXPECT_EQ(c.figures[1].value.samples.size(), static_cast<size_t>(kCanarySyncs));
  EXPECT_GT(c.figures[1].value.min, 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "an unnamed file, gone with its fd";
}

TEST(Canary, WithoutADirectoryOnlyTheCpuPartAndWhy) {
  const Canary c = MeasureCanary("/dev/null");
  ASSERT_EQ(c.figures.size(), 1u);
  EXPECT_EQ(c.figures[0].key, "cpu_loop_ms");
  EXPECT_NE(c.note.find("no fdatasync part: an unnamed file in /dev/null: "), std::string::npos)
      << c.note;
}

TEST(Canary, ASymlinkAtTheDirectoryIsNotFollowed) {
  TempDir dir("canary-link"), elsewhere("canary-target");
  const std::string link = dir.path() + "/link";
  ASSERT_EQ(symlink(elsewhere.path().c_str(), link.c_str()), 0);
  const Canary c = MeasureCanary(link);
  ASSERT_EQ(c.figures.size(), 1u) << "the CPU part only";
  EXPECT_NE(c.note.find("no fdatasync part: an unnamed file in " + link + ": "), std::string::npos)
      << c.note;
}

TEST(Canary, RoundTripsThroughTheResultFile) {
  TempDir dir("canary-json");
  Document doc;
  doc.canary = MeasureCanary(dir.path());
  auto back = FromJson(ToJson(doc));
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->canary.figures.size(), 2u);
  EXPECT_EQ(back->canary.where, dir.path());
  EXPECT_EQ(back->canary.figures[1].value.samples, doc.canary.figures[1].value.samples);
  Document none;
  EXPECT_EQ(ToJson(none).find("canary"), std::string::npos) << "none measured: none written";
}

}  // namespace
}  // namespace writelab
