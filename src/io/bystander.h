// SPDX-License-Identifier: MIT
// The bystander probe: a small application beside the experiment. Every
// period it writes 4 KiB at offset 0 of its own small file and fdatasyncs it,
// timing the pair. Its latency shows how much the experiment disturbs
// everyone else on the machine (the point of the 2009 overwrite.c thread).
#pragma once

#include <sys/types.h>
#include <array>
#include <condition_variable>

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/histogram.h"
#include "io/file.h"

namespace writelab {

class BystanderProbe {
 public:
  // Creates its file in dir (removed by the destructor).
  static Result<std::unique_ptr<BystanderProbe>> Create(const std::string& dir, uint64_t period_ns);
  ~BystanderProbe();

  void Start();
  // Stops the thread; returns the latencies recorded since Start() (each one
  // 4 KiB pwrite + fdatasync, in ns) and the first error, if any.
  Histogram Stop();
  int error() const { return error_; }  // errno of a failed write or sync, 0 if none
  // Each probe since Start(), in order: when it began (NowNs) and how long
  // it took (ns), up to kMaxSamples (room made before the thread starts: no
  // allocation while it probes); after Stop().
  static constexpr size_t kMaxSamples = 1 << 16;
  const std::vector<std::array<uint64_t, 2>>& samples() const { return samples_; }
  // The probe thread's id while it runs (from Start() on), for --explain.
  pid_t tid() const { return tid_; }

 private:
  BystanderProbe(UniqueFd fd, std::string path, uint64_t period_ns);
  void Loop();

  UniqueFd fd_;
  std::string path_;
  uint64_t period_ns_;
  AlignedBuffer block_;
  Histogram histogram_;
  Histogram writes_;  // the runner's per-write samples (not reported)
  std::vector<std::array<uint64_t, 2>> samples_;
  int error_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  pid_t tid_ = 0;
  std::thread thread_;
};

}  // namespace writelab
