// SPDX-License-Identifier: MIT
#include "core/units.h"
#include "expect_ok.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

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
  EXPECT_EQ(ErrorOf(ParseSize("12q")), "'12q' is not a size");
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
  EXPECT_EQ(ErrorOf(ParseDurationNs("3x")), "'3x' is not a duration");
}

TEST(ParseSize, EdgeCasesNeverWrapOrGuess) {
  // Whole numbers are exact, up to the last byte of 64 bits.
  EXPECT_EQ(ParseSize("18446744073709551615").value(), UINT64_MAX);
  EXPECT_EQ(ParseSize("9007199254740993").value(), 9007199254740993u);  // 2^53 + 1
  EXPECT_EQ(ParseSize("16777215T").value(), 16777215ull << 40);
  for (const char* big : {"18446744073709551616", "99999999999999999999999", "16777216T",
                          "17179869184G", "99999999999999999999.5"}) {
    auto r = ParseSize(big);
    ASSERT_FALSE(r.has_value()) << big;
    EXPECT_NE(r.error().find("too large"), std::string::npos) << r.error();
  }
  for (const char* bad : {"1e999", "nan", "inf", "-5", "+5", "0x10", "5 ", "\t5", "5\n", ".", "..5",
                          "1.5.", "4kk", "k4", "1,5"})
    EXPECT_FALSE(ParseSize(bad).has_value()) << bad;
  EXPECT_EQ(ParseSize(".5k").value(), 512u);
  EXPECT_EQ(ErrorOf(ParseSize(std::string(400, '9') + "k")).find("too large") != std::string::npos,
            true);
}

TEST(ParseDuration, EdgeCasesNeverWrap) {
  for (const char* long_one : {"9999999999999999999", "99999999999h", "1e999"}) {
    auto r = ParseDurationNs(long_one);
    EXPECT_FALSE(r.has_value()) << long_one;
  }
  EXPECT_NE(ErrorOf(ParseDurationNs("9999999999999999999")).find("too long"), std::string::npos);
  EXPECT_NE(ErrorOf(ParseDurationNs(std::string(400, '9'))).find("too long"), std::string::npos);
  for (const char* bad : {"nan", "inf", "-5s", "+5s", "0x10", "5 s", " 5s", "5s ", ".", "1.2.3s"})
    EXPECT_FALSE(ParseDurationNs(bad).has_value()) << bad;
  EXPECT_EQ(ParseDurationNs("0").value(), 0u);
  EXPECT_EQ(ParseDurationNs("2000000h").value(), 2000000ull * 3600 * 1000000000);
}

TEST(ParseCount, DecimalDigitsOnly) {
  EXPECT_EQ(ParseCount("0").value(), 0u);
  EXPECT_EQ(ParseCount("42").value(), 42u);
  EXPECT_EQ(ParseCount("18446744073709551615").value(), UINT64_MAX);
  EXPECT_EQ(ErrorOf(ParseCount("-1")), "'-1' is not a whole number");
  EXPECT_EQ(ErrorOf(ParseCount("99999999999999999999")),
            "'99999999999999999999' is more than 18446744073709551615");
  EXPECT_EQ(ErrorOf(ParseCount("5000", 4096)), "'5000' is more than 4096");
  for (const char* bad : {"", "+1", " 1", "1 ", "0x10", "1.0", "1e3", "1-2", "nan"})
    EXPECT_FALSE(ParseCount(bad).has_value()) << bad;
}

TEST(Quoted, ShortAndOneLine) {
  EXPECT_EQ(Quoted("4k"), "'4k'");
  EXPECT_EQ(Quoted("a\nb"), "'a?b'");
  EXPECT_EQ(Quoted(std::string(100, 'x')), "'" + std::string(40, 'x') + "...'");
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

// Issue 45: no exponent for a figure a person reads.
TEST(Units, FormatValueUsesSiPrefixesNotExponents) {
  EXPECT_EQ(FormatValue(721234.5, "writes"), "721k");
  EXPECT_EQ(FormatValue(1234.5, ""), "1.23k");
  EXPECT_EQ(FormatValue(-45678.9, ""), "-45.7k");
  EXPECT_EQ(FormatValue(2.5e9 + 0.5, "calls"), "2.50G");
  EXPECT_EQ(FormatValue(12345.6, "us"), "12.3 ms");
  EXPECT_EQ(FormatValue(93.5, "us"), "93.5 us");
  EXPECT_EQ(FormatValue(0.25, "x"), "0.25");
  EXPECT_EQ(FormatValue(3.018e-05, "calls"), "0.0000302");  // io_uring's syscalls per line
  EXPECT_EQ(FormatValue(-0.000456, ""), "-0.000456");
  EXPECT_EQ(FormatValue(1e-15, ""), "0");
}

TEST(Units, ListInWordsJoinsWithTheLastWordGiven) {
  EXPECT_EQ(ListInWords({"a"}), "a");
  EXPECT_EQ(ListInWords({"a", "b", "c"}), "a, b and c");
  EXPECT_EQ(ListInWords({"a", "b", "c"}, "or"), "a, b or c");
}

TEST(Units, SpaceJoinedIsACommandLine) {
  EXPECT_EQ(SpaceJoined({}), "");
  EXPECT_EQ(SpaceJoined({"dd", "if=x", "of=y"}), "dd if=x of=y");
}

}  // namespace
}  // namespace writelab
