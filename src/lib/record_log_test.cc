// SPDX-License-Identifier: MIT
// RecordWriter as a database log on a real file: framed records read back by
// LogReader, which stops at zeros, a truncated record or a bad checksum and
// tells a torn tail from damage with valid records behind it; recovery
// reopens the log where a torn tail begins and refuses to cut valid
// records; Rename moves it; the
// commit-latency histogram counts every commit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "expect_ok.h"
#include "writelab/log_reader.h"
#include "writelab/record_writer.h"

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

std::string Payload(int i) {
  // Sizes from 1 byte to beyond a quarter of a 16 KiB buffer (gathered).
  const size_t n = 1 + static_cast<size_t>(i * 977 % 6000);
  return std::string(n, static_cast<char>('a' + i % 26)) + std::to_string(i);
}

std::vector<std::string> ReadAll(const std::string& path, LogEnd* end, uint64_t* end_offset) {
  auto r = LogReader::Open(path);
  EXPECT_TRUE(r) << r.error().Message();
  std::vector<std::string> out;
  if (!r) return out;
  for (;;) {
    auto next = r->Next();
    EXPECT_TRUE(next) << next.error().Message();
    if (!next || !*next) break;
    auto rec = **next;
    out.emplace_back(reinterpret_cast<const char*>(rec.data()), rec.size());
  }
  *end = r->end_reason();
  *end_offset = r->end_offset();
  EXPECT_EQ(r->records(), out.size());
  return out;
}

class RecordLog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/var/tmp/writelab-record-log-" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/wal.log";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  RecordWriterOptions Options() const {
    RecordWriterOptions o;
    o.buffer_bytes = 16 << 10;
    o.policy = DurabilityPolicy::kGroupCommit;
    o.framing = RecordFraming::kLengthCrc32c;
    return o;
  }
  std::string dir_, path_;
};

TEST_F(RecordLog, FramedRecordsReadBackWholeAndInOrder) {
  std::vector<std::string> want;
  uint64_t last = 0;
  {
    auto w = RecordWriter::Open(path_, Options());
    ASSERT_TRUE(w) << w.error().Message();
    for (int i = 0; i < 200; ++i) {
      want.push_back(Payload(i));
      auto lsn = w->Append(want.back(), i % 10 == 9 ? Durable::kYes : Durable::kNo);
      ASSERT_TRUE(lsn);
      EXPECT_GT(*lsn, last);
      last = *lsn;
    }
    ASSERT_TRUE(w->Close());
    const LatencyHistogram h = w->stats().commit_latency;
    EXPECT_EQ(h.count, 20u) << "one per Durable::kYes append";
    EXPECT_LE(h.Percentile(50), h.Percentile(99));
    EXPECT_LE(h.Percentile(99), h.max_ns);
    EXPECT_GT(h.max_ns, 0u);
  }
  EXPECT_EQ(std::filesystem::file_size(path_), last) << "the last LSN is the file's end";
  LogEnd end;
  uint64_t end_offset;
  EXPECT_EQ(ReadAll(path_, &end, &end_offset), want);
  EXPECT_EQ(end, LogEnd::kEndOfFile);
  EXPECT_EQ(end_offset, last);
}

