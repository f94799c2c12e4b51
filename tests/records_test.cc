// SPDX-License-Identifier: MIT
// `writelab records` end to end: every row present and verified, usage
// errors, group commit mode, io_uring refused by the kernel (a seccomp filter
// makes io_uring_setup fail with ENOSYS), and ENOSPC reaching every
// group-commit waiter on a tiny loop-device file system (root only).
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <atomic>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <thread>

#include "expect_ok.h"
#include "figures.h"
#include "harness.h"
#include "writelab/record_writer.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

class RecordsCli : public ::testing::Test {
 protected:
  ScratchDir work{"records"};
  ScratchDir outputs{"records-out"};  // what writelab writes beside its --dir
  std::string json_path = outputs.path() + "/out.json";
  void TearDown() override { std::filesystem::remove(json_path); }
  json Doc() { return json::parse(Slurp(json_path)); }
};

TEST_F(RecordsCli, EveryMethodRowVerifiedAndNoFilesLeft) {
  RunResult r = RunWritelab({"records", "--dir", work.path(), "--corpus-size", "256k", "--total",
                             "2M", "--sync", "none,osync,every:500", "--sync-total", "64k",
                             "--buffer", "64k", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(work.Entries().empty()) << "files left behind";
  json e = Doc()["experiments"][0];
  std::vector<std::string> names;
  for (const json& row : e["rows"]) names.push_back(row["name"]);
  std::vector<std::string> expected;
  for (std::string sync : {"", "/osync", "/every:500"})
    for (const char* m :
         {"write", "fwrite", "fwrite_unlocked", "writev", "gather", "io_uring", "library"})
      expected.push_back(m + sync);
  EXPECT_EQ(names, expected);
  for (const json& row : e["rows"]) {
    std::string name = row["name"];
    if (name.starts_with("io_uring") && row["status"] == "unsupported") continue;
    ASSERT_EQ(row["status"], "ok") << name << ": " << row["message"];
    auto f = FigureObjects(row);
    for (const char* key : {"seconds", "mb_s", "lines_s", "syscalls_per_line", "speedup"})
      EXPECT_TRUE(f.count(key)) << name << " lacks " << key;
    double bytes = f["bytes"]["value"]["median"];
    if (name.find('/') != std::string::npos) {
      EXPECT_LT(bytes, 64 * 1024 + 200) << name << ": synchronous rows use --sync-total";
    }
    if (name == "write" || name == "write/osync") {
      EXPECT_EQ(f["syscalls_per_line"]["value"]["median"], 1.0) << name;
    }
  }
  EXPECT_NE(r.out.find("--sync-total"), std::string::npos) << "the report says so";
}

TEST_F(RecordsCli, InputFileAndPasses) {
  std::string input = work.path() + "/input.c";
  std::ofstream(input) << "#include <stdio.h>\n\nint main(void)\n{\n\tputs(\"hi\");\n}\n";
  RunResult r = RunWritelab({"records", "--dir", work.path(), "--input", input, "--passes", "100",
                             "--method", "write,writev,library", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json e = Doc()["experiments"][0];
  for (const json& p : e["params"]) {
    if (p["key"] == "passes") {
      EXPECT_EQ(p["value"], 100);
    }
  }
  RunResult alias = RunWritelab({"records", "--dir", work.path(), "--input", input, "--repeat", "3",
                                 "--method", "write", "--rounds", "2"});
  EXPECT_EQ(alias.exit_code, 0) << "--repeat: the old name of --passes: " << alias.err;
  for (const json& row : e["rows"]) {
    ASSERT_EQ(row["status"], "ok") << row["message"];
    EXPECT_EQ(FigureObjects(row)["lines"]["value"]["median"], 600);
  }
  std::filesystem::remove(input);
  EXPECT_TRUE(work.Entries().empty());
}

TEST_F(RecordsCli, BadInputExitsTwoWithOneLine) {
  std::string empty = work.path() + "/empty";
  std::ofstream(empty).close();
  std::vector<std::vector<std::string>> cases = {
      {"--total", "0"},
      {"--total", "12q"},
      {"--sync", "every:0"},
      {"--sync", "sometimes"},
      {"--method", "carrier-pigeon"},
      {"--dir", "/nonexistent/x"},
      {"--input", "/nonexistent/file"},
      {"--input", empty},
      {"--buffer", "100"},
      {"--qd", "0"},
      {"--threads", "0", "--commit"},
      {"--total", "1M", "--repeat", "2"},
  };
  for (auto args : cases) {
    args.insert(args.begin(), "records");
    if (std::find(args.begin(), args.end(), "--dir") == args.end()) {
      args.push_back("--dir");
      args.push_back(work.path());
    }
    RunResult r = RunWritelab(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args[2] << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(RecordsCli, GroupCommitRows) {
  RunResult r =
      RunWritelab({"records", "--dir", work.path(), "--commit", "--threads", "1,4", "--commit-time",
                   "300ms", "--corpus-size", "64k", "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  json e = Doc()["experiments"][0];
  std::vector<std::string> names;
  for (const json& row : e["rows"]) names.push_back(row["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "fdatasync/1", "fdatasync-prealloc/1", "group/1", "group-prealloc/1",
                       "fdatasync/4", "fdatasync-prealloc/4", "group/4", "group-prealloc/4"}));
  for (const json& row : e["rows"]) {
    ASSERT_EQ(row["status"], "ok") << row["message"];
    const std::string name = row["name"];
    auto f = FigureObjects(row);
    EXPECT_GT(f["commits"]["value"]["median"], 0);
    EXPECT_GE(f["records_per_sync"]["value"]["median"], 1.0);
    EXPECT_GT(f["sync_ms"]["value"]["median"], 0) << name;
    EXPECT_EQ(f.count("speedup"), name.starts_with("fdatasync/") ? 0u : 1u) << name;
    EXPECT_EQ(f.count("wait_timeouts"), name.starts_with("group") ? 1u : 0u) << name;
    EXPECT_EQ(f["zero_bytes"]["value"]["median"] > 0, name.find("prealloc") != std::string::npos)
        << name;
    if (name == "fdatasync/4") {  // every thread synced its own record
      EXPECT_EQ(f["records_per_sync"]["value"]["median"], 1.0);
    }
  }
  EXPECT_TRUE(work.Entries().empty());
}

TEST_F(RecordsCli, IoUringRefusedIsAnUnsupportedRowWithErrno) {
  RunResult r = RunWithoutUring({"records", "--dir", work.path(), "--corpus-size", "64k", "--total",
                                 "256k", "--method", "write,io_uring", "--json", json_path});
  if (r.exit_code == 99) GTEST_SKIP() << "cannot install a seccomp filter here";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json e = Doc()["experiments"][0];
  ASSERT_EQ(e["rows"].size(), 2u);
  EXPECT_EQ(e["rows"][0]["status"], "ok");
  EXPECT_EQ(e["rows"][1]["name"], "io_uring");
  EXPECT_EQ(e["rows"][1]["status"], "unsupported");
  EXPECT_EQ(e["rows"][1]["errno"], ENOSYS) << e["rows"][1];
  EXPECT_EQ(e["rows"][1]["error_name"], "ENOSYS");
  EXPECT_NE(r.out.find("io_uring_queue_init"), std::string::npos) << r.out;
  // Verification is the default; the unsupported row wrote no file to compare.
  EXPECT_EQ(r.out.find("every file was read back"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the files of the 1 ok rows were read back"), std::string::npos) << r.out;
}

// A tiny ext4 on a loop device; everything undone in the destructor.
class TinyFs {
 public:
  explicit TinyFs(const std::string& base) : image_(base + ".img"), mnt_(base + ".mnt") {
    std::filesystem::create_directories(mnt_);
    if (Sh("truncate -s 8M " + image_) || Sh("mkfs.ext4 -q -F -m 0 " + image_)) return;
    if (Sh("mount -o loop " + image_ + " " + mnt_)) return;
    mounted_ = true;
  }
  ~TinyFs() {
    if (mounted_) Sh("umount " + mnt_);
    std::filesystem::remove(image_);
    std::filesystem::remove(mnt_);
  }
  bool ok() const { return mounted_; }
  const std::string& dir() const { return mnt_; }

 private:
  static int Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }
  std::string image_, mnt_;
  bool mounted_ = false;
};

// Fills the file system through path; every committer must get ENOSPC, and
// the error names the failed call (pwritev, or extend with preallocation).
void ExpectEnospcReachesEveryWaiter(const std::string& path, uint64_t preallocate) {
  SCOPED_TRACE("preallocate_bytes " + std::to_string(preallocate));
  RecordWriterOptions o;
  o.policy = DurabilityPolicy::kGroupCommit;
  o.buffer_bytes = 64 << 10;
  o.preallocate_bytes = preallocate;
  auto w = RecordWriter::Open(path, o);
  ASSERT_OK(w);
  constexpr int kThreads = 4;
  std::atomic<int> enospc{0}, other{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      std::string record(4000, static_cast<char>('a' + t));
      record.back() = '\n';
      for (int i = 0; i < 100000; ++i) {
        auto s = w->Append(record, Durable::kYes);
        if (!s) {
          (s.error().code == ENOSPC ? enospc : other)++;
          return;
        }
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(enospc.load(), kThreads) << "every waiter gets ENOSPC";
  EXPECT_EQ(other.load(), 0);
  auto closed = w->Close();
  ASSERT_FALSE(closed.has_value());
  EXPECT_EQ(closed.error().code, ENOSPC);
  EXPECT_NE(closed.error().Message().find("No space left"), std::string::npos);
  EXPECT_NE(closed.error().Message().find(preallocate ? "extend " : "pwritev "), std::string::npos)
      << closed.error().Message();
}

TEST(RecordWriterOnDevice, EnospcReachesEveryGroupCommitWaiter) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: loop devices";
  if (!std::filesystem::exists("/dev/loop-control")) GTEST_SKIP() << "no loop device support";
  ScratchDir work("enospc");  // its own: nothing planted beside the image is followed
  TinyFs fs(work.path() + "/fs");
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4 (losetup/mkfs/mount)";
  ExpectEnospcReachesEveryWaiter(fs.dir() + "/log", 0);
  std::filesystem::remove(fs.dir() + "/log");
  ExpectEnospcReachesEveryWaiter(fs.dir() + "/log", 1 << 20);
}

}  // namespace
}  // namespace writelab::testing
