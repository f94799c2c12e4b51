// SPDX-License-Identifier: MIT
// `writelab run` under the strategies that keep a bystander's fsync calm
// (issue 44): paced and direct through the shim and the supervisor, each
// checked with strace per process, byte for byte, and by the page cache
// left behind.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_fixture.h"
#include "test_paths.h"

namespace writelab::testing {
namespace {

// Issue 44: paced through the shim, strace watching each process apart:
// in dd's, every fdatasync is on a descriptor the shim opened read-only for
// itself (/proc/self/fd/N), never on dd's own (a flush there would take the
// writeback error dd's own fsync is owed), at least one per largest window
// of dd's bytes; and nothing is left cached.
TEST_F(RunCli, DdUnderPacedFlushesOnItsOwnDescriptorAndLeavesNothingCached) {
  const std::string trace = outputs.path() + "/strace", path = Path("dst");
  json doc = RunTraced(trace, "openat,close,fdatasync", "paced",
                       {"dd", "if=/dev/zero", "of=" + path, "bs=1M", "count=256", "status=none"});
  ExpectHandled(doc, path, "shim: paced");
  const json* row = FileRow(doc, path);
  ASSERT_TRUE(row);
  EXPECT_EQ(Figures(*row).at("handled"), 256 << 20);
  EXPECT_LE(Figures(*row).at("cached_end"), 16 << 20);
  auto fd_of = [](const std::string& line, size_t open) {  // "fdatasync(3)" -> "3"
    return line.substr(open, line.find_first_of(",)", open) - open);
  };
  int flushes = 0, not_its_own = 0, dds = 0;
  for (const std::string& process : ProcessTraces(trace)) {
    std::istringstream lines(process);
    std::set<std::string> own;  // the shim's read-only descriptors, open now
    bool dd = false;
    for (std::string line; std::getline(lines, line);) {
      const std::string result = line.substr(line.rfind(" = ") + 3);
      if (line.starts_with("openat(") && line.find("\"" + path + "\"") != std::string::npos)
        dd |= line.find("O_WRONLY") != std::string::npos;
      else if (line.starts_with("openat(AT_FDCWD, \"/proc/self/fd/") &&
               line.find("O_RDONLY") != std::string::npos)
        own.insert(result);
      else if (line.starts_with("close("))
        own.erase(fd_of(line, 6));
      else if (line.starts_with("fdatasync(") && dd)
        ++flushes, not_its_own += !own.count(fd_of(line, 10));
    }
    dds += dd;
  }
  ASSERT_EQ(dds, 1) << "dd's open of " << path << " is not in one process's trace";
  EXPECT_GE(flushes, 256 / 64) << "fewer flushes than the largest window allows";
  EXPECT_EQ(not_its_own, 0) << "a flush on a descriptor the shim did not open for itself";
  // The file's row counts them as strace did: "shim: paced (N flushes of its own, ...".
  const std::string how = How(*row), said = "shim: paced (";
  const size_t at = how.find(said);
  ASSERT_NE(at, std::string::npos) << how;
  EXPECT_EQ(std::stoi(how.substr(at + said.size())), flushes) << how;
  EXPECT_NE(how.find(" flushes of its own, the slowest "), std::string::npos) << how;
}

// Issue 44: direct through the shim, strace watching each process apart:
// in dd's, past --min-file (8 MiB, the first eight 1 MiB writes, dd's own)
// every byte goes out through the O_DIRECT descriptor the shim opened for
// itself (/proc/self/fd/N, moved high by F_DUPFD_CLOEXEC), none through
// dd's own (its of=, made its stdout by dup2); the copy is the same bytes, and nothing is left
// cached.
TEST_F(RunCli, DdUnderDirectWritesThroughItsOwnODirectDescriptor) {
  const std::string trace = outputs.path() + "/strace", path = Path("dst");
  RandomFile(Path("src"), 64);
  json doc = RunTraced(trace, "openat,fcntl,dup2,dup3,write,pwritev,pwritev2,close", "direct",
                       {"dd", "if=" + Path("src"), "of=" + path, "bs=1M", "status=none"});
  ExpectHandled(doc, path, "shim: direct");
  const json* row = FileRow(doc, path);
  ASSERT_TRUE(row);
  EXPECT_LT(Figures(*row).at("cached_end"), 1 << 20);
  EXPECT_EQ(Sha256(Path("src")), Sha256(path));
  auto number = [](const std::string& text) { return std::strtoll(text.c_str(), nullptr, 10); };
  long long by_dd = 0, by_own = 0;
  int dds = 0;
  for (const std::string& process : ProcessTraces(trace)) {
    std::istringstream lines(process);
    std::set<std::string> dd, own;  // descriptors of dd's output and of the shim's
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(" = ") == std::string::npos) continue;
      const std::string result = line.substr(line.rfind(" = ") + 3);
      const size_t open = line.find('(');
      const std::string fd = line.substr(open + 1, line.find_first_of(",)", open) - open - 1);
      if (line.starts_with("openat(") && line.find("\"" + path + "\"") != std::string::npos &&
          line.find("O_WRONLY") != std::string::npos)
        dd.insert(result), ++dds;
      else if (line.starts_with("openat(AT_FDCWD, \"/proc/self/fd/") &&
               line.find("O_DIRECT") != std::string::npos && number(result) >= 0)
        own.insert(result);
      else if (line.starts_with("fcntl(") && line.find("F_DUPFD_CLOEXEC") != std::string::npos &&
               own.count(fd))
        own.insert(result);
      else if (line.starts_with("dup") && dd.count(fd))  // dd's of= becomes its stdout
        dd.insert(result);
      else if (line.starts_with("close("))
        own.erase(fd), dd.erase(fd);
      else if (line.starts_with("write(") && dd.count(fd))
        by_dd += number(result);
      else if (line.starts_with("pwritev") && own.count(fd))
        by_own += number(result);
    }
  }
  ASSERT_EQ(dds, 1) << "dd's open of " << path << " is not in one process's trace";
  EXPECT_EQ(by_dd, 8 << 20) << "dd's own writes: up to --min-file";
  EXPECT_EQ(by_own, 56 << 20) << "the rest: through the shim's O_DIRECT descriptor";
}

