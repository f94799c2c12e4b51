// SPDX-License-Identifier: MIT
// What group commit can reach on this machine when the sync itself costs
// nothing but time: THREADS threads call RecordWriter::Append(line,
// Durable::kYes) for SECONDS on a sink whose fdatasync sleeps SYNC_US
// microseconds (clock_nanosleep, timer slack 1 ns: the thread blocks as in a
// real fdatasync) and whose writes go nowhere. The ceiling is
// THREADS / mean sync time, as in `writelab records --commit`; what is
// missing from it here is the library's own cost per cycle: waking the
// committers, their next Append, the wait for company. bench/records.sh runs
// it with the mean fdatasync time the real rows measured.
//
// Prints: threads, sync_us, commits_s, ceiling_commits_s, fraction,
// records_per_sync (one line, tab-separated).
#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

#include "writelab/record_writer.h"

namespace {

uint64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

class SleepingSink final : public writelab::RecordSink {
 public:
  explicit SleepingSink(uint64_t sync_ns) : sync_ns_(sync_ns) {}
  ssize_t WriteV(const iovec* iov, int count, uint64_t) override {
    size_t n = 0;
    for (int i = 0; i < count; ++i) n += iov[i].iov_len;
    return static_cast<ssize_t>(n);
  }
  int DataSync() override {
    timespec d{static_cast<time_t>(sync_ns_ / 1'000'000'000u),
               static_cast<long>(sync_ns_ % 1'000'000'000u)};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
    return 0;
  }
  std::string name() const override { return "sleeping sink"; }

 private:
  uint64_t sync_ns_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s THREADS SYNC_US SECONDS\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  const double sync_us = std::atof(argv[2]), seconds = std::atof(argv[3]);
  if (threads < 1 || sync_us <= 0 || seconds <= 0) {
    std::fprintf(stderr, "%s: THREADS >= 1, SYNC_US > 0 and SECONDS > 0\n", argv[0]);
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1UL);  // inherited by the threads the writer's callers run on
  writelab::RecordWriterOptions o;
  o.policy = writelab::DurabilityPolicy::kGroupCommit;
  auto writer = writelab::RecordWriter::Create(
      std::make_unique<SleepingSink>(static_cast<uint64_t>(sync_us * 1000)), o);
  if (!writer) {
    std::fprintf(stderr, "%s\n", writer.error().Message().c_str());
    return 1;
  }
  std::atomic<bool> go{false};
  std::atomic<uint64_t> commits{0};
  const uint64_t length = static_cast<uint64_t>(seconds * 1e9);
  uint64_t deadline = 0;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      const std::string_view line = "    return group_commit(line);  /* 42 bytes */\n";
      uint64_t mine = 0;
      while (NowNs() < deadline)
        if (writer->Append(line, writelab::Durable::kYes)) ++mine;
      commits += mine;
    });
  const uint64_t t0 = NowNs();
  deadline = t0 + length;
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  const double elapsed = static_cast<double>(NowNs() - t0) / 1e9;
  writelab::RecordWriterStats st = writer->stats();
  const double mean_sync_s =
      st.sync_calls ? static_cast<double>(st.sync_ns) / static_cast<double>(st.sync_calls) / 1e9
                    : 0;
  const double rate = static_cast<double>(commits.load()) / elapsed;
  const double ceiling = mean_sync_s > 0 ? threads / mean_sync_s : 0;
  std::printf("%d\t%.1f\t%.0f\t%.0f\t%.3f\t%.2f\n", threads, mean_sync_s * 1e6, rate, ceiling,
              ceiling > 0 ? rate / ceiling : 0,
              st.sync_calls ? static_cast<double>(commits.load()) / st.sync_calls : 0);
  return writer->Close() ? 0 : 1;
}
