// SPDX-License-Identifier: MIT
// Who made it wait, against planted culprits (tests/tools/blame_load.cc):
// two writers at 3:1 beside a victim that appends and fsyncs. Their own
// byte counts are the independent observer of what writelab charges them
// over the run; the pace makes the ranking physics: every commit or flush
// the victim waits on carries about three times as much of the big
// writer's data as of the small one's.
//   - On the root disk (no journal), direct writes: the victim's waits are
//     cache flushes, each carrying what was queued since the one before.
//   - On a journaled test bed mounted data=ordered,nodelalloc, buffered
//     writes: each commit writes the writers' ordered data first, from the
//     journal thread, so the data is charged by who dirtied it.
//   - On a test bed whose device holds 4 requests, behind dd's of direct
//     writes held to a slow pace: the victim's commits wait for their few
//     log blocks' turn, so their time is charged to the dd's requests.
//   - On test beds under a strict dirty limit, buffered writes: a write
//     paused by the limit is charged to who held the pages then, against
//     the writers' files' pages dirty or under writeback (cachestat(2)),
//     for two steady writers and for one that stopped before the other
//     began.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bed_journal.h"
#include "dirty_sampler.h"
#include "ftrace_instance.h"
#include "harness.h"
#include "test_fs.h"
#include "test_paths.h"
#include "throttled_cgroup.h"
#include "victim_calls.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

struct Writer {
  long pid = 0;
  double mb = 0;  // by its own count
};

// A knob of a test bed's loop device's request queue (nr_requests: how many
// requests at once; max_sectors_kb: how large each) set to value, put
// back at the end; journaled, so that `writelab cleanup` puts it back after
// a test killed before its end (while the device still backs image).
class QueueKnob {
 public:
  QueueKnob(const TestFs& fs, const std::string& image, const std::string& name, int value)
      : knob_("/sys/block/" + fs.DeviceName() + "/queue/" + name), old_(Shell("cat " + knob_)) {
    if (old_.empty()) return;
    step_ = BedJournal::Record({"sysfs", knob_, old_, "loop:" + BedJournal::BackingInode(image)});
    ok_ = step_ && Shell("echo " + std::to_string(value) + " > " + knob_ + " && echo ok") == "ok";
  }
  ~QueueKnob() {
    if (step_ && Shell("echo " + old_ + " > " + knob_ + " && echo ok") == "ok")
      BedJournal::Done(step_);
  }
  bool ok() const { return ok_; }

 private:
  std::string knob_, old_;
  BedStep step_ = 0;
  bool ok_ = false;
};

// A commit's time from jbd2_commit_logging to jbd2_end_commit (ms,
// CLOCK_MONOTONIC), and what was queued to its device meanwhile, by the
// culprits (comm "dd") and by the journal's thread (comm "jbd2/...").
struct LoggedCommit {
  double logging = 0, end = 0;
  uint64_t culprits = 0, journal = 0;
};

// The commits of an ftrace instance's text (block_bio_queue and jbd2's
// commit events, one device's), each with the bytes queued while it wrote.
std::vector<LoggedCommit> LoggedCommitsOf(const std::string& trace) {
  std::map<long, LoggedCommit> by_tid;
  std::vector<std::tuple<double, uint64_t, bool>> bios;  // at, bytes, the culprits' (else jbd2's)
  for (const std::string& line : Split(trace, '\n')) {
    const size_t event = line.find(": ");
    if (line.starts_with("#") || event == std::string::npos) continue;
    const double at = std::atof(line.c_str() + line.rfind(' ', event) + 1) * 1e3;
    const size_t tid = line.find(" transaction ");
    if (line.find(": block_bio_queue: ") != std::string::npos) {
      const size_t plus = line.find(" + "), comm = line.rfind('[');
      if (plus == std::string::npos || comm == std::string::npos) continue;
      const std::string who = line.substr(comm + 1, line.find(']', comm) - comm - 1);
      if (who == "dd" || who.starts_with("jbd2/"))
        bios.emplace_back(at, std::strtoull(line.c_str() + plus + 3, nullptr, 10) * 512,
                          who == "dd");
    } else if (tid != std::string::npos) {
      LoggedCommit& c = by_tid[std::atol(line.c_str() + tid + 13)];
      if (line.find(": jbd2_commit_logging: ") != std::string::npos) c.logging = at;
      if (line.find(": jbd2_end_commit: ") != std::string::npos) c.end = at;
    }
  }
  std::vector<LoggedCommit> out;
  for (auto& [tid, c] : by_tid) {
    if (!c.logging || c.end < c.logging) continue;
    for (const auto& [at, bytes, culprit] : bios)
      if (at >= c.logging && at <= c.end) (culprit ? c.culprits : c.journal) += bytes;
    out.push_back(c);
  }
  return out;
}

