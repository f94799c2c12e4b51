// SPDX-License-Identifier: MIT
// The telemetry sampler: a thread that, every interval, reads the
// experiment's progress counter, /proc/meminfo and the target device's
// /sys/block/DEV/stat. The experiment's hot loop only stores into an atomic;
// everything else (reading, parsing, storing, printing progress) happens here.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "telemetry/procfs.h"

namespace writelab {

struct SamplePoint {
  double t_s = 0;              // since Start()
  bool asked = false;          // taken by SampleNow(): kept when samples are thinned
  bool have_progress = false;  // bytes is measured (a progress counter was given)
  uint64_t bytes = 0;          // experiment progress, cumulative
  uint64_t dirty = 0;          // /proc/meminfo, bytes
  uint64_t writeback = 0;
  uint64_t cached = 0;
  bool have_device = false;
  uint64_t dev_writes = 0;  // cumulative since Start()
  uint64_t dev_write_merges = 0;
  uint64_t dev_write_bytes = 0;
  uint64_t dev_in_flight = 0;  // instantaneous
};

// Short runs get about kMinSamples samples whatever the interval: for the
// first kMinSamples intervals the thread samples 20 times as often (at most
// every 10 ms), and Stop() thins those samples to an even spacing of
// elapsed / kMinSamples, but never closer than the fast rate nor wider than
// the interval. A 0.5 s row at a 1 s interval gets 10 samples; a 60 s one
// gets one a second, as asked. The observer is called once per interval.
class Sampler {
 public:
  static constexpr int kMinSamples = 10;

  using Observer = std::function<void(const SamplePoint&)>;

  // device: "vda" or "" for none. observer (optional) is called on the sampler
  // thread after each sample, e.g. to print a progress line.
  Sampler(const std::string& device, uint64_t interval_ns, const std::atomic<uint64_t>* progress,
          Observer observer = nullptr);
  ~Sampler();

  void Start();
  // Takes a sample now, from the caller's thread (e.g. at the end of a write
  // phase, when Dirty peaks), besides the periodic ones, and returns it.
  SamplePoint SampleNow();
  // Takes a last sample and stops the thread; returns every sample.
  std::vector<SamplePoint> Stop();
  // When Start() was called (NowNs): the samples' t_s = 0.
  uint64_t start_ns() const { return start_ns_; }

 private:
  void Loop();
  SamplePoint Take();
  uint64_t FastInterval() const;
  void Thin(double elapsed_s);

  uint64_t interval_ns_;
  const std::atomic<uint64_t>* progress_;
  Observer observer_;
  uint64_t start_ns_ = 0;
  std::vector<SamplePoint> points_;
  std::mutex mu_;
  std::mutex take_mu_;  // Take: one at a time (the thread, SampleNow, Stop)
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  MeminfoReader meminfo_;
  BlockStatReader blockstat_;
  BlockSample base_{};  // device counters at Start()
};

// Series "timeline" (interval_s: the samples' mean spacing, or interval_s
// when there are fewer than 2): t (s), MB/s in the interval, bytes, Dirty, Writeback,
// Cached (bytes), device writes completed and merged, MB written to the
// device in the interval, device requests in flight.
Series TimelineSeries(const std::vector<SamplePoint>& points, int trial, double interval_s);

}  // namespace writelab
