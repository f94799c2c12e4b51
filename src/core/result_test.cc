// SPDX-License-Identifier: MIT
// Figure keys are checked: a value under a key the table lacks is a bug that
// fails loudly (KeyOf catches it at compile time where keys are written).
#include "core/result.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace writelab {
namespace {

constexpr FigureSpec kTable[] = {{"mb_s", "MB/s", "MB/s", "everything"},
                                 {"sync_s", "sync", "s", "the final fsync"}};

TEST(FigureKeys, KnownKeysFollowTheTableOrder) {
  std::vector<Figure> figures;
  AddFigures(figures, kTable, std::map<std::string, double>{{"sync_s", 2}, {"mb_s", 1}});
  ASSERT_EQ(figures.size(), 2u);
  EXPECT_EQ(figures[0].key, "mb_s");
  EXPECT_EQ(figures[1].key, "sync_s");
}

TEST(FigureKeys, AnUnknownKeyThrows) {
  std::vector<Figure> figures;
  EXPECT_THROW(AddFigures(figures, kTable, std::map<std::string, double>{{"mb_ss", 1}}),
               std::logic_error);
  EXPECT_THROW(
      AddFigures(figures, kTable, std::map<std::string, std::vector<double>>{{"sync", {1}}}),
      std::logic_error);
}

TEST(FigureKeys, KeyOfAndKeysOfNameTheTableEntries) {
  constexpr FigureKey k = KeyOf(kTable, "sync_s");
  EXPECT_STREQ(k.name, "sync_s");
  constexpr auto columns = KeysOf(kTable, {"mb_s", "sync_s"});
  EXPECT_EQ(KeyNames(columns), (std::vector<std::string>{"mb_s", "sync_s"}));
}

// A latency keeps the percentiles its samples support, says why it left the
// others out, and keeps the whole distribution as its non-empty buckets.
TEST(Latency, OmitsUnsupportedPercentilesAndKeepsBuckets) {
  Histogram h;
  for (int i = 0; i < 12; ++i) h.Record(i < 11 ? 1'000'000 : 50'000'000);
  Latency l = Latency::From(h, "sync", "fsync", "one call");
  ASSERT_EQ(l.percentiles_ns.size(), 2u);  // p50 and p90
  EXPECT_EQ(l.percentiles_ns[1].first, 90.0);
  ASSERT_EQ(l.percentiles_omitted.size(), 2u);
  EXPECT_EQ(l.percentiles_omitted[1].first, 99.9);
  EXPECT_EQ(l.percentiles_omitted[1].second, "needs 1000 samples, 12 recorded");
  EXPECT_FALSE(l.At(99));
  ASSERT_EQ(l.buckets.size(), 2u);
  EXPECT_EQ(l.buckets[0].count, 11u);
  EXPECT_LE(l.buckets[0].low_ns, 1'000'000u);
  EXPECT_GE(l.buckets[0].high_ns, 1'000'000u);
  EXPECT_EQ(l.buckets[1].count, 1u);
  EXPECT_EQ(l.buckets[1].low_ns, Histogram::BucketLow(Histogram::Index(50'000'000)));
}

}  // namespace
}  // namespace writelab
