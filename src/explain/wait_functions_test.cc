// SPDX-License-Identifier: MIT
// The sleeping functions' ranges from a kallsyms text, and the self-check's
// lines.
#include "explain/wait_functions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "explain/split_check.h"

namespace writelab {
namespace {

TEST(WaitFunctions, RangesEndAtTheNextTextSymbolAndAreSorted) {
  const char* kallsyms =
      "ffffffff81000000 T _stext\n"
      "ffffffff8184f980 T jbd2_log_wait_commit\n"
      "ffffffff8184fa00 D some_data\n"  // not text: no end of a function
      "ffffffff8184fb00 t jbd2_next_fn\n"
      "ffffffff815b66d0 t balance_dirty_pages\n"
      "ffffffff815b7000 T balance_dirty_pages_ratelimited_flags\n"
      "ffffffffc0001000 t wait_for_commit\t[btrfs]\n"
      "ffffffffc0001100 t other_fn\t[btrfs]\n"
      "ffffffffc0002000 T blkdev_issue_flush\n";  // the highest: no end known
  const std::vector<WaitRange> r = WaitRangesFrom(kallsyms);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "balance_dirty_pages");
  EXPECT_EQ(r[0].lo, 0xffffffff815b66d0u);
  EXPECT_EQ(r[0].hi, 0xffffffff815b7000u);
  EXPECT_EQ(r[0].part, SPLIT_THROTTLE);
  EXPECT_EQ(r[1].name, "jbd2_log_wait_commit");
  EXPECT_EQ(r[1].hi, 0xffffffff8184fb00u) << "data symbols are not ends";
  EXPECT_EQ(r[1].part, SPLIT_JOURNAL);
}

TEST(WaitFunctions, HiddenAddressesGiveNothing) {
  EXPECT_TRUE(WaitRangesFrom("0000000000000000 T jbd2_log_wait_commit\n"
                             "0000000000000000 T next\n")
                  .empty());
}

TEST(WaitFunctions, ThisKernelHasTheCommonOnes) {
  if (geteuid() != 0) GTEST_SKIP() << "kallsyms hides addresses from users";
  const std::vector<WaitRange> r = WaitRanges();
  auto has = [&](std::string_view name) {
    return std::any_of(r.begin(), r.end(), [&](const WaitRange& w) { return w.name == name; });
  };
  EXPECT_TRUE(has("balance_dirty_pages"));
  EXPECT_TRUE(has("folio_wait_writeback"));
  EXPECT_TRUE(has("blkdev_issue_flush"));
  EXPECT_LE(r.size(), size_t{SPLIT_WAIT_FNS});
  for (size_t i = 1; i < r.size(); ++i) EXPECT_LE(r[i - 1].hi, r[i].lo) << "sorted, disjoint";
}

TEST(SplitCheck, SaysWhatWasLostOrThatItHeld) {
  SplitSelfCheck c;
  c.read = true;
  c.counts[SPLIT_DURING_WRITES] = c.held[SPLIT_DURING_WRITES] = 2;
  c.check.rq_requeued = 5;
  auto ok = SplitCheckNotes(c);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_NE(ok[0].find("still in flight when the tracing stopped (2) (5 requests requeued"),
            std::string::npos)
      << ok[0];
  c.counts[SPLIT_DURING_WRITES] = c.held[SPLIT_DURING_WRITES] = 0;
  EXPECT_NE(SplitCheckNotes(c)[0].find("every request and commit seen in flight ended (5"),
            std::string::npos);
  c.counts[SPLIT_DURING_WRITES] = c.held[SPLIT_DURING_WRITES] = 2;
  EXPECT_TRUE(SplitCheckNotes(c, true).empty());
  c.check.wakeups_missed = 1;  // said beside the balance, which held
  auto both = SplitCheckNotes(c);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].rfind("self-check: every request and commit", 0), 0u) << both[0];
  EXPECT_NE(both[1].find("1 wakeups ran none"), std::string::npos) << both[1];
  c.check.wakeups_missed = 0;
  c.check.rq_lost = 3;
  auto lost = SplitCheckNotes(c, true);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_NE(lost[0].find("3 requests never reported done"), std::string::npos) << lost[0];
  c.check.wakeups_missed = 2;
  lost = SplitCheckNotes(c, true);
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_NE(lost[1].find("2 wakeups ran none of the split's programs"), std::string::npos)
      << lost[1];
  // Their waits for a CPU, read from the scheduler, are said with their
  // sum; where the kernel keeps no such count, what is left in the sleep.
  c.check.missed_runq_ns = 3'400'000;
  EXPECT_NE(SplitCheckNotes(c, true)[1].find("the 3.400 ms their threads then waited for a CPU"),
            std::string::npos)
      << SplitCheckNotes(c, true)[1];
  c.check.wakeups_unrecovered = 2;
  lost = SplitCheckNotes(c, true);
  ASSERT_EQ(lost.size(), 2u) << "all unrecovered: one line, of the sleep's part";
  EXPECT_NE(lost[1].find("2 wakeups ran none"), std::string::npos) << lost[1];
  EXPECT_NE(lost[1].find("counted in their sleep's part"), std::string::npos) << lost[1];
  c.check.wakeups_unrecovered = 0;
  c.check.wakeups_missed = 0;
  c.check.rq_found_ended = 4;  // ends no program saw, found by the sweep: said with the bound
  lost = SplitCheckNotes(c, true);
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_NE(lost[1].find("4 requests had ended with none of the programs seeing"),
            std::string::npos)
      << lost[1];
  EXPECT_NE(lost[1].find("every 20 ms"), std::string::npos) << lost[1];
  c.check.rq_found_ended = 0;
  c.check.rq_untracked = 7;  // a full map: said, with what it held
  lost = SplitCheckNotes(c, true);
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_NE(lost[1].find("7 requests were not counted in flight (16384 already were)"),
            std::string::npos)
      << lost[1];
  c.check.rq_untracked = 0;
  c.counts[SPLIT_DURING_FLUSH] = 1;  // a count the map does not back
  EXPECT_FALSE(c.Balanced());
  EXPECT_NE(SplitCheckNotes(c)[0].find("self-check FAILED"), std::string::npos);
}

}  // namespace
}  // namespace writelab