class ExplainBlame : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: BPF";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) GTEST_SKIP() << "no kernel BTF";
  }

  // The calls checked: the victim's slow fsyncs (over 20 ms, or its
  // slowest quarter where none took that long: a host whose cache flushes
  // cost next to nothing, as this VM's did from December 2026, 1.3 ms at
  // worst beside 600 MB/s of direct writes), or the writers' writes
  // throttled for 5 ms or more.
  enum class Calls { kVictimFsyncs, kThrottledWrites };

  // Runs the planted load under explain; checks the charges against it.
  void Check(const std::string& dir, const char* big_mbps, const char* small_mbps, const char* mode,
             Calls which = Calls::kVictimFsyncs) {
    const std::string csv = work.path() + "/calls.csv", doc_path = work.path() + "/doc.json";
    // Pages dirtied before tracing began (a build just before) are written
    // back during the run with no dirtier known: "unknown", rightly, but not
    // the planted culprits. They start from a clean page cache.
    Shell("sync");
    std::optional<DirtySampler> held;
    if (which == Calls::kThrottledWrites) held.emplace(dir + "/big", dir + "/small");
    const std::string out =
        Shell(std::string(WRITELAB_BINARY) + " explain --quiet --calls " + csv + " --json " +
              doc_path + " -- " + paths::kBlameLoad + " " + dir + " 6 " + big_mbps + " " +
              small_mbps + " " + mode + " 60 100 2>" + work.path() + "/err.txt; echo rc=$?");
    if (held) held->Stop();
    ASSERT_NE(out.find("rc=0"), std::string::npos) << out << Slurp(work.path() + "/err.txt");
    if (held && held->unsupported()) GTEST_SKIP() << "no cachestat(2) (Linux 6.5): no observer";
    std::map<std::string, Writer> writers;
    for (const std::string& line : Split(out, '\n')) {
      char name[16];
      long pid = 0;
      unsigned long long bytes = 0;
      if (std::sscanf(line.c_str(), "writer %15s %ld %llu", name, &pid, &bytes) == 3)
        writers[name] = {pid, static_cast<double>(bytes) / 1e6};
    }
    ASSERT_EQ(writers.size(), 2u) << out;
    const std::string big = std::to_string(writers["big"].pid);
    const std::string small = std::to_string(writers["small"].pid);

    // Over the run: what each writer was charged with writing (and, with
    // throttling, dirtying), against its count.
    const json doc = json::parse(Slurp(doc_path));
    std::map<std::string, std::map<std::string, double>> charged_mb;  // row -> key -> MB
    for (const json& e : doc["experiments"])
      if (e["name"] == "explain-culprits")
        for (const json& r : e["rows"])
          for (const json& f : r["figures"]) charged_mb[r["name"]][f["key"]] = f["value"]["median"];
    std::vector<std::string> keys = {"written_mb"};
    if (which == Calls::kThrottledWrites) keys.push_back("dirtied_mb");
    for (const auto& [name, w] : writers) {
      const std::string row = name + " (pid " + std::to_string(w.pid) + ")";
      ASSERT_TRUE(charged_mb.count(row)) << row << " is not among the culprits";
      for (const std::string& key : keys)
        EXPECT_NEAR(charged_mb[row][key], w.mb, 0.15 * w.mb)
            << row << " " << key << " against " << w.mb << " MB by its count";
    }
    std::map<std::string, double> wrote;
    for (auto& [row, f] : charged_mb) wrote[row] = f["written_mb"];

    // The slow calls: the big writer first, and at least 80% of the
    // blocked time charged to a process or a named cause, in 95% of them.
    // The ranking is read on the calls that waited on a writer's data:
    // once the writers are done, a victim's fsync on a slow device still
    // waits for its commit's own blocks (the journal), which no writer's
    // rank can say anything of (on a test bed whose host disk was busy:
    // 44 of 60 calls, 140 ms each, after the writers had ended).
    size_t slow = 0, ranked = 0, big_first = 0, mostly_charged = 0, unplanted = 0;
    size_t shared = 0, shares_near = 0;  // throttled writes: the big writer's share of the charge
    double worst_share = 0;
    const std::vector<VictimCall> calls = ReadCalls(csv);
    std::vector<double> fsyncs;
    for (const VictimCall& c : calls)
      if (c.call == "fsync" && std::to_string(c.pid) != big && std::to_string(c.pid) != small)
        fsyncs.push_back(c.ns);
    std::sort(fsyncs.begin(), fsyncs.end());
    const double over =
        fsyncs.empty() ? 20e6 : std::min(20e6, fsyncs[fsyncs.size() * 3 / 4]);  // ns
    for (const VictimCall& c : calls) {
      const bool writer = std::to_string(c.pid) == big || std::to_string(c.pid) == small;
      if (which == Calls::kVictimFsyncs ? c.call != "fsync" || c.ns < over || writer
                                        : c.call != "pwrite64" || c.throttled < 5e6 || !writer)
        continue;
      ++slow;
      ASSERT_FALSE(c.culprits.empty()) << "a slow fsync with no culprit";
      // Ranked by the culprits of the writers' data: a lock's holder
      // (lock-PID), charged for a wait no write explains, is not one of
      // them (a throttled write may also wait for its file's i_data_sem,
      // held by the flusher writing the file's pages back).
      const auto data = std::find_if(c.culprits.begin(), c.culprits.end(),
                                     [](const auto& w) { return !w.first.starts_with("lock-"); });
      // A throttled write is charged to who held dirty pages (or pages
      // under writeback) on its file system when it began (blame.h,
      // AddHeld): it is ranked where the writers' files held 2:1 then (the
      // sampler's, 2 ms before at most). On a disk slower than both paces
      // the kernel throttles both writers alike, and the ratio comes and
      // goes. Where both held pages, the big writer's share of the time
      // charged to the two is compared with its share of their pages.
      bool planted = true;
      if (which == Calls::kThrottledWrites) {
        const DirtySampler::Sample* at = held->At(c.start);
        planted = at && at->first > 0 && at->first >= 2 * at->second;
        unplanted += !planted;
        double big_ns = 0, small_ns = 0;
        for (const auto& [who, ns] : c.culprits) {
          if (who == big) big_ns += ns;
          if (who == small) small_ns += ns;
        }
        if (at && at->first + at->second > 0 && big_ns + small_ns > 0) {
          const double sampled =
              static_cast<double>(at->first) / static_cast<double>(at->first + at->second);
          const double off = std::abs(big_ns / (big_ns + small_ns) - sampled);
          ++shared;
          shares_near += off <= 0.15;
          worst_share = std::max(worst_share, off);
        }
      }
      if (planted && std::any_of(c.culprits.begin(), c.culprits.end(), [&](const auto& w) {
            return w.first == big || w.first == small;
          })) {
        ++ranked;
        big_first += data != c.culprits.end() && data->first == big;
      }
      double charged = 0;
      for (const auto& [who, ns] : c.culprits) charged += who == "unknown" ? 0 : ns;
      if (charged >= 0.8 * c.blocked) {
        ++mostly_charged;
        continue;
      }
      std::printf("blame: %s of %.1f ms: %.1f ms blocked, %.1f ms not charged, culprits:%s\n",
                  c.call.c_str(), c.ns / 1e6, c.blocked / 1e6, c.uncharged / 1e6,
                  CulpritsText(c).c_str());
    }
    std::printf(
        "blame: %s: %zu %s %.2f ms, %zu of them waiting on the writers' data, the big writer "
        "first in %zu (%zu not ranked: the big writer's pages held not 2:1 then); wrote big "
        "%.0f/%.0f MB, small %.0f/%.0f MB (charged/counted)\n",
        dir.c_str(), slow,
        which == Calls::kVictimFsyncs ? "victim fsyncs over" : "writes throttled at least",
        which == Calls::kVictimFsyncs ? over / 1e6 : 5.0, ranked, big_first, unplanted,
        wrote["big (pid " + big + ")"], writers["big"].mb, wrote["small (pid " + small + ")"],
        writers["small"].mb);
    if (which == Calls::kThrottledWrites)
      std::printf(
          "blame: %zu throttled writes charged to both writers, the big writer's share of the "
          "time within 0.15 of its share of their pages held in %zu, at worst %.2f off\n",
          shared, shares_near, worst_share);
    ASSERT_GE(slow, 5u) << "the planted load did not make the calls wait";
    if (which == Calls::kThrottledWrites) {
      // Seen: all within 0.15 in 3 runs (79 to 95 writes), as with the
      // build before (93 of 93); with the test bed's device held to 4
      // requests of 4 KiB, slower than both paces, 87 to 95% (45 and 48%
      // with the build before, which charged who dirtied pages lately).
      EXPECT_GE(shared, 5u) << "too few throttled writes charged to both writers";
      EXPECT_GE(shares_near, 0.75 * static_cast<double>(shared))
          << "the big writer's share of the charge, against its share of the pages held";
    }
    // Waits of half a millisecond (a host's cheap flush) rank the writers
    // by the little each had in flight at that instant, which follows
    // their 3:1 bytes only on the whole: 14 of 15 seen, and 13 of 15 in a
    // later run.
    // The ranking follows the bytes where the planted 3:1 held, at least
    // 2:1 by the writers' own counts; a disk slower than the rates asked
    // for serves two direct writers (or throttles two buffered ones) about
    // alike, and then the rank of each call is a coin's. Their MB charged
    // are checked against their counts above either way.
    if (writers["big"].mb >= 2 * writers["small"].mb) {
      EXPECT_GE(ranked, 5u) << "too few slow calls waited on the writers' data";
      EXPECT_GE(big_first, (over < 20e6 ? 0.8 : 0.95) * static_cast<double>(ranked));
    } else
      std::printf("blame: the writers' bytes %.0f and %.0f MB, not 2:1: their ranks not checked\n",
                  writers["big"].mb, writers["small"].mb);
    // A call that misses is printed above with its culprits: the misses
    // seen (before the sync above) were flushes carrying writeback of pages
    // dirtied before tracing, charged to "unknown".
    EXPECT_GE(mostly_charged, 0.95 * static_cast<double>(slow))
        << "calls with at least 80% of their blocked time charged";
  }

  ScratchDir work{"explain-blame"};
};

