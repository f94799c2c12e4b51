// SPDX-License-Identifier: MIT
// Google Benchmark microbenchmarks of the measurement core: what writelab
// itself costs per recorded write. Goals (issue #2): Histogram::Record under
// 5 ns; the timed write loop adds little over a bare pwrite on tmpfs.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <random>

#include "core/clock.h"
#include "core/histogram.h"
#include "io/engine.h"
#include "io/runner.h"

namespace writelab {
namespace {

void BM_HistogramRecord(benchmark::State& state) {
  Histogram h;
  std::mt19937_64 rng(1);
  std::vector<uint64_t> values(4096);
  for (auto& v : values) v = rng() % 10'000'000;  // up to 10 ms
  size_t i = 0;
  for (auto _ : state) {
    h.Record(values[i++ & 4095]);
  }
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

void BM_NowNs(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(NowNs());
}
BENCHMARK(BM_NowNs);

// The runner's timed loop against a bare pwrite, 4 KiB to /dev/shm.
void BM_WriteLoop(benchmark::State& state, bool timed) {
  std::string path = "/dev/shm/writelab-microbench-" + std::to_string(getpid());
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    state.SkipWithError("cannot create a file in /dev/shm");
    return;
  }
  std::vector<char> buf(4096, 'x');
  auto engine = MakePwriteEngine(fd);
  Histogram h;
  std::atomic<uint64_t> progress{0};
  WriteRunner runner(*engine, h, &progress);
  uint64_t off = 0;
  for (auto _ : state) {
    if (timed) {
      runner.WriteFully(buf.data(), buf.size(), off);
    } else {
      benchmark::DoNotOptimize(pwrite(fd, buf.data(), buf.size(), static_cast<off_t>(off)));
    }
    off = (off + 4096) % (64 << 20);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 4096);
  close(fd);
  unlink(path.c_str());
}
BENCHMARK_CAPTURE(BM_WriteLoop, runner, true);
BENCHMARK_CAPTURE(BM_WriteLoop, bare_pwrite, false);

}  // namespace
}  // namespace writelab

BENCHMARK_MAIN();
