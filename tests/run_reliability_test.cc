// SPDX-License-Identifier: MIT
// `writelab run` must never change what the program sees (issue 40): its
// errors above all (a writeback error belongs to its own fsync, a failed
// final flush to its fclose), its sandbox, its signal handlers, its
// descriptors' offsets. Each test runs a program plainly and under every
// strategy, on devices that fail writes where it must (tests/failing_device.h),
// and compares what the program itself reported: its exit status and its
// own stderr, kept apart from writelab's (whose tables go to stderr too).
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "failing_device.h"
#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

// "plain" is the shim counting only (--compare's plain runs).
const char* const kStrategies[] = {"plain",       "window", "window-drop", "dontcache",
                                   "drop-behind", "paced",  "direct"};

struct Seen {
  int exit_code = -1;
  std::string err;  // what CMD wrote to its own stderr
  std::string out;  // CMD's stdout
};

class Reliability : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tmpfs, loop devices and mounts of its own";
  }
  // sh -c SCRIPT, its stderr into a file of the test's: plainly (strategy
  // empty) or under `writelab run --strategy S`.
  Seen Run(const std::string& strategy, const std::string& script,
           const std::vector<std::string>& options = {}) {
    const std::string err = work.path() + "/cmd.err";
    std::filesystem::remove(err);
    const std::string wrapped = "(" + script + ") 2>" + err;
    RunResult r;
    if (strategy.empty()) {
      r = RunProgram("/bin/sh", {"-c", wrapped});
    } else {
      std::vector<std::string> args = {"run", "--strategy", strategy};
      args.insert(args.end(), options.begin(), options.end());
      args.insert(args.end(), {"--", "/bin/sh", "-c", wrapped});
      r = RunWritelab(args);
      writelab_err = r.err;
    }
    return {r.exit_code, Slurp(err), r.out};
  }
  // The same as plainly, under every strategy.
  void ExpectSameUnderEveryStrategy(const std::string& script, const Seen& plain) {
    for (const char* s : kStrategies) {
      const Seen under = Run(s, script);
      EXPECT_EQ(under.exit_code, plain.exit_code) << s << ": " << script << "\n" << writelab_err;
      EXPECT_EQ(under.err, plain.err) << s << ": " << script;
      EXPECT_EQ(under.out, plain.out) << s << ": " << script;
    }
  }
  ScratchDir work{"reliability"};
  std::string writelab_err;
};

// A writeback error is reported to the open file that asks for it, once:
// the shim's waits (sync_file_range WAIT) went through the program's own
// descriptor and took it, and dd conv=fsync exited 0 on a failing device.
TEST_F(Reliability, AWritebackErrorReachesTheProgramsOwnFsync) {
  FailingExt4 dev(work.path() + "/dev", 32u << 20, 8u << 20);
  ASSERT_TRUE(dev.ok()) << dev.why();
  for (const char* sync : {"fsync", "fdatasync"}) {
    const std::string script =
        "dd if=/dev/zero of=" + dev.file() + " bs=1M count=32 status=none conv=notrunc," + sync;
    const Seen plain = Run("", script);
    ASSERT_EQ(plain.exit_code, 1) << "the device must fail the writeback: " << plain.err;
    ASSERT_NE(plain.err.find("No space left on device"), std::string::npos) << plain.err;
    ExpectSameUnderEveryStrategy(script, plain);
  }
}

// glibc drops a buffer whose write failed: a shim that flushed before the
// real fclose left it nothing to fail, and awk, gcc -E and any fclose
// checker exited 0 with an empty file.
TEST_F(Reliability, AFailedFinalFlushIsFclosesResult) {
  FullTmpfs full(work.path() + "/full");
  ASSERT_TRUE(full.ok());
  const std::string source = work.path() + "/x.c";
  WriteFile(source, "int x;\n");
  for (const std::string& script :
       {"awk 'BEGIN { print \"hello\" }' > " + full.dir() + "/a",
        "echo hi | sed p > " + full.dir() + "/b", "gcc -E " + source + " -o " + full.dir() + "/c",
        std::string(WRITELAB_WRITERS_BINARY) + " fwrite " + full.dir() + "/d 1 100"}) {
    const Seen plain = Run("", script);
    ASSERT_NE(plain.exit_code, 0) << "the write must fail: " << script;
    ExpectSameUnderEveryStrategy(script, plain);
  }
}

// fflush on a stream that is reading moves the descriptor's offset back to
// what stdio consumed; fclose never does. A shell shares the offset with
// what it runs next.
TEST_F(Reliability, FcloseOfAReadStreamLeavesTheSharedOffset) {
  const std::string input = work.path() + "/lines";
  WriteFile(input, "line1\nline2\n");
  const std::string script =
      "{ " + std::string(WRITELAB_WRITERS_BINARY) + " readclose; cat; } < " + input;
  const Seen plain = Run("", script);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ExpectSameUnderEveryStrategy(script, plain);
}

