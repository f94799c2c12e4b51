// SPDX-License-Identifier: MIT
// Who made a call wait, from fixed charge records: a flush's epoch, a
// commit's writes, the queue weighted by overlap, and what is not charged.
#include "program/explain/blame.h"

#include <gtest/gtest.h>

#include <cstring>

namespace writelab {
namespace {

constexpr uint32_t kDisk = 254 << 20, kFs = (254 << 20) | 1;
constexpr uint64_t kBlameMs = 1'000'000;

trace_charge Charge(uint32_t tgid, uint64_t bytes, const char* comm, uint16_t cause = 0) {
  trace_charge c{};
  c.tgid = tgid;
  c.cause = cause;
  c.bytes = bytes;
  std::strncpy(c.comm, comm, sizeof c.comm - 1);
  return c;
}

ChargeWindow Window(uint64_t t0_ms, uint64_t t1_ms, bool flush, std::vector<trace_charge> c,
                    uint32_t kind = TRACE_CHARGE_WINDOW) {
  ChargeWindow w;
  w.kind = kind;
  w.dev = kind == TRACE_CHARGE_WINDOW ? kDisk : kFs;
  w.flush = flush;
  w.t0 = t0_ms * kBlameMs, w.t1 = t1_ms * kBlameMs;
  w.charges = std::move(c);
  return w;
}

TraceCall Call(uint64_t start_ms, uint64_t ms, int part, uint64_t part_ms) {
  TraceCall c{};
  c.tgid = 7;
  c.dev = kFs;
  c.start_ns = start_ms * kBlameMs;
  c.ns = ms * kBlameMs;
  c.part_ns[part] = part_ms * kBlameMs;
  c.part_ns[SPLIT_CPU] = (ms - part_ms) * kBlameMs;
  return c;
}

// The share of process tgid (none: nullptr).
const CallBlame::Share* ShareOf(const CallBlame& b, uint32_t tgid) {
  for (const auto& s : b.shares)
    if (s.who.cause == TRACE_CAUSE_PROCESS && s.who.tgid == tgid) return &s;
  return nullptr;
}

double MsOf(const CallBlame& b, uint32_t tgid) {
  const CallBlame::Share* s = ShareOf(b, tgid);
  return s ? s->ms : 0;
}

uint64_t BytesOf(const CallBlame& b, uint32_t tgid) {
  const CallBlame::Share* s = ShareOf(b, tgid);
  return s ? s->bytes : 0;
}

TEST(Blame, AFlushIsChargedWithWhatWasQueuedSinceTheFlushBefore) {
  const std::vector<ChargeWindow> w = {
      Window(0, 5, true, {Charge(9, 1000, "old")}),  // before the previous flush: not this one's
      Window(5, 15, false, {Charge(42, 300, "dd"), Charge(43, 100, "cp")}),
      Window(15, 16, true, {Charge(42, 100, "dd")}),
      Window(16, 40, false, {Charge(43, 5000, "cp")}),  // after it was issued
  };
  const BlameIndex index(w);
  const CallBlame b = index.Of(Call(14, 6, SPLIT_FLUSH, 5), kDisk);
  EXPECT_NEAR(MsOf(b, 42), 5.0 * 400 / 500, 1e-9);
  EXPECT_NEAR(MsOf(b, 43), 5.0 * 100 / 500, 1e-9);
  EXPECT_EQ(MsOf(b, 9), 0);
  EXPECT_DOUBLE_EQ(b.blocked_ms, 5);
  EXPECT_DOUBLE_EQ(b.unattributed_ms, 0);
  ASSERT_FALSE(b.shares.empty());
  EXPECT_EQ(b.shares.front().who.tgid, 42u) << "most time first";
}

TEST(Blame, AFlushWithNothingBeforeItIsNotChargedToAnyone) {
  const std::vector<ChargeWindow> w = {Window(0, 5, true, {})};
  const CallBlame b = BlameIndex(w).Of(Call(4, 3, SPLIT_FLUSH, 2), kDisk);
  EXPECT_TRUE(b.shares.empty());
  EXPECT_DOUBLE_EQ(b.unattributed_ms, 2);
  EXPECT_EQ(b.unattributed.count("cache flush, nothing written before it"), 1u);
}

TEST(Blame, ACommitIsChargedWithWhatItsJournalThreadWrote) {
  const std::vector<ChargeWindow> w = {
      Window(5, 15, false, {Charge(42, 900, "dd"), Charge(0, 100, "", TRACE_CAUSE_JOURNAL)},
             TRACE_CHARGE_COMMIT),
      Window(30, 40, false, {Charge(43, 900, "cp")}, TRACE_CHARGE_COMMIT),  // after the call
  };
  const CallBlame b = BlameIndex(w).Of(Call(0, 20, SPLIT_JOURNAL, 10), kDisk);
  EXPECT_NEAR(MsOf(b, 42), 9, 1e-9);
  EXPECT_EQ(MsOf(b, 43), 0);
  ASSERT_EQ(b.shares.size(), 2u);
  EXPECT_EQ(b.shares[1].who.cause, TRACE_CAUSE_JOURNAL);
  EXPECT_NEAR(b.shares[1].ms, 1, 1e-9);
}

// A commit whose few log blocks waited behind a flusher's writeback of a
// dd's pages: the dd's bytes queued while it wrote are charged beside its
// own, and its own writes, which the disk's windows hold too, only once.
TEST(Blame, ACommitIsAlsoChargedWithWhatWasQueuedBesideItsWrites) {
  const auto commit = [](std::vector<trace_charge> c) {
    ChargeWindow w = Window(10, 20, false, std::move(c), TRACE_CHARGE_COMMIT);
    w.locked_ns = 10 * kBlameMs, w.unlocked_ns = 12 * kBlameMs;  // a handle held it 2 ms
    w.handle.holder = SPLIT_LOCK_HELD, w.handle.tgid = 50, w.handle.ns = 2 * kBlameMs;
    return w;
  };
  const auto JournalOf = [](const CallBlame& b) {
    for (const auto& s : b.shares)
      if (s.who.cause == TRACE_CAUSE_JOURNAL) return s;
    return CallBlame::Share{};
  };
  const trace_charge log = Charge(0, 100, "", TRACE_CAUSE_JOURNAL);
  const TraceCall call = Call(0, 30, SPLIT_JOURNAL, 12);  // 2 ms of it the handle's
  {  // behind the flusher: 900 of the dd's bytes queued while it wrote
    ChargeWindow locked = Window(10, 12, false, {Charge(43, 5000, "cp")});
    locked.done_bytes = 5000;  // queued and written while the commit waited for the handle
    const std::vector<ChargeWindow> w = {commit({log}), locked,
                                         Window(12, 20, false, {Charge(42, 900, "dd"), log})};
    const CallBlame b = BlameIndex(w).Of(call, kDisk);
    EXPECT_NEAR(MsOf(b, 42), 9, 1e-9);
    EXPECT_EQ(MsOf(b, 43), 0) << "gone from the queue before it wrote";
    EXPECT_NEAR(JournalOf(b).ms, 1, 1e-9);
    EXPECT_EQ(b.shares.size(), 3u) << "the handle's holder, the dd, the journal";
  }
  {  // alone on the disk: its own blocks, counted once
    const std::vector<ChargeWindow> w = {commit({log}), Window(12, 20, false, {log})};
    const CallBlame b = BlameIndex(w).Of(call, kDisk);
    EXPECT_NEAR(JournalOf(b).ms, 10, 1e-9);
    EXPECT_EQ(JournalOf(b).bytes, 100u);
    EXPECT_EQ(b.shares.size(), 2u);
  }
  {  // its ordered data is the dd's: in the commit and the windows, once
    const std::vector<ChargeWindow> w = {commit({Charge(42, 900, "dd"), log}),
                                         Window(12, 20, false, {Charge(42, 900, "dd"), log})};
    const CallBlame b = BlameIndex(w).Of(call, kDisk);
    EXPECT_NEAR(MsOf(b, 42), 9, 1e-9);
    ASSERT_FALSE(b.shares.empty());
    EXPECT_EQ(b.shares[0].who.tgid, 42u);
    EXPECT_EQ(b.shares[0].bytes, 900u);
  }
}

// A commit that began to write behind a large write queued before it: what
// was still queued then (queued less completed, window by window) is ahead
// of it too, charged to the bytes queued last.
TEST(Blame, ACommitIsChargedWithWhatWasStillQueuedWhenItBeganToWrite) {
  ChargeWindow big = Window(0, 10, false, {Charge(9, 4000, "old"), Charge(42, 8000, "dd")});
  ChargeWindow draining = Window(10, 20, false, {});
  draining.done_bytes = 6000;  // 6000 of the 12,000 left the queue
  ChargeWindow log = Window(20, 30, false, {Charge(0, 100, "", TRACE_CAUSE_JOURNAL)});
  log.done_bytes = 6100;
  const std::vector<ChargeWindow> w = {
      big, draining, log,
      Window(20, 30, false, {Charge(0, 100, "", TRACE_CAUSE_JOURNAL)}, TRACE_CHARGE_COMMIT)};
  const CallBlame b = BlameIndex(w).Of(Call(15, 20, SPLIT_JOURNAL, 10), kDisk);
  // Ahead of its writes: the last 6000 bytes queued (the dd's half of the
  // first window, by weight: 2000 of old's, 4000 of the dd's), and its log.
  EXPECT_NEAR(MsOf(b, 42), 10.0 * 4000 / 6100, 1e-6);
  EXPECT_NEAR(MsOf(b, 9), 10.0 * 2000 / 6100, 1e-6);
  const ChargeWindow empty_queue = [] {
    ChargeWindow d = Window(10, 20, false, {});
    d.done_bytes = 12000;
    return d;
  }();
  const std::vector<ChargeWindow> drained = {big, empty_queue, w[2], w[3]};
  const CallBlame alone = BlameIndex(drained).Of(Call(15, 20, SPLIT_JOURNAL, 10), kDisk);
  EXPECT_EQ(MsOf(alone, 42), 0) << "nothing was left in the queue when it began to write";
}

TEST(Blame, ItsWritesAreChargedWithTheQueueByOverlap) {
  // Half of the first window overlaps the call: half its bytes count.
  const std::vector<ChargeWindow> w = {
      Window(0, 10, false, {Charge(42, 200, "dd")}),
      Window(10, 20, false, {Charge(43, 100, "cp")}),
      Window(30, 40, false, {Charge(44, 1000, "late")}),
  };
  const CallBlame b = BlameIndex(w).Of(Call(5, 15, SPLIT_WRITEBACK, 8), kDisk);
  EXPECT_NEAR(MsOf(b, 42), 4, 1e-9);  // 100 of 200 bytes
  EXPECT_NEAR(MsOf(b, 43), 4, 1e-9);
  EXPECT_EQ(MsOf(b, 44), 0);
}

// A call whose writes went into a queue still holding a dd's requests
// waited for those too, though the dd queued them before the call began.
TEST(Blame, ItsWritesAreAlsoChargedWithWhatWasStillQueuedWhenItBegan) {
  ChargeWindow draining = Window(10, 20, false, {});
  draining.done_bytes = 2000;  // 2000 of the dd's 8000 left the queue
  const std::vector<ChargeWindow> w = {
      Window(0, 10, false, {Charge(42, 8000, "dd")}),
      draining,
      Window(20, 30, false, {Charge(7, 1000, "self")}),
  };
  const CallBlame b = BlameIndex(w).Of(Call(25, 10, SPLIT_WRITEBACK, 10), kDisk);
  EXPECT_NEAR(MsOf(b, 42), 10.0 * 6000 / 6500, 1e-6);  // the 6000 still queued
  EXPECT_NEAR(MsOf(b, 7), 10.0 * 500 / 6500, 1e-6);    // its own, by overlap
  draining.done_bytes = 8000;
  const std::vector<ChargeWindow> drained = {w[0], draining, w[2]};
  const CallBlame alone = BlameIndex(drained).Of(Call(25, 10, SPLIT_WRITEBACK, 10), kDisk);
  EXPECT_EQ(MsOf(alone, 42), 0) << "the dd's requests had all completed when it began";
  EXPECT_NEAR(MsOf(alone, 7), 10.0, 1e-6);
}

// A page of a file of kFs written back for tgid (dev 0: direct I/O).
trace_charge WrittenBack(uint32_t tgid, uint64_t bytes, const char* comm, uint32_t dev = kFs) {
  trace_charge c = Charge(tgid, bytes, comm);
  c.dev = dev;
  return c;
}

// A disk's window whose writes all completed in it.
ChargeWindow Completed(ChargeWindow w) {
  for (const trace_charge& ch : w.charges) w.done_bytes += ch.bytes;
  return w;
}

// Throttling is charged to who held dirty pages on its file system when
// the call began, or pages under writeback: what each dirtied there less
// what was written back for it and completed; not what was dirtied later,
// on another file system, or written directly.
TEST(Blame, ThrottlingIsChargedToWhoHeldDirtyPagesOnItsFileSystemWhenItBegan) {
  const std::vector<ChargeWindow> w = {
      Window(0, 10, false, {Charge(41, 9000, "old")}, TRACE_CHARGE_DIRTY),
      Completed(Window(20, 30, false, {WrittenBack(41, 9000, "old")})),
      Window(2000, 2010, false, {Charge(42, 3000, "dd")}, TRACE_CHARGE_DIRTY),
      Completed(
          Window(2100, 2110, false, {WrittenBack(42, 1000, "dd"), WrittenBack(42, 7000, "dd", 0)})),
      Window(2400, 2410, false, {Charge(7, 1000, "me")}, TRACE_CHARGE_DIRTY),
      Window(2500, 2510, false, {Charge(43, 9000, "cp")}, TRACE_CHARGE_DIRTY),
      Window(2510, 2520, false, {Charge(44, 5000, "late")}, TRACE_CHARGE_DIRTY),
  };
  std::vector<ChargeWindow> windows = w;
  windows[5].dev = kFs + 1;
  const CallBlame b = BlameIndex(windows).Of(Call(2505, 10, SPLIT_THROTTLE, 9), kDisk);
  EXPECT_NEAR(MsOf(b, 42), 6.0, 1e-9) << "2000 of the 3000 bytes held";
  EXPECT_EQ(BytesOf(b, 42), 2000u);
  EXPECT_NEAR(MsOf(b, 7), 3.0, 1e-9);
  EXPECT_EQ(MsOf(b, 41), 0) << "all written back";
  EXPECT_EQ(MsOf(b, 43), 0) << "another file system";
  EXPECT_EQ(MsOf(b, 44), 0) << "dirtied after it began";
  // Written back beyond what it was seen dirtying (pages dirtied before
  // tracing): it holds nothing, never less.
  windows.push_back(Completed(Window(2600, 2610, false, {WrittenBack(7, 5000, "me")})));
  windows.push_back(Window(2700, 2710, false, {Charge(7, 500, "me")}, TRACE_CHARGE_DIRTY));
  const CallBlame later = BlameIndex(windows).Of(Call(2800, 10, SPLIT_THROTTLE, 9), kDisk);
  EXPECT_EQ(BytesOf(later, 7), 500u);
  EXPECT_EQ(BytesOf(later, 44), 5000u);
  // Queued to be written back but not completed: still held. Of the 4000
  // bytes queued, 2000 completed: the 2000 queued last are still queued,
  // its direct writes' 1000 (not page cache) and 1000 of its pages.
  windows.push_back(Window(2900, 2910, false, {WrittenBack(44, 3000, "late")}));
  windows.push_back(Window(2910, 2920, false, {WrittenBack(44, 1000, "late", 0)}));
  windows.back().done_bytes = 2000;
  const CallBlame queued = BlameIndex(windows).Of(Call(3000, 10, SPLIT_THROTTLE, 9), kDisk);
  EXPECT_EQ(BytesOf(queued, 44), 2000u + 1000u) << "dirty, and queued to be written";
}

// Many windows: what was held at any instant is the same as replayed from
// the start, and a base (what was held before the first window) counts.
TEST(Blame, WhatWasHeldIsTheSameAfterManyWindowsAndStartsFromItsBase) {
  std::vector<ChargeWindow> w;
  for (uint64_t i = 0; i < 1000; ++i) {
    w.push_back(Window(i * 10, i * 10 + 10, false, {Charge(42, 100, "dd")}, TRACE_CHARGE_DIRTY));
    if (i % 2)
      w.push_back(Completed(Window(i * 10, i * 10 + 10, false, {WrittenBack(42, 100, "dd")})));
  }
  for (uint64_t at : {10u, 2990u, 5000u, 7770u, 10000u}) {
    const uint64_t dirtied = (at / 10) * 100, written = (at / 20) * 100;
    const CallBlame b = BlameIndex(w).Of(Call(at, 1, SPLIT_THROTTLE, 1), kDisk);
    EXPECT_EQ(BytesOf(b, 42), dirtied - written) << "at " << at << " ms";
  }
  // Half-way through a window: half its pages were dirtied by then.
  const CallBlame half = BlameIndex(w).Of(Call(5005, 1, SPLIT_THROTTLE, 1), kDisk);
  EXPECT_EQ(BytesOf(half, 42), 50'050u - 25'000u);
  HeldByFs base;
  base[kFs][CulpritId{TRACE_CAUSE_PROCESS, 9}] = {4000, "before"};
  const CallBlame b = BlameIndex(w, &base).Of(Call(10005, 1, SPLIT_THROTTLE, 1), kDisk);
  EXPECT_EQ(BytesOf(b, 9), 4000u);
  EXPECT_EQ(BytesOf(b, 42), 50'000u);
}

TEST(Blame, ThrottlingWithNoPageDirtiedAndOtherSleepAreSaidNotCharged) {
  TraceCall c = Call(0, 10, SPLIT_THROTTLE, 3);
  c.part_ns[SPLIT_OTHER] = 2 * kBlameMs;
  c.part_ns[SPLIT_CPU] -= 2 * kBlameMs;
  const CallBlame b = BlameIndex({}).Of(c, kDisk);
  EXPECT_DOUBLE_EQ(b.blocked_ms, 5);
  EXPECT_DOUBLE_EQ(b.unattributed_ms, 5);
  const std::string line = BlameLine(b, 7);
  EXPECT_NE(line.find("not charged 5.0 ms (dirty throttling, no dirty page's holder seen 3.0, "
                      "other sleep 2.0)"),
            std::string::npos)
      << line;
}

TEST(Blame, TheLineNamesEachCulpritWithTimeAndBytesAndSelf) {
  const std::vector<ChargeWindow> w = {
      Window(0, 10, true, {Charge(42, 3'000'000, "dd"), Charge(7, 1'000'000, "me")})};
  const CallBlame b = BlameIndex(w).Of(Call(5, 10, SPLIT_FLUSH, 8), kDisk);
  EXPECT_EQ(BlameLine(b, 7),
            "who made it wait: dd (pid 42) 6.0 ms (3.0 MB), self (pid 7) 2.0 ms (1.0 MB)");
}

// A lock's holder with ns of waits.
split_lock_holder Held(uint64_t ns, uint32_t holder, uint32_t tgid, const char* comm) {
  split_lock_holder h{ns, holder, tgid, {}};
  std::strncpy(h.comm, comm, sizeof h.comm - 1);
  return h;
}

// A call asleep 9 ms in other sleep, 6 of them waiting for locks, 4 of
// those with their holder as given (the other 2 with none seen).
TraceCall LockedCall(uint32_t holder, uint32_t tgid, const char* comm) {
  TraceCall c = Call(0, 10, SPLIT_OTHER, 9);
  c.lock.wait_ns = 6 * kBlameMs;
  c.lock.held[0] = Held(4 * kBlameMs, holder, tgid, comm);
  return c;
}

TEST(Blame, ALockWaitIsChargedToTheLocksHolderAndTheRestIsSaid) {
  const CallBlame b = BlameIndex({}).Of(LockedCall(SPLIT_LOCK_HELD, 42, "dd"), kDisk);
  ASSERT_EQ(b.shares.size(), 1u);
  EXPECT_EQ(b.shares[0].who, (CulpritId{TRACE_CAUSE_LOCK, 42}));
  EXPECT_DOUBLE_EQ(b.shares[0].ms, 4);
  EXPECT_EQ(b.shares[0].bytes, 0u);
  EXPECT_DOUBLE_EQ(b.blocked_ms, 9);
  EXPECT_DOUBLE_EQ(b.unattributed_ms, 5);
  EXPECT_EQ(BlameLine(b, 7),
            "who made it wait: a lock held by dd (pid 42) 4.0 ms, not charged 5.0 ms (other "
            "sleep 3.0, other sleep: lock waits with no holder named 2.0)");
  EXPECT_EQ(CulpritName(b.shares[0].who, "dd", 42), "a lock held by self (pid 42)");
}

TEST(Blame, ALockHeldByReadersOrByNoOneSeenIsNotAProcess) {
  const CallBlame readers = BlameIndex({}).Of(LockedCall(SPLIT_LOCK_READERS, 0, ""), kDisk);
  ASSERT_EQ(readers.shares.size(), 1u);
  EXPECT_EQ(CulpritName(readers.shares[0].who, "", 7), "a lock held by readers (not named)");
  EXPECT_DOUBLE_EQ(readers.shares[0].ms, 4);
  const CallBlame unseen = BlameIndex({}).Of(LockedCall(SPLIT_LOCK_UNSEEN, 0, ""), kDisk);
  EXPECT_TRUE(unseen.shares.empty());
  EXPECT_DOUBLE_EQ(unseen.unattributed.at("other sleep: lock waits with no holder named"), 6);
  EXPECT_DOUBLE_EQ(unseen.unattributed.at("other sleep"), 3);
}

// A lock held by a flusher writing back a file's pages is charged to whoever
// dirtied that file, not to the kernel thread.
TEST(Blame, ALockHeldByAFlusherIsChargedToWhoDirtiedThePagesItWrites) {
  const CallBlame b = BlameIndex({}).Of(LockedCall(SPLIT_LOCK_FLUSHER, 42, "dd"), kDisk);
  ASSERT_EQ(b.shares.size(), 1u);
  EXPECT_EQ(b.shares[0].who, (CulpritId{TRACE_CAUSE_LOCK_FLUSHER, 42}));
  EXPECT_TRUE(IsLockCause(b.shares[0].who.cause) && IsProcessCause(b.shares[0].who.cause));
  EXPECT_DOUBLE_EQ(b.shares[0].ms, 4);
  EXPECT_EQ(b.shares[0].bytes, 0u);
  EXPECT_EQ(BlameLine(b, 7),
            "who made it wait: a lock held by a flusher writing back pages of dd (pid 42) 4.0 "
            "ms, not charged 5.0 ms (other sleep 3.0, other sleep: lock waits with no holder "
            "named 2.0)");
  EXPECT_EQ(CulpritName(b.shares[0].who, "dd", 42),
            "a lock held by a flusher writing back pages of self (pid 42)");
}

// Each holder's waits to it, most first; never more than the lock waits.
TEST(Blame, EachHolderIsChargedItsOwnWaitsUpToTheCallsLockWaits) {
  TraceCall c = LockedCall(SPLIT_LOCK_HELD, 42, "dd");  // 4 ms
  c.lock.held[1] = Held(1 * kBlameMs, SPLIT_LOCK_FLUSHER, 43, "cp");
  c.lock.held[2] = Held(3 * kBlameMs, SPLIT_LOCK_HELD, 44, "tar");  // 8 ms in all: 2 too many
  const CallBlame b = BlameIndex({}).Of(c, kDisk);
  ASSERT_EQ(b.shares.size(), 2u);
  EXPECT_EQ(b.shares[0].who, (CulpritId{TRACE_CAUSE_LOCK, 42}));
  EXPECT_DOUBLE_EQ(b.shares[0].ms, 4);
  EXPECT_EQ(b.shares[1].who, (CulpritId{TRACE_CAUSE_LOCK, 44}));
  EXPECT_DOUBLE_EQ(b.shares[1].ms, 2) << "the 6 ms of lock waits, no more";
  EXPECT_DOUBLE_EQ(b.unattributed_ms, 3);
  EXPECT_EQ(b.unattributed.count("other sleep: lock waits with no holder named"), 0u);
  c.lock.held[2].ns = kBlameMs / 2;  // 5.5 ms in all: each holder its own
  const CallBlame all = BlameIndex({}).Of(c, kDisk);
  ASSERT_EQ(all.shares.size(), 3u);
  EXPECT_EQ(all.shares[1].who, (CulpritId{TRACE_CAUSE_LOCK_FLUSHER, 43}));
  EXPECT_DOUBLE_EQ(all.shares[1].ms, 1);
  EXPECT_DOUBLE_EQ(all.shares[2].ms, 0.5);
  EXPECT_DOUBLE_EQ(all.unattributed.at("other sleep: lock waits with no holder named"), 0.5);
}

TEST(Blame, ALockWaitIsNeverChargedMoreThanTheOtherSleepItWasCountedIn) {
  TraceCall c = LockedCall(SPLIT_LOCK_HELD, 42, "dd");
  c.part_ns[SPLIT_OTHER] = 3 * kBlameMs;  // a missed wake-up's wait moved out of it since
  c.part_ns[SPLIT_RUNQ] = 6 * kBlameMs;
  const CallBlame b = BlameIndex({}).Of(c, kDisk);
  ASSERT_EQ(b.shares.size(), 1u);
  EXPECT_DOUBLE_EQ(b.shares[0].ms, 3);
  EXPECT_DOUBLE_EQ(b.unattributed_ms, 0);
}

// A commit from 0 to 40 ms whose transaction was locked from locked_ms to
// unlocked_ms, the last handle seen to stop that of holder (tgid, comm) at
// stop_ms; it wrote 1 MB of its own blocks.
ChargeWindow LockedCommit(uint64_t locked_ms, uint64_t stop_ms, uint64_t unlocked_ms,
                          uint32_t holder, uint32_t tgid, const char* comm) {
  ChargeWindow w =
      Window(0, 40, false, {Charge(0, 1'000'000, "", TRACE_CAUSE_JOURNAL)}, TRACE_CHARGE_COMMIT);
  w.locked_ns = locked_ms * kBlameMs, w.unlocked_ns = unlocked_ms * kBlameMs;
  if (holder != SPLIT_LOCK_UNSEEN)
    w.handle = Held((stop_ms - locked_ms) * kBlameMs, holder, tgid, comm);
  return w;
}

TEST(Blame, ACommitsWaitForAnOpenHandleIsChargedToItsHolder) {
  // The call waits from 10 to 38 ms; the commit waited for the handle of
  // ext4lazyinit from 5 to 30 ms: 20 ms of it inside the call, and the
  // call's other 8 ms to the commit's own blocks.
  const std::vector<ChargeWindow> w = {
      LockedCommit(5, 30, 30, SPLIT_LOCK_HELD, 99, "ext4lazyinit")};
  const CallBlame b = BlameIndex(w).Of(Call(10, 28, SPLIT_JOURNAL, 28), kDisk);
  ASSERT_EQ(b.shares.size(), 2u);
  EXPECT_EQ(b.shares[0].who, (CulpritId{TRACE_CAUSE_HANDLE, 99}));
  EXPECT_TRUE(IsLockCause(b.shares[0].who.cause) && IsProcessCause(b.shares[0].who.cause));
  EXPECT_NEAR(b.shares[0].ms, 20, 1e-9);
  EXPECT_EQ(b.shares[0].bytes, 0u);
  EXPECT_EQ(b.shares[1].who.cause, TRACE_CAUSE_JOURNAL);
  EXPECT_NEAR(b.shares[1].ms, 8, 1e-9);
  EXPECT_EQ(BlameLine(b, 7),
            "who made it wait: a journal handle held by ext4lazyinit (pid 99) 20.0 ms, the "
            "journal's own blocks 8.0 ms (1.0 MB)");
  // Never more than the call's journal waits: 3 ms of them.
  const CallBlame few = BlameIndex(w).Of(Call(10, 28, SPLIT_JOURNAL, 3), kDisk);
  ASSERT_EQ(few.shares.size(), 1u);
  EXPECT_NEAR(few.shares[0].ms, 3, 1e-9);
}

TEST(Blame, AHandleAFlusherHeldIsChargedToWhoDirtiedItsFile) {
  const std::vector<ChargeWindow> w = {LockedCommit(1, 20, 20, SPLIT_LOCK_FLUSHER, 42, "dd")};
  const CallBlame b = BlameIndex(w).Of(Call(10, 10, SPLIT_JOURNAL, 10), kDisk);
  ASSERT_EQ(b.shares.size(), 1u);
  EXPECT_EQ(b.shares[0].who, (CulpritId{TRACE_CAUSE_HANDLE_FLUSHER, 42}));
  EXPECT_EQ(CulpritName(b.shares[0].who, "dd", 7),
            "a journal handle held by a flusher writing back pages of dd (pid 42)");
  EXPECT_EQ(CulpritName(b.shares[0].who, "dd", 42),
            "a journal handle held by a flusher writing back pages of self (pid 42)");
}

TEST(Blame, TheCommitsOwnTimeAfterTheLastHandleStoppedIsItsBytes) {
  // The last handle stopped at 12 ms (it woke the commit's thread); the
  // commit stayed locked to 30, its own work: the holder has its wait and 1
  // ms of the thread's wake-up, 3 ms; the commit's bytes the other 22.
  const std::vector<ChargeWindow> late = {LockedCommit(1, 12, 30, SPLIT_LOCK_HELD, 99, "rm")};
  const CallBlame b = BlameIndex(late).Of(Call(10, 25, SPLIT_JOURNAL, 25), kDisk);
  ASSERT_EQ(b.shares.size(), 2u);
  EXPECT_EQ(b.shares[0].who.cause, TRACE_CAUSE_JOURNAL);
  EXPECT_NEAR(b.shares[0].ms, 22, 1e-9);
  EXPECT_EQ(b.shares[1].who, (CulpritId{TRACE_CAUSE_HANDLE, 99}));
  EXPECT_NEAR(b.shares[1].ms, 3, 1e-9);
  EXPECT_TRUE(b.unattributed.empty());
  // Within the slack of the commit thread's wake-up, the holder's.
  const std::vector<ChargeWindow> prompt = {LockedCommit(1, 29, 30, SPLIT_LOCK_HELD, 99, "rm")};
  EXPECT_NEAR(BlameIndex(prompt).Of(Call(10, 25, SPLIT_JOURNAL, 25), kDisk).shares[0].ms, 20, 1e-9);
  // No stop seen at all: the whole wait said.
  const std::vector<ChargeWindow> none = {LockedCommit(1, 1, 30, SPLIT_LOCK_UNSEEN, 0, "")};
  const CallBlame n = BlameIndex(none).Of(Call(10, 25, SPLIT_JOURNAL, 25), kDisk);
  EXPECT_NEAR(n.unattributed.at("journal commit locked with no handle seen to stop"), 20, 1e-9);
}

TEST(Blame, BytesBeyondTheNamedCulpritsAreOthers) {
  ChargeWindow x = Window(0, 10, true, {Charge(42, 100, "dd")});
  x.rest_bytes = 300;
  const CallBlame b = BlameIndex({x}).Of(Call(5, 10, SPLIT_FLUSH, 4), kDisk);
  ASSERT_EQ(b.shares.size(), 2u);
  EXPECT_EQ(b.shares[0].who.cause, kCauseUnnamed);
  EXPECT_NEAR(b.shares[0].ms, 3, 1e-9);
  EXPECT_EQ(CulpritName(b.shares[0].who, "", 7), "others (beyond the 16 named per window)");
}

}  // namespace
}  // namespace writelab
