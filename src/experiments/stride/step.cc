// SPDX-License-Identifier: MIT
#include "experiments/stride/step.h"

#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "explain/figures.h"
#include "io/engine.h"
#include "io/file.h"
#include "io/runner.h"
#include "telemetry/procfs.h"
#include "telemetry/sampler.h"

namespace writelab {
namespace {

// Offsets step x j x unit, wrapping to 0 where a block would pass the span.
class Offsets {
 public:
  Offsets(uint64_t step, const StepEnv& env)
      : stride_(step * env.spec.unit), block_(env.spec.block), span_(env.span) {}
  uint64_t Next() {
    uint64_t off = stride_ * j_++;
    if (off + block_ > span_) {
      j_ = 1;
      off = 0;
    }
    return off;
  }

 private:
  uint64_t stride_, block_, span_;
  uint64_t j_ = 0;
};

// Whether the step's time is up, read from the clock at every 16th write
// only: a clock read costs about 35 ns on a VM (2% of a write at queue
// depth 128, where the minimal loop reads it once per io_uring_enter); the
// step runs at most 15 writes past its end, which its seconds count.
bool TimeIsUp(uint64_t op, uint64_t end) { return op % 16 == 0 && NowNs() >= end; }

// --pattern: the first 16 bytes of a block say which write and step it was.
void Stamp(std::byte* block, uint64_t op, uint64_t step) {
  std::memcpy(block, &op, sizeof op);
  std::memcpy(block + sizeof op, &step, sizeof step);
}

// Queue depth 1: pwrite, as the original's bio submitted one at a time.
void RunPsync(const StepEnv& env, uint64_t step, AlignedBuffer& buf,
              std::atomic<uint64_t>& progress, StepResult& r) {
  auto engine = env.ctx.Engine(MakePwriteEngine(env.fd, env.alignment));
  WriteRunner runner(*engine, r.latency, &progress);
  Offsets offsets(step, env);
  // seconds spans the whole step: the writes go through the runner.
  const uint64_t t0 = NowNs(), end = t0 + env.spec.duration_ns;
  for (uint64_t op = 0; !TimeIsUp(op, end); ++op) {
    if (env.ctx.Interrupted()) {
      r.outcome.interrupted = true;
      return;
    }
    uint64_t off = offsets.Next();
    if (env.spec.pattern) Stamp(buf.data(), op, step);
    if (int rc = runner.WriteFully(buf.data(), env.spec.block, off); rc != 0)
      return r.outcome.Fail(-rc, "pwrite at " + std::to_string(off));
    ++r.ops;
  }
  r.seconds = static_cast<double>(NowNs() - t0) / 1e9;
  r.bytes = runner.counters().bytes;
  r.syscalls = engine->syscalls();
}

// Queue depth qd through io_uring: a new write as soon as a slot frees, as
// the original module never waited for its bios.
void RunUring(const StepEnv& env, uint64_t step, unsigned qd, unsigned batch, AlignedBuffer& buf,
              std::atomic<uint64_t>& progress, StepResult& r) {
  auto made = MakeUringEngine(env.fd, qd, 0);
  if (!made) {
    return r.outcome.Fail(made.error().code,
                          "io_uring_queue_init (queue depth " + std::to_string(qd) + ")",
                          Feature::kIoUring);
  }
  auto engine = env.ctx.Engine(std::move(*made));
  AsyncRunner runner(*engine, qd, batch, &r.latency, &progress);
  Offsets offsets(step, env);
  // seconds spans the whole step: the writes go through the runner.
  const uint64_t t0 = NowNs(), end = t0 + env.spec.duration_ns;
  for (uint64_t op = 0; !TimeIsUp(op, end); ++op) {
    if (env.ctx.Interrupted()) {
      r.outcome.interrupted = true;
      runner.Drain();
      return;
    }
    int slot = runner.FreeSlot();
    if (slot < 0) return r.outcome.Fail(-slot, "io_uring write");
    uint64_t off = offsets.Next();
    std::byte* block = buf.data() + static_cast<size_t>(slot) * env.spec.block;
    if (env.spec.pattern) Stamp(block, op, step);
    if (int rc = runner.Issue(static_cast<unsigned>(slot), block, env.spec.block, off); rc != 0)
      return r.outcome.Fail(-rc, "io_uring write at " + std::to_string(off));
    ++r.ops;
  }
  if (int rc = runner.Drain(); rc != 0) return r.outcome.Fail(-rc, "io_uring write");
  r.seconds = static_cast<double>(NowNs() - t0) / 1e9;
  r.bytes = runner.counters().bytes;
  r.syscalls = engine->syscalls();
}

}  // namespace

StepResult RunStep(const StepEnv& env, uint64_t step, unsigned qd, unsigned batch) {
  StepResult r;
  if ((step * env.spec.unit) % env.alignment != 0) {
    r.outcome.Fail(EINVAL,
                   "offsets of " + std::to_string(step * env.spec.unit) +
                       " bytes are not a multiple of "
                       "the device's " +
                       std::to_string(env.alignment) + "-byte logical block (try --unit " +
                       std::to_string(env.alignment) + ")",
                   Feature::kDirectIo);
    return r;
  }
  AlignedBuffer buf(env.spec.block * qd, 4096);
  buf.FillPattern(step);
  std::atomic<uint64_t> progress{0};
  BlockStatReader stat(env.device);
  auto before = stat.Read();
  Sampler sampler(env.device, env.spec.interval_ns, &progress);
  sampler.Start();
  ExplainSpan explain(env.ctx.explainer, {ExplainProbe::kBlock});
  if (qd == 1 && env.spec.engine == "psync") {
    RunPsync(env, step, buf, progress, r);
  } else {
    RunUring(env, step, qd, batch, buf, progress, r);
  }
  if (auto d = explain.End()) {
    ExplainValues(*env.ctx.explainer, *d, {r.ops, r.seconds}, {ExplainProbe::kBlock}, r.explained);
    if (env.ctx.explainer->Sees(ExplainProbe::kBlock)) r.request_sizes = RequestSizeSeries(*d);
  }
  r.timeline = TimelineSeries(sampler.Stop(), 0,  // a step is one trial
                              static_cast<double>(env.spec.interval_ns) / 1e9);
  auto after = stat.Read();
  if (before && after) {
    r.have_device = true;
    r.device_writes = after->writes - before->writes;
    r.device_merges = after->write_merges - before->write_merges;
    r.device_bytes = (after->write_sectors - before->write_sectors) * 512;
  }
  return r;
}

}  // namespace writelab
