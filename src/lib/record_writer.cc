#include "writelab/record_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace writelab {
namespace {

class FileSink final : public RecordSink {
 public:
  FileSink(UniqueFd fd, std::string path, int flags)
      : fd_(std::move(fd)), path_(std::move(path)), flags_(flags) {}
  ssize_t WriteV(const iovec* iov, int count, uint64_t offset) override {
    auto off = static_cast<off_t>(offset);
    ssize_t n =
        flags_ ? pwritev2(fd_.get(), iov, count, off, flags_) : pwritev(fd_.get(), iov, count, off);
    return n >= 0 ? n : -errno;
  }
  int DataSync() override { return fdatasync(fd_.get()) == 0 ? 0 : -errno; }
  std::string name() const override { return path_; }

 private:
  UniqueFd fd_;
  std::string path_;
  int flags_;
};

}  // namespace

const char* DurabilityPolicyName(DurabilityPolicy policy) {
  switch (policy) {
    case DurabilityPolicy::kNone:
      return "none";
    case DurabilityPolicy::kEveryRecords:
      return "every-records";
    case DurabilityPolicy::kEveryInterval:
      return "every-interval";
    case DurabilityPolicy::kGroupCommit:
      return "group-commit";
  }
  return "?";
}

std::unique_ptr<RecordSink> MakeFileSink(UniqueFd fd, std::string path, int rwf_flags) {
  return std::make_unique<FileSink>(std::move(fd), std::move(path), rwf_flags);
}

// All fields are guarded by mu. I/O (WriteV, DataSync) is done by the one
// thread holding the io token (io_busy), with mu released, so appenders keep
// filling `active` while a write or sync is in progress. Because I/O is
// serialised and issued in record order, a DataSync that completes after the
// holder wrote every record up to `target` covers all of them.
struct RecordWriter::State {
  std::unique_ptr<RecordSink> sink;
  RecordWriterOptions options;
  mutable std::mutex mu;
  std::condition_variable cv;  // io token released, durable advanced, error set
  std::unique_ptr<std::byte[]> active, spare;
  size_t active_len = 0;
  uint64_t offset = 0;  // file offset of active[0]
  uint64_t appended = 0;
  uint64_t since_sync = 0;
  uint64_t durable = 0;
  bool io_busy = false;
  bool closed = false;
  std::optional<Error> error;
  RecordWriterStats stats;
  // kEveryInterval
  std::thread ticker;
  bool stop_ticker = false;
  std::condition_variable ticker_cv;

  using Lock = std::unique_lock<std::mutex>;
  Status Failed() const { return std::unexpected(*error); }
  bool AcquireIo(Lock& lk);
  void ReleaseIo();
  int WriteOut(Lock& lk, std::span<const std::byte> big);
  void SetError(int rc, const char* what, uint64_t at);
  Status WaitDurable(Lock& lk, uint64_t seq);
  Status AppendLocked(Lock& lk, std::span<const std::byte> record, uint64_t* seq);
  void Tick();
};

// Waits for the io token; false if the writer failed meanwhile.
bool RecordWriter::State::AcquireIo(Lock& lk) {
  cv.wait(lk, [&] { return !io_busy || error; });
  if (error) return false;
  io_busy = true;
  return true;
}

void RecordWriter::State::ReleaseIo() {
  io_busy = false;
  cv.notify_all();
}

void RecordWriter::State::SetError(int rc, const char* what, uint64_t at) {
  if (!error)
    error = ErrnoError(-rc, std::string(what) + " " + sink->name() + " at " + std::to_string(at));
  cv.notify_all();
}

// With the io token held: writes everything buffered, then big (gathered in
// the same call, not copied). Returns 0 or -errno.
int RecordWriter::State::WriteOut(Lock& lk, std::span<const std::byte> big) {
  std::swap(active, spare);
  const size_t len = active_len;
  active_len = 0;
  const uint64_t start = offset;
  offset += len + big.size();
  lk.unlock();
  iovec iov[2];
  int count = 0;
  if (len) iov[count++] = {spare.get(), len};
  if (!big.empty()) iov[count++] = {const_cast<std::byte*>(big.data()), big.size()};
  iovec* p = iov;
  uint64_t left = len + big.size(), at = start, calls = 0;
  int rc = 0;
  while (left > 0) {
    ssize_t n = sink->WriteV(p, count, at);
    ++calls;
    if (n == -EINTR) continue;
    if (n <= 0) {
      rc = n < 0 ? static_cast<int>(n) : -EIO;
      break;
    }
    auto w = static_cast<uint64_t>(n);
    left -= w;
    at += w;
    while (w > 0) {  // consume what was written (a short write continues)
      uint64_t take = std::min<uint64_t>(w, p->iov_len);
      p->iov_base = static_cast<std::byte*>(p->iov_base) + take;
      p->iov_len -= take;
      w -= take;
      if (p->iov_len == 0) {
        ++p;
        --count;
      }
    }
  }
  lk.lock();
  stats.write_calls += calls;
  if (rc != 0) SetError(rc, "pwritev", at);
  return rc;
}

// Returns once records 1..seq are durable: joins the sync in progress, or
// leads the next one (write everything buffered, one DataSync).
Status RecordWriter::State::WaitDurable(Lock& lk, uint64_t seq) {
  for (;;) {
    if (durable >= seq) return {};
    if (error) return Failed();
    if (io_busy) {
      cv.wait(lk);
      continue;
    }
    io_busy = true;
    const uint64_t target = appended;
    int rc = WriteOut(lk, {});
    if (rc == 0) {
      const uint64_t at = offset;
      lk.unlock();
      rc = sink->DataSync();
      lk.lock();
      ++stats.sync_calls;
      if (rc != 0) SetError(rc, "fdatasync", at);
    }
    if (rc == 0) durable = std::max(durable, target);
    since_sync = 0;
    ReleaseIo();
  }
}

