// The runner: the one place that times writes and counts what happened.
//
// WriteFully() writes a whole buffer through an engine: each system call is
// timed into the caller's histogram, EINTR is retried and counted, a short
// write is counted and the rest is written by the next call (STYLE.md 6).
// The hot path allocates nothing, takes no lock and formats nothing: errors
// come back as -errno and the caller turns them into an Error.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/histogram.h"
#include "io/engine.h"

namespace writelab {

struct WriteCounters {
  uint64_t bytes = 0;          // bytes the kernel accepted
  uint64_t calls = 0;          // system calls issued (retries included)
  uint64_t short_writes = 0;   // calls that wrote less than asked
  uint64_t eintr_retries = 0;  // calls interrupted before writing anything
};

class WriteRunner {
 public:
  // latency receives one sample per call that wrote data (interrupted,
  // refused and failed calls are counted, not timed). progress, if given, is kept equal to
  // counters().bytes (relaxed stores) for a sampler thread to read.
  WriteRunner(WriteEngine& engine, Histogram& latency, std::atomic<uint64_t>* progress = nullptr)
      : engine_(engine),
        latency_(latency),
        progress_(progress),
        alignment_(engine.caps().alignment) {}

  // Returns 0, or -errno of the first call that failed (-EINVAL before any
  // I/O for a request the engine's alignment cannot take; -EIO if the kernel
  // reports writing 0 bytes, which would otherwise loop forever).
  int WriteFully(const void* buf, uint64_t len, uint64_t offset);

  const WriteCounters& counters() const { return counters_; }

 private:
  WriteEngine& engine_;
  Histogram& latency_;
  std::atomic<uint64_t>* progress_;
  size_t alignment_;
  WriteCounters counters_;
};

}  // namespace writelab
