// SPDX-License-Identifier: MIT
// explain -- CMD's rows from a fixed trace: the classes' names, the sums and
// shares per type and per file, the slow list in order with the commits it
// overlapped, and the diagnosis only from what was measured.
#include "program/explain/rows.h"

#include <gtest/gtest.h>

#include "program/explain/figures.h"

namespace writelab {
namespace {

double Fig(const Row& r, const char* key) {
  const Figure* f = r.FindFigure(key);
  return f ? f->value.median : -1;
}

// Calls that slept journal ns for a commit and writeback ns for their
// writes, and ran on a CPU the rest.
TraceFile File(uint32_t class_id, uint64_t ino, uint64_t calls, uint64_t ns, uint64_t journal,
               uint64_t writeback) {
  TraceFile f{};
  f.key = {7 << 20 | 1, class_id, ino};
  f.stats.calls = calls;
  f.stats.ns = ns;
  f.stats.max_ns = ns / calls * 2;
  f.stats.part_ns[SPLIT_JOURNAL] = journal;
  f.stats.part_ns[SPLIT_WRITEBACK] = writeback;
  f.stats.part_ns[SPLIT_CPU] = ns - journal - writeback;
  f.stats.during_ns[SPLIT_DURING_COMMIT] = journal + writeback;  // the commit ran meanwhile
  return f;
}

ProgramTrace Fixed() {
  ProgramTrace t;
  t.start_ns = 1'000'000'000;
  t.end_ns = 3'000'000'000;
  t.hists.resize(TRACE_CLASSES);
  const uint32_t fsync = TRACE_KIND_FSYNC * 4, write = TRACE_KIND_WRITE * 4;
  t.files = {File(fsync, 12, 10, 100'000'000, 71'000'000, 9'000'000),
             File(write, 12, 1000, 50'000'000, 0, 0), File(write, 13, 100, 5'000'000, 0, 0)};
  t.files[1].stats.part_ns[SPLIT_THROTTLE] = 40'000'000;
  t.files[1].stats.part_ns[SPLIT_CPU] -= 40'000'000;
  t.paths[{7 << 20 | 1, 12}] = "/data/wal";
  TraceCall slow{};
  slow.type = TRACE_EVENT_CALL;
  slow.class_id = fsync;
  slow.start_ns = 2'000'000'000;
  slow.ns = 80'000'000;
  slow.dev = 7 << 20 | 1;
  slow.ino = 12;
  slow.fd = 5;
  slow.part_ns[SPLIT_JOURNAL] = 70'000'000;
  slow.part_ns[SPLIT_CPU] = 10'000'000;
  slow.during_ns[SPLIT_DURING_COMMIT] = 70'000'000;
  TraceCall fast = slow;
  fast.ns = 2'000'000;
  fast.start_ns = 1'500'000'000;
  t.calls = {fast, slow};
  t.commits = {{TRACE_EVENT_COMMIT, 7 << 20 | 1, 2'005'000'000, 2'075'000'000, 41, 600'000'000}};
  t.commit_stats = {{TRACE_EVENT_STATS, 7 << 20 | 1, 41, 100, 0, 0, 0, 0}};
  t.block_size[7 << 20 | 1] = 4096;
  return t;
}

TEST(ProgramRows, ClassesAreNamedByTheirCallAndHowItWrote) {
  EXPECT_EQ(ClassName(TRACE_KIND_FDATASYNC * 4), "fdatasync");
  EXPECT_EQ(ClassName(TRACE_KIND_PWRITE64 * 4 + TRACE_CLASS_SYNC + TRACE_CLASS_DIRECT),
            "pwrite64 (direct, synchronous)");
  EXPECT_EQ(ClassName(TRACE_KIND_URING_FSYNC * 4), "io_uring fsync");
}

TEST(ProgramRows, TypesAddUpTheirFilesAndSayWhatTheyWaitedFor) {
  const ProgramTrace t = Fixed();
  const std::vector<Row> rows = CallTypeRows(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "fsync") << "most time first";
  EXPECT_EQ(Fig(rows[0], "calls"), 10);
  EXPECT_DOUBLE_EQ(Fig(rows[0], "journal_pct"), 71);
  EXPECT_DOUBLE_EQ(Fig(rows[0], "writeback_pct"), 9);
  EXPECT_DOUBLE_EQ(Fig(rows[0], "cpu_pct"), 20);
  EXPECT_DOUBLE_EQ(Fig(rows[0], "other_pct"), 0);
  EXPECT_DOUBLE_EQ(Fig(rows[0], "during_commit_pct"), 80) << "overlap, beside the parts";
  ASSERT_EQ(rows[0].series.size(), 1u) << "its calls over time";
  EXPECT_EQ(rows[0].series[0].points.size(), 2u);
  // The commit the slow fsync overlapped logged 100 blocks (0.41 MB) of the
  // 600 MB its journal thread wrote: it carried the rest.
  EXPECT_NE(rows[0].notes[0].find("71% waiting for journal commits that carried 600 MB"),
            std::string::npos)
      << rows[0].notes[0];
  EXPECT_EQ(rows[1].name, "write");
  EXPECT_EQ(Fig(rows[1], "calls"), 1100) << "two files' writes";
  EXPECT_NEAR(Fig(rows[1], "throttled_pct"), 40e6 / 55e6 * 100, 1e-9);
  EXPECT_NE(rows[1].notes[0].find("73% asleep in balance_dirty_pages"), std::string::npos)
      << rows[1].notes[0];

  const std::vector<Row> files = FileRows(t);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].name, "/data/wal");
  EXPECT_EQ(Fig(files[0], "calls"), 1010);
  EXPECT_EQ(files[1].name, "(deleted or closed) dev 7:1 inode 13");
}

