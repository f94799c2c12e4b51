// SPDX-License-Identifier: MIT
// The runner on fake engines (docs/style.md 11): a memory engine that can return
// short writes, EINTR and errors on chosen calls, so the counters and error
// paths are tested without a disk.
#include "io/runner.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "core/clock.h"
#include "core/histogram.h"
#include "expect_ok.h"
#include "io/fault_engine.h"
#include "io/file.h"

namespace writelab {
namespace {

class FaultyMemoryEngine final : public WriteEngine {
 public:
  struct Fault {
    int call;     // 0-based call index
    int64_t res;  // what that call returns (-errno, or a short byte count)
  };
  explicit FaultyMemoryEngine(std::vector<Fault> faults, size_t alignment = 1)
      : faults_(std::move(faults)), alignment_(alignment) {}

  Submit Queue(IoRequest& req) override {
    int call = calls_++;
    int64_t n = static_cast<int64_t>(req.len);
    for (const Fault& f : faults_)
      if (f.call == call) n = f.res;
    if (n > 0) {
      if (data_.size() < req.offset + static_cast<uint64_t>(n)) data_.resize(req.offset + n);
      iovec one{const_cast<void*>(req.buf), req.len};
      const iovec* iov = req.iovcnt > 0 ? req.iov : &one;
      for (size_t left = static_cast<size_t>(n), at = req.offset; left > 0; ++iov) {
        size_t take = std::min(left, iov->iov_len);
        std::memcpy(data_.data() + at, iov->iov_base, take);
        at += take;
        left -= take;
      }
    }
    req.res = n;
    return Submit::kCompleted;
  }
  EngineCaps caps() const override { return {.vectored = true, .alignment = alignment_}; }
  std::string_view name() const override { return "faulty-memory"; }

  std::vector<char> data_;
  int calls_ = 0;

