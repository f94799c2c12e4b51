// SPDX-License-Identifier: MIT
// The shim's records, read back: what it writes is understood, anything
// else is an error that names what is wrong, and a stream of bytes is cut
// into records wherever the pipe splits it.
#include "program/run/records.h"

#include <gtest/gtest.h>

namespace writelab {
namespace {

TEST(ShimRecords, EachTypeIsReadWithItsFields) {
  auto hello = ParseShimRecord("WLRUN1 hello pid=12 exe=/usr/bin/dd");
  ASSERT_TRUE(hello) << hello.error();
  EXPECT_EQ(hello->type, ShimRecord::Type::kHello);
  EXPECT_EQ(hello->pid, 12);
  EXPECT_EQ(hello->path, "/usr/bin/dd");
  auto done = ParseShimRecord(
      "WLRUN1 done pid=7 dev=2049 ino=13 written=2147483648 handled=2147483648 "
      "mech=dontcache+window-drop path=/mnt/a%20b%25%0A");
  ASSERT_TRUE(done) << done.error();
  EXPECT_EQ(done->type, ShimRecord::Type::kDone);
  EXPECT_EQ(done->dev, 2049u);
  EXPECT_EQ(done->ino, 13u);
  EXPECT_EQ(done->written, uint64_t{2} << 30);
  EXPECT_EQ(done->mech, "dontcache+window-drop");
  EXPECT_EQ(done->path, "/mnt/a b%\n") << "percent-decoded";
  for (const char* mech : {"direct", "direct+window-drop", "refused-direct-unaligned",
                           "refused-direct-open", "refused-direct-append"}) {
    auto d = ParseShimRecord(
        std::string("WLRUN1 done pid=7 dev=1 ino=2 written=1 handled=0 mech=") + mech + " path=/f");
    ASSERT_TRUE(d) << mech << ": " << d.error();
    EXPECT_EQ(d->mech, mech);
  }
  EXPECT_FALSE(done->paced) << "no paced counts unless the shim sent them";
  auto paced = ParseShimRecord(
      "WLRUN1 done pid=7 dev=1 ino=2 written=9 handled=9 mech=paced flushes=40 unmet=3 "
      "slowest=9150000 path=/f");
  ASSERT_TRUE(paced) << paced.error();
  ASSERT_TRUE(paced->paced);
  EXPECT_EQ(paced->paced->flushes, 40u);
  EXPECT_EQ(paced->paced->unmet, 3u);
  EXPECT_EQ(paced->paced->slowest_ns, 9'150'000u);
  auto unseen = ParseShimRecord("WLRUN1 unseen pid=7 dev=2049 ino=14 path=/mnt/ring");
  ASSERT_TRUE(unseen) << unseen.error();
  EXPECT_EQ(unseen->type, ShimRecord::Type::kUnseen);
  EXPECT_FALSE(ParseShimRecord("WLRUN1 unseen pid=7 dev=2049 ino=14 written=1 path=/mnt/ring"));
}

// A file's done records summed: counts that a forged record makes huge
// stop at the largest number instead of wrapping, and never leave more
// unmet flushes than flushes.
TEST(ShimRecords, PacedCountsSumWithoutWrapping) {
  ShimRecord::Paced sum;
  sum.Add({40, 3, 9'150'000});
  sum.Add({2, 1, 12'000'000});
  EXPECT_EQ(sum.flushes, 42u);
  EXPECT_EQ(sum.unmet, 4u);
  EXPECT_EQ(sum.slowest_ns, 12'000'000u);
  sum.Add({UINT64_MAX, UINT64_MAX - 1, 1});
  EXPECT_EQ(sum.flushes, UINT64_MAX);
  EXPECT_EQ(sum.unmet, UINT64_MAX);
  EXPECT_LE(sum.unmet, sum.flushes);
  EXPECT_EQ(sum.slowest_ns, 12'000'000u);
}

TEST(ShimRecords, AnythingElseIsAnError) {
  for (const char* bad : {
           "",
           "WLRUN2 hello pid=1 exe=/x",
           "WLRUN1 goodbye pid=1 exe=/x",
           "WLRUN1 hello pid=0 exe=/x",
           "WLRUN1 hello pid=99999999 exe=/x",
           "WLRUN1 hello pid=1",
           "WLRUN1 hello pid=1 exe=/x extra=1",
           "WLRUN1 hello pid=1 pid=2 exe=/x",
           "WLRUN1 claim pid=1 dev=x ino=2 path=/x",
           "WLRUN1 claim pid=1 dev=1 ino=2 path=/a b",
           "WLRUN1 claim pid=1 dev=1 ino=2 path=/a%2",
           "WLRUN1 claim pid=1 dev=1 ino=2 path=/a%00",
           "WLRUN1 claim pid=1 dev=1 ino=2 path=/a%zz",
           "WLRUN1 done pid=1 dev=1 ino=2 written=1 handled=1 mech=fast path=/x",
           // paced's counts: all three, numbers, no more unmet than flushes
           "WLRUN1 done pid=1 dev=1 ino=2 written=1 handled=1 mech=paced flushes=4 path=/x",
           "WLRUN1 done pid=1 dev=1 ino=2 written=1 handled=1 mech=paced flushes=4 unmet=1 "
           "slow=2 path=/x",
           "WLRUN1 done pid=1 dev=1 ino=2 written=1 handled=1 mech=paced flushes=4 unmet=x "
           "slowest=2 path=/x",
           "WLRUN1 done pid=1 dev=1 ino=2 written=1 handled=1 mech=paced flushes=4 unmet=5 "
           "slowest=2 path=/x",
           "WLRUN1 claim pid=1 dev=1 ino=2 flushes=1 unmet=0 slowest=2 path=/x",
           "WLRUN1 done pid=1 dev=1 ino=2 written=1 handled=0 mech=small flushes=1 unmet=0 "
           "slowest=2 path=/x",
       }) {
    auto r = ParseShimRecord(bad);
    EXPECT_FALSE(r) << "accepted: " << bad;
  }
}

TEST(ShimRecords, TheReaderCutsLinesWhereverTheBytesSplit) {
  const std::string text =
      "WLRUN1 hello pid=5 exe=/bin/sh\nnoise\nWLRUN1 claim pid=5 dev=1 ino=2 path=/f\n";
  ShimRecordReader reader;
  std::vector<ShimRecord> records;
  std::vector<std::string> errors;
  for (char c : text) reader.Feed(std::string_view(&c, 1), records, errors);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].type, ShimRecord::Type::kClaim);
  EXPECT_EQ(errors.size(), 1u) << "the noise";
  reader.Feed(std::string(5000, 'x') + "\nWLRUN1 hello pid=6 exe=/x\n", records, errors);
  EXPECT_EQ(records.size(), 3u) << "a line too long is skipped to its end";
  EXPECT_EQ(errors.size(), 2u);
}

}  // namespace
}  // namespace writelab
