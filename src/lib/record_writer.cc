// SPDX-License-Identifier: MIT
#include "writelab/record_writer.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
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

#include "lib/framing.h"
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
  uint64_t offset = 0;    // file offset of active[0]
  uint64_t appended = 0;  // LSN: file offset at which the last record ends
  uint64_t since_sync = 0;
  std::atomic<uint64_t> durable{0};  // LSN durable; written under mu, read also without it
  uint64_t durable_records = 0;
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
  // Commit latency, recorded without mu (LatencyHistogram's layout)
  std::array<std::atomic<uint64_t>, LatencyHistogram::kBuckets> commit_buckets{};
  std::atomic<uint64_t> commit_sum_ns{0}, commit_max_ns{0};
  // kEveryInterval
  std::thread ticker;
  bool stop_ticker = false;
  std::condition_variable ticker_cv;

  using Lock = std::unique_lock<std::mutex>;
  Unexpected<Error> Failed() const { return Unexpected(*error); }
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
  Status AppendLocked(Lock& lk, std::span<const std::byte> header,
                      std::span<const std::byte> record, uint64_t* seq);
  Status GatherLocked(Lock& lk, std::span<const std::byte> header,
                      std::span<const std::byte> record, uint64_t* seq);
  Status Commit(Lock& lk, uint64_t lsn, uint64_t t0, bool company);
  void RecordCommit(uint64_t ns);
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
  const uint64_t target = appended, target_records = stats.records, covered = requests;
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
  if (rc == 0 && target > durable.load(std::memory_order_relaxed)) {
    durable.store(target, std::memory_order_release);
    durable_records = target_records;
  }
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

// Copies header and record into the buffer, or gathers a large record into
// a write of its own behind its header. *seq: the record's LSN.
Status RecordWriter::State::AppendLocked(Lock& lk, std::span<const std::byte> header,
                                         std::span<const std::byte> record, uint64_t* seq) {
  const size_t cap = options.buffer_bytes;
  if (record.size() > cap / 4) return GatherLocked(lk, header, record, seq);
  while (active_len + header.size() + record.size() > cap) {
    if (!AcquireIo(lk)) return Failed();
    int rc = WriteOut(lk, {});
    ReleaseIo();
    if (rc != 0) return Failed();
  }
  if (!header.empty()) std::memcpy(active.get() + active_len, header.data(), header.size());
  std::memcpy(active.get() + active_len + header.size(), record.data(), record.size());
  active_len += header.size() + record.size();
  appended += header.size() + record.size();
  *seq = appended;
  ++stats.records;
  stats.bytes += record.size();
  return {};
}

// A large record: with the io token held (and mu, from AcquireIo to the
// swap in WriteOut) nobody can append between its header, buffered last,
// and the record itself, gathered into the same write.
Status RecordWriter::State::GatherLocked(Lock& lk, std::span<const std::byte> header,
                                         std::span<const std::byte> record, uint64_t* seq) {
  if (!AcquireIo(lk)) return Failed();
  int rc = 0;
  if (active_len + header.size() > options.buffer_bytes) rc = WriteOut(lk, {});
  if (rc == 0) {
    if (!header.empty()) std::memcpy(active.get() + active_len, header.data(), header.size());
    active_len += header.size();
    appended += header.size() + record.size();
    *seq = appended;
    rc = WriteOut(lk, record);
  }
  ReleaseIo();
  if (rc != 0) return Failed();
  ++stats.records;
  stats.bytes += record.size();
  return {};
}

void RecordWriter::State::RecordCommit(uint64_t ns) {
  commit_buckets[static_cast<size_t>(LatencyHistogram::BucketOf(ns))].fetch_add(
      1, std::memory_order_relaxed);
  commit_sum_ns.fetch_add(ns, std::memory_order_relaxed);
  uint64_t max = commit_max_ns.load(std::memory_order_relaxed);
  while (ns > max && !commit_max_ns.compare_exchange_weak(max, ns, std::memory_order_relaxed)) {
  }
}