// A crash with preallocate_bytes leaves zeros after the last record: the
// reader stops there, and recovery continues the log at that point.
TEST_F(RecordLog, RecoveryAfterACrashReadsUpToTheZerosAndContinuesThere) {
  RecordWriterOptions o = Options();
  o.preallocate_bytes = 1 << 20;
  const std::string crashed = dir_ + "/crashed.log";
  std::vector<std::string> want;
  {
    auto w = RecordWriter::Open(path_, o);
    ASSERT_TRUE(w);
    for (int i = 0; i < 50; ++i) {
      want.push_back(Payload(i));
      ASSERT_TRUE(w->Append(want.back(), Durable::kYes));
    }
    // "Crash": the file as it is now, with the zeros still ahead.
    std::filesystem::copy_file(path_, crashed);
    EXPECT_EQ(w->stats().durable_lsn, *w->Append("")) << "every record was committed";
    EXPECT_GT(w->stats().zero_bytes, 0u);
  }
  LogEnd end;
  uint64_t end_offset;
  EXPECT_EQ(ReadAll(crashed, &end, &end_offset), want);
  EXPECT_EQ(end, LogEnd::kZeros);
  EXPECT_GT(std::filesystem::file_size(crashed), end_offset);
  auto w = RecordWriter::Reopen(crashed, end_offset, o);
  ASSERT_TRUE(w) << w.error().Message();
  EXPECT_EQ(w->stats().durable_lsn, end_offset);
  want.push_back("after recovery");
  EXPECT_EQ(*w->Append(want.back(), Durable::kYes), end_offset + 8 + want.back().size());
  ASSERT_TRUE(w->Close());
  EXPECT_EQ(ReadAll(crashed, &end, &end_offset), want);
  EXPECT_EQ(end, LogEnd::kEndOfFile);
}

// Ten records, closed; lsn[i] is where record i ends.
std::vector<uint64_t> WriteTen(const std::string& path, const RecordWriterOptions& o,
                               std::vector<std::string>* want) {
  std::vector<uint64_t> lsn;
  auto w = RecordWriter::Open(path, o);
  EXPECT_TRUE(w);
  for (int i = 0; i < 10; ++i) {
    want->push_back(Payload(i));
    lsn.push_back(*w->Append(want->back()));
  }
  EXPECT_TRUE(w->Close());
  return lsn;
}

void Poke(const std::string& path, uint64_t at, const void* bytes, size_t n) {
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, bytes, n, static_cast<off_t>(at)), static_cast<ssize_t>(n));
  close(fd);
}

TEST_F(RecordLog, ATornTailIsCutAndTheLogContinues) {
  std::vector<std::string> want;
  const auto lsn = WriteTen(path_, Options(), &want);
  LogEnd end;
  uint64_t end_offset;
  std::filesystem::resize_file(path_, lsn[7] - 1);  // record 7 cut short
  EXPECT_EQ(ReadAll(path_, &end, &end_offset),
            std::vector<std::string>(want.begin(), want.begin() + 7));
  EXPECT_EQ(end, LogEnd::kTruncated);
  EXPECT_EQ(end_offset, lsn[6]);
  std::filesystem::resize_file(path_, lsn[6] + 3);  // a header cut short
  ReadAll(path_, &end, &end_offset);
  EXPECT_EQ(end, LogEnd::kTruncated);

  std::filesystem::resize_file(path_, lsn[6] + 100);  // a torn write: garbage after record 6
  Poke(path_, lsn[6], "\x05\x00\x00\x00garbage", 11);
  EXPECT_EQ(ReadAll(path_, &end, &end_offset).size(), 7u);
  EXPECT_EQ(end, LogEnd::kChecksum);
  EXPECT_EQ(end_offset, lsn[6]);

  // Reopening at the verified end cuts the torn rest off for good.
  auto w = RecordWriter::Reopen(path_, end_offset, Options());
  ASSERT_TRUE(w) << w.error().Message();
  ASSERT_TRUE(w->Append("after", Durable::kYes));
  ASSERT_TRUE(w->Close());
  auto back = ReadAll(path_, &end, &end_offset);
  ASSERT_EQ(back.size(), 8u);
  EXPECT_EQ(back.back(), "after");
  EXPECT_EQ(end, LogEnd::kEndOfFile);
}

