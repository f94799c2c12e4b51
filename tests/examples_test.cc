// SPDX-License-Identifier: MIT
// The library's example programs, run as a user would: the write-ahead log
// commits, crashes, recovers every acknowledged transaction and continues;
// the exporter writes exactly what it says, generated or from stdin.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "harness.h"
#include "test_paths.h"
#include "writelab/log_reader.h"

namespace writelab::testing {
namespace {

// The number after "key: " in a program's output, or -1.
long long Field(const std::string& out, const std::string& key) {
  const size_t at = out.find(key + ": ");
  if (at == std::string::npos) return -1;
  return std::strtoll(out.c_str() + at + key.size() + 2, nullptr, 10);
}

// Reads the framed log: records, transactions committed, why it ended.
struct LogScan {
  long long records = 0, commits = 0;
  LogEnd end = LogEnd::kNotYet;
};
LogScan Scan(const std::string& path) {
  LogScan scan;
  auto r = LogReader::Open(path);
  EXPECT_TRUE(r) << r.error().Message();
  if (!r) return scan;
  for (;;) {
    auto next = r->Next();
    if (!next || !*next) break;
    ++scan.records;
    const std::string_view rec(reinterpret_cast<const char*>((*next)->data()), (*next)->size());
    scan.commits += rec.starts_with("commit ");
  }
  scan.end = r->end_reason();
  return scan;
}

TEST(WalExample, CommitsWithGroupCommitAndLeavesAWholeLog) {
  ScratchDir work("wal-example");
  const std::string log = work.path() + "/wal.log";
  RunResult r = RunProgram(WRITELAB_WAL_BINARY, {log, "4", "50"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Field(r.out, "acknowledged transactions"), 200) << r.out;
  EXPECT_EQ(Field(r.out, "records"), 800) << r.out;
  const long long syncs = Field(r.out, "fdatasyncs");
  EXPECT_GE(syncs, 1) << r.out;
  EXPECT_LE(syncs, 202) << "at most one per commit, and Close's: " << r.out;
  const LogScan scan = Scan(log);
  EXPECT_EQ(scan.records, 800);
  EXPECT_EQ(scan.commits, 200);
  EXPECT_EQ(scan.end, LogEnd::kEndOfFile) << "Close cut the zeros ahead off";
}

TEST(WalExample, RecoversEveryAcknowledgedTransactionAfterACrashAndContinues) {
  ScratchDir work("wal-crash");
  const std::string log = work.path() + "/wal.log";
  RunResult crash = RunProgram(WRITELAB_WAL_BINARY, {log, "4", "50", "--crash-after", "60"});
  ASSERT_EQ(crash.exit_code, 3) << crash.out << crash.err;
  EXPECT_EQ(Field(crash.out, "acknowledged transactions"), 60) << crash.out;
  EXPECT_EQ(Scan(log).end, LogEnd::kZeros) << "the crash left the zeros ahead";

  RunResult again = RunProgram(WRITELAB_WAL_BINARY, {log, "2", "10"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const long long recovered = Field(again.out, "recovered transactions");
  EXPECT_GE(recovered, 60) << again.out;
  EXPECT_NE(again.out.find("(zeros)"), std::string::npos) << again.out;
  EXPECT_EQ(Field(again.out, "acknowledged transactions"), 20);

  RunResult third = RunProgram(WRITELAB_WAL_BINARY, {log, "1", "0"});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(Field(third.out, "recovered transactions"), recovered + 20) << third.out;
  EXPECT_NE(third.out.find("(end-of-file)"), std::string::npos) << third.out;
  EXPECT_EQ(RunProgram(WRITELAB_WAL_BINARY, {}).exit_code, 2);
}

// Issue 27's reproduction: record 2's length set to 0x7fffffff. The old
// reader called it a truncated tail and the recovery cut 18 records off.
TEST(WalExample, ACorruptLengthWithRecordsBehindItIsReportedAndTheLogKept) {
  ScratchDir work("wal-corrupt");
  const std::string log = work.path() + "/wal.log";
  ASSERT_EQ(RunProgram(WRITELAB_WAL_BINARY, {log, "1", "5"}).exit_code, 0);
  const auto size = std::filesystem::file_size(log);
  ASSERT_EQ(Scan(log).records, 20);
  int fd = open(log.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  unsigned char first[4];
  ASSERT_EQ(pread(fd, first, 4, 0), 4);
  const off_t second = 8 + (first[0] | first[1] << 8 | first[2] << 16 | first[3] << 24);
  const unsigned char huge[4] = {0xff, 0xff, 0xff, 0x7f};
  ASSERT_EQ(pwrite(fd, huge, 4, second), 4);
  close(fd);

  RunResult r = RunProgram(WRITELAB_WAL_BINARY, {log, "1", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(Field(r.out, "recovered records"), 1) << r.out;
  EXPECT_NE(r.out.find("(corrupt)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("then a valid record at"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("not reopened"), std::string::npos) << r.err;
  EXPECT_EQ(std::filesystem::file_size(log), size) << "nothing was cut";
  auto reader = LogReader::Open(log);
  ASSERT_TRUE(reader);
  long long after = 0;
  while (reader->Next().value()) {
  }
  ASSERT_TRUE(reader->Resume());
  while (reader->Next().value()) ++after;
  EXPECT_EQ(after, 18) << "every record behind the damage is still there";
}
TEST(StreamExporter, WritesEveryGeneratedRow) {
  ScratchDir work("exporter");
  const std::string out = work.path() + "/export.csv";
  RunResult r = RunProgram(WRITELAB_EXPORTER_BINARY, {out, "100000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = Slurp(out);
  EXPECT_EQ(Field(r.out, "bytes"), static_cast<long long>(csv.size())) << r.out;
  EXPECT_EQ(CountLines(csv), 100001);
  EXPECT_EQ(csv.rfind("id,name,amount\n0,customer-00000,", 0), 0u);
  EXPECT_NE(r.out.find("method: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" MB/s"), std::string::npos) << r.out;
}

std::string g_stdin_path;  // RunProgram's child setup cannot capture

TEST(StreamExporter, CopiesStandardInputExactly) {
  ScratchDir work("exporter-stdin");
  g_stdin_path = work.path() + "/input.bin";
  std::string input;
  for (int i = 0; input.size() < (3u << 20) + 123; ++i) input += std::to_string(i * 7919) + ";";
  {
    int fd = ::open(g_stdin_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, input.data(), input.size()), static_cast<ssize_t>(input.size()));
    close(fd);
  }
  const std::string out = work.path() + "/copy.bin";
  RunResult r = RunProgram(WRITELAB_EXPORTER_BINARY, {out, "-"}, [] {
    int fd = ::open(g_stdin_path.c_str(), O_RDONLY | O_NOFOLLOW);
    return fd >= 0 && dup2(fd, STDIN_FILENO) == STDIN_FILENO ? 0 : 126;
  });
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Field(r.out, "bytes"), static_cast<long long>(input.size()));
  EXPECT_TRUE(Slurp(out) == input) << "the copy differs";
  EXPECT_EQ(RunProgram(WRITELAB_EXPORTER_BINARY, {out}).exit_code, 2);
}

}  // namespace
}  // namespace writelab::testing
