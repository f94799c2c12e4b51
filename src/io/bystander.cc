// SPDX-License-Identifier: MIT
#include "io/bystander.h"

#include <unistd.h>

#include <future>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/clock.h"
#include "io/engine.h"
#include "io/own_files.h"
#include "io/runner.h"

namespace writelab {

Result<std::unique_ptr<BystanderProbe>> BystanderProbe::Create(const std::string& dir,
                                                               uint64_t period_ns) {
  std::string path;
  auto fd = CreateOwnFile(dir, "probe", O_WRONLY, &path);
  if (!fd) return std::unexpected(fd.error());
  return std::unique_ptr<BystanderProbe>(new BystanderProbe(std::move(*fd), path, period_ns));
}

BystanderProbe::BystanderProbe(UniqueFd fd, std::string path, uint64_t period_ns)
    : fd_(std::move(fd)), path_(std::move(path)), period_ns_(period_ns), block_(4096, 4096) {
  block_.FillPattern(42);
}

BystanderProbe::~BystanderProbe() {
  if (thread_.joinable()) Stop();
  if (!path_.empty()) RemoveOwnFile(path_);
}

void BystanderProbe::Start() {
  histogram_.Reset();
  samples_.clear();
  samples_.reserve(kMaxSamples);
  error_ = 0;
  stop_ = false;
  std::promise<pid_t> started;
  std::future<pid_t> tid = started.get_future();
  thread_ = std::thread([this, &started] {
    started.set_value(gettid());
    Loop();
  });
  tid_ = tid.get();
}

Histogram BystanderProbe::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  return histogram_;
}

// Each probe is a pwrite and an fdatasync through the runner; its sample is
// the two calls together.
void BystanderProbe::Loop() {
  auto engine = MakePwriteEngine(fd_.get());
  WriteRunner runner(*engine, writes_);
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    const uint64_t at = NowNs();
    int rc = runner.WriteFully(block_.data(), block_.size(), 0);
    uint64_t elapsed = runner.last_ns();
    if (rc == 0) rc = runner.Sync({SyncKind::kFdatasync});
    if (rc == 0) {
      elapsed += runner.last_ns();
      histogram_.Record(elapsed);
      if (samples_.size() < kMaxSamples) samples_.push_back({at, elapsed});
    } else if (error_ == 0) {
      error_ = -rc;
    }
    lock.lock();
    if (elapsed < period_ns_)
      cv_.wait_for(lock, std::chrono::nanoseconds(period_ns_ - elapsed), [this] { return stop_; });
  }
}

}  // namespace writelab
