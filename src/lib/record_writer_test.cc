// SPDX-License-Identifier: MIT
// RecordWriter with a memory sink that counts calls and injects faults
// (docs/style.md 11), and on a real file: records stay whole and in order under
// concurrent appenders, no acknowledgement precedes the fdatasync that
// covers it, and a failure reaches every waiter.
#include "writelab/record_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "expect_ok.h"
#include "writelab/log_reader.h"

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

// Keeps the file in memory. durable() is the prefix that a completed
// DataSync covers. fail_sync_at / fail_write_at: the 0-based call that fails.
class MemorySink final : public RecordSink {
 public:
  ssize_t WriteV(const iovec* iov, int count, uint64_t offset) override {
    std::lock_guard<std::mutex> lk(mu_);
    int call = writes_++;
    if (call == fail_write_at) return -fail_errno;
    size_t n = 0;
    for (int i = 0; i < count; ++i) n += iov[i].iov_len;
    if (short_writes && n > 1) n = n / 2;  // every write is short
    std::string bytes;
    for (int i = 0; i < count && bytes.size() < n; ++i)
      bytes.append(static_cast<const char*>(iov[i].iov_base),
                   std::min(iov[i].iov_len, n - bytes.size()));
    if (data_.size() < offset + n) data_.resize(offset + n);
    data_.replace(offset, n, bytes);
    return static_cast<ssize_t>(n);
  }
  int DataSync() override {
    if (sync_sleep_us) usleep(sync_sleep_us);
    std::lock_guard<std::mutex> lk(mu_);
    int call = syncs_++;
    if (call == fail_sync_at) return -fail_errno;
    durable_ = data_;
    return 0;
  }
  std::string name() const override { return "memory"; }
  int Extend(uint64_t offset, uint64_t len) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (!can_extend) return RecordSink::Extend(offset, len);
    if (extends_++ == fail_extend_at) return -ENOSPC;
    if (data_.size() < offset + len) data_.resize(offset + len, '\0');
    return 0;
  }
  int Truncate(uint64_t size) override {
    std::lock_guard<std::mutex> lk(mu_);
    data_.resize(size);
    return 0;
  }

  std::string data() const {
    std::lock_guard<std::mutex> lk(mu_);
    return data_;
  }
  std::string durable() const {
    std::lock_guard<std::mutex> lk(mu_);
    return durable_;
  }
  int syncs() const {
    std::lock_guard<std::mutex> lk(mu_);
    return syncs_;
  }

  int fail_write_at = -1;
  int fail_sync_at = -1;
  int fail_errno = EIO;
  bool can_extend = false;
  int fail_extend_at = -1;
  bool short_writes = false;
  unsigned sync_sleep_us = 0;

 private:
  mutable std::mutex mu_;
  std::string data_, durable_;
  int writes_ = 0, syncs_ = 0, extends_ = 0;
};

std::string Record(int thread, int i) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "t%02d r%05d %.*s\n", thread, i, i % 23,
                        "abcdefghijklmnopqrstuvw");
  return std::string(buf, static_cast<size_t>(n));
}

// Every thread's records appear whole and in its order.
void ExpectWholeAndInOrder(const std::string& data, int threads, int per_thread) {
  std::vector<int> next(static_cast<size_t>(threads), 0);
  std::istringstream in(data);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "t%d r%d", &t, &i), 2) << "torn record: " << line;
    ASSERT_GE(t, 0);
    ASSERT_LT(t, threads);
    ASSERT_EQ(i, next[static_cast<size_t>(t)]) << "thread " << t << " out of order";
    ASSERT_EQ(line + "\n", Record(t, i));
    ++next[static_cast<size_t>(t)];
    ++lines;
  }
  EXPECT_EQ(lines, threads * per_thread);
}