// Waits until lsn is durable for a caller that started at t0, and records
// its commit latency on success. company: a group committer (Durable::kYes,
// SyncTo), counted in `requests` and waited for by the others.
Status RecordWriter::State::Commit(Lock& lk, uint64_t lsn, uint64_t t0, bool company) {
  if (company && lsn > durable.load(std::memory_order_relaxed)) ++requests;  // needs a sync
  Status st = WaitDurable(lk, lsn, company);
  if (st) RecordCommit(MonoNs() - t0);
  return st;
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

Result<RecordWriter> RecordWriter::Create(std::unique_ptr<RecordSink> sink,
                                          RecordWriterOptions options, uint64_t start_offset) {
  if (!sink) return Unexpected(PlainError("RecordWriter: no sink"));
  if (options.buffer_bytes < 4096)
    return Unexpected(PlainError("RecordWriter: buffer_bytes must be at least 4096"));
  if (options.policy == DurabilityPolicy::kEveryRecords && options.every_records == 0)
    return Unexpected(PlainError("RecordWriter: every_records must be greater than 0"));
  if (options.policy == DurabilityPolicy::kEveryInterval && options.every_ns == 0)
    return Unexpected(PlainError("RecordWriter: every_ns must be greater than 0"));
  auto state = std::make_unique<State>();
  state->sink = std::move(sink);
  state->options = options;
  state->active = std::make_unique_for_overwrite<std::byte[]>(options.buffer_bytes);
  state->spare = std::make_unique_for_overwrite<std::byte[]>(options.buffer_bytes);
  state->offset = state->appended = state->zeroed_end = start_offset;
  state->durable.store(start_offset, std::memory_order_relaxed);
  if (int rc = state->ExtendZeros(start_offset); rc != 0)
    return Unexpected(ErrnoError(
        -rc, "RecordWriter: extend " + state->sink->name() + " with zeros (preallocate_bytes)"));
  state->stats.zero_bytes = state->zeroed_end - start_offset;
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

Result<uint64_t> RecordWriter::Append(std::span<const std::byte> record, Durable durable) {
  State& s = *state_;
  const uint64_t t0 = durable == Durable::kYes ? MonoNs() : 0;
  std::byte header[kFrameHeader];
  std::span<const std::byte> head;
  if (s.options.framing == RecordFraming::kLengthCrc32c && !record.empty()) {
    if (record.size() > UINT32_MAX)
      return Unexpected(ErrnoError(EINVAL, "RecordWriter: a framed record must be under 4 GiB"));
    EncodeFrameHeader(header, record.data(), static_cast<uint32_t>(record.size()));
    head = header;
  }
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closing) return Unexpected(PlainError("RecordWriter: Append after Close"));
  uint64_t seq = s.appended;
  if (!record.empty())
    if (auto st = s.AppendLocked(lk, head, record, &seq); !st) return Unexpected(st.error());
  Status st;
  if (durable == Durable::kYes)
    st = s.Commit(lk, seq, t0, true);
  else if (s.options.policy == DurabilityPolicy::kEveryRecords && !record.empty() &&
           ++s.since_sync >= s.options.every_records)
    st = s.WaitDurable(lk, seq, false);
  if (!st) return Unexpected(std::move(st).error());
  return seq;
}

Status RecordWriter::SyncTo(uint64_t lsn) {
  State& s = *state_;
  const uint64_t t0 = MonoNs();
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closing) return Unexpected(PlainError("RecordWriter: SyncTo after Close"));
  if (lsn > s.appended)
    return Unexpected(ErrnoError(EINVAL, "RecordWriter: SyncTo(" + std::to_string(lsn) +
                                             ") beyond the last append (" +
                                             std::to_string(s.appended) + ")"));
  return s.Commit(lk, lsn, t0, true);
}

Status RecordWriter::Flush() {
  State& s = *state_;
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closing) return Unexpected(PlainError("RecordWriter: Flush after Close"));
  if (!s.AcquireIo(lk)) return s.Failed();
  int rc = s.active_len ? s.WriteOut(lk, {}) : 0;
  s.ReleaseIo();
  if (rc != 0) return s.Failed();
  return {};
}

Status RecordWriter::Sync() {
  State& s = *state_;
  const uint64_t t0 = MonoNs();
  State::Lock lk(s.mu);
  if (s.error) return s.Failed();
  if (s.closing) return Unexpected(PlainError("RecordWriter: Sync after Close"));
  return s.Commit(lk, s.appended, t0, false);
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

Status RecordWriter::Rename(const std::string& to) {
  State& s = *state_;
  State::Lock lk(s.mu);
  const bool io = !s.closed;  // after Close() nobody writes: no token needed
  if (io && !s.AcquireIo(lk)) return s.Failed();
  const std::string from = s.sink->name();
  lk.unlock();
  int rc = s.sink->Rename(to);
  lk.lock();
  if (io) s.ReleaseIo();
  if (rc != 0) return Unexpected(ErrnoError(-rc, "rename " + from + " to " + to));
  return {};
}

RecordWriterStats RecordWriter::stats() const {
  const State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  RecordWriterStats out = s.stats;
  out.durable_records = s.durable_records;
  out.durable_lsn = s.durable.load(std::memory_order_relaxed);
  LatencyHistogram& h = out.commit_latency;
  for (size_t b = 0; b < h.buckets.size(); ++b) {  // count agrees with the buckets
    h.buckets[b] = s.commit_buckets[b].load(std::memory_order_relaxed);
    h.count += h.buckets[b];
  }
  h.sum_ns = s.commit_sum_ns.load(std::memory_order_relaxed);
  h.max_ns = s.commit_max_ns.load(std::memory_order_relaxed);
  return out;
}

}  // namespace writelab
