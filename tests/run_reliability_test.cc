// SPDX-License-Identifier: MIT
// `writelab run` must never change what the program sees (issue 40): its
// errors above all (a writeback error belongs to its own fsync, a failed
// final flush to its fclose), its sandbox, its signal handlers, its
// descriptors' offsets. Each test runs a program plainly and under every
// strategy, on devices that fail writes where it must (tests/failing_device.h),
// and compares what the program itself reported: its exit status and its
// own stderr, kept apart from writelab's (whose tables go to stderr too).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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
const char* const kStrategies[] = {"plain", "window", "window-drop", "dontcache", "drop-behind"};

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
// it was started under): the shim's own calls would kill it. It steps
// aside, and the supervisor handles the file from outside.
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
    const std::string doc = Slurp(json_path);
    EXPECT_NE(doc.find("supervisor: window-drop"), std::string::npos) << mode << ": " << doc;
    EXPECT_NE(doc.find("seccomp"), std::string::npos) << mode << ": the note says why";
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

}  // namespace
}  // namespace writelab::testing