TEST(RecordWriter, ConcurrentAppendersKeepRecordsWholeAndInOrder) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  RecordWriterOptions o;
  o.buffer_bytes = 4096;  // many flushes
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  constexpr int kThreads = 8, kPer = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) ASSERT_TRUE(w->Append(Record(t, i)).has_value());
    });
  for (auto& th : threads) th.join();
  ASSERT_TRUE(w->Close().has_value());
  ExpectWholeAndInOrder(mem->data(), kThreads, kPer);
  EXPECT_EQ(w->stats().records, static_cast<uint64_t>(kThreads * kPer));
  EXPECT_LT(w->stats().write_calls, static_cast<uint64_t>(kThreads * kPer / 10));
}

TEST(RecordWriter, LargeRecordsAreGatheredAndShortWritesContinue) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  mem->short_writes = true;
  RecordWriterOptions o;
  o.buffer_bytes = 4096;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  std::string expect;
  for (int i = 0; i < 50; ++i) {
    std::string r =
        i % 7 == 3 ? std::string(5000 + i, static_cast<char>('A' + i % 26)) + "\n" : Record(0, i);
    ASSERT_TRUE(w->Append(r).has_value());
    expect += r;
  }
  ASSERT_TRUE(w->Close().has_value());
  EXPECT_EQ(mem->data(), expect);
}

// Group commit: a record is acknowledged only when the durable prefix (what
// the last completed DataSync covered) holds it; syncs are shared.
TEST(RecordWriter, AcknowledgedOnlyAfterTheCoveringSync) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  mem->sync_sleep_us = 500;
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  constexpr int kThreads = 8, kPer = 40;
  std::atomic<int> early{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) {
        std::string r = Record(t, i);
        ASSERT_TRUE(w->Append(r, Durable::kYes).has_value());
        if (mem->durable().find(r) == std::string::npos) ++early;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(early.load(), 0) << "records acknowledged before a sync covered them";
  ASSERT_TRUE(w->Close().has_value());
  ExpectWholeAndInOrder(mem->durable(), kThreads, kPer);
  EXPECT_LT(mem->syncs(), kThreads * kPer) << "no commit was shared";
  EXPECT_EQ(w->stats().durable_records, static_cast<uint64_t>(kThreads * kPer));
}

// N threads committing in step: after the first cycles, each sync covers
// (nearly) all of them, not about half as when the next sync starts while
// the committers released by the last one are still on their way back
// (without the wait this test measures exactly 4 records per sync).
TEST(RecordWriter, GroupCommitWaitsForTheCommittersOfTheLastCycle) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  mem->sync_sleep_us = 5000;
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  constexpr int kThreads = 8, kPer = 30;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) ASSERT_TRUE(w->Append(Record(t, i), Durable::kYes));
    });
  for (auto& th : threads) th.join();
  RecordWriterStats st = w->stats();
  double per_sync = static_cast<double>(st.records) / static_cast<double>(st.sync_calls);
  EXPECT_GE(per_sync, 5.5) << st.sync_calls << " syncs for " << st.records << " commits";
  EXPECT_GT(st.sync_ns, st.sync_calls * 5'000'000u) << "sync_ns counts the time in DataSync";
  ASSERT_TRUE(w->Close().has_value());
  ExpectWholeAndInOrder(mem->durable(), kThreads, kPer);
}

// When committers leave, the one left waits for them once (the wait times
// out), then syncs alone without waiting.
TEST(RecordWriter, ADepartedCommitterCostsOneWait) {
  auto sink = std::make_unique<MemorySink>();
  sink->sync_sleep_us = 200;
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  o.commit_wait_ns = 20'000'000;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) ASSERT_TRUE(w->Append(Record(t, i), Durable::kYes));
    });
  for (auto& th : threads) th.join();
  const uint64_t before = w->stats().wait_timeouts;
  for (int i = 20; i < 60; ++i) ASSERT_TRUE(w->Append(Record(0, i), Durable::kYes));
  EXPECT_LE(w->stats().wait_timeouts - before, 1u);
  ASSERT_TRUE(w->Close().has_value());
}