TEST_F(ExplainBlame, OnTheRootDiskTheWritersAreTheCulpritsOfTheFlushesRankedByBytes) {
  const std::string dir = work.path() + "/data";
  std::filesystem::create_directories(dir);
  Check(dir, "450", "150", "direct");
}

// Twenty direct writers, more than a window names (16): every byte is
// charged, the first 16 of a window by name and the rest as others; no
// writer is charged more than it wrote. On a test bed: its disk is the
// test's alone (on the host's, another writer beside the test, a `dd` as
// these are, is charged what it wrote there too).
TEST_F(ExplainBlame, MoreWritersThanAWindowNamesAreAllCharged) {
  TestFs fs(work.path() + "/twenty", "data=ordered", 0);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  const std::string dir = fs.Dir(), doc_path = work.path() + "/twenty.json";
  const std::string out =
      Shell(std::string(WRITELAB_BINARY) + " explain --quiet --json " + doc_path +
            " -- sh -c 'for i in $(seq 20); do dd if=/dev/zero of=" + dir +
            "/f$i bs=64k count=160 oflag=direct status=none & done; wait' 2>&1; echo rc=$?");
  ASSERT_NE(out.find("rc=0"), std::string::npos) << out;
  const double each = 160 * 65536 / 1e6, all = 20 * each;
  double charged = 0;
  int named = 0, others = 0;
  const json doc = json::parse(Slurp(doc_path));
  for (const json& e : doc["experiments"]) {
    if (e["name"] != "explain-culprits") continue;
    for (const json& r : e["rows"]) {
      const std::string name = r["name"];
      double mb = 0;
      for (const json& f : r["figures"])
        if (f["key"] == "written_mb") mb = f["value"]["median"];
      if (name.starts_with("dd (pid ")) {
        ++named;
        EXPECT_LE(mb, each + 0.001) << name << " charged more than it wrote";
      } else if (name.starts_with("others")) {
        ++others;
      } else {
        continue;  // the journal's and metadata's own blocks
      }
      charged += mb;
    }
  }
  EXPECT_GE(named, 16) << "a window names 16";
  EXPECT_NEAR(charged, all, 0.01 * all) << named << " writers named, " << others << " others row";
}