TEST(ProgramRows, TheSlowestCallsComeFirstWithTheCommitsTheyWaitedFor) {
  const std::vector<Row> slow = SlowCallRows(Fixed(), 1);
  ASSERT_EQ(slow.size(), 1u) << "--top 1";
  EXPECT_EQ(slow[0].name, "#1 fsync");
  EXPECT_DOUBLE_EQ(Fig(slow[0], "ms"), 80);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "at_s"), 1);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "commit_ms"), 70);
  EXPECT_NEAR(Fig(slow[0], "commit_carried_mb"), 600 - 100 * 4096 / 1e6, 1e-9);
  EXPECT_NE(slow[0].notes[1].find("transaction 41"), std::string::npos) << slow[0].notes[1];
  EXPECT_LT(Fig(slow[0], "commit_running_ms"), 0) << "no HZ: the phases are not given";
}

// The longest overlapping commit's phases, from jiffies at the kernel's HZ.
TEST(ProgramRows, ASlowCallShowsTheLongestCommitsPhases) {
  ProgramTrace t = Fixed();
  t.totals.hz = 250;  // 4 ms a jiffy
  t.commit_stats = {{TRACE_EVENT_STATS, 7 << 20 | 1, 41, 100, 5, 1, 12, 3}};
  // A shorter commit overlaps too; its phases are not the figures'.
  t.commits.push_back({TRACE_EVENT_COMMIT, 7 << 20 | 1, 2'000'000'000, 2'004'000'000, 40, 0});
  t.commit_stats.push_back({TRACE_EVENT_STATS, 7 << 20 | 1, 40, 2, 1, 0, 0, 1});
  const std::vector<Row> slow = SlowCallRows(t, 1);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "commit_ms"), 70);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "commit_running_ms"), 20);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "commit_locked_ms"), 4);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "commit_flushing_ms"), 48);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "commit_logging_ms"), 12);
  EXPECT_DOUBLE_EQ(Fig(slow[0], "commit_blocks"), 102) << "both commits' blocks";
  EXPECT_NE(slow[0].notes[1].find("transaction 41 (70.0 ms: running 20 ms, locked 4 ms, "
                                  "flushing 48 ms, logging 12 ms; 100 blocks logged"),
            std::string::npos)
      << slow[0].notes[1];
  EXPECT_NE(slow[0].notes[1].find("transaction 40 (4.0 ms: running 4 ms"), std::string::npos)
      << slow[0].notes[1];
}