TEST(RecordWriter, SyncErrorReachesEveryWaiterAndStaysFinal) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  mem->sync_sleep_us = 300;
  mem->fail_sync_at = 3;
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  constexpr int kThreads = 8;
  std::atomic<int> failed_threads{0}, acked_after_failure{0}, early{0};
  std::atomic<bool> failure_seen{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        std::string r = Record(t, i);
        // An Append that starts after some thread saw the error must fail
        // too; one that started before may have been acknowledged legitimately.
        bool failed_before = failure_seen;
        auto st = w->Append(r, Durable::kYes);
        if (!st) {
          EXPECT_EQ(st.error().code, EIO) << st.error().Message();
          failure_seen = true;
          ++failed_threads;
          return;
        }
        if (mem->durable().find(r) == std::string::npos) ++early;
        if (failed_before) ++acked_after_failure;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed_threads.load(), kThreads) << "every waiter gets the error";
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(acked_after_failure.load(), 0);
  EXPECT_EQ(mem->syncs(), 4) << "no sync after the failed one";
  auto st = w->Sync();
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, EIO);
  EXPECT_NE(st.error().Message().find("fdatasync memory"), std::string::npos);
}

// Batching committers: each appends a few records without waiting, then
// SyncTo(its last LSN). A success must mean that every byte up to that LSN
// was covered by a completed sync; after the failing sync nothing is
// acknowledged again.
TEST(RecordWriter, NoSyncToIsAcknowledgedBeyondWhatASyncCovered) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  mem->sync_sleep_us = 200;
  mem->fail_sync_at = 5;
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  o.framing = RecordFraming::kLengthCrc32c;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w);
  std::atomic<int> beyond{0}, acked_after_failure{0}, failed{0};
  std::atomic<bool> failure_seen{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int batch = 0; batch < 200; ++batch) {
        uint64_t lsn = 0;
        for (int i = 0; i < 3; ++i) {
          auto r = w->Append(Record(t, batch * 3 + i));
          if (!r) break;
          lsn = *r;
        }
        const bool failed_before = failure_seen;
        auto st = lsn ? w->SyncTo(lsn) : Status(Unexpected(PlainError("append failed")));
        if (!st) {
          failure_seen = true;
          ++failed;
          return;
        }
        if (mem->durable().size() < lsn) ++beyond;
        if (failed_before) ++acked_after_failure;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 6) << "every batcher sees the failure";
  EXPECT_EQ(beyond.load(), 0) << "acknowledged beyond the durable prefix";
  EXPECT_EQ(acked_after_failure.load(), 0);
  EXPECT_EQ(mem->syncs(), 6) << "no sync after the failed one";
  EXPECT_LE(w->stats().durable_lsn, mem->durable().size());
  EXPECT_EQ(ErrorOf(w->SyncTo(0)).code, EIO) << "the error stays final";
}

// Large framed records (gathered, not copied) among small ones from other
// threads, while syncs hold the io token: every record must read back
// whole, its header right before its payload.
TEST(RecordWriter, FramedRecordsStayWholeWhenLargeOnesAreGatheredConcurrently) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  mem->sync_sleep_us = 200;
  RecordWriterOptions o;
  o.buffer_bytes = 4096;  // records over 1 KiB are gathered
  o.policy = DurabilityPolicy::kGroupCommit;
  o.framing = RecordFraming::kLengthCrc32c;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w);
  constexpr int kThreads = 4, kEach = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        std::string r = Record(t, i);
        if (i % 3 == 0) r += std::string(1500 + 100 * t, static_cast<char>('a' + t)) + "\n";
        ASSERT_TRUE(w->Append(r, i % 5 == 0 ? Durable::kYes : Durable::kNo));
      }
    });
  for (auto& th : threads) th.join();
  ASSERT_TRUE(w->Close());
  const std::string path = "/var/tmp/writelab-framed-" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << mem->data();
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader);
  int records = 0;
  for (;;) {
    auto next = reader->Next();
    ASSERT_TRUE(next);
    if (!*next) break;
    ++records;
  }
  std::filesystem::remove(path);
  EXPECT_EQ(reader->end_reason(), LogEnd::kEndOfFile) << "at " << reader->end_offset();
  EXPECT_EQ(records, kThreads * kEach);
}