TEST_F(ExplainBlame, OnAJournaledTestBedACommitsOrderedDataIsChargedToWhoDirtiedIt) {
  TestFs fs(work.path() + "/ordered", "data=ordered,nodelalloc", 0);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  Check(fs.Dir(), "200", "67", "buffered");  // 1.6 GB: the 2 GB test bed holds it
}

namespace writelab::testing {
namespace {

// Under a 32 MiB dirty limit (strict, on the test bed's disk) the writers'
// own writes are paused in balance_dirty_pages: each pause is charged to
// who held pages dirty or under writeback on that file system when it
// began, about 3:1 by their files' own pages.
TEST_F(ExplainBlame, UnderADirtyLimitThrottlingIsChargedToWhoDirtiedThePages) {
  TestFs fs(work.path() + "/limited", "data=ordered", 32 << 20);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  Check(fs.Dir(), "200", "67", "buffered", Calls::kThrottledWrites);
}

// A writer that stopped two seconds ago still holds its pages until they
// are written: a later writer paused by the dirty limit is charged to it by
// what it still holds, and not once it holds nothing (the build before,
// which charged who dirtied pages lately, charged more than 5% of every
// such pause to it: 15 and 16 of them in two runs). Seen: 0 of 15 to 19 in
// three runs. The observer: both files' pages dirty or under writeback,
// sampled beside the run. The stopped writer's 12 MiB stay dirty (below
// the limit's background threshold) until the later writer's 64 MiB push
// the file system over it, and go first (the older file).
TEST_F(ExplainBlame, AThrottledWriteIsChargedToWhoStillHeldThePagesThoughItDirtiedThemEarlier) {
  TestFs fs(work.path() + "/holder", "data=ordered", 32 << 20);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  // A device slower than the later writer, so that it is throttled: 4
  // requests of 4 KiB at most at a time (its loop device takes the host's
  // disk's pace otherwise, and paused it 3 times in 64 MiB).
  QueueKnob requests(fs, work.path() + "/holder.img", "nr_requests", 4);
  QueueKnob sizes(fs, work.path() + "/holder.img", "max_sectors_kb", 4);
  ASSERT_TRUE(requests.ok() && sizes.ok()) << "the test bed's queue could not be held";
  const std::string dir = fs.Dir(), csv = work.path() + "/holder.csv";
  const std::string pids = work.path() + "/holder.pids";
  Shell("sync");
  DirtySampler held(dir + "/held", dir + "/late");
  const std::string out = Shell(
      std::string(WRITELAB_BINARY) + " explain --quiet --calls " + csv + " -- sh -c 'dd " +
      "if=/dev/zero of=" + dir + "/held bs=1M count=12 status=none & echo $! > " + pids +
      "; wait; sleep 2; dd if=/dev/zero of=" + dir + "/late bs=4k count=16384 status=none & " +
      "echo $! >> " + pids + "; wait' 2>&1; echo rc=$?");
  held.Stop();
  ASSERT_NE(out.find("rc=0"), std::string::npos) << out;
  if (held.unsupported()) GTEST_SKIP() << "no cachestat(2) (Linux 6.5): no observer";
  const std::vector<std::string> pid = Split(Slurp(pids), '\n');
  ASSERT_GE(pid.size(), 2u) << Slurp(pids);
  size_t seen = 0, after = 0, after_charged = 0;
  double off_sum = 0;
  for (const VictimCall& c : ReadCalls(csv)) {
    if (std::to_string(c.pid) != pid[1] || c.throttled < 5e6) continue;
    const DirtySampler::Sample* at = held.At(c.start);
    if (!at || at->first + at->second == 0) continue;
    double holder = 0, all = 0;
    for (const auto& [who, ns] : c.culprits) {
      all += ns;
      if (who == pid[0]) holder += ns;
    }
    ASSERT_GT(all, 0) << "a throttled write with nothing charged";
    const double sampled =
        static_cast<double>(at->first) / static_cast<double>(at->first + at->second);
    std::printf(
        "blame: a throttled write %.1f ms: the stopped writer held %.1f%% of the pages "
        "(%.1f and %.1f MB), charged %.1f%%\n",
        c.throttled / 1e6, 100 * sampled, at->first / 1e6, at->second / 1e6, 100 * holder / all);
    ++seen;
    off_sum += std::abs(holder / all - sampled);
    if (at->first == 0) {
      ++after;
      after_charged += holder > 0.05 * all;
    }
  }
  std::printf(
      "blame: %zu throttled writes, the stopped writer's share %.3f off on average; "
      "%zu after it held nothing, %zu of them charged more than 5%% to it\n",
      seen, off_sum / static_cast<double>(std::max<size_t>(seen, 1)), after, after_charged);
  ASSERT_GE(seen, 5u) << "too few of the later writer's writes were throttled";
  ASSERT_GE(after, 3u) << "the stopped writer's pages were not all written while the later one ran";
  EXPECT_EQ(after_charged, 0u) << "charged to the stopped writer after it held nothing";
  EXPECT_LE(off_sum / static_cast<double>(seen), 0.2)
      << "the stopped writer's share of the charge, against its share of the pages held";
}

}  // namespace
}  // namespace writelab::testing

