// SPDX-License-Identifier: MIT
// --explain's figures from counters: each group gives its figures only when
// the kernel lets writelab see it, shares add up to 100%, the request sizes
// become a series, and "where the time went" reads the row's figures.
#include "explain/figures.h"

#include <gtest/gtest.h>

#include <array>

namespace writelab {
namespace {

// An explainer that sees the groups it is told to.
class FakeExplainer final : public Explainer {
 public:
  void Attach(std::initializer_list<ExplainProbe>) override {}
  void Detach() override {}
  void TimeOnly(const std::vector<pid_t>&) override {}
  void ThrottleOnly(const std::vector<pid_t>&) override {}
  void AheadOf(const std::vector<std::pair<dev_t, ino_t>>&,
               const std::vector<std::pair<dev_t, ino_t>>&, const std::vector<pid_t>&) override {}
  uint32_t fs_block_size() const override { return 4096; }
  ExplainCounters Read() const override { return {}; }
  std::vector<std::string> CheckNotes() const override { return check; }
  std::string Missing(ExplainProbe p) const override {
    return seen[static_cast<size_t>(p)] ? "" : "the kernel has no tracepoint x";
  }
  FakeExplainer() { seen.fill(true); }
  std::array<bool, kExplainProbes> seen;
  std::vector<std::string> check;
};

ExplainCounters Counters() {
  ExplainCounters c{};
  c.rq_issued = c.rq_completed = 100;
  c.q2d_ns = 100 * 2'000'000;  // 2 ms each
  c.d2c_ns = 100 * 500'000;
  c.rq_bytes = 100 * 65536;
  c.size_hist[16] = 100;  // 64 KiB
  c.back_merges = 1500;
  c.rq_merges = 10;
  c.syncs = 10;
  c.sync_ns = 10 * 10'000'000;
  c.sync_part_ns[SPLIT_CPU] = 5'000'000;
  c.sync_part_ns[SPLIT_RUNQ] = 5'000'000;
  c.sync_part_ns[SPLIT_JOURNAL] = 60'000'000;
  c.sync_part_ns[SPLIT_FLUSH] = 10'000'000;
  c.sync_part_ns[SPLIT_WRITEBACK] = 20'000'000;
  c.sync_during_ns[SPLIT_DURING_COMMIT] = 80'000'000;
  c.sync_during_ns[SPLIT_DURING_WRITES] = 15'000'000;
  c.commits = 10;
  c.commit_stats = 10;
  c.blocks_logged = 40;
  c.commit_locked_j = c.commit_flushing_j = c.commit_logging_j = 5;
  c.hz = 250;
  c.conversions = 20;
  return c;
}

TEST(ExplainFigures, EachGroupGivesItsFigures) {
  FakeExplainer e;
  std::map<std::string, double> f;
  ExplainCounters c = Counters();
  c.wb_own_bytes = 3'000'000;
  c.wb_other_bytes = 9'000'000;
  c.jbd2_bytes = 40 * 4096 + 5'000'000;  // the 40 logged blocks and 5 MB of ordered data
  ExplainValues(e, c, {20, 2.0},
                {ExplainProbe::kBlock, ExplainProbe::kSyncParts, ExplainProbe::kJournal,
                 ExplainProbe::kConversions, ExplainProbe::kThrottle, ExplainProbe::kWriteback},
                f);
  EXPECT_DOUBLE_EQ(f["x_queue_ms"], 2.0);
  EXPECT_DOUBLE_EQ(f["x_device_ms"], 0.5);
  EXPECT_DOUBLE_EQ(f["x_merges"], 1510);
  EXPECT_DOUBLE_EQ(f["x_kib_per_request"], 64);
  EXPECT_DOUBLE_EQ(f["x_call_ms"], 10);
  EXPECT_DOUBLE_EQ(f["x_cpu_pct"], 5);
  EXPECT_DOUBLE_EQ(f["x_runq_pct"], 5);
  EXPECT_DOUBLE_EQ(f["x_journal_pct"], 60);
  EXPECT_DOUBLE_EQ(f["x_flush_pct"], 10);
  EXPECT_DOUBLE_EQ(f["x_writeback_pct"], 20);
  EXPECT_DOUBLE_EQ(f["x_dirty_wait_pct"], 0);
  EXPECT_DOUBLE_EQ(f["x_other_pct"], 0);
  EXPECT_DOUBLE_EQ(f["x_during_commit_pct"], 80) << "overlap: beside the parts, not among them";
  EXPECT_DOUBLE_EQ(f["x_during_flush_pct"], 0);
  EXPECT_DOUBLE_EQ(f["x_during_writes_pct"], 15);
  EXPECT_DOUBLE_EQ(f["x_unbalanced"], 0);
  EXPECT_DOUBLE_EQ(f["x_blocks_logged_per_write"], 2);
  EXPECT_DOUBLE_EQ(f["x_commit_ms"], 15 * 1000.0 / 250 / 10);
  EXPECT_DOUBLE_EQ(f["x_commit_flushing_ms"], 5 * 1000.0 / 250 / 10);
  EXPECT_DOUBLE_EQ(f["x_commit_running_ms"], 0);
  EXPECT_DOUBLE_EQ(f["x_conversions_per_write"], 1);
  EXPECT_DOUBLE_EQ(f["x_throttled_s"], 0) << "never paused: 0, not absent";
  EXPECT_DOUBLE_EQ(f["x_own_writeback_mb"], 3);
  EXPECT_DOUBLE_EQ(f["x_other_writeback_mb"], 9);
  EXPECT_DOUBLE_EQ(f["x_commit_carried_mb"], 5);
  EXPECT_GT(f["x_journal_thread_mb"], f["x_commit_carried_mb"]) << "its log besides";
  std::vector<Figure> figures;
  AddFigures(figures, kExplainFigures, f);  // every key is in the table
  EXPECT_EQ(figures.size(), f.size());
}

TEST(ExplainFigures, CarriedDataNeedsTheJournalGroupAttachedToo) {
  FakeExplainer e;
  ExplainCounters c = Counters();
  c.jbd2_bytes = 9'000'000;
  std::map<std::string, double> f;
  ExplainValues(e, c, {20, 2.0}, {ExplainProbe::kWriteback}, f);  // as a stream row
  EXPECT_EQ(f.count("x_commit_carried_mb"), 0u) << "blocks_logged was not counted";
  EXPECT_EQ(f.count("x_journal_thread_mb"), 0u) << "the journal's thread is known from commits";
}

TEST(ExplainFigures, AGroupTheKernelHidesGivesNoFiguresButANote) {
  FakeExplainer e;
  e.seen[static_cast<size_t>(ExplainProbe::kConversions)] = false;
  std::map<std::string, double> f;
  ExplainValues(e, Counters(), {20, 2.0}, {ExplainProbe::kConversions, ExplainProbe::kBlock}, f);
  EXPECT_EQ(f.count("x_conversions"), 0u);
  EXPECT_EQ(f.count("x_merges"), 1u);
  auto notes = ExplainNotes(e, {ExplainProbe::kConversions, ExplainProbe::kBlock});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "explain: extent conversions unsupported: the kernel has no tracepoint x");
}

TEST(ExplainFigures, WhatTheSelfCheckFoundIsNotedWhereTheCallsAreSplit) {
  FakeExplainer e;
  e.check = {"self-check: 2 requests never reported done"};
  EXPECT_TRUE(ExplainNotes(e, {ExplainProbe::kBlock}).empty()) << "no split, no overlaps";
  auto notes = ExplainNotes(e, {ExplainProbe::kSyncParts});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "explain: self-check: 2 requests never reported done");
}