TEST(RecordWriter, AppendReturnsEndOffsetsAndSyncToSyncsUpToOne) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  RecordWriterOptions o;
  o.buffer_bytes = 4096;
  auto w = RecordWriter::Create(std::move(sink), o, 100);  // an existing log of 100 bytes
  ASSERT_TRUE(w);
  EXPECT_EQ(w->stats().durable_lsn, 100u);
  EXPECT_EQ(*w->Append("abc"), 103u);
  EXPECT_EQ(*w->Append(""), 103u) << "an empty record: the end so far";
  const std::string big(3000, 'x');  // gathered, not copied
  EXPECT_EQ(*w->Append(big), 3103u);
  EXPECT_EQ(mem->syncs(), 0);
  EXPECT_EQ(ErrorOf(w->SyncTo(3104)).code, EINVAL) << "beyond the last append";
  ASSERT_TRUE(w->SyncTo(103));
  EXPECT_EQ(mem->syncs(), 1);
  EXPECT_GE(w->stats().durable_lsn, 103u);
  EXPECT_EQ(mem->durable().substr(100), "abc" + big);
  ASSERT_TRUE(w->SyncTo(50)) << "already durable";
  EXPECT_EQ(mem->syncs(), 1);
  RecordWriterStats st = w->stats();
  EXPECT_EQ(st.durable_records, 2u);
  EXPECT_EQ(st.commit_latency.count, 2u);
}

TEST(RecordWriter, WriteErrorReachesWaitersAndLaterCalls) {
  auto sink = std::make_unique<MemorySink>();
  sink->fail_write_at = 2;
  sink->fail_errno = ENOSPC;
  RecordWriterOptions o;
  o.buffer_bytes = 4096;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  Status st;
  for (int i = 0; i < 10000 && st; ++i) st = w->Append(Record(0, i));
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, ENOSPC);
  EXPECT_FALSE(w->Append(Record(0, 0), Durable::kYes).has_value());
  EXPECT_EQ(ErrorOf(w->Close()).code, ENOSPC);
}

TEST(RecordWriter, EveryRecordsPolicySyncsEveryN) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kEveryRecords;
  o.every_records = 10;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  std::string all;
  for (int i = 0; i < 95; ++i) {
    all += Record(0, i);
    ASSERT_TRUE(w->Append(Record(0, i)).has_value());
    if ((i + 1) % 10 == 0) {
      EXPECT_EQ(mem->durable(), all) << i;
    }
  }
  EXPECT_EQ(mem->syncs(), 9);
  ASSERT_TRUE(w->Close().has_value());
  EXPECT_EQ(mem->syncs(), 10);
  EXPECT_EQ(mem->durable(), all);
}

TEST(RecordWriter, EveryIntervalPolicySyncsInTheBackground) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kEveryInterval;
  o.every_ns = 2'000'000;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(w->Append(Record(0, 0)).has_value());
  for (int i = 0; i < 5000 && mem->durable().empty(); ++i) usleep(1000);
  EXPECT_EQ(mem->durable(), Record(0, 0)) << "the ticker never synced";
  ASSERT_TRUE(w->Close().has_value());
}

// preallocate_bytes: zeros stay at least half a chunk ahead of the records,
// and Close() cuts them off, then syncs the size.
TEST(RecordWriter, PreallocateKeepsZerosAheadAndCloseTrimsThem) {
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  mem->can_extend = true;
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  o.buffer_bytes = 4096;
  o.preallocate_bytes = 8192;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(mem->data(), std::string(8192, '\0')) << "the first chunk is written at Create";
  std::string all;
  for (int i = 0; i < 1000; ++i) {
    all += Record(0, i);
    ASSERT_TRUE(w->Append(Record(0, i), i % 10 == 9 ? Durable::kYes : Durable::kNo));
    if (i % 10 != 9) continue;
    std::string d = mem->durable();
    ASSERT_GE(d.size(), all.size() + 4096) << i;
    ASSERT_EQ(d.substr(0, all.size()), all);
    ASSERT_EQ(d.find_first_not_of('\0', all.size()), std::string::npos) << "zeros after records";
  }
  const RecordWriterStats st = w->stats();
  EXPECT_GE(st.zero_bytes, all.size() + 4096);
  EXPECT_EQ(st.zero_bytes % 8192, 0u);
  ASSERT_TRUE(w->Close().has_value());
  EXPECT_EQ(mem->durable(), all) << "the size after Close is synced";
}

