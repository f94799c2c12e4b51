// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "expect_ok.h"
#include "io/file.h"
#include "telemetry/identify.h"
#include "telemetry/pagecache.h"
#include "telemetry/procfs.h"
#include "telemetry/sampler.h"

namespace writelab {
namespace {

TEST(ParseMeminfo, ReadsFieldsInBytes) {
  auto m = ParseMeminfo(
      "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable: 2000 kB\nBuffers: 5 kB\n"
      "Cached:          1000 kB\nSwapCached: 7 kB\nDirty:             12 kB\n"
      "Writeback:          3 kB\nWritebackTmp: 99 kB\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->total, 24000000ull * 1024);
  EXPECT_EQ(m->cached, 1000u * 1024);  // not SwapCached
  EXPECT_EQ(m->dirty, 12u * 1024);
  EXPECT_EQ(m->writeback, 3u * 1024);  // not WritebackTmp
  EXPECT_EQ(m->available, 2000u * 1024);
  EXPECT_FALSE(ParseMeminfo("MemTotal: 1 kB\n").has_value());
}

TEST(ParseBlockStat, ReadsWriteFields) {
  auto b = ParseBlockStat(
      "    1000      20   30000    400     5000     600    70000    8000     3    900   9000\n");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->writes, 5000u);
  EXPECT_EQ(b->write_merges, 600u);
  EXPECT_EQ(b->write_sectors, 70000u);
  EXPECT_EQ(b->write_ticks_ms, 8000u);
  EXPECT_EQ(b->in_flight, 3u);
  EXPECT_FALSE(ParseBlockStat("1 2 3").has_value());
}

TEST(MeminfoReader, RereadsLiveValues) {
  MeminfoReader r;
  auto a = r.Read();
  auto b = r.Read();
  ASSERT_TRUE(a && b);
  EXPECT_GT(a->total, 0u);
  EXPECT_EQ(a->total, b->total);
}

// A descriptor is seen as one file: its stat and its path agree, and a pipe
// is seen as a pipe (its open is never run).
TEST(ViewDescriptor, GivesTheStatAndPathOfOneFile) {
  const std::string path = "/var/tmp/writelab-view-" + std::to_string(getpid());
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd);
  ASSERT_EQ(write(fd.get(), "abc", 3), 3);
  auto v = ViewDescriptor("/proc/self/fd/" + std::to_string(fd.get()));
  unlink(path.c_str());
  ASSERT_TRUE(v);
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  EXPECT_EQ(v->st.st_ino, st.st_ino);
  EXPECT_EQ(v->st.st_size, 3);
  EXPECT_EQ(v->path, path);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  auto pv = ViewDescriptor("/proc/self/fd/" + std::to_string(p[1]));
  ASSERT_TRUE(pv);
  EXPECT_TRUE(S_ISFIFO(pv->st.st_mode));
  close(p[0]);
  close(p[1]);
  EXPECT_FALSE(ViewDescriptor("/proc/self/fd/99999"));
}

TEST(Identify, HostHasKernelAndMemory) {
  Host h = IdentifyHost();
  EXPECT_FALSE(h.kernel.empty());
  EXPECT_GT(h.cpus, 0);
  EXPECT_GT(h.memory_bytes, 0u);
  EXPECT_TRUE(h.vm.count("dirty_ratio"));
}

TEST(Identify, TmpfsHasNoBlockDevice) {
  if (!std::filesystem::exists("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  Target t = IdentifyTarget("/dev/shm");
  if (t.fs_type != "tmpfs") GTEST_SKIP() << "/dev/shm is " << t.fs_type << ", not tmpfs";
  EXPECT_TRUE(t.device.empty());
  EXPECT_EQ(t.mount_point, "/dev/shm");
}

TEST(Identify, BlockBackedDirectoryFindsItsQueue) {
  Target t = IdentifyTarget("/var/tmp");
  EXPECT_FALSE(t.fs_type.empty());
  if (t.device.empty()) GTEST_SKIP() << "/var/tmp is on " << t.fs_type << " with no block device";
  EXPECT_TRUE(std::filesystem::exists("/sys/block/" + t.device));
  EXPECT_TRUE(t.logical_block_size.has_value());
  EXPECT_FALSE(t.stack.empty());
}

TEST(PageCache, SeesWhatWasJustWrittenAndDropped) {
  std::string path;
  auto fd = CreateOwnFile("/var/tmp", "pagecache-test", O_RDWR, &path);
  ASSERT_OK(fd);
  std::string data(1 << 20, 'p');
  ASSERT_EQ(write(fd->get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
  auto before = MeasureResidency(fd->get(), path);
  ASSERT_OK(before);
  EXPECT_EQ(before->cached_bytes(), data.size());
  ASSERT_EQ(fsync(fd->get()), 0);
  posix_fadvise(fd->get(), 0, 0, POSIX_FADV_DONTNEED);
  auto after = MeasureResidency(fd->get(), path);
  ASSERT_TRUE(after.has_value());
  EXPECT_LT(after->cached_bytes(), data.size());
  unlink(path.c_str());
}

// A run shorter than the interval still gets a timeline: about 10 samples,
// evenly spread, the one asked for kept; the observer runs once per interval.
TEST(Sampler, AShortRunGetsAboutTenSamples) {
  std::atomic<uint64_t> progress{0};
  int observed = 0;
  Sampler s("", 1'000'000'000, &progress, [&](const SamplePoint&) { ++observed; });
  s.Start();
  usleep(250'000);
  s.SampleNow();
  usleep(250'000);
  std::vector<SamplePoint> points = s.Stop();
  EXPECT_GE(points.size(), 7u) << "a 0.5 s run at a 1 s interval";
  EXPECT_LE(points.size(), 13u);
  EXPECT_EQ(
      std::count_if(points.begin(), points.end(), [](const SamplePoint& p) { return p.asked; }), 1);
  EXPECT_EQ(observed, 0) << "no interval passed";
  Series t = TimelineSeries(points, 0, 1.0);
  EXPECT_LT(t.interval_s, 0.1) << "the series says how far apart its samples are";
}

// A run of many intervals is sampled at the interval asked for.
TEST(Sampler, ALongRunKeepsTheIntervalAskedFor) {
  Sampler s("", 20'000'000, nullptr);
  s.Start();
  usleep(600'000);
  std::vector<SamplePoint> points = s.Stop();
  // One a slot of 20 ms over 0.6 s (and the first and last): about 31, not
  // the 50 the fast start took. No slot of the fast start keeps two.
  EXPECT_GE(points.size(), 20u);
  EXPECT_LE(points.size(), 33u);
  for (size_t i = 2; i + 1 < points.size() && points[i].t_s < 0.2; ++i)
    EXPECT_NE(static_cast<int>(points[i].t_s / 0.02), static_cast<int>(points[i - 1].t_s / 0.02))
        << "sample " << i;
}

// The disk's cumulative counters once read one merge lower than 0.5 ms
// before: the interval counts no merge (not 2^64 - 1), and the column
// still sums to the run's total.
TEST(TimelineSeries, ACounterReadLowerThanBeforeCountsNothingForItsInterval) {
  std::vector<SamplePoint> points;
  const uint64_t merges[] = {1, 3, 2, 3, 5}, writes[] = {10, 40, 39, 70, 100};
  for (int i = 0; i < 5; ++i) {
    SamplePoint p;
    p.t_s = 0.01 * (i + 1);
    p.have_progress = true;
    p.bytes = i == 2 ? 4096 : 8192u * (i + 1);  // the progress counter too
    p.have_device = true;
    p.dev_write_merges = merges[i];
    p.dev_writes = writes[i];
    p.dev_write_bytes = writes[i] * 4096;
    points.push_back(p);
  }
  Series t = TimelineSeries(points, 0, 0.01);
  ASSERT_EQ(t.points.size(), 4u);
  auto column = [&](const char* name) {
    for (size_t c = 0; c < t.columns.size(); ++c)
      if (t.columns[c].name == name) return c;
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  const size_t m = column("device_write_merges"), w = column("device_writes"),
               mb = column("device_written"), tp = column("throughput");
  double merged = 0, written = 0;
  for (const auto& row : t.points) {
    for (double v : row) EXPECT_LT(v, 1e12) << "a wrapped difference";
    EXPECT_GE(row[m], 0);
    EXPECT_GE(row[mb], 0);
    EXPECT_GE(row[tp], 0);
    merged += row[m];
    written += row[w];
  }
  EXPECT_EQ(t.points[1][m], 0) << "the interval whose read was lower";
  EXPECT_EQ(t.points[2][m], 0) << "back to the highest read: nothing new";
  EXPECT_EQ(merged, 4) << "5 - 1: the run's merges";
  EXPECT_EQ(written, 90) << "100 - 10: the run's writes";
}

}  // namespace
}  // namespace writelab