Shares With(std::initializer_list<std::pair<int, double>> parts) {
  Shares s;
  for (auto [part, pct] : parts) s.parts[part] = pct;
  return s;
}

TEST(ProgramRows, TheDiagnosisNamesOnlyWhatDominatedAndWasMeasured) {
  const Shares even =
      With({{SPLIT_CPU, 25}, {SPLIT_JOURNAL, 25}, {SPLIT_FLUSH, 25}, {SPLIT_WRITEBACK, 25}});
  EXPECT_EQ(Diagnosis(even, false),
            "nothing dominates: on CPU 25%, journal commit 25%, its writes 25%, cache flush 25%");
  EXPECT_NE(Diagnosis(With({{SPLIT_FLUSH, 80}, {SPLIT_CPU, 20}}), false)
                .find("80% waiting for the disk's cache flushes"),
            std::string::npos);
  EXPECT_NE(
      Diagnosis(With({{SPLIT_RUNQ, 60}, {SPLIT_CPU, 40}}), false).find("60% waiting for a CPU"),
      std::string::npos)
      << "a busy machine is named as such";
  Shares uring;
  uring.split = false;
  EXPECT_NE(Diagnosis(uring, false).find("not split"), std::string::npos);
  Shares converting = With({{SPLIT_JOURNAL, 60}, {SPLIT_CPU, 40}});
  converting.commits_per_call = converting.conversions_per_call = 1;
  EXPECT_NE(Diagnosis(converting, true).find("nothing was fallocated: ext4 allocated"),
            std::string::npos)
      << "no fallocate traced: the unwritten extents were ext4's own";
  converting.fallocated = true;
  EXPECT_NE(Diagnosis(converting, true).find("writes into unwritten (fallocated) extents"),
            std::string::npos);
  EXPECT_EQ(Diagnosis(converting, false).find("fallocated"), std::string::npos)
      << "around an fsync the conversions are writeback's";
}

TEST(ProgramRows, OtherSleepThatWasLockWaitsIsSaidSo) {
  Shares locked = With({{SPLIT_OTHER, 90}, {SPLIT_CPU, 10}});
  EXPECT_EQ(Diagnosis(locked, false), "90% asleep on something else (locks, pipes, page faults)");
  locked.lock = 85;
  EXPECT_EQ(Diagnosis(locked, false),
            "90% asleep on something else, 85% of the time in waits for contended kernel locks (a "
            "rw_semaphore or mutex: who held them, below)");
}

TEST(ProgramRows, ATypeUnderOnePercentOfTheTimeGetsNoDiagnosis) {
  ProgramTrace t = Fixed();
  t.files.push_back(File(TRACE_KIND_FDATASYNC * 4, 14, 1, 1'000'000, 0, 0));  // 0.6% of 156 ms
  const std::vector<Row> rows = CallTypeRows(t);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].name, "fdatasync");
  EXPECT_TRUE(rows[2].notes.empty());
  EXPECT_FALSE(rows[0].notes.empty());
}

TEST(ProgramRows, WithoutTheSchedulersEventsThereAreNoParts) {
  ProgramTrace t = Fixed();
  t.split = false;
  const std::vector<Row> rows = CallTypeRows(t);
  EXPECT_LT(Fig(rows[0], "journal_pct"), 0);
  EXPECT_LT(Fig(rows[0], "during_commit_pct"), 0);
  EXPECT_NE(rows[0].notes[0].find("not split"), std::string::npos);
}

}  // namespace
}  // namespace writelab
