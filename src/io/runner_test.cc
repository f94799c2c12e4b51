// The runner on fake engines (STYLE.md 11): a memory engine that can return
// short writes, EINTR and errors on chosen calls, so the counters and error
// paths are tested without a disk.
#include "io/runner.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

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
      std::memcpy(data_.data() + req.offset, req.buf, static_cast<size_t>(n));
    }
    req.res = n;
    return Submit::kCompleted;
  }
  EngineCaps caps() const override { return {.alignment = alignment_}; }
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

// An async engine that records what each Commit submitted and completes
// requests only when Reap is asked, oldest first.
class RecordingAsyncEngine final : public WriteEngine {
 public:
  explicit RecordingAsyncEngine(unsigned depth) : depth_(depth) {}
  Submit Queue(IoRequest& req) override {
    if (prepared_.size() + submitted_.size() >= depth_) return Submit::kBusy;
    prepared_.push_back(&req);
    return Submit::kQueued;
  }
  Status Commit() override {
    commits_.push_back(static_cast<unsigned>(prepared_.size()));
    for (IoRequest* r : prepared_) submitted_.push_back(r);
    prepared_.clear();
    return {};
  }
  int Reap(int min, std::span<IoRequest*> done) override {
    // Completes `reap_per_call` of what was submitted (at least min): never
    // something only prepared.
    int n = 0;
    while (n < static_cast<int>(done.size()) && !submitted_.empty() &&
           (n < min || n < reap_per_call)) {
      IoRequest* r = submitted_.front();
      submitted_.erase(submitted_.begin());
      r->res = static_cast<int64_t>(r->len);
      done[static_cast<size_t>(n++)] = r;
    }
    return n;
  }
  EngineCaps caps() const override { return {.async = true}; }
  std::string_view name() const override { return "recording-async"; }

  std::vector<unsigned> commits_;  // requests submitted by each Commit
  int reap_per_call = 1;

 private:
  unsigned depth_;
  std::vector<IoRequest*> prepared_, submitted_;
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

TEST(AsyncRunner, BatchOneSubmitsEachRequestAlone) {
  RecordingAsyncEngine engine(4);
  AsyncRunner runner(engine, 4, 1);
  IssueWrites(runner, 10);
  EXPECT_EQ(engine.commits_, std::vector<unsigned>(10, 1));
}

}  // namespace
}  // namespace writelab
