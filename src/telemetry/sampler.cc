// SPDX-License-Identifier: MIT
#include "telemetry/sampler.h"

#include <algorithm>

#include "core/clock.h"
#include "core/units.h"

namespace writelab {

Sampler::Sampler(const std::string& device, uint64_t interval_ns,
                 const std::atomic<uint64_t>* progress, Observer observer)
    : interval_ns_(interval_ns),
      progress_(progress),
      observer_(std::move(observer)),
      blockstat_(device) {}

Sampler::~Sampler() {
  if (thread_.joinable()) Stop();
}

void Sampler::Start() {
  start_ns_ = NowNs();
  if (auto b = blockstat_.Read()) base_ = *b;
  points_.clear();
  points_.reserve(1024);
  stop_ = false;
  points_.push_back(Take());
  thread_ = std::thread([this] { Loop(); });
}

SamplePoint Sampler::SampleNow() {
  SamplePoint p = Take();
  p.asked = true;
  std::lock_guard lock(mu_);
  points_.push_back(p);
  return p;
}

std::vector<SamplePoint> Sampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  points_.push_back(Take());
  // SampleNow() and the thread can store out of order by a few microseconds.
  std::stable_sort(points_.begin(), points_.end(),
                   [](const SamplePoint& a, const SamplePoint& b) { return a.t_s < b.t_s; });
  Thin(points_.back().t_s);
  return std::move(points_);
}

uint64_t Sampler::FastInterval() const {
  return std::min(interval_ns_, std::max<uint64_t>(interval_ns_ / 20, 10'000'000));
}

// Of the fast samples (those of the first kMinSamples intervals), keeps the
// first in each slot of the spacing the run's length calls for; the
// samples after them, the first, the last and those asked for all stay.
void Sampler::Thin(double elapsed_s) {
  const double interval = static_cast<double>(interval_ns_) / 1e9;
  const double fast_until = kMinSamples * interval;
  double spacing =
      std::clamp(elapsed_s / kMinSamples, static_cast<double>(FastInterval()) / 1e9, interval);
  std::vector<SamplePoint> kept;
  int64_t last_slot = -1;
  for (size_t i = 0; i < points_.size(); ++i) {
    const SamplePoint& p = points_[i];
    auto slot = static_cast<int64_t>(p.t_s / spacing);
    bool keep =
        i == 0 || i + 1 == points_.size() || p.asked || p.t_s >= fast_until || slot > last_slot;
    if (!keep) continue;
    kept.push_back(p);
    if (p.t_s < fast_until) last_slot = std::max(last_slot, slot);
  }
  points_ = std::move(kept);
}

void Sampler::Loop() {
  const uint64_t fast_until = start_ns_ + kMinSamples * interval_ns_;
  uint64_t next = start_ns_ + FastInterval();
  uint64_t next_observed = start_ns_ + interval_ns_;
  std::unique_lock lock(mu_);
  while (!stop_) {
    uint64_t now = NowNs();
    if (now < next) {
      cv_.wait_for(lock, std::chrono::nanoseconds(next - now));
      continue;
    }
    next += next < fast_until ? FastInterval() : interval_ns_;
    lock.unlock();
    SamplePoint p = Take();
    if (observer_ && now >= next_observed) {
      observer_(p);
      next_observed += interval_ns_;
    }
    lock.lock();
    points_.push_back(p);
  }
}

SamplePoint Sampler::Take() {
  // One reading at a time: the time stamp and the counters in one order.
  // The thread and SampleNow (the writer's thread) once read them
  // interleaved: the sample stamped first read the disk's counters last,
  // and sorted by time the merges went 3, 2, a difference of 2^64 - 1.
  std::lock_guard one(take_mu_);
  SamplePoint p;
  p.t_s = static_cast<double>(NowNs() - start_ns_) / 1e9;
  if (progress_) {
    p.have_progress = true;
    p.bytes = progress_->load(std::memory_order_relaxed);
  }
  if (auto m = meminfo_.Read()) {
    p.dirty = m->dirty;
    p.writeback = m->writeback;
    p.cached = m->cached;
  }
  if (auto b = blockstat_.Read()) {
    p.have_device = true;
    p.dev_writes = b->writes - base_.writes;
    p.dev_write_merges = b->write_merges - base_.write_merges;
    p.dev_write_bytes = (b->write_sectors - base_.write_sectors) * 512;
    p.dev_in_flight = b->in_flight;
  }
  return p;
}

Series TimelineSeries(const std::vector<SamplePoint>& points, int trial, double interval_s) {
  Series s;
  s.key = "timeline";
  s.trial = trial;
  s.interval_s = points.size() >= 2 ? (points.back().t_s - points.front().t_s) /
                                          static_cast<double>(points.size() - 1)
                                    : interval_s;
  // Progress and device columns only where they are measured (no progress
  // counter, no block device on tmpfs): never zeros that look measured.
  bool progress = !points.empty() && points.front().have_progress;
  s.columns = {{"t", "s"}};
  if (progress) s.columns.insert(s.columns.end(), {{"throughput", "MB/s"}, {"written", "bytes"}});
  s.columns.insert(s.columns.end(),
                   {{"dirty", "bytes"}, {"writeback", "bytes"}, {"cached", "bytes"}});
  bool device = !points.empty() && points.front().have_device;
  if (device) {
    s.columns.insert(s.columns.end(), {{"device_writes", "I/Os"},
                                       {"device_write_merges", "merges"},
                                       {"device_written", "MB/s"},
                                       {"device_in_flight", "requests"}});
  }
  for (size_t i = 1; i < points.size(); ++i) {
    const SamplePoint& a = points[i - 1];
    const SamplePoint& b = points[i];
    double dt = b.t_s - a.t_s;
    if (dt <= 0) continue;
    auto rate = [&](uint64_t x, uint64_t y) { return static_cast<double>(y - x) / dt / kMB; };
    auto num = [](uint64_t v) { return static_cast<double>(v); };
    std::vector<double> row = {b.t_s};
    if (progress) row.insert(row.end(), {rate(a.bytes, b.bytes), num(b.bytes)});
    row.insert(row.end(), {num(b.dirty), num(b.writeback), num(b.cached)});
    if (device) {
      row.insert(row.end(),
                 {num(b.dev_writes - a.dev_writes), num(b.dev_write_merges - a.dev_write_merges),
                  rate(a.dev_write_bytes, b.dev_write_bytes), num(b.dev_in_flight)});
    }
    s.points.push_back(std::move(row));
  }
  return s;
}

}  // namespace writelab