TEST(RecordWriter, PreallocateErrors) {
  RecordWriterOptions o;
  o.preallocate_bytes = 8192;
  auto refused = RecordWriter::Create(std::make_unique<MemorySink>(), o);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, EOPNOTSUPP);
  EXPECT_NE(refused.error().Message().find("preallocate_bytes"), std::string::npos);
  EXPECT_FALSE(RecordWriter::Open("/var/tmp/writelab-never-made", o, O_APPEND).has_value());
  EXPECT_FALSE(std::filesystem::exists("/var/tmp/writelab-never-made"));
  // Appending writes would land after the zeros that Close() cuts off.
  const std::string path = "/var/tmp/writelab-append-" + std::to_string(getpid());
  RecordWriterOptions append = o;
  append.rwf_flags = RWF_APPEND;
  auto by_flag = RecordWriter::Open(path, append);
  ASSERT_FALSE(by_flag.has_value());
  EXPECT_EQ(by_flag.error().code, EINVAL);
  auto by_fd = RecordWriter::Create(
      MakeFileSink(UniqueFd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC)), path), o);
  ASSERT_FALSE(by_fd.has_value());
  EXPECT_EQ(by_fd.error().code, EINVAL);
  std::filesystem::remove(path);

  auto sink = std::make_unique<MemorySink>();
  sink->can_extend = true;
  sink->fail_extend_at = 1;  // the first extension after Create's
  o.policy = DurabilityPolicy::kGroupCommit;
  auto w = RecordWriter::Create(std::move(sink), o);
  ASSERT_TRUE(w.has_value());
  Status st;
  for (int i = 0; i < 1000 && st; ++i) st = w->Append(Record(0, i), Durable::kYes);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, ENOSPC);
  EXPECT_NE(st.error().Message().find("extend memory"), std::string::npos) << st.error().Message();
}

TEST(RecordWriter, RealFileAndBadOptions) {
  std::string path = "/var/tmp/writelab-recordwriter-" + std::to_string(getpid());
  std::string expect;
  for (int i = 0; i < 100; ++i) expect += Record(1, i);
  {
    auto w = RecordWriter::Open(path);
    ASSERT_TRUE(w.has_value());
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(w->Append(Record(1, i)).has_value());
    ASSERT_TRUE(w->Sync().has_value());
    EXPECT_EQ(w->stats().sync_calls, 1u);
  }
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), expect);
  std::filesystem::remove(path);
  {  // preallocate_bytes on a real file: zeros ahead while open, exact after Close
    RecordWriterOptions o;
    o.policy = DurabilityPolicy::kGroupCommit;
    o.preallocate_bytes = 64 << 10;
    auto w = RecordWriter::Open(path, o);
    ASSERT_TRUE(w.has_value());
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(w->Append(Record(1, i), Durable::kYes));
    EXPECT_EQ(std::filesystem::file_size(path), 64u << 10);
    ASSERT_TRUE(w->Close().has_value());
    std::ifstream again(path);
    std::stringstream t;
    t << again.rdbuf();
    EXPECT_EQ(t.str(), expect);
  }
  std::filesystem::remove(path);
  RecordWriterOptions bad;
  bad.buffer_bytes = 100;
  EXPECT_FALSE(RecordWriter::Open(path, bad).has_value());
  EXPECT_FALSE(std::filesystem::exists(path) && std::filesystem::file_size(path) > 0);
  std::filesystem::remove(path);
  EXPECT_EQ(ErrorOf(RecordWriter::Open("/nonexistent/dir/x")).code, ENOENT);
}

}  // namespace
}  // namespace writelab