// A commit's few log blocks behind other writers' requests in the disk's
// queue. A test bed (upper) whose loop device takes 4 requests at most
// lives on a second one (lower); four dd's of direct writes, in a cgroup
// whose writes to the lower device run at 8 MB/s, keep the upper device's
// requests in flight for 125 ms or more each, and the victim's commits, a
// few blocks each, wait 100 to 300 ms for their turn. An ftrace instance
// sees what was queued to the upper device while each commit wrote
// (jbd2_commit_logging to jbd2_end_commit). Each fsync that waited 50 ms or
// more for commits during which the dd's queued ten times what the
// journal's thread did is charged at least 80% of that wait to the dd's,
// and at most 20% to the journal's own blocks (before 2026-12-07, all of it
// to the journal's own blocks).
TEST_F(ExplainBlame, ACommitBehindOtherWritersRequestsIsChargedToThem) {
  TestFs lower(work.path() + "/lower", "data=ordered", 0);
  if (!lower.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  TestFs upper(lower.Path("upper"), "data=ordered", 0);
  ASSERT_TRUE(upper.ok()) << "a loop-device ext4 on the first one's";
  QueueKnob depth(upper, lower.Path("upper.img"), "nr_requests", 4);
  ASSERT_TRUE(depth.ok()) << "nr_requests of " << upper.DeviceName();
  struct stat low {};
  struct stat up {};
  ASSERT_EQ(stat(lower.Dir().c_str(), &low), 0);
  ASSERT_EQ(stat(upper.Dir().c_str(), &up), 0);
  std::string why;
  const auto slow = ThrottledCgroup(low.st_dev, 8'000'000, Throttled::kWrites, why);
  if (!slow) GTEST_SKIP() << "no io controller to slow the culprits' writes: " << why;
  const std::string dev = "dev == " + std::to_string((major(up.st_dev) << 20) | minor(up.st_dev));
  FtraceInstance ftrace("blame-queue",
                        {{"block/block_bio_queue", dev},
                         {"jbd2/jbd2_commit_logging", dev},
                         {"jbd2/jbd2_end_commit", dev}},
                        "mono");
  ASSERT_TRUE(ftrace.ok()) << "no private ftrace instance";
  // The culprits start once they are in slow; each dd prints its PID.
  const std::string go = work.path() + "/go", pids = work.path() + "/pids";
  const std::string culprits =
      Shell("sh -c 'while [ ! -e " + go + " ]; do sleep 0.01; done; for i in 1 2 3 4; do " +
            "timeout 20 sh -c \"echo \\$\\$ >> " + pids + "; exec dd if=/dev/zero of=" +
            upper.Path("bg") + "$i bs=1M count=100000 oflag=direct status=none\" & done; wait; " +
            "echo done >> " + pids + "' >/dev/null 2>&1 & echo $!");
  const bool placed = slow->Place(static_cast<pid_t>(std::atol(culprits.c_str()))).has_value();
  Shell("touch " + go);
  usleep(500'000);
  const std::string csv = work.path() + "/queue.csv";
  const std::string out = Shell(std::string(WRITELAB_BINARY) + " explain --quiet --calls " + csv +
                                " -- " + WRITELAB_WRITERS_BINARY + " fsync " + upper.Path("wal") +
                                " 15 100 2>" + work.path() + "/err.txt; echo rc=$?");
  // The dd's (and their timeouts) end with the victim, or after 20 s
  // whatever happens; the shell that waits for them says "bg$i", which the
  // pattern does not match, and prints "done" once they are gone.
  Shell("pkill -f 'of=" + upper.Path("bg") + "[0-9] '");
  for (int i = 0; i < 2500 && Slurp(pids).find("done") == std::string::npos; ++i) usleep(10'000);
  const std::vector<LoggedCommit> commits = LoggedCommitsOf(ftrace.Stop());
  ASSERT_TRUE(placed) << "the culprits could not be moved into " << slow->path();
  ASSERT_NE(out.find("rc=0"), std::string::npos) << out << Slurp(work.path() + "/err.txt");
  std::vector<std::string> dds = Split(Slurp(pids), '\n');
  ASSERT_EQ(dds.size(), 5u) << "four dd's, then done: " << Slurp(pids);
  dds.pop_back();
  size_t behind = 0;
  for (const VictimCall& c : ReadCalls(csv)) {
    if (c.call != "fsync" || c.journal < 50e6) continue;
    const double from = static_cast<double>(c.start) / 1e6, to = from + c.ns / 1e6;
    uint64_t queued = 0, journal = 0;
    for (const LoggedCommit& w : commits)
      if (w.end > from && w.logging < to) queued += w.culprits, journal += w.journal;
    if (!queued || queued < 10 * journal) continue;
    ++behind;
    double to_dds = 0, to_journal = 0;
    for (const auto& [who, ns] : c.culprits) {
      if (std::find(dds.begin(), dds.end(), who) != dds.end()) to_dds += ns;
      if (who == "journal") to_journal += ns;
    }
    const std::string said = "fsync of " + std::to_string(c.journal / 1e6) +
                             " ms for the journal, the dd's " + std::to_string(queued >> 10) +
                             " KiB queued against the journal thread's " +
                             std::to_string(journal >> 10) + " KiB:" + CulpritsText(c);
    EXPECT_GE(to_dds, 0.8 * c.journal) << said;
    EXPECT_LE(to_journal, 0.2 * c.journal) << said;
  }
  std::printf("queue: %zu fsyncs waited 50 ms or more for commits behind the dd's requests\n",
              behind);
  EXPECT_GE(behind, 3u) << "the dd's requests did not hold up the victim's commits";
}

}  // namespace
}  // namespace writelab::testing