 private:
  std::vector<Fault> faults_;
  size_t alignment_;
};

TEST(WriteRunner, WritesEverythingAndCountsCalls) {
  FaultyMemoryEngine engine({});
  Histogram h;
  std::atomic<uint64_t> progress{0};
  WriteRunner runner(engine, h, &progress);
  std::string a(1000, 'a'), b(500, 'b');
  ASSERT_EQ(runner.WriteFully(a.data(), a.size(), 0), 0);
  ASSERT_EQ(runner.WriteFully(b.data(), b.size(), 1000), 0);
  EXPECT_EQ(runner.counters().bytes, 1500u);
  EXPECT_EQ(runner.counters().calls, 2u);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(progress.load(), 1500u);
  EXPECT_EQ(std::string(engine.data_.begin(), engine.data_.end()), a + b);
}

TEST(WriteRunner, ShortWritesContinueAndAreCounted) {
  FaultyMemoryEngine engine({{0, 100}, {1, 300}});
  Histogram h;
  WriteRunner runner(engine, h);
  std::string data(1000, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  ASSERT_EQ(runner.WriteFully(data.data(), data.size(), 0), 0);
  EXPECT_EQ(runner.counters().short_writes, 2u);
  EXPECT_EQ(runner.counters().calls, 3u);
  EXPECT_EQ(runner.counters().bytes, 1000u);
  EXPECT_EQ(std::string(engine.data_.begin(), engine.data_.end()), data);
}

TEST(WriteRunner, EintrIsRetriedAndCounted) {
  FaultyMemoryEngine engine({{0, -EINTR}, {1, -EINTR}});
  Histogram h;
  WriteRunner runner(engine, h);
  std::string data(64, 'z');
  ASSERT_EQ(runner.WriteFully(data.data(), data.size(), 0), 0);
  EXPECT_EQ(runner.counters().eintr_retries, 2u);
  EXPECT_EQ(runner.counters().calls, 3u);
  EXPECT_EQ(runner.counters().bytes, 64u);
}

TEST(WriteRunner, ErrorsStopAndKeepWhatWasWritten) {
  FaultyMemoryEngine engine({{2, -ENOSPC}});
  Histogram h;
  WriteRunner runner(engine, h);
  std::string data(100, 'e');
  EXPECT_EQ(runner.WriteFully(data.data(), 100, 0), 0);
  EXPECT_EQ(runner.WriteFully(data.data(), 100, 100), 0);
  EXPECT_EQ(runner.WriteFully(data.data(), 100, 200), -ENOSPC);
  EXPECT_EQ(runner.counters().bytes, 200u);
  EXPECT_EQ(runner.counters().calls, 3u);
}

TEST(WriteRunner, ZeroByteWriteIsAnErrorNotALoop) {
  FaultyMemoryEngine engine({{0, 0}});
  Histogram h;
  WriteRunner runner(engine, h);
  char c = 'q';
  EXPECT_EQ(runner.WriteFully(&c, 1, 0), -EIO);
}

TEST(WriteRunner, MisalignedRequestRefusedBeforeIo) {
  FaultyMemoryEngine engine({}, 4096);
  Histogram h;
  WriteRunner runner(engine, h);
  alignas(4096) static char buf[8192];
  EXPECT_EQ(runner.WriteFully(buf, 1000, 0), -EINVAL);
  EXPECT_EQ(runner.WriteFully(buf, 4096, 512), -EINVAL);
  EXPECT_EQ(runner.WriteFully(buf + 1, 4096, 0), -EINVAL);
  EXPECT_EQ(engine.calls_, 0);
  EXPECT_EQ(runner.WriteFully(buf, 4096, 4096), 0);
  EXPECT_EQ(engine.calls_, 1);
}

TEST(WriteRunner, VectoredShortAndFailedCallsAreCountedButOnlyDataIsTimed) {
  FaultyMemoryEngine engine({{0, -EINTR}, {1, 3}});
  Histogram h;
  WriteRunner runner(engine, h);
  std::string a = "abcde", b = "fgh";
  iovec iov[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  ASSERT_EQ(runner.WriteVecFully(iov, 2, 0), 0);
  EXPECT_EQ(std::string(engine.data_.begin(), engine.data_.end()), "abcdefgh");
  EXPECT_EQ(runner.counters().calls, 3u);
  EXPECT_EQ(runner.counters().eintr_retries, 1u);
  EXPECT_EQ(runner.counters().short_writes, 1u);
  EXPECT_EQ(h.count(), 2u);  // the interrupted call is no sample
}

TEST(WriteRunner, EngineWithoutAFileRefusesTheOtherOperations) {
  FaultyMemoryEngine engine({});
  Histogram h, syncs;
  WriteRunner runner(engine, h);
  EXPECT_EQ(runner.Sync({SyncKind::kFdatasync}, &syncs), -EOPNOTSUPP);
  EXPECT_EQ(runner.Preallocate({0, 0, 4096}), -EOPNOTSUPP);
  EXPECT_EQ(runner.Advise({0, 0, POSIX_FADV_DONTNEED}), -EOPNOTSUPP);
  EXPECT_EQ(syncs.count(), 0u);  // a refused call is no sample
  EXPECT_EQ(runner.counters().syncs, 1u);
}

// The other operations on a real file: each is the system call, counted and
// timed into the histogram the caller names.
class FileOps : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fd = CreateOwnFile("/var/tmp", "runner-test", O_RDWR, &path_);
    ASSERT_OK(fd);
    fd_ = std::move(*fd);
  }
  void TearDown() override { unlink(path_.c_str()); }
  std::string path_;
  UniqueFd fd_;
};

TEST_F(FileOps, SyncPreallocateAndAdviseAreTimedWhereTheCallerSays) {
  auto engine = MakePwriteEngine(fd_.get());
  WriteRunner runner(*engine);  // untimed writes
  Histogram syncs;
  EXPECT_EQ(runner.Preallocate({0, 0, 1 << 20}), 0);
  struct stat st;
  ASSERT_EQ(fstat(fd_.get(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  EXPECT_GE(st.st_blocks * 512, 1 << 20);
  std::string data(4096, 'd');
  ASSERT_EQ(runner.WriteFully(data.data(), data.size(), 0), 0);
  EXPECT_EQ(runner.last_ns(), 0u);  // untimed
  EXPECT_EQ(runner.Sync({SyncKind::kRange, 0, 4096, SYNC_FILE_RANGE_WRITE}), 0);
  EXPECT_EQ(runner.Sync({SyncKind::kFdatasync}, &syncs), 0);
  EXPECT_GT(runner.last_ns(), 0u);
  EXPECT_EQ(runner.Advise({0, 0, POSIX_FADV_DONTNEED}), 0);
  EXPECT_EQ(syncs.count(), 1u);
  EXPECT_EQ(runner.counters().syncs, 2u);
  EXPECT_EQ(runner.counters().preallocs, 1u);
  EXPECT_EQ(runner.counters().advises, 1u);
  EXPECT_EQ(engine->syscalls(), 1u);  // the pwrite: the others are the runner's counters
  EXPECT_EQ(runner.Preallocate({0x7fff, 0, 4096}), -EOPNOTSUPP);  // unknown mode bits
}

TEST(FaultPlan, ParsesOperationCountAndErrno) {
  auto p = ParseFaultPlan("sync:3:ENOSPC");
  ASSERT_OK(p);
  EXPECT_EQ(p->op, FaultOp::kSync);
  EXPECT_EQ(p->nth, 3u);
  EXPECT_EQ(p->error, ENOSPC);
  EXPECT_EQ(p->engine, 0u);
  p = ParseFaultPlan("preallocate:1:5@2");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->error, EIO);
  EXPECT_EQ(p->engine, 2u);
  for (const char* bad :
       {"", "sync", "sync:1", "fsync:1:EIO", "sync:0:EIO", "sync:x:EIO", "sync:1:ENOTANERRNO",
        "sync:1:0", "write:-1:EIO", "write:1:EIO@0", "write:1:EIO@", "write:1:EIO@x"})
    EXPECT_FALSE(ParseFaultPlan(bad).has_value()) << bad;
}

// An engine that fails nothing by itself.
std::unique_ptr<WriteEngine> HealthyEngine() {
  return std::make_unique<FaultyMemoryEngine>(std::vector<FaultyMemoryEngine::Fault>{});
}

TEST(FaultInjector, CountsAcrossEnginesAndFailsTheNthOnly) {
  FaultInjector faults({FaultOp::kWrite, 3, EIO});
  auto a = faults.Wrap(HealthyEngine());
  auto b = faults.Wrap(HealthyEngine());
  Histogram h;
  WriteRunner ra(*a, h), rb(*b, h);
  char c[8] = {};
  EXPECT_EQ(ra.WriteFully(c, 8, 0), 0);
  EXPECT_EQ(rb.WriteFully(c, 8, 0), 0);
  EXPECT_EQ(ra.WriteFully(c, 8, 8), -EIO);
  EXPECT_EQ(rb.WriteFully(c, 8, 8), 0);
  EXPECT_EQ(ra.Sync({}), -EOPNOTSUPP);  // other kinds pass through
  EXPECT_EQ(faults.seen(), 4u);
  EXPECT_EQ(h.count(), 3u);
}

TEST(FaultInjector, CountsInOneEngineWhenTold) {
  FaultInjector faults({FaultOp::kWrite, 2, EIO, 2});
  auto a = faults.Wrap(HealthyEngine());
  auto b = faults.Wrap(HealthyEngine());
  Histogram h;
  WriteRunner ra(*a, h), rb(*b, h);
  char c[8] = {};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ra.WriteFully(c, 8, 0), 0);
  EXPECT_EQ(rb.WriteFully(c, 8, 0), 0);
  EXPECT_EQ(rb.WriteFully(c, 8, 8), -EIO);
}

// An async engine that records what each submission (Commit, or Reap with
// requests prepared) submitted and completes requests only when Reap is
// asked, oldest first.
class RecordingAsyncEngine final : public WriteEngine {
 public:
  explicit RecordingAsyncEngine(unsigned depth) : depth_(depth) {}
  Submit Queue(IoRequest& req) override {
    if (prepared_.size() + submitted_.size() >= depth_) return Submit::kBusy;
    prepared_.push_back(&req);
    return Submit::kQueued;
  }
  Status Commit() override {
    ++commit_calls_;
    SubmitAll();
    return {};
  }
  int Reap(int min, std::span<IoRequest*> done) override {
    // Submits what is prepared (the contract: nothing unsubmitted can
    // complete), then completes `reap_per_call` of what was submitted (at
    // least min).
    if (!prepared_.empty()) SubmitAll();
    int n = 0;
    while (n < static_cast<int>(done.size()) && !submitted_.empty() &&
           (n < min || n < reap_per_call)) {
      IoRequest* r = submitted_.front();
      submitted_.erase(submitted_.begin());
      r->res = static_cast<int64_t>(r->len);
      if (short_first && r->len > 1 && shortened_.insert(r).second) r->res /= 2;
      done[static_cast<size_t>(n++)] = r;
    }
    return n;
  }
  EngineCaps caps() const override { return {.async = true}; }
  std::string_view name() const override { return "recording-async"; }

  std::vector<unsigned> commits_;  // requests submitted by each submission
  unsigned commit_calls_ = 0;      // submissions made alone, not with a reap's wait
  int reap_per_call = 1;
  // The issue stamps of each submission's requests, as they were when it
  // reached the engine.
  std::vector<std::vector<uint64_t>> stamps_;
  // Completes every request's first submission short by half (once).
  bool short_first = false;

 private:
  void SubmitAll() {
    commits_.push_back(static_cast<unsigned>(prepared_.size()));
    stamps_.emplace_back();
    for (IoRequest* r : prepared_) stamps_.back().push_back(r->issue_ns);
    for (IoRequest* r : prepared_) submitted_.push_back(r);
    prepared_.clear();
  }

  unsigned depth_;
  std::vector<IoRequest*> prepared_, submitted_;
  std::set<IoRequest*> shortened_;
};

// Issues n writes of 8 bytes, as stride does: FreeSlot, then Issue.
void IssueWrites(AsyncRunner& runner, int n) {
  static char buf[8];
  for (int i = 0; i < n; ++i) {
    int slot = runner.FreeSlot();
    ASSERT_GE(slot, 0);
    ASSERT_EQ(runner.Issue(static_cast<unsigned>(slot), buf, sizeof buf, 8u * i), 0);
  }
  ASSERT_EQ(runner.Drain(), 0);
  EXPECT_EQ(runner.counters().bytes, 8u * n);
}

TEST(AsyncRunner, FillsTheRingBeforeItSubmits) {
  RecordingAsyncEngine engine(8);
  engine.reap_per_call = 3;
  AsyncRunner runner(engine, 8);  // batch: the depth
  IssueWrites(runner, 8 + 3 + 3 + 2);
  // The whole ring at once, then each reap's refills together, then the rest.
  EXPECT_EQ(engine.commits_, (std::vector<unsigned>{8, 3, 3, 2}));
  EXPECT_EQ(runner.submits(), 4u);
}

TEST(AsyncRunner, AFullRingIsSubmittedWithTheWaitThatFollows) {
  // Every reap frees the whole ring (a device that completes the ring at
  // once): each refill fills it again, and its submission goes out with the
  // next wait, one io_uring_enter for both, as the minimal loop.
  RecordingAsyncEngine engine(8);
  engine.reap_per_call = 8;
  AsyncRunner runner(engine, 8);
  IssueWrites(runner, 4 * 8);
  EXPECT_EQ(engine.commits_, (std::vector<unsigned>{8, 8, 8, 8}));
  EXPECT_EQ(engine.commit_calls_, 0u);
  EXPECT_EQ(runner.submits(), 4u);
}

TEST(AsyncRunner, ABatchIsSubmittedAloneWhileSlotsAreFree) {
  RecordingAsyncEngine engine(8);
  engine.reap_per_call = 8;
  AsyncRunner runner(engine, 8, 4);
  IssueWrites(runner, 8);
  // The first 4 alone, while 4 slots were free; the next 4 with Drain's wait.
  EXPECT_EQ(engine.commits_, (std::vector<unsigned>{4, 4}));
  EXPECT_EQ(engine.commit_calls_, 1u);
}

TEST(AsyncRunner, BatchCapsEachSubmission) {
  RecordingAsyncEngine engine(8);
  engine.reap_per_call = 8;
  AsyncRunner runner(engine, 8, 3);
  IssueWrites(runner, 16);
  for (unsigned c : engine.commits_) EXPECT_LE(c, 3u);
  EXPECT_EQ(engine.commits_.front(), 3u);
  unsigned total = 0;
  for (unsigned c : engine.commits_) total += c;
  EXPECT_EQ(total, 16u);
}

TEST(AsyncRunner, InjectedWriteFailureCompletesWithItsErrno) {
  FaultInjector faults({FaultOp::kWrite, 5, ENOSPC});
  auto engine = faults.Wrap(std::make_unique<RecordingAsyncEngine>(4));
  AsyncRunner runner(*engine, 4);
  static char buf[8];
  int rc = 0;
  for (int i = 0; i < 10 && rc == 0; ++i) {
    int slot = runner.FreeSlot();
    if (slot < 0) {
      rc = slot;
      break;
    }
    rc = runner.Issue(static_cast<unsigned>(slot), buf, sizeof buf, 8u * i);
  }
  if (rc == 0) rc = runner.Drain();
  EXPECT_EQ(rc, -ENOSPC);
  // The fifth write fails at the next reap; one write had completed before it.
  EXPECT_EQ(runner.counters().bytes, 8u);
}

// A timed runner starts each request's latency when the submission that
// carries it reaches the engine: one clock reading for the whole
// submission, none per request; every request timed once.
TEST(AsyncRunner, LatencyStartsAtTheSubmissionOneReadingForAllItCarries) {
  RecordingAsyncEngine engine(8);
  engine.reap_per_call = 3;
  Histogram latency;
  std::atomic<uint64_t> progress{0};
  AsyncRunner runner(engine, 8, 0, &latency, &progress);
  const uint64_t before = NowNs();
  IssueWrites(runner, 8 + 3 + 3 + 2);
  ASSERT_EQ(engine.stamps_.size(), 4u);
  for (const auto& s : engine.stamps_) {
    ASSERT_FALSE(s.empty());
    EXPECT_GE(s.front(), before);
    for (uint64_t t : s) EXPECT_EQ(t, s.front());  // stamped together
  }
  EXPECT_EQ(latency.count(), 16u);
  EXPECT_EQ(progress.load(), 16u * 8);
}

// A short write is requeued for its rest: its latency still starts at its
// first submission, and it is timed once, when its last byte is written.
TEST(AsyncRunner, ARequeuedShortWriteKeepsItsFirstSubmissionsStamp) {
  RecordingAsyncEngine engine(4);
  engine.reap_per_call = 4;
  engine.short_first = true;
  Histogram latency;
  std::atomic<uint64_t> progress{0};
  AsyncRunner runner(engine, 4, 0, &latency, &progress);
  IssueWrites(runner, 4);
  ASSERT_EQ(engine.stamps_.size(), 2u);  // the four, then their four rests
  ASSERT_EQ(engine.stamps_[1].size(), 4u);
  for (uint64_t t : engine.stamps_[1]) EXPECT_EQ(t, engine.stamps_[0].front());
  EXPECT_EQ(runner.counters().short_writes, 4u);
  EXPECT_EQ(latency.count(), 4u);
}

TEST(AsyncRunner, BatchOneSubmitsEachRequestAlone) {
  RecordingAsyncEngine engine(4);
  AsyncRunner runner(engine, 4, 1);
  IssueWrites(runner, 10);
  EXPECT_EQ(engine.commits_, std::vector<unsigned>(10, 1));
}

}  // namespace
}  // namespace writelab