// Writes that O_DIRECT cannot take (7777 bytes at a time) and a file opened
// O_APPEND are refused, each with its reason, and written as CMD wrote them.
TEST_F(RunCli, DirectRefusesAFileItsWritesDoNotAllowAndSaysWhy) {
  RandomFile(Path("src"), 24);
  json doc = Run({"--strategy", "direct"},
                 {"dd", "if=" + Path("src"), "of=" + Path("odd"), "bs=7777", "status=none"});
  const json* row = FileRow(doc, Path("odd"));
  ASSERT_TRUE(row);
  EXPECT_NE(How(*row).find("refused-direct (its first write after --min-file was not aligned"),
            std::string::npos)
      << How(*row);
  EXPECT_EQ(Sha256(Path("src")), Sha256(Path("odd")));
  doc = Run({"--strategy", "direct"}, {"dd", "if=" + Path("src"), "of=" + Path("log"), "bs=1M",
                                       "oflag=append", "conv=notrunc", "status=none"});
  row = FileRow(doc, Path("log"));
  ASSERT_TRUE(row);
  EXPECT_NE(How(*row).find("refused-direct (CMD opened it O_APPEND)"), std::string::npos)
      << How(*row);
  EXPECT_EQ(Sha256(Path("src")), Sha256(Path("log")));
}

// Paced from outside: the supervisor flushes and drops behind a static
// writer through its own descriptor, and leaves nothing cached.
TEST_F(RunCli, AStaticWriterIsPacedByTheSupervisor) {
  // The static writer's 256 MiB under a strategy: run's document.
  auto under = [&](const std::string& strategy) {
    RunResult r;
    json doc = Run({"--strategy", strategy},
                   {WRITELAB_STATIC_WRITERS_BINARY, "stream", Path("out"), "256"}, &r);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return doc;
  };
  json doc = under("paced");
  ExpectHandled(doc, Path("out"), "supervisor: paced (");  // its flushes counted
  const json* row = FileRow(doc, Path("out"));
  ASSERT_TRUE(row);
  EXPECT_LE(Figures(*row).at("cached_end"), 16 << 20) << "its last window flushed and dropped";
  // From outside it cannot hold the writer back: a target its flushes did
  // not keep is said so (its first flush alone writes the 8 MiB window).
  doc = under("paced:1ms");
  row = FileRow(doc, Path("out"));
  ASSERT_TRUE(row);
  EXPECT_NE(How(*row).find("; over the target of 1"), std::string::npos) << How(*row);
  EXPECT_NE(How(*row).find("nothing holds CMD's writer back"), std::string::npos) << How(*row);
  // And not where its flushes kept the target (no flush of 256 MiB takes
  // a minute).
  doc = under("paced:60s");
  row = FileRow(doc, Path("out"));
  ASSERT_TRUE(row);
  EXPECT_NE(How(*row).find("supervisor: paced ("), std::string::npos) << How(*row);
  EXPECT_EQ(How(*row).find("over the target"), std::string::npos) << How(*row);
}

// O_DIRECT needs the writer's own calls: a static writer's file is
// refused under direct, said so, and left as it wrote it. The supervisor
// sees a file only while a process holds it open, every 5 ms at first: a
// writer of 64 MiB once opened, wrote and closed it between two looks (a
// CI run, beside the suite), and 256 MiB take it four times as long.
TEST_F(RunCli, AStaticWritersFileIsRefusedDirect) {
  RunResult r;
  json doc = Run({"--strategy", "direct"},
                 {WRITELAB_STATIC_WRITERS_BINARY, "stream", Path("out"), "256"}, &r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json* row = FileRow(doc, Path("out"));
  ASSERT_TRUE(row);
  EXPECT_NE(How(*row).find("refused-direct: written by calls the shim does not see"),
            std::string::npos)
      << How(*row);
  EXPECT_EQ(Figures(*row).at("handled"), 0);
}

}  // namespace
}  // namespace writelab::testing
