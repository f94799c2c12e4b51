// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "expect_ok.h"
#include "io/file.h"
#include "telemetry/identify.h"
#include "telemetry/pagecache.h"
#include "telemetry/procfs.h"
#include "telemetry/sampler.h"
#include "telemetry/sysfs_block.h"

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

// The sampler's thread and SampleNow from two writer threads at once,
// while this test's writes and fsyncs keep the disk's counters moving:
// sorted by time, no counter goes back (an interleaving once stamped one
// sample first and read its counters last: merges 3 then 2, a difference
// of 2^64 - 1 on the timeline).
TEST(Sampler, ConcurrentReadingsKeepTheCountersInTimeOrder) {
  const std::string dir = "/var/tmp";
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  const std::string disk = SysfsBlockName(DiskOf(st.st_dev));
  if (disk.empty() || !std::filesystem::exists("/sys/block/" + disk + "/stat"))
    GTEST_SKIP() << dir << " is on no block device";
  char path[] = "/var/tmp/writelab-sampler-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  Sampler s(disk, 10'000'000, nullptr);
  s.Start();
  std::atomic<bool> stop{false};
  auto asker = [&] {
    while (!stop.load()) s.SampleNow();
  };
  std::thread a(asker), b(asker);
  const std::vector<char> block(64 * 1024, 'x');
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(pwrite(fd, block.data(), block.size(), (i % 64) * 65536), 65536);
    ASSERT_EQ(fdatasync(fd), 0);
  }
  stop = true;
  a.join();
  b.join();
  std::vector<SamplePoint> points = s.Stop();
  close(fd);
  ASSERT_GT(points.size(), 100u);
  EXPECT_GT(points.back().dev_writes, points.front().dev_writes) << "the disk wrote";
  for (size_t i = 1; i < points.size(); ++i) {
    EXPECT_GE(points[i].dev_writes, points[i - 1].dev_writes) << "sample " << i;
    EXPECT_GE(points[i].dev_write_merges, points[i - 1].dev_write_merges) << "sample " << i;
    EXPECT_GE(points[i].dev_write_bytes, points[i - 1].dev_write_bytes) << "sample " << i;
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace writelab