// A writer under seccomp (strict mode, a filter installed as it runs, one
// it was started under): the shim's own calls would kill it (137 and an
// empty file). It steps aside: before a filter is installed it ends its
// streams and hands the process's open files to the supervisor, which
// handles them from outside; under a filter from the start it does nothing
// at all (the supervisor handles what its looks catch).
TEST_F(Reliability, ASandboxedWriterRunsAndItsFileIsTheSupervisors) {
  for (const char* mode : {"strict", "filtered", "sandboxed"}) {
    const std::string file = work.path() + "/" + mode;
    const std::string script =
        std::string(WRITELAB_WRITERS_BINARY) + " " + mode + " " + file + " 24";
    const Seen plain = Run("", script);
    ASSERT_EQ(plain.exit_code, 0) << mode << ": " << plain.err;
    const std::string json_path = work.path() + "/run.json";
    std::filesystem::remove(file);  // a new file: all of it is CMD's
    const Seen under = Run("window-drop", script, {"--json", json_path});
    EXPECT_EQ(under.exit_code, 0) << mode << ": " << under.err << writelab_err;
    struct stat st {};
    EXPECT_EQ(stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 24 << 20) << mode;
    if (std::string(mode) == "sandboxed") continue;
    const std::string doc = Slurp(json_path);
    EXPECT_NE(doc.find("supervisor: window-drop"), std::string::npos) << mode << ": " << doc;
    EXPECT_NE(doc.find("installed a seccomp filter"), std::string::npos) << mode << ": " << doc;
  }
}

// A signal handler that exits, or replaces the descriptor being written,
// while the shim is inside a write of it: the shim's exit and close must
// not wait for the lock its own thread holds (it hung 4 runs of 4).
TEST_F(Reliability, AHandlerThatExitsOrReplacesTheDescriptorDoesNotHang) {
  for (const char* how : {"exit", "dup2"}) {
    const std::string script = "timeout 60 " + std::string(WRITELAB_WRITERS_BINARY) + " handler " +
                               work.path() + "/h 256 " + how;
    for (int i = 0; i < 3; ++i) {
      const Seen under = Run("window-drop", script);
      EXPECT_EQ(under.exit_code, 0) << how << " (124: it hung): " << under.err;
    }
  }
}

// A static program (the supervisor's) writes and deletes temporary files of
// 100 MiB on a file system of 300 MiB: writelab's descriptor of a deleted
// file kept its blocks, and the fourth file failed with ENOSPC.
TEST_F(Reliability, ADeletedFileIsNotKeptAllocated) {
  Tmpfs small(work.path() + "/small", "300M");
  ASSERT_TRUE(small.ok());
  const std::string script =
      std::string(WRITELAB_STATIC_WRITERS_BINARY) + " tempfiles " + small.dir() + " 8 100 200";
  const Seen plain = Run("", script);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (const char* s : {"window-drop", "drop-behind"}) {
    const Seen under = Run(s, script);
    EXPECT_EQ(under.exit_code, 0) << s << ": " << under.err << writelab_err;
  }
}

// What one run keeps is bounded whatever CMD says: 20,000 forged records of
// long names cost 590 MB of memory, 157 MB of stderr and a 113 MB document.
TEST_F(Reliability, ForgedRecordsCostABoundedAmount) {
  const std::string json_path = work.path() + "/run.json";
  RunResult r =
      RunWritelab({"run", "--strategy", "window-drop", "--all-files", "--json", json_path, "--",
                   WRITELAB_WRITERS_BINARY, "forge-many", work.path() + "/x", "20000"});
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_LT(r.max_rss_kib, 256 * 1024) << "KiB";
  EXPECT_LT(r.err.size(), 2u << 20) << "the table lists at most 200 files";
  const std::string text = Slurp(json_path);
  EXPECT_LT(text.size(), 4u << 20);
  const json doc = json::parse(text);
  for (const json& e : doc["experiments"])
    if (e["name"] == "run-files") {
      EXPECT_LE(e["rows"].size(), 201u);
      EXPECT_NE(e["rows"].back()["name"].get<std::string>().find("more files"), std::string::npos)
          << e["rows"].back()["name"];
    }
  EXPECT_NE(text.find("files not watched: more than 10000"), std::string::npos)
      << "the excess is counted";
}