// The defect of issue 27: a length past the end in record 2 was called a
// truncated tail, and the documented recovery then cut off 7 good records.
TEST_F(RecordLog, DamageWithValidRecordsBehindItIsCorruptAndNeverCut) {
  std::vector<std::string> want;
  const auto lsn = WriteTen(path_, Options(), &want);
  const auto size = std::filesystem::file_size(path_);
  LogEnd end;
  uint64_t end_offset;
  for (const char* what : {"length", "payload", "zeros"}) {
    SCOPED_TRACE(what);
    std::vector<std::string> unused;
    WriteTen(path_, Options(), &unused);
    const std::string name = what;
    if (name == "length") Poke(path_, lsn[1], "\xff\xff\xff\x7f", 4);  // record 2's length
    if (name == "payload") Poke(path_, lsn[1] + 9, "#", 1);
    if (name == "zeros")
      Poke(path_, lsn[1], std::string(lsn[2] - lsn[1], '\0').data(), lsn[2] - lsn[1]);
    EXPECT_EQ(ReadAll(path_, &end, &end_offset),
              std::vector<std::string>(want.begin(), want.begin() + 2));
    EXPECT_EQ(end, LogEnd::kCorrupt);
    EXPECT_EQ(end_offset, lsn[1]);

    auto r = LogReader::Open(path_);
    ASSERT_TRUE(r);
    while (r->Next().value()) {
    }
    EXPECT_FALSE(r->TornTail());
    const LogDamage& d = r->damage();
    EXPECT_EQ(d.offset, lsn[1]);
    EXPECT_TRUE(d.valid_follows);
    EXPECT_TRUE(d.scan_complete);
    EXPECT_EQ(d.resume_offset, lsn[2]) << "the next valid frame is the one after";
    EXPECT_EQ(d.bytes_skipped, lsn[2] - lsn[1]);
    EXPECT_EQ(d.looked_like, name == "length"  ? LogEnd::kTruncated
                             : name == "zeros" ? LogEnd::kZeros
                                               : LogEnd::kChecksum);
    // Resume reads every record behind the damage.
    ASSERT_TRUE(r->Resume());
    std::vector<std::string> rest;
    while (auto next = r->Next().value())
      rest.emplace_back(reinterpret_cast<const char*>(next->data()), next->size());
    EXPECT_EQ(rest, std::vector<std::string>(want.begin() + 3, want.end()));
    EXPECT_EQ(r->end_reason(), LogEnd::kEndOfFile);
    EXPECT_EQ(r->damaged_bytes(), lsn[2] - lsn[1]);
    EXPECT_FALSE(r->Resume()) << "nothing to resume at the end";

    // The documented recovery refuses to cut the valid records off.
    auto w = RecordWriter::Reopen(path_, end_offset, Options());
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code, EEXIST);
    EXPECT_NE(w.error().Message().find(std::to_string(lsn[2])), std::string::npos)
        << w.error().Message();
    EXPECT_EQ(std::filesystem::file_size(path_), size) << "a refused reopen changes nothing";
  }
  auto at_record = RecordWriter::Reopen(path_, lsn[4], Options());
  ASSERT_FALSE(at_record) << "a valid record starts there";
  EXPECT_EQ(at_record.error().code, EEXIST);
  RecordWriterOptions unframed = Options();
  unframed.framing = RecordFraming::kNone;
  EXPECT_TRUE(RecordWriter::Reopen(path_, lsn[4], unframed))
      << "without framing, the caller's word";
}

TEST_F(RecordLog, ALongStretchOfGarbageEndsTheScanAtItsBudgetAndIsNotATail) {
  std::vector<std::string> want;
  const auto lsn = WriteTen(path_, Options(), &want);
  // From record 2 on, every byte is 0x01: the header at every offset claims
  // 0x01010101 bytes (16 MiB), which fit, so the scan would checksum about
  // 16 MiB for each of 32 M offsets.
  const std::string bytes(48 << 20, '\x01');
  Poke(path_, lsn[1], bytes.data(), bytes.size());
  auto r = LogReader::Open(path_);
  ASSERT_TRUE(r);
  while (r->Next().value()) {
  }
  EXPECT_EQ(r->records(), 2u);
  EXPECT_EQ(r->end_reason(), LogEnd::kCorrupt);
  EXPECT_FALSE(r->damage().scan_complete);
  EXPECT_FALSE(r->damage().valid_follows);
  EXPECT_FALSE(r->TornTail());
  EXPECT_FALSE(r->Resume());
  EXPECT_FALSE(RecordWriter::Reopen(path_, lsn[1], Options()));
}