TEST(ExplainFigures, ThrottlingIsAShareOfTheWriteTime) {
  FakeExplainer e;
  ExplainCounters c{};
  c.throttle_events = 3;
  c.throttle_pause_j = 125;  // 0.5 s at 250 Hz
  c.hz = 250;
  std::map<std::string, double> f;
  ExplainValues(e, c, {0, 2.0}, {ExplainProbe::kThrottle}, f);
  EXPECT_DOUBLE_EQ(f["x_throttled_s"], 0.5);
  EXPECT_DOUBLE_EQ(f["x_throttled_pct"], 25);
  c.hz = 0;  // paused, but for how long is unknown
  f.clear();
  ExplainValues(e, c, {0, 2.0}, {ExplainProbe::kThrottle}, f);
  EXPECT_TRUE(f.empty());
}

TEST(ExplainFigures, DeltaSubtractsEveryCounterAndKeepsHz) {
  ExplainCounters a = Counters(), b{};
  b.rq_issued = 40;
  b.sync_during_ns[2] = 1;
  a.sync_during_ns[2] = 3;
  b.rq_lost = 1;
  a.rq_lost = 4;
  ExplainCounters d = ExplainDelta(a, b);
  EXPECT_EQ(d.rq_issued, 60u);
  EXPECT_EQ(d.sync_during_ns[2], 2u);
  EXPECT_EQ(d.rq_lost, 3u);
  EXPECT_EQ(d.hz, 250u);
}

