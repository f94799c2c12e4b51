// SPDX-License-Identifier: MIT
// The runner: the one place that times writes and counts what happened.
//
// WriteFully() writes a whole buffer through an engine: each system call is
// timed into the caller's histogram, EINTR is retried and counted, a short
// write is counted and the rest is written by the next call (docs/style.md 6).
// The hot path allocates nothing, takes no lock and formats nothing: errors
// come back as -errno and the caller turns them into an Error.
//
// Experiments that time a whole pass instead of each call (records: a line
// costs less than two clock reads) build an untimed runner; it counts the
// same way. AsyncRunner does the same for engines that complete in Reap().
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/histogram.h"
#include "io/engine.h"

namespace writelab {

struct WriteCounters {
  uint64_t bytes = 0;          // bytes the kernel accepted
  uint64_t calls = 0;          // write requests issued (retries included)
  uint64_t short_writes = 0;   // calls that wrote less than asked
  uint64_t eintr_retries = 0;  // calls interrupted before doing anything
  uint64_t syncs = 0;          // Sync calls (fsync, fdatasync, sync_file_range)
  uint64_t preallocs = 0;      // Preallocate calls (fallocate)
  uint64_t advises = 0;        // Advise calls (posix_fadvise)
};

// What both runners share: the engine's other operations, timed and counted
// the same way as writes. An experiment never reads the clock around a
// system call; it names the histogram the call goes into.
class OpRunner {
 public:
  // 0 or -errno; EINTR is retried and counted. When into is given, or the
  // runner is timed, each call that succeeded is timed: into (if given) gets
  // one sample, and last_ns() says how long the call took. An async runner
  // must Drain() first: a sync does not wait for requests in flight.
  int Sync(const SyncOp& op, Histogram* into = nullptr);
  int Preallocate(const PreallocOp& op, Histogram* into = nullptr);
  int Advise(const AdviseOp& op, Histogram* into = nullptr);

  // Time in system calls of the last operation that succeeded (all the calls
  // of a WriteFully or WriteVecFully); 0 from an untimed runner.
  uint64_t last_ns() const { return last_ns_; }
  const WriteCounters& counters() const { return counters_; }

 protected:
  OpRunner(WriteEngine& engine, bool timed) : engine_(engine), timed_(timed) {}
  template <class Call>
  int Timed(Histogram* into, uint64_t& count, Call call);

  WriteEngine& engine_;
  bool timed_;
  uint64_t last_ns_ = 0;
  WriteCounters counters_;
};

class WriteRunner : public OpRunner {
 public:
  // latency receives one sample per call that wrote data (interrupted,
  // refused and failed calls are counted, not timed). progress, if given, is
  // kept equal to counters().bytes (relaxed stores) for a sampler thread.
  WriteRunner(WriteEngine& engine, Histogram& latency, std::atomic<uint64_t>* progress = nullptr)
      : OpRunner(engine, true),
        latency_(&latency),
        progress_(progress),
        alignment_(engine.caps().alignment) {}
  // Untimed: no clock read per call.
  explicit WriteRunner(WriteEngine& engine)
      : OpRunner(engine, false),
        latency_(nullptr),
        progress_(nullptr),
        alignment_(engine.caps().alignment) {}

  // Returns 0, or -errno of the first call that failed (-EINVAL before any
  // I/O for a request the engine's alignment cannot take; -EIO if the kernel
  // reports writing 0 bytes, which would otherwise loop forever).
  int WriteFully(const void* buf, uint64_t len, uint64_t offset);
  // The same for iov[0..count) (count <= IOV_MAX) on a vectored engine. A
  // short write advances iov in place: the array is consumed.
  int WriteVecFully(iovec* iov, int count, uint64_t offset);

 private:
  int64_t CallOnce(IoRequest& req, uint64_t& busy);

  Histogram* latency_;
  std::atomic<uint64_t>* progress_;
  size_t alignment_;
};

// Keeps up to depth requests in flight on an async engine (io_uring), each
// tied to a slot whose buffer the caller owns until the slot is free again.
// Short writes are requeued, EINTR/EAGAIN retried, both counted.
//
// Batching: Issue() only prepares a request; the prepared requests are
// submitted together (one Commit(), one io_uring_enter) once `batch` of them
// are waiting, or before the runner has to wait for a completion (no free
// slot, Drain). When `batch` are waiting and no slot is free, the runner's
// next step is that wait, so the submission is left to it: one
// io_uring_enter submits and waits (the minimal loop's submit-and-wait), not
// two. So with batch = depth the ring is filled, submitted in one call, and
// the refills after each reap go out together: the block layer sees them
// inside one plug and can merge neighbours. batch 1 submits every request on
// its own; batch 0 means depth.
class AsyncRunner : public OpRunner {
 public:
  AsyncRunner(WriteEngine& engine, unsigned depth, unsigned batch = 0);
  // Timed: latency gets one sample per request, from the io_uring_enter that
  // submitted it to the reap that saw its final completion (requeues of
  // short writes included); one clock reading per submission and one per
  // reap, whatever the number of requests each carries. Progress as
  // WriteRunner.
  AsyncRunner(WriteEngine& engine, unsigned depth, unsigned batch, Histogram* latency,
              std::atomic<uint64_t>* progress);

  // Waits until a slot is free and returns it, or -errno of a failed write.
  int FreeSlot();
  // Prepares [buf, buf+len) at offset on slot (from FreeSlot), and submits
  // the prepared requests when batch of them are waiting and a slot is still
  // free (with none free, the next FreeSlot or Drain submits them with its
  // wait). Returns 0 or -errno.
  int Issue(unsigned slot, const void* buf, uint64_t len, uint64_t offset);
  // Submits what is prepared and waits for everything in flight; 0 or
  // -errno of the first failure.
  int Drain();

  // Submissions made (Commit calls that had something to submit).
  uint64_t submits() const { return submits_; }

 private:
  int Queue(IoRequest& req);
  void StampSubmitted();
  int SubmitPrepared();
  int ReapSome();

  Histogram* latency_ = nullptr;
  std::atomic<uint64_t>* progress_ = nullptr;
  std::vector<IoRequest> reqs_;
  std::vector<IoRequest*> done_;
  std::vector<unsigned> free_;
  std::vector<IoRequest*> unstamped_;  // prepared for the first time, not yet submitted:
  unsigned unstamped_n_ = 0;           // the first unstamped_n_ (room for every slot)
  unsigned batch_;
  unsigned prepared_ = 0;   // queued in the engine, not yet submitted
  unsigned in_flight_ = 0;  // prepared or submitted, not yet reaped
  uint64_t submits_ = 0;
};

}  // namespace writelab