Status RecordWriter::State::AppendLocked(Lock& lk, std::span<const std::byte> record,
                                         uint64_t* seq) {
  const size_t cap = options.buffer_bytes;
  if (record.size() > cap / 4) {  // gathered, not copied
    if (!AcquireIo(lk)) return Failed();
    *seq = ++appended;
    int rc = WriteOut(lk, record);
    ReleaseIo();
    if (rc != 0) return Failed();
  } else {
    while (active_len + record.size() > cap) {
      if (!AcquireIo(lk)) return Failed();
      int rc = WriteOut(lk, {});
      ReleaseIo();
      if (rc != 0) return Failed();
    }
    std::memcpy(active.get() + active_len, record.data(), record.size());
    active_len += record.size();
    *seq = ++appended;
  }
  ++stats.records;
  stats.bytes += record.size();
  return {};
}

void RecordWriter::State::Tick() {
  Lock lk(mu);
  const auto period = std::chrono::nanoseconds(options.every_ns);
  while (!stop_ticker) {
    if (ticker_cv.wait_for(lk, period, [&] { return stop_ticker; })) break;
    if (error) continue;
    if (appended > durable) (void)WaitDurable(lk, appended);  // errors are sticky
  }
}

std::expected<RecordWriter, Error> RecordWriter::Open(const std::string& path,
                                                      RecordWriterOptions options, int open_flags) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | open_flags, 0644);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
  int flags = options.rwf_flags;
  return Create(MakeFileSink(UniqueFd(fd), path, flags), options);
}

std::expected<RecordWriter, Error> RecordWriter::Create(std::unique_ptr<RecordSink> sink,
                                                        RecordWriterOptions options) {
  if (!sink) return std::unexpected(PlainError("RecordWriter: no sink"));
  if (options.buffer_bytes < 4096)
    return std::unexpected(PlainError("RecordWriter: buffer_bytes must be at least 4096"));
  if (options.policy == DurabilityPolicy::kEveryRecords && options.every_records == 0)
    return std::unexpected(PlainError("RecordWriter: every_records must be greater than 0"));
  if (options.policy == DurabilityPolicy::kEveryInterval && options.every_ns == 0)
    return std::unexpected(PlainError("RecordWriter: every_ns must be greater than 0"));
  auto state = std::make_unique<State>();
  state->sink = std::move(sink);
  state->options = options;
  state->active = std::make_unique_for_overwrite<std::byte[]>(options.buffer_bytes);
  state->spare = std::make_unique_for_overwrite<std::byte[]>(options.buffer_bytes);
  if (options.policy == DurabilityPolicy::kEveryInterval) {
    State* s = state.get();  // stable: the State never moves
    state->ticker = std::thread([s] { s->Tick(); });
  }
  return RecordWriter(std::move(state));
}

RecordWriter::RecordWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
RecordWriter::RecordWriter(RecordWriter&&) noexcept = default;
RecordWriter& RecordWriter::operator=(RecordWriter&& other) noexcept {
  if (this != &other) {
    if (state_) (void)Close();
    state_ = std::move(other.state_);
  }
  return *this;
}
RecordWriter::~RecordWriter() {
  if (state_) (void)Close();
}

Status RecordWriter::Append(std::span<const std::byte> record, Durable durable) {
  State& s = *state_;
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closed) return std::unexpected(PlainError("RecordWriter: Append after Close"));
  uint64_t seq = s.appended;
  if (!record.empty())
    if (auto st = s.AppendLocked(lk, record, &seq); !st) return st;
  if (durable == Durable::kYes) return s.WaitDurable(lk, seq);
  if (s.options.policy == DurabilityPolicy::kEveryRecords && !record.empty() &&
      ++s.since_sync >= s.options.every_records)
    return s.WaitDurable(lk, seq);
  return {};
}

Status RecordWriter::Flush() {
  State& s = *state_;
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closed) return std::unexpected(PlainError("RecordWriter: Flush after Close"));
  if (!s.AcquireIo(lk)) return s.Failed();
  int rc = s.active_len ? s.WriteOut(lk, {}) : 0;
  s.ReleaseIo();
  if (rc != 0) return s.Failed();
  return {};
}

Status RecordWriter::Sync() {
  State& s = *state_;
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closed) return std::unexpected(PlainError("RecordWriter: Sync after Close"));
  return s.WaitDurable(lk, s.appended);
}

Status RecordWriter::Close() {
  State& s = *state_;
  State::Lock lk(s.mu);
  if (s.closed) return s.error ? s.Failed() : Status{};
  if (s.ticker.joinable()) {
    s.stop_ticker = true;
    s.ticker_cv.notify_all();
    lk.unlock();
    s.ticker.join();
    lk.lock();
  }
  Status st;
  if (s.error) {
    st = s.Failed();
  } else if (s.options.policy != DurabilityPolicy::kNone) {
    st = s.WaitDurable(lk, s.appended);
  } else if (s.AcquireIo(lk)) {
    int rc = s.active_len ? s.WriteOut(lk, {}) : 0;
    s.ReleaseIo();
    if (rc != 0) st = s.Failed();
  } else {
    st = s.Failed();
  }
  s.closed = true;
  return st;
}

RecordWriterStats RecordWriter::stats() const {
  const State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  RecordWriterStats out = s.stats;
  out.durable_records = s.durable;
  return out;
}

}  // namespace writelab