TEST(ExplainFigures, RequestSizesAndWhereTheTimeWent) {
  Series s = RequestSizeSeries(Counters());
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_DOUBLE_EQ(s.points[0][0], 64);
  EXPECT_DOUBLE_EQ(s.points[0][1], 100);
  FakeExplainer e;
  std::map<std::string, double> f;
  ExplainValues(e, Counters(), {20, 2.0}, {ExplainProbe::kSyncParts}, f);
  Row row;
  AddFigures(row.figures, kExplainFigures, f);
  EXPECT_EQ(WhereTheTimeWent(row),
            "write and sync calls: on CPU 5%, waiting for a CPU 5%, journal commit 60%, its "
            "writes 20%, cache flush 10%");
  EXPECT_EQ(WhereTheTimeWent(Row{}), "");

  ExplainCounters probe = Counters();  // the probe's calls only, with a stream beside them
  probe.throttle_events = 1;
  probe.throttle_pause_j = 50;
  probe.wb_other_bytes = 5'000'000;
  std::map<std::string, double> g;
  ExplainValues(e, probe, {0, 1.0}, {ExplainProbe::kThrottle, ExplainProbe::kWriteback}, g);
  ExplainProbeCallValues(e, probe, g);
  EXPECT_EQ(g.count("x_journal_pct"), 0u) << "the probe's split has keys of its own";
  Row stream;
  AddFigures(stream.figures, kExplainFigures, g);
  EXPECT_EQ(WhereTheTimeWent(stream),
            "the writer was throttled in balance_dirty_pages 20% of its time; writeback started "
            "by the writer 0 MB, by others 5 MB; the bystander's calls: on CPU 5%, waiting for a "
            "CPU 5%, journal commit 60%, its writes 20%, cache flush 10%");
}

TEST(ExplainAhead, SharesOfWhatWasQueuedDuringTheCallsAndTheLineThatSaysIt) {
  ExplainCounters d{};
  std::map<std::string, double> f;
  ExplainAheadValues(d, f);
  EXPECT_TRUE(f.empty()) << "nothing queued: no figures";
  d.ahead_bytes[EXPLAIN_AHEAD_SELF] = 2'000'000;
  d.ahead_bytes[EXPLAIN_AHEAD_BACKGROUND] = 97'000'000;
  d.ahead_bytes[EXPLAIN_AHEAD_JOURNAL] = 1'000'000;
  ExplainAheadValues(d, f);
  EXPECT_DOUBLE_EQ(f["x_ahead_mb"], 100.0);
  EXPECT_DOUBLE_EQ(f["x_ahead_background_pct"], 97.0);
  EXPECT_DOUBLE_EQ(f["x_ahead_self_pct"], 2.0);
  EXPECT_DOUBLE_EQ(f["x_ahead_other_pct"], 0.0);
  Row row;
  AddFigures(row.figures, kExplainFigures, f);
  EXPECT_EQ(WhoWasAhead(row, "stream"),
            "while its calls ran, 100.0 MB was queued to the disk: the background's (stream) "
            "97%, its own 2%, the journal's 1%");
  EXPECT_EQ(WhoWasAhead(Row{}, "stream"), "");
}

}  // namespace
}  // namespace writelab
