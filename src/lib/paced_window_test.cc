// SPDX-License-Identifier: MIT
#include "lib/paced_window.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

namespace writelab {
namespace {

// Flushes that take as long as told, and every drop range kept.
class SlowFlushCalls final : public WindowCalls {
 public:
  int SyncRange(uint64_t, uint64_t, unsigned) override { return 0; }
  int DropCache(uint64_t offset, uint64_t len) override {
    drops.push_back({offset, len});
    return 0;
  }
  int Datasync() override {
    ++datasyncs;
    usleep(flush_us);
    return fail;
  }
  useconds_t flush_us = 0;
  int fail = 0;
  int datasyncs = 0;
  std::vector<std::pair<uint64_t, uint64_t>> drops;
};

constexpr uint64_t kPacedMiB = uint64_t{1} << 20;

// Writes 1 MiB at a time up to total; the largest unflushed span seen.
uint64_t PacedWrite(PacedWindow& w, SlowFlushCalls& calls, uint64_t& end, uint64_t total) {
  uint64_t worst = 0, flushed = 0;
  const char* what = "";
  for (; end < total; end += kPacedMiB) {
    const size_t before = calls.drops.size();
    EXPECT_EQ(w.AfterWrite(calls, end + kPacedMiB, &what), 0);
    worst = std::max(worst, end + kPacedMiB - flushed);
    if (calls.drops.size() > before) flushed = calls.drops.back().first + calls.drops.back().second;
  }
  return worst;
}

// Fast flushes grow the window a MiB at a time, up to 64 MiB; slow ones
// (over half the target) halve it, down to 1 MiB; what lies unflushed never
// exceeds the window; every byte flushed is dropped, in order. The growth
// is measured against a 10 s target, so that a flush of no time stays
// under its quarter however long the test's thread waits for a CPU (one
// waited over 50 ms, half a 100 ms target, beside three other tests and a
// build); the halving against 100 ms, with flushes of 60 ms, which a wait
// only makes slower.
TEST(PacedWindow, GrowsWhileFlushesAreFastAndHalvesWhenSlow) {
  SlowFlushCalls calls;
  PacedWindow w(10'000'000'000, 8 * kPacedMiB);
  uint64_t end = 0;
  EXPECT_LE(PacedWrite(w, calls, end, 2048 * kPacedMiB), PacedWindow::kMaxWindow);
  EXPECT_EQ(w.window(), PacedWindow::kMaxWindow);
  EXPECT_EQ(w.smallest_window(), 8 * kPacedMiB);
  const char* what = "";
  ASSERT_EQ(w.Flush(calls, end, &what), 0);  // the tail, so that the drops run on
  PacedWindow slow(100'000'000, PacedWindow::kMaxWindow);
  slow.MarkFlushed(end);
  calls.flush_us = 60'000;  // over half of 100 ms
  PacedWrite(slow, calls, end, end + 128 * kPacedMiB);
  EXPECT_EQ(slow.window(), PacedWindow::kMinWindow) << "halved at each slow flush";
  // 64, 32, ..., 1 MiB: 127 MiB; the flushes at 127 and 128 MiB were of the
  // smallest window and as slow: the target was not met.
  EXPECT_EQ(slow.unmet_flushes(), 2u);
  EXPECT_EQ(w.unmet_flushes(), 0u);
  EXPECT_GE(slow.slowest_flush_ns(), 60'000'000u);
  EXPECT_GT(slow.flushes(), 6u);
  uint64_t next = 0;  // each drop reaches back to the 2 MiB boundary below the last one's end
  for (const auto& [offset, len] : calls.drops) {
    EXPECT_EQ(offset, next - next % (2 * kPacedMiB));
    next = offset + len;
  }
  EXPECT_EQ(next, end) << "everything written is dropped";
  EXPECT_EQ(static_cast<int>(calls.drops.size()), calls.datasyncs);
}

// A flush counts as unmet only when it was a small one: a writer's 16 MiB
// write flushed at once with the window at its smallest is not the device
// missing the target for a small flush.
TEST(PacedWindow, AnUnmetFlushIsASmallOne) {
  SlowFlushCalls calls;
  calls.flush_us = 60'000;  // over half of 100 ms
  PacedWindow w(100'000'000, PacedWindow::kMinWindow);
  const char* what = "";
  ASSERT_EQ(w.AfterWrite(calls, 16 * kPacedMiB, &what), 0);
  EXPECT_EQ(w.flushes(), 1u);
  EXPECT_EQ(w.unmet_flushes(), 0u) << "16 MiB in one flush";
  ASSERT_EQ(w.AfterWrite(calls, 17 * kPacedMiB, &what), 0);
  EXPECT_EQ(w.unmet_flushes(), 1u) << "1 MiB, as slow";
}

// Room keeps a write within the window whatever its size; Flush takes what
// is left (a pass's or a stream's tail), and nothing when nothing is.
TEST(PacedWindow, RoomBoundsAWriteAndFlushTakesTheTail) {
  SlowFlushCalls calls;
  PacedWindow w(20'000'000, 8 * kPacedMiB);
  EXPECT_EQ(w.Room(0), 8 * kPacedMiB);
  EXPECT_EQ(w.Room(6 * kPacedMiB), 2 * kPacedMiB) << "a block of 8 would pass the window";
  const char* what = "";
  EXPECT_EQ(w.Flush(calls, 0, &what), 0);
  EXPECT_EQ(calls.datasyncs, 0) << "nothing written, nothing flushed";
  EXPECT_EQ(w.Flush(calls, 3 * kPacedMiB, &what), 0);
  EXPECT_EQ(calls.datasyncs, 1);
  ASSERT_EQ(calls.drops.size(), 1u);
  EXPECT_EQ(calls.drops[0], std::make_pair(uint64_t{0}, 3 * kPacedMiB));
  EXPECT_EQ(w.Flush(calls, 3 * kPacedMiB, &what), 0);
  EXPECT_EQ(calls.datasyncs, 1) << "flushed already";
  EXPECT_EQ(w.Room(3 * kPacedMiB), w.window());
}

TEST(PacedWindow, AFailedFlushIsReturnedWithItsCall) {
  SlowFlushCalls calls;
  calls.fail = -5;  // EIO
  PacedWindow w(20'000'000, kPacedMiB);
  const char* what = "";
  EXPECT_EQ(w.AfterWrite(calls, kPacedMiB / 2, &what), 0) << "less than a window: no flush";
  EXPECT_EQ(w.AfterWrite(calls, kPacedMiB, &what), -5);
  EXPECT_STREQ(what, "fdatasync");
  EXPECT_TRUE(calls.drops.empty()) << "nothing dropped that was not flushed";
}

}  // namespace
}  // namespace writelab
