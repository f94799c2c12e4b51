// SPDX-License-Identifier: MIT
// `top`'s accounting from fixed records: bytes per process and interval,
// throttling and durability calls, and a victim's wait charged to its
// culprits one interval after the call arrived.
#include "program/top/tally.h"

#include <gtest/gtest.h>

#include <cstring>

#include "program/top/screen.h"

namespace writelab {
namespace top_tally_test {  // its helpers' names are also blame_test.cc's (unity builds)
namespace {

constexpr uint32_t kDisk = 254 << 20, kFs = (254 << 20) | 1;
constexpr uint64_t kMs = 1'000'000;

trace_charge Charged(uint32_t tgid, uint64_t bytes, const char* comm, uint32_t fs) {
  trace_charge c{};
  c.tgid = tgid;
  c.cause = TRACE_CAUSE_PROCESS;
  c.bytes = bytes;
  c.dev = fs;  // 0: direct I/O
  std::strncpy(c.comm, comm, sizeof c.comm - 1);
  return c;
}

ChargeWindow Window(uint32_t kind, uint64_t t0_ms, uint64_t t1_ms, bool flush,
                    std::vector<trace_charge> c) {
  ChargeWindow w;
  w.kind = kind;
  w.dev = kind == TRACE_CHARGE_WINDOW ? kDisk : kFs;
  w.flush = flush;
  w.t0 = t0_ms * kMs, w.t1 = t1_ms * kMs;
  w.charges = std::move(c);
  return w;
}

TraceCall Call(uint32_t tgid, uint32_t kind, uint64_t start_ms, uint64_t ms, int part,
               uint64_t part_ms) {
  TraceCall c{};
  c.tgid = tgid;
  c.class_id = kind * 4;
  c.dev = kFs;
  c.start_ns = start_ms * kMs;
  c.ns = ms * kMs;
  c.part_ns[part] = part_ms * kMs;
  c.part_ns[SPLIT_CPU] = (ms - part_ms) * kMs;
  return c;
}

class TopTallyTest : public ::testing::Test {
 protected:
  TopTally tally{0,
                 [](uint32_t tgid) { return tgid == 20 ? std::string("victim") : std::string(); }};
  void SetUp() override { tally.SetDisk(kFs, kDisk); }
};

TEST_F(TopTallyTest, BytesDirtiedAndWrittenGoToTheirProcessesPerInterval) {
  tally.AddCharges(Window(TRACE_CHARGE_DIRTY, 0, 10, false, {Charged(10, 3'000'000, "dd", kFs)}));
  tally.AddCharges(Window(TRACE_CHARGE_WINDOW, 0, 10, false,
                          {Charged(10, 1'000'000, "dd", kFs), Charged(11, 500'000, "db", 0)}));
  const TopInterval first = tally.Close(1000 * kMs, false);
  EXPECT_EQ(first.processes.at(10).dirtied, 3'000'000u);
  EXPECT_EQ(first.processes.at(10).written, 1'000'000u);
  EXPECT_EQ(first.processes.at(10).written_cached, 1'000'000u);
  EXPECT_EQ(first.processes.at(11).written, 500'000u);
  EXPECT_EQ(first.processes.at(11).written_cached, 0u);  // direct I/O: never dirty
  EXPECT_EQ(first.processes.at(10).comm, "dd");
  const TopInterval second = tally.Close(2000 * kMs, false);
  EXPECT_TRUE(second.processes.empty());
  EXPECT_EQ(tally.Run().at(10).dirtied, 3'000'000u);
  EXPECT_EQ(tally.Intervals().size(), 2u);
}

TEST_F(TopTallyTest, AWaitIsChargedByBytesOneIntervalAfterTheCallArrived) {
  // The flush window: 2 MB of dd's and 1 MB of db's queued before the flush
  // the victim's fdatasync issued; it slept 6 ms for it.
  tally.AddCharges(Window(TRACE_CHARGE_WINDOW, 0, 8, true,
                          {Charged(10, 2'000'000, "dd", kFs), Charged(11, 1'000'000, "db", 0)}));
  tally.AddCall(Call(20, TRACE_KIND_FDATASYNC, 5, 7, SPLIT_FLUSH, 6));
  const TopInterval first = tally.Close(1000 * kMs, false);
  EXPECT_TRUE(first.stalls.empty()) << "windows around the call may still be open";
  EXPECT_EQ(first.processes.at(20).syncs, 1u);
  EXPECT_EQ(first.processes.at(20).comm, "victim");
  EXPECT_FALSE(first.processes.at(20).sync_p99_ms) << "one call gives no p99";
  const TopInterval second = tally.Close(2000 * kMs, false);
  ASSERT_EQ(second.stalls.size(), 2u);
  const TopStall& dd = second.stalls.at({20, CulpritId{TRACE_CAUSE_PROCESS, 10}});
  EXPECT_NEAR(dd.ms, 4.0, 1e-9);
  EXPECT_NEAR(second.stalls.at({20, CulpritId{TRACE_CAUSE_PROCESS, 11}}).ms, 2.0, 1e-9);
  EXPECT_EQ(dd.victim_comm, "victim");
  EXPECT_EQ(dd.culprit_comm, "dd");
  EXPECT_NEAR(tally.Run().at(20).waited_ms, 6.0, 1e-9);
  EXPECT_NEAR(tally.Run().at(10).caused_ms, 4.0, 1e-9);
  EXPECT_EQ(TopStallName({20, CulpritId{TRACE_CAUSE_PROCESS, 10}}, dd),
            "victim (pid 20) <- dd (pid 10)");
}

TEST_F(TopTallyTest, TheLastCloseChargesEveryCallLeftAndSleepNoWriteExplainsIsUncharged) {
  tally.AddCall(Call(20, TRACE_KIND_FSYNC, 5, 10, SPLIT_OTHER, 4));
  const TopInterval last = tally.Close(1000 * kMs, true);
  ASSERT_EQ(last.stalls.size(), 1u);
  const auto& [key, stall] = *last.stalls.begin();
  EXPECT_EQ(key.culprit.cause, kCauseUncharged);
  EXPECT_NEAR(stall.ms, 4.0, 1e-9);
  EXPECT_EQ(TopCulpritName(key, stall), "not charged (no write explains the sleep)");
}

TEST_F(TopTallyTest, ThrottlingIsCountedForAnyCallAndP99NeedsAHundredCalls) {
  tally.AddCharges(Window(TRACE_CHARGE_DIRTY, 0, 10, false, {Charged(10, 1'000'000, "dd", kFs)}));
  tally.AddCall(Call(10, TRACE_KIND_PWRITE64, 5, 9, SPLIT_THROTTLE, 8));
  for (uint64_t i = 0; i < 100; ++i)
    tally.AddCall(Call(20, TRACE_KIND_FDATASYNC, 20 + i, i < 99 ? 1 : 50, SPLIT_FLUSH, 0));
  const TopInterval iv = tally.Close(1000 * kMs, true);
  EXPECT_NEAR(iv.processes.at(10).throttled_ms, 8.0, 1e-9);
  EXPECT_EQ(iv.processes.at(10).syncs, 0u) << "a plain write is not a durability call";
  EXPECT_EQ(iv.processes.at(20).syncs, 100u);
  ASSERT_TRUE(iv.processes.at(20).sync_p99_ms);
  EXPECT_NEAR(*iv.processes.at(20).sync_p99_ms, 1.0, 1.0 / 16);
  EXPECT_EQ(iv.processes.at(20).sync_max_ns, 50 * kMs);
  // The throttled write is charged to who held pages on its file system: itself.
  EXPECT_NEAR(iv.stalls.at({10, CulpritId{TRACE_CAUSE_PROCESS, 10}}).ms, 8.0, 1e-9);
  EXPECT_EQ(tally.Run().at(10).waited_ms, 0.0) << "its own pages are not someone else's";
}

// Windows older than top keeps still count for who holds pages: a writer
// that dirtied pages long before a throttled call, and whose pages were
// not all written back, is charged by what it still held; one whose pages
// were all written back is not.
TEST_F(TopTallyTest, PagesDirtiedBeforeTheWindowsKeptStillThrottleTheOthers) {
  tally.AddCharges(Window(TRACE_CHARGE_DIRTY, 0, 10, false,
                          {Charged(10, 3'000'000, "dd", kFs), Charged(11, 1'000'000, "cp", kFs)}));
  ChargeWindow written =
      Window(TRACE_CHARGE_WINDOW, 20, 30, false,
             {Charged(10, 1'000'000, "dd", kFs), Charged(11, 1'000'000, "cp", kFs)});
  written.done_bytes = 2'000'000;
  tally.AddCharges(written);
  tally.Close(TopTally::kWindowKeepNs + 1000 * kMs, false);  // both windows let go
  tally.AddCall(
      Call(20, TRACE_KIND_PWRITE64, TopTally::kWindowKeepNs / kMs + 1500, 10, SPLIT_THROTTLE, 8));
  const TopInterval iv = tally.Close(TopTally::kWindowKeepNs + 3000 * kMs, true);
  ASSERT_TRUE(iv.stalls.count({20, CulpritId{TRACE_CAUSE_PROCESS, 10}})) << "dd still held 2 MB";
  EXPECT_NEAR(iv.stalls.at({20, CulpritId{TRACE_CAUSE_PROCESS, 10}}).ms, 8.0, 1e-9);
  EXPECT_FALSE(iv.stalls.count({20, CulpritId{TRACE_CAUSE_PROCESS, 11}})) << "cp held nothing";
}

TEST_F(TopTallyTest, ALocksHolderIsACulpritOfTheWaitAndItsOwnThreadsAreSelf) {
  TraceCall c = Call(20, TRACE_KIND_PWRITE64, 5, 10, SPLIT_OTHER, 8);
  c.lock = {8 * kMs, {{8 * kMs, SPLIT_LOCK_HELD, 10, "dd"}}};
  tally.AddCall(c);
  TraceCall own = Call(10, TRACE_KIND_PWRITE64, 5, 10, SPLIT_OTHER, 3);
  own.lock = {3 * kMs, {{3 * kMs, SPLIT_LOCK_HELD, 10, "dd"}}};  // a thread of dd's own
  tally.AddCall(own);
  const TopInterval iv = tally.Close(1000 * kMs, true);
  const TopStallKey key{20, CulpritId{TRACE_CAUSE_LOCK, 10}};
  ASSERT_TRUE(iv.stalls.count(key));
  EXPECT_NEAR(iv.stalls.at(key).ms, 8.0, 1e-9);
  EXPECT_EQ(TopStallName(key, iv.stalls.at(key)), "victim (pid 20) <- a lock held by dd (pid 10)");
  EXPECT_NEAR(tally.Run().at(10).caused_ms, 8.0, 1e-9) << "not its own thread's wait";
  EXPECT_NEAR(tally.Run().at(20).waited_ms, 8.0, 1e-9);
  EXPECT_EQ(tally.Run().at(10).waited_ms, 0.0);
}

// A flusher's lock stands for the pages it writes back: charged to their
// dirtier, self where they are the victim's own.
TEST_F(TopTallyTest, AFlushersLockIsChargedToTheDirtierOfThePagesItWrites) {
  TraceCall c = Call(20, TRACE_KIND_PWRITE64, 5, 10, SPLIT_OTHER, 8);
  c.lock = {8 * kMs, {{8 * kMs, SPLIT_LOCK_FLUSHER, 10, "dd"}}};
  tally.AddCall(c);
  TraceCall own = Call(20, TRACE_KIND_PWRITE64, 5, 10, SPLIT_OTHER, 3);
  own.lock = {3 * kMs, {{3 * kMs, SPLIT_LOCK_FLUSHER, 20, "victim"}}};  // its own pages
  tally.AddCall(own);
  const TopInterval iv = tally.Close(1000 * kMs, true);
  const TopStallKey key{20, CulpritId{TRACE_CAUSE_LOCK_FLUSHER, 10}};
  ASSERT_TRUE(iv.stalls.count(key));
  EXPECT_EQ(TopStallName(key, iv.stalls.at(key)),
            "victim (pid 20) <- a lock held by a flusher writing back pages of dd (pid 10)");
  EXPECT_NEAR(tally.Run().at(10).caused_ms, 8.0, 1e-9);
  EXPECT_NEAR(tally.Run().at(20).waited_ms, 8.0, 1e-9) << "its own pages' flusher is self";
  EXPECT_EQ(tally.Run().at(20).caused_ms, 0.0);
}

// A commit's wait for an open journal handle: the holder's, by time.
// A commit from 0 to 40 ms, locked from 2 to 30 ms waiting for the handle
// of tgid (comm); then the victim's fsync from 10 to 35 ms, 20 ms of it
// waiting for the journal.
void AddHandleWait(TopTally& tally, uint32_t tgid, const char* comm) {
  ChargeWindow commit = Window(TRACE_CHARGE_COMMIT, 0, 40, false, {});
  commit.locked_ns = 2 * kMs, commit.unlocked_ns = 30 * kMs;
  commit.handle = {28 * kMs, SPLIT_LOCK_HELD, tgid, {}};
  std::strncpy(commit.handle.comm, comm, sizeof commit.handle.comm - 1);
  tally.AddCharges(commit);
  tally.AddCall(Call(20, TRACE_KIND_FSYNC, 10, 25, SPLIT_JOURNAL, 20));
}

TEST_F(TopTallyTest, ACommitsWaitForAnOpenHandleIsChargedToItsHolder) {
  AddHandleWait(tally, 99, "ext4lazyinit");
  const TopInterval iv = tally.Close(1000 * kMs, true);
  const TopStallKey key{20, CulpritId{TRACE_CAUSE_HANDLE, 99}};
  ASSERT_TRUE(iv.stalls.count(key));
  EXPECT_NEAR(iv.stalls.at(key).ms, 20.0, 1e-9);
  EXPECT_EQ(TopStallName(key, iv.stalls.at(key)),
            "victim (pid 20) <- a journal handle held by ext4lazyinit (pid 99)");
  EXPECT_NEAR(tally.Run().at(99).caused_ms, 20.0, 1e-9);
}

// A short-lived culprit gone before /proc was read, seen first as a victim
// of its own sleep: "?" until a charge brings its name, then named in its
// entry and in its pairs.
TEST_F(TopTallyTest, AProcessGoneBeforeItWasNamedIsNamedByALaterCharge) {
  tally.AddCall(Call(99, TRACE_KIND_PWRITE64, 0, 10, SPLIT_OTHER, 8));  // not charged
  AddHandleWait(tally, 99, "dd");
  const TopInterval iv = tally.Close(1000 * kMs, true);
  EXPECT_EQ(tally.Run().at(99).comm, "dd");
  EXPECT_EQ(iv.processes.at(99).comm, "dd");
  const TopStallKey own{99, CulpritId{kCauseUncharged, 0}};
  ASSERT_TRUE(tally.RunStalls().count(own));
  EXPECT_EQ(tally.RunStalls().at(own).victim_comm, "dd");
}

TEST(TopScreen, ListsTheBusiestProcessesAndThePairsWithTheirTotals) {
  TopTally t(0, [](uint32_t) { return std::string("p"); });
  t.SetDisk(kFs, kDisk);
  t.AddCharges(Window(TRACE_CHARGE_WINDOW, 0, 8, true, {Charged(10, 2'000'000, "dd", kFs)}));
  t.AddCall(Call(20, TRACE_KIND_FDATASYNC, 5, 7, SPLIT_FLUSH, 6));
  const TopInterval iv = t.Close(500 * kMs, true);
  TopScreenContext ctx;
  ctx.rows = 5;
  const std::vector<std::string> lines = TopScreen(iv, t.Run(), t.RunStalls(), ctx);
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  EXPECT_NE(all.find("dd"), std::string::npos) << all;
  EXPECT_NE(all.find("4.0"), std::string::npos) << all;  // 2 MB in 0.5 s
  EXPECT_NE(all.find("p (pid 20) <- dd (pid 10)"), std::string::npos) << all;
  EXPECT_NE(all.find("7.0*"), std::string::npos) << "one call: its max, starred\n" << all;
}

}  // namespace
}  // namespace top_tally_test
}  // namespace writelab
