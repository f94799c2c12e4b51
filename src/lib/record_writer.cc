// SPDX-License-Identifier: MIT
#include "writelab/record_writer.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "port/write_all.h"

namespace writelab {
namespace {

uint64_t MonoNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              std::atomic<uint32_t>::is_always_lock_free);

uint32_t* FutexWord(std::atomic<uint32_t>& word) { return reinterpret_cast<uint32_t*>(&word); }

// Sleeps while word == seen, until woken or the CLOCK_MONOTONIC deadline
// (0: none). Spurious returns are fine: callers re-check their condition.
void FutexWait(std::atomic<uint32_t>& word, uint32_t seen, uint64_t deadline_ns) {
  timespec at{}, *timeout = nullptr;
  if (deadline_ns) {
    at.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000u);
    at.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000u);
    timeout = &at;
  }
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT_BITSET_PRIVATE, seen, timeout, nullptr,
          FUTEX_BITSET_MATCH_ANY);
}

void FutexWakeAll(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

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
  int Extend(uint64_t offset, uint64_t len) override {
    // Appending writes would land after the zeros, which Close() cuts off.
    if ((flags_ & RWF_APPEND) || (fcntl(fd_.get(), F_GETFL) & O_APPEND)) return -EINVAL;
    if (int rc = FillZeros(fd_.get(), offset, offset + len); rc < 0) return rc;
    // Start writeback now, so that the commit that first needs these blocks
    // finds them on the device already.
    if (sync_file_range(fd_.get(), static_cast<off_t>(offset), static_cast<off_t>(len),
                        SYNC_FILE_RANGE_WRITE) != 0)
      return -errno;
    return 0;
  }
  int Truncate(uint64_t size) override {
    return ftruncate(fd_.get(), static_cast<off_t>(size)) == 0 ? 0 : -errno;
  }
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

// All fields are guarded by mu unless said otherwise. I/O (WriteV, DataSync,
// Extend) is done by the one thread holding the io token (io_busy), with mu
// released, so appenders keep filling `active` while a write or sync is in
// progress. Because I/O is serialised and issued in record order, a DataSync
// that completes after the holder wrote every record up to `target` covers
// all of them.
//
// Waiting: a thread checks its condition under mu, reads `epoch`, releases
// mu and sleeps on epoch (a futex). Every change a thread may wait for
// (durable advanced, io token released, error set) bumps epoch under mu and
// wakes the sleepers. A thread waiting for durability checks `durable`
// without mu when it wakes, so the wake-up after a sync does not queue every
// committer on the mutex.
//
// Group commit: a committer that finds no sync in progress leads the next
// one at once, unless fewer committers have arrived than took part in the
// last cycle (`expected`); then the first of them waits up to half the
// recent fdatasync time (or commit_wait_ns) for the rest, and the arrival
// that completes the count leads. Without this wait, committers released by
// one sync arrive while the next is already running, and each sync covers
// only about half of them.
struct RecordWriter::State {
  std::unique_ptr<RecordSink> sink;
  RecordWriterOptions options;
  mutable std::mutex mu;
  std::atomic<uint32_t> epoch{0};     // bumped under mu; futex word
  std::atomic<uint32_t> sleepers{0};  // threads sleeping on epoch
  std::unique_ptr<std::byte[]> active, spare;
  size_t active_len = 0;
  uint64_t offset = 0;  // file offset of active[0]
  uint64_t appended = 0;
  uint64_t since_sync = 0;
  std::atomic<uint64_t> durable{0};  // written under mu, read also without it
  bool io_busy = false;
  bool closing = false;  // Close() began: no more Append, Flush, Sync
  bool closed = false;
  std::optional<Error> error;
  RecordWriterStats stats;
  uint64_t zeroed_end = 0;  // zeros written up to here; io token holder only
  // Group commit
  uint64_t requests = 0;  // Durable::kYes appends since the last sync began
  uint64_t expected = 0;  // committers per cycle, estimated at the last sync's end
  bool timer = false;     // a committer is waiting for company, with a deadline
  uint64_t sync_ewma_ns = 0;
  // kEveryInterval
  std::thread ticker;
  bool stop_ticker = false;
  std::condition_variable ticker_cv;

  using Lock = std::unique_lock<std::mutex>;
  Status Failed() const { return std::unexpected(*error); }
  void Wake();
  void Sleep(Lock& lk, uint64_t deadline_ns);
  bool AcquireIo(Lock& lk);
  void ReleaseIo();
  int ExtendZeros(uint64_t end);
  int WriteOut(Lock& lk, std::span<const std::byte> big);
  void SetError(int rc, const char* what, uint64_t at);
  uint64_t CompanyWaitNs() const;
  void Lead(Lock& lk);
  Status WaitDurable(Lock& lk, uint64_t seq, bool commit);
  Status AppendLocked(Lock& lk, std::span<const std::byte> record, uint64_t* seq);
  Status TrimZeros(Lock& lk);
  void Tick();
};

// Under mu.
void RecordWriter::State::Wake() {
  epoch.fetch_add(1, std::memory_order_release);
  if (sleepers.load(std::memory_order_relaxed)) FutexWakeAll(epoch);
}

// Under mu, which it releases: sleeps until the next Wake() or the deadline
// (0: none). Returns with mu unlocked.
void RecordWriter::State::Sleep(Lock& lk, uint64_t deadline_ns) {
  const uint32_t seen = epoch.load(std::memory_order_relaxed);
  sleepers.fetch_add(1, std::memory_order_relaxed);
  lk.unlock();
  FutexWait(epoch, seen, deadline_ns);
  sleepers.fetch_sub(1, std::memory_order_relaxed);
}

// Waits for the io token; false if the writer failed meanwhile.
bool RecordWriter::State::AcquireIo(Lock& lk) {
  while (io_busy && !error) {
    Sleep(lk, 0);
    lk.lock();
  }
  if (error) return false;
  io_busy = true;
  return true;
}

void RecordWriter::State::ReleaseIo() {
  io_busy = false;
  Wake();
}

void RecordWriter::State::SetError(int rc, const char* what, uint64_t at) {
  if (!error)
    error = ErrnoError(-rc, std::string(what) + " " + sink->name() + " at " + std::to_string(at));
  Wake();
}

// With the io token held and mu released: keeps written zeros at least half
// a chunk of preallocate_bytes beyond end. Returns 0 or -errno.
int RecordWriter::State::ExtendZeros(uint64_t end) {
  const uint64_t chunk = options.preallocate_bytes;
  while (chunk && zeroed_end < end + chunk / 2) {
    if (int rc = sink->Extend(zeroed_end, chunk); rc != 0) return rc;
    zeroed_end += chunk;
  }
  return 0;
}

// With the io token held: writes everything buffered, then big (gathered in
// the same call, not copied). Returns 0 or -errno.
int RecordWriter::State::WriteOut(Lock& lk, std::span<const std::byte> big) {
  std::swap(active, spare);
  const size_t len = active_len;
  active_len = 0;
  const uint64_t start = offset, had_zeros = zeroed_end;
  offset += len + big.size();
  lk.unlock();
  const char* what = "pwritev";
  uint64_t at = start, calls = 0;
  int rc = ExtendZeros(offset);
  if (rc != 0) {
    what = "extend";
    at = zeroed_end;
  }
  iovec iov[2];
  int count = 0;
  if (len) iov[count++] = {spare.get(), len};
  if (!big.empty()) iov[count++] = {const_cast<std::byte*>(big.data()), big.size()};
  if (rc == 0)
    rc = WriteVecAll(
        iov, count, at,
        [this](const iovec* v, int n, uint64_t off) { return sink->WriteV(v, n, off); }, &calls);
  lk.lock();
  stats.write_calls += calls;
  stats.zero_bytes += zeroed_end - had_zeros;
  if (rc != 0) SetError(rc, what, at);
  return rc;
}

uint64_t RecordWriter::State::CompanyWaitNs() const {
  if (options.commit_wait_ns >= 0) return static_cast<uint64_t>(options.commit_wait_ns);
  return sync_ewma_ns / 2;
}

// Under mu, io token free: takes it, writes everything buffered, one
// DataSync, advances durable, releases the token. Returns with mu unlocked.
void RecordWriter::State::Lead(Lock& lk) {
  io_busy = true;
  const uint64_t target = appended, covered = requests;
  requests = 0;
  int rc = WriteOut(lk, {});
  if (rc == 0) {
    const uint64_t at = offset;
    lk.unlock();
    const uint64_t t0 = MonoNs();
    rc = sink->DataSync();
    const uint64_t took = MonoNs() - t0;
    lk.lock();
    ++stats.sync_calls;
    stats.sync_ns += took;
    sync_ewma_ns = sync_ewma_ns ? (7 * sync_ewma_ns + took) / 8 : took;
    if (rc != 0) SetError(rc, "fdatasync", at);
  }
  if (rc == 0 && target > durable.load(std::memory_order_relaxed))
    durable.store(target, std::memory_order_release);
  expected = covered + requests;
  since_sync = 0;
  io_busy = false;
  // Wake the committers after releasing mu: the first ones back can append
  // while the rest are still being woken.
  epoch.fetch_add(1, std::memory_order_release);
  const bool sleeping = sleepers.load(std::memory_order_relaxed) > 0;
  lk.unlock();
  if (sleeping) FutexWakeAll(epoch);
}

// Returns once records 1..seq are durable: joins the sync in progress, or
// leads the next one. commit: a Durable::kYes append, which may wait for
// company (see State). Returns with mu held or not.
Status RecordWriter::State::WaitDurable(Lock& lk, uint64_t seq, bool commit) {
  bool timing = false;  // this thread holds `timer`
  uint64_t deadline = 0;
  for (;;) {
    if (durable.load(std::memory_order_relaxed) >= seq || error) break;
    uint64_t until = 0;
    if (!io_busy) {
      const bool wait = commit && requests < expected && CompanyWaitNs() > 0;
      if (!wait || (timing && MonoNs() >= deadline)) {
        stats.wait_timeouts += wait;
        if (timing) timer = timing = false;
        Lead(lk);
        if (durable.load(std::memory_order_acquire) >= seq) return {};
        lk.lock();
        continue;
      }
      if (!timer) {
        timer = timing = true;
        deadline = MonoNs() + CompanyWaitNs();
      }
      if (timing) until = deadline;
    } else if (timing) {
      timer = timing = false;  // another committer leads
    }
    Sleep(lk, until);
    if (!timing && durable.load(std::memory_order_acquire) >= seq) return {};
    lk.lock();
  }
  if (timing) {  // covered by another's sync before the deadline: hand the timer on
    timer = false;
    Wake();
  }
  if (durable.load(std::memory_order_relaxed) >= seq) return {};
  return Failed();
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

// Close(), preallocate_bytes > 0, everything written: cuts the zeros off,
// and syncs the new size unless the policy is kNone.
Status RecordWriter::State::TrimZeros(Lock& lk) {
  if (!AcquireIo(lk)) return Failed();
  const uint64_t size = offset;
  const bool sync = options.policy != DurabilityPolicy::kNone;
  lk.unlock();
  int rc = sink->Truncate(size);
  const char* what = "truncate";
  const bool synced = rc == 0 && sync;
  if (synced) {
    rc = sink->DataSync();
    what = "fdatasync";
  }
  lk.lock();
  stats.sync_calls += synced;
  if (rc != 0) SetError(rc, what, size);
  ReleaseIo();
  return rc == 0 ? Status{} : Failed();
}

void RecordWriter::State::Tick() {
  Lock lk(mu);
  const auto period = std::chrono::nanoseconds(options.every_ns);
  while (!stop_ticker) {
    if (ticker_cv.wait_for(lk, period, [&] { return stop_ticker; })) break;
    if (error) continue;
    if (appended > durable.load(std::memory_order_relaxed))
      (void)WaitDurable(lk, appended, false);  // errors are sticky
    if (!lk.owns_lock()) lk.lock();
  }
}

Result<RecordWriter> RecordWriter::Open(const std::string& path, RecordWriterOptions options,
                                        int open_flags) {
  if (options.preallocate_bytes && (open_flags & O_APPEND))
    return std::unexpected(
        PlainError("RecordWriter: preallocate_bytes cannot be used with O_APPEND"));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | open_flags, 0644);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
  int flags = options.rwf_flags;
  return Create(MakeFileSink(UniqueFd(fd), path, flags), options);
}

Result<RecordWriter> RecordWriter::Create(std::unique_ptr<RecordSink> sink,
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
  if (int rc = state->ExtendZeros(0); rc != 0)
    return std::unexpected(ErrnoError(
        -rc, "RecordWriter: extend " + state->sink->name() + " with zeros (preallocate_bytes)"));
  state->stats.zero_bytes = state->zeroed_end;
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
  if (s.closing) return std::unexpected(PlainError("RecordWriter: Append after Close"));
  uint64_t seq = s.appended;
  if (!record.empty())
    if (auto st = s.AppendLocked(lk, record, &seq); !st) return st;
  if (durable == Durable::kYes) {
    if (seq > s.durable.load(std::memory_order_relaxed)) ++s.requests;  // needs a sync
    return s.WaitDurable(lk, seq, true);
  }
  if (s.options.policy == DurabilityPolicy::kEveryRecords && !record.empty() &&
      ++s.since_sync >= s.options.every_records)
    return s.WaitDurable(lk, seq, false);
  return {};
}

Status RecordWriter::Flush() {
  State& s = *state_;
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closing) return std::unexpected(PlainError("RecordWriter: Flush after Close"));
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
  if (s.closing) return std::unexpected(PlainError("RecordWriter: Sync after Close"));
  return s.WaitDurable(lk, s.appended, false);
}

Status RecordWriter::Close() {
  State& s = *state_;
  State::Lock lk(s.mu);
  if (s.closed) return s.error ? s.Failed() : Status{};
  s.closing = true;
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
    st = s.WaitDurable(lk, s.appended, false);
    if (!lk.owns_lock()) lk.lock();
  } else if (s.AcquireIo(lk)) {
    int rc = s.active_len ? s.WriteOut(lk, {}) : 0;
    s.ReleaseIo();
    if (rc != 0) st = s.Failed();
  } else {
    st = s.Failed();
  }
  if (st && s.options.preallocate_bytes) st = s.TrimZeros(lk);
  s.closed = true;
  return st;
}

RecordWriterStats RecordWriter::stats() const {
  const State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  RecordWriterStats out = s.stats;
  out.durable_records = s.durable.load(std::memory_order_relaxed);
  return out;
}

}  // namespace writelab
