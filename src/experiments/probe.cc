#include "experiments/probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/clock.h"

namespace writelab {

std::expected<std::unique_ptr<BystanderProbe>, Error> BystanderProbe::Create(const std::string& dir,
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
  unlink(path_.c_str());
}

void BystanderProbe::Start() {
  histogram_.Reset();
  error_ = 0;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
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

void BystanderProbe::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    uint64_t t0 = NowNs();
    ssize_t n = pwrite(fd_.get(), block_.data(), block_.size(), 0);
    int err = n < 0 ? errno : n != static_cast<ssize_t>(block_.size()) ? EIO : 0;
    if (err == 0 && fdatasync(fd_.get()) != 0) err = errno;
    uint64_t t1 = NowNs();
    if (err == 0) {
      histogram_.Record(t1 - t0);
    } else if (error_ == 0) {
      error_ = err;
    }
    lock.lock();
    uint64_t elapsed = t1 - t0;
    if (elapsed < period_ns_)
      cv_.wait_for(lock, std::chrono::nanoseconds(period_ns_ - elapsed), [this] { return stop_; });
  }
}

}  // namespace writelab