// A file ftruncate'd to 9 MiB and never written is not 9 MiB written (nor
// handled: it has nothing to write back).
TEST_F(Reliability, ASparseFileWrittenByNothingIsNotWritten) {
  const std::string json_path = work.path() + "/run.json";
  const std::string dir = work.path() + "/sparse";
  std::filesystem::create_directories(dir);
  RunResult r = RunWritelab({"run", "--strategy", "window-drop", "--all-files", "--json", json_path,
                             "--", WRITELAB_STATIC_WRITERS_BINARY, "sparse", dir, "50", "9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(Slurp(json_path));
  int rows = 0;
  for (const json& e : doc["experiments"]) {
    if (e["name"] != "run-files") continue;
    for (const json& row : e["rows"]) {
      if (row["name"].get<std::string>().find("/sparse") == std::string::npos) continue;
      ++rows;
      for (const json& f : row["figures"]) {
        if (f["key"] == "written" || f["key"] == "handled") {
          EXPECT_EQ(f["value"]["median"], 0) << row["name"] << " " << f["key"];
        }
      }
    }
  }
  EXPECT_GT(rows, 0) << "the files are listed";
}

// A file writelab could not open (no descriptors left) is said to be so,
// never "small: left alone".
TEST_F(Reliability, AFileWritelabCouldNotOpenIsSaidToBeSo) {
  const std::string json_path = work.path() + "/run.json";
  const std::string dir = work.path() + "/many";
  std::filesystem::create_directories(dir);
  // As many files of 1 MiB as CMD can hold open under a limit of 256
  // descriptors, the limit writelab has too: writelab, with its own
  // descriptors beside the same inherited ones, cannot hold them all.
  RunResult r =
      RunProgram(WRITELAB_BINARY,
                 {"run", "--strategy", "window-drop", "--min-file", "1M", "--json", json_path, "--",
                  WRITELAB_STATIC_WRITERS_BINARY, "hold", dir, "1000", "1"},
                 [] {
                   rlimit lim{256, 256};
                   return setrlimit(RLIMIT_NOFILE, &lim) == 0 ? 0 : 99;
                 });
  ASSERT_EQ(r.exit_code, 0) << r.err;
  long held = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "held %ld", &held), 1) << r.out;
  ASSERT_GT(held, 0) << "CMD held as many as its limit allowed (writelab, with the same limit "
                        "and its own descriptors, cannot hold them all)";
  const std::string text = Slurp(json_path);
  EXPECT_NE(text.find("could not open it (Too many open files)"), std::string::npos) << text;
  for (const json& e : json::parse(text)["experiments"]) {
    for (const json& row : e["rows"]) {
      if (row["name"].get<std::string>().find(dir) == std::string::npos) continue;
      EXPECT_EQ(row["notes"].dump().find("small"), std::string::npos) << row.dump();
    }
  }
}

// The supervisor opens a file the shim names with the rights of the user
// CMD runs as: root's supplementary groups must not be among them (a
// root:root 0750 directory was opened for nobody).
TEST_F(Reliability, AFileIsOpenedWithTheUsersGroupsNotRoots) {
  const std::string dir = work.path() + "/rootonly";
  std::filesystem::create_directories(dir);
  ASSERT_EQ(chmod(dir.c_str(), 0750), 0);
  const std::string secret = dir + "/secret";
  Shell("head -c 16M /dev/zero > " + secret);
  ASSERT_EQ(chmod(work.path().c_str(), 0755), 0);
  const std::string json_path = work.path() + "/run.json";
  struct stat st {};
  ASSERT_EQ(stat(secret.c_str(), &st), 0);
  // writelab as root with group root among its supplementary groups, as
  // under sudo; CMD names the file by numbers it cannot stat for itself.
  RunResult r = RunProgram(WRITELAB_BINARY,
                           {"run", "--strategy", "window-drop", "--user", "nobody", "--json",
                            json_path, "--", WRITELAB_WRITERS_BINARY, "forge", secret,
                            std::to_string(st.st_dev), std::to_string(st.st_ino)},
                           [] {
                             const gid_t root = 0;
                             return setgroups(1, &root) == 0 ? 0 : 99;
                           });
  ASSERT_NE(r.exit_code, 99) << "setgroups";
  const json doc = json::parse(Slurp(json_path));
  int rows = 0;
  for (const json& e : doc["experiments"])
    for (const json& row : e["rows"])
      if (row["name"] == secret) {
        ++rows;
        for (const json& f : row["figures"])  // its cache is measured only through a descriptor
          EXPECT_NE(f["key"], "cached_end") << "opened for nobody: " << row.dump();
      }
  EXPECT_EQ(rows, 1) << "the forged file is listed: " << r.err;
}

// A file name is CMD's to choose: a newline in it must not forge a line of
// writelab's tables.
TEST_F(Reliability, ANewlineInAFileNameForgesNoLine) {
  RunResult r =
      RunWritelab({"run", "--min-file", "1", "--", "sh", "-c",
                   "cd " + work.path() + " && printf x > \"$(printf 'a\\nforged  99 GiB')\""});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("a?forged"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\nforged"), std::string::npos) << r.err;
}

// --user is a login's environment, not root's.
TEST_F(Reliability, UserGetsTheUsersHomeAndNames) {
  RunResult r = RunWritelab({"run", "--strategy", "window-drop", "--user", "nobody", "--", "sh",
                             "-c", "echo $HOME $USER $LOGNAME; id -G"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/nonexistent nobody nobody\n65534\n");
}

}  // namespace
}  // namespace writelab::testing