TEST_F(RecordLog, ReopenAtTheEndAppendsAndRefusesWhatItCannotDo) {
  {
    auto w = RecordWriter::Open(path_, Options());
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->Append("one"));
    ASSERT_TRUE(w->Close());
  }
  {
    auto w = RecordWriter::Reopen(path_, RecordWriter::kAtEnd, Options());
    ASSERT_TRUE(w);
    EXPECT_EQ(*w->Append("two"), 22u);
    ASSERT_TRUE(w->Close());
  }
  LogEnd end;
  uint64_t end_offset;
  EXPECT_EQ(ReadAll(path_, &end, &end_offset), (std::vector<std::string>{"one", "two"}));
  auto beyond = RecordWriter::Reopen(path_, 23, Options());
  ASSERT_FALSE(beyond);
  EXPECT_EQ(beyond.error().code, EINVAL);
  EXPECT_EQ(std::filesystem::file_size(path_), 22u) << "a refused reopen changes nothing";
  EXPECT_EQ(ErrorOf(RecordWriter::Reopen(dir_ + "/missing.log")).code, ENOENT);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/missing.log")) << "Reopen never creates";
  EXPECT_EQ(ErrorOf(LogReader::Open(path_, 23)).code, EINVAL);
}

TEST_F(RecordLog, RenameMovesTheLogAndLaterErrorsNameTheNewPath) {
  auto w = RecordWriter::Open(path_ + ".tmp", Options());
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->Append("record", Durable::kYes));
  ASSERT_TRUE(w->Rename(path_));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  ASSERT_TRUE(w->Append("after the rename"));
  ASSERT_TRUE(w->Close());
  LogEnd end;
  uint64_t end_offset;
  EXPECT_EQ(ReadAll(path_, &end, &end_offset),
            (std::vector<std::string>{"record", "after the rename"}));
  ASSERT_TRUE(w->Rename(path_ + ".old")) << "after Close too";
  EXPECT_TRUE(std::filesystem::exists(path_ + ".old"));
  auto bad = w->Rename(dir_ + "/no/such/dir/x");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ENOENT);
  EXPECT_NE(bad.error().Message().find(path_ + ".old"), std::string::npos);
}

TEST(LatencyHistogram, BucketsCoverEveryValueAndPercentilesAreTightUpperBounds) {
  for (uint64_t v : {0ull, 1ull, 7ull, 8ull, 15ull, 16ull, 1000ull, 123456789ull, 1ull << 43}) {
    const int b = LatencyHistogram::BucketOf(v);
    EXPECT_LE(LatencyHistogram::Lower(b), v);
    EXPECT_GT(LatencyHistogram::Lower(b + 1), v);
  }
  EXPECT_EQ(LatencyHistogram::BucketOf(UINT64_MAX), LatencyHistogram::kBuckets - 1);
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 1000; ++v) {
    ++h.buckets[static_cast<size_t>(LatencyHistogram::BucketOf(v * 1000))];
    ++h.count;
    h.max_ns = v * 1000;
  }
  for (double p : {1.0, 50.0, 99.0, 100.0}) {
    const double truth = p * 10 * 1000;
    EXPECT_GE(static_cast<double>(h.Percentile(p)), truth) << p;
    EXPECT_LE(static_cast<double>(h.Percentile(p)), truth * 1.125) << p;
  }
  EXPECT_EQ(LatencyHistogram{}.Percentile(99), 0u);
}

}  // namespace
}  // namespace writelab
