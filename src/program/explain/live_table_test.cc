// SPDX-License-Identifier: MIT
// The live table of explain -- CMD from fixed sums: a line per type of call
// with the last second's calls and split, the percentiles so far, and the
// terminal codes that redraw it in place.
#include "program/explain/live_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace writelab {
namespace {

TraceFile LiveFile(uint32_t class_id, uint64_t calls, uint64_t ns, uint64_t journal,
                   uint64_t data) {
  TraceFile f{};
  f.key = {7 << 20 | 1, class_id, 12};
  f.stats.calls = calls;
  f.stats.ns = ns;
  f.stats.part_ns[SPLIT_JOURNAL] = journal;
  f.stats.part_ns[SPLIT_WRITEBACK] = data;
  return f;
}

TEST(LiveTable, ALinePerCallTypeWithTheLastSecondsRateAndSplit) {
  const uint32_t fsync = TRACE_KIND_FSYNC * 4, write = TRACE_KIND_WRITE * 4;
  std::vector<trace_hist> hists(TRACE_CLASSES);
  hists[fsync].buckets[200] = 150;  // enough calls for a p99
  LiveTable table;
  table.Update({LiveFile(fsync, 10, 100'000'000, 50'000'000, 0), LiveFile(write, 5, 1000, 0, 0)},
               hists, 1'000'000'000, 1'000'000'000);
  // One second later: 40 more fsyncs, 60 ms more, 45 of them journal, 15 device.
  const auto lines = table.Update(
      {LiveFile(fsync, 50, 160'000'000, 95'000'000, 15'000'000), LiveFile(write, 5, 1000, 0, 0)},
      hists, 2'000'000'000, 1'000'000'000);
  ASSERT_EQ(lines.size(), 4u) << "header, column names, fsync, write";
  EXPECT_NE(lines[0].find("2 s, 40 calls/s"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("calls/s"), std::string::npos);
  EXPECT_NE(lines[1].find("p99"), std::string::npos);
  EXPECT_TRUE(lines[2].starts_with("fsync ")) << "most time in the last second first";
  EXPECT_NE(lines[2].find(" 40 "), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find(" 75% "), std::string::npos) << "journal 45 of 60 ms: " << lines[2];
  EXPECT_NE(lines[2].find(" 25% "), std::string::npos) << "device 15 of 60 ms: " << lines[2];
  EXPECT_EQ(lines[2].find(" - "), std::string::npos) << "p50 and p99 known: " << lines[2];
  EXPECT_TRUE(lines[3].starts_with("write ")) << lines[3];
  EXPECT_NE(lines[3].find(" - "), std::string::npos) << "no call in the last second: " << lines[3];
}

TEST(LiveTable, RedrawsInPlaceAndErasesItself) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  LiveTable table;
  table.Draw(out, {"a", "b", "c"});
  table.Draw(out, {"d", "e"});
  table.Erase(out);
  std::fclose(out);
  const std::string s(text, size);
  std::free(text);
  EXPECT_EQ(s.find("\033[3A"), s.find("\r\033[Kd") - 4) << "up over the three lines drawn";
  EXPECT_NE(s.find("\033[2A\r\033[J"), std::string::npos) << "erased: up two, clear below";
  EXPECT_EQ(s.find("\033[3A"), s.rfind("\033[3A")) << "the first draw moves nothing";
}

}  // namespace
}  // namespace writelab
