#include "core/units.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

TEST(ParseSize, AcceptsPlainAndBinarySuffixes) {
  EXPECT_EQ(ParseSize("4096").value(), 4096u);
  EXPECT_EQ(ParseSize("4k").value(), 4096u);
  EXPECT_EQ(ParseSize("4K").value(), 4096u);
  EXPECT_EQ(ParseSize("4KiB").value(), 4096u);
  EXPECT_EQ(ParseSize("8M").value(), 8u << 20);
  EXPECT_EQ(ParseSize("1G").value(), 1u << 30);
  EXPECT_EQ(ParseSize("1.5GiB").value(), 3ull << 29);
  EXPECT_EQ(ParseSize("2T").value(), 2ull << 40);
  EXPECT_EQ(ParseSize("0").value(), 0u);
}

TEST(ParseSize, RefusesWithTheValueNamed) {
  for (const char* bad : {"12q", "", "-1", "k", "1.2.3", "1e3", " 4k", "4 k", "0.3"}) {
    auto r = ParseSize(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().find(std::string("'") + bad + "'"), std::string::npos) << r.error();
  }
  EXPECT_EQ(ParseSize("12q").error(), "'12q' is not a size");
  EXPECT_FALSE(ParseSize("17000000000T").has_value());
}

TEST(ParseDuration, AcceptsUnits) {
  EXPECT_EQ(ParseDurationNs("500ms").value(), 500'000'000u);
  EXPECT_EQ(ParseDurationNs("3s").value(), 3'000'000'000u);
  EXPECT_EQ(ParseDurationNs("2m").value(), 120'000'000'000u);
  EXPECT_EQ(ParseDurationNs("250us").value(), 250'000u);
  EXPECT_EQ(ParseDurationNs("1.5s").value(), 1'500'000'000u);
  EXPECT_EQ(ParseDurationNs("2").value(), 2'000'000'000u);
}

TEST(ParseDuration, Refuses) {
  for (const char* bad : {"3x", "", "ms", "-3s", "s3"}) EXPECT_FALSE(ParseDurationNs(bad)) << bad;
  EXPECT_EQ(ParseDurationNs("3x").error(), "'3x' is not a duration");
}

TEST(Format, BytesAndNanoseconds) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(8 << 20), "8.00 MiB");
  EXPECT_EQ(FormatBytes(1.5 * (1 << 30)), "1.50 GiB");
  EXPECT_EQ(FormatNs(812), "812 ns");
  EXPECT_EQ(FormatNs(3410), "3.41 us");
  EXPECT_EQ(FormatNs(12e6), "12.0 ms");
  EXPECT_EQ(FormatNs(1.52e9), "1.52 s");
}

}  // namespace
}  // namespace writelab
