// SPDX-License-Identifier: MIT
// `writelab run --strategy S -- CMD` on the work directory's real file
// system (issue 30): the strategy applied to unmodified programs (dd, cp,
// tar), to what a preload cannot see (a static binary, io_uring), the
// coverage said per file, the data byte-identical, CMD's output and exit
// status passed through, SIGINT, and the refusals.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "figures.h"
#include "harness.h"
#include "telemetry/pagecache.h"
#include "test_paths.h"
#include "writelab/unique_fd.h"

namespace writelab::testing {
namespace {

using nlohmann::json;

constexpr double kWindow = 8 << 20;  // the default window

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    struct statfs fs;
    ASSERT_EQ(statfs(work.path().c_str(), &fs), 0);
    if (fs.f_type == 0x01021994) GTEST_SKIP() << "the work directory is on tmpfs: no writeback";
  }
  // writelab run OPTIONS -- CMD, with its document.
  json Run(std::vector<std::string> options, const std::vector<std::string>& cmd,
           RunResult* result = nullptr) {
    options.insert(options.end(), {"--json", json_path, "--"});
    options.insert(options.end(), cmd.begin(), cmd.end());
    options.insert(options.begin(), "run");
    RunResult r = RunWritelab(options);
    if (result) *result = r;
    EXPECT_TRUE(std::filesystem::exists(json_path)) << r.err << r.out;
    if (!std::filesystem::exists(json_path)) return json::object();
    json doc = json::parse(Slurp(json_path));
    std::filesystem::remove(json_path);
    return doc;
  }
  std::string Path(const std::string& name) const { return work.path() + "/" + name; }
  ScratchDir work{"run"};
  std::string json_path = work.path() + ".json";
};

const json* Result(const json& doc, const std::string& name) {
  for (const json& e : doc["experiments"])
    if (e["name"] == name) return &e;
  return nullptr;
}

// The row of the file at path in run-files ("STRATEGY: " before it with
// --compare).
const json* FileRow(const json& doc, const std::string& path) {
  const json* files = Result(doc, "run-files");
  if (!files) return nullptr;
  for (const json& r : (*files)["rows"])
    if (r["name"].get<std::string>().ends_with(path)) return &r;
  return nullptr;
}

std::string How(const json& row) { return row["notes"].empty() ? "" : row["notes"][0]; }

std::string Sha256(const std::string& path) {
  return Shell("sha256sum < " + path + " | cut -d' ' -f1");
}

// A file of random bytes, for copies whose result can be checked.
void RandomFile(const std::string& path, int mib) {
  Shell("head -c " + std::to_string(mib) + "M /dev/urandom > " + path);
}

// The strategy's promise on a file: all of it handled, at most two windows
// left cached when CMD exited (under dontcache too: RWF_DONTCACHE does not
// wait for its writeback, and the shim waits at close for what is left).
void ExpectHandled(const json& doc, const std::string& path, const std::string& how) {
  const json* row = FileRow(doc, path);
  ASSERT_TRUE(row) << "no row for " << path << ": " << doc.dump().substr(0, 2000);
  const auto f = Figures(*row);
  EXPECT_NE(How(*row).find(how), std::string::npos) << How(*row);
  EXPECT_EQ(f.at("handled"), f.at("written")) << How(*row);
  ASSERT_TRUE(f.count("cached_end")) << "cache measured";
  EXPECT_LE(f.at("cached_end"), 2 * kWindow) << path << ": " << How(*row);
  const auto run = Figures((*Result(doc, "run"))["rows"].back());
  EXPECT_EQ(run.at("coverage_pct"), 100);
}

TEST_F(RunCli, DdUnderWindowDropKeepsTwoWindowsAndWritesTheSameBytes) {
  RandomFile(Path("src"), 64);
  json doc = Run({"--strategy", "window-drop"},
                 {"dd", "if=" + Path("src"), "of=" + Path("dst"), "bs=1M", "status=none"});
  ExpectHandled(doc, Path("dst"), "shim: window-drop");
  EXPECT_EQ(Sha256(Path("src")), Sha256(Path("dst")));
}

// Each process's strace -ff output for TRACE (TRACE.PID), read and removed.
std::vector<std::string> ProcessTraces(const std::string& trace) {
  std::vector<std::string> out;
  for (const auto& file :
       std::filesystem::directory_iterator(std::filesystem::path(trace).parent_path())) {
    if (!file.path().string().starts_with(trace + ".")) continue;
    out.push_back(Slurp(file.path()));
    std::filesystem::remove(file.path());
  }
  return out;
}

// Issue 44: paced through the shim, strace watching each process apart:
// in dd's, every fdatasync is on a descriptor the shim opened read-only for
// itself (/proc/self/fd/N), never on dd's own (a flush there would take the
// writeback error dd's own fsync is owed), at least one per largest window
// of dd's bytes; and nothing is left cached.
TEST_F(RunCli, DdUnderPacedFlushesOnItsOwnDescriptorAndLeavesNothingCached) {
  const std::string trace = work.path() + "-trace", path = Path("dst");
  RunResult r = RunProgram(
      "/usr/bin/strace", {"-ff", "-qq", "-e", "trace=openat,close,fdatasync", "-o", trace,
                          WRITELAB_BINARY, "run", "--strategy", "paced", "--json", json_path, "--",
                          "dd", "if=/dev/zero", "of=" + path, "bs=1M", "count=256", "status=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(Slurp(json_path));
  std::filesystem::remove(json_path);
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
}

// Issue 44: direct through the shim, strace watching each process apart:
// in dd's, past --min-file (8 MiB, the first eight 1 MiB writes, dd's own)
// every byte goes out through the O_DIRECT descriptor the shim opened for
// itself (/proc/self/fd/N, moved high by F_DUPFD_CLOEXEC), none through
// dd's own (its of=, made its stdout by dup2); the copy is the same bytes, and nothing is left
// cached.
TEST_F(RunCli, DdUnderDirectWritesThroughItsOwnODirectDescriptor) {
  const std::string trace = work.path() + "-trace", path = Path("dst");
  RandomFile(Path("src"), 64);
  RunResult r =
      RunProgram("/usr/bin/strace",
                 {"-ff", "-qq", "-e", "trace=openat,fcntl,dup2,dup3,write,pwritev,pwritev2,close",
                  "-o", trace, WRITELAB_BINARY, "run", "--strategy", "direct", "--json", json_path,
                  "--", "dd", "if=" + Path("src"), "of=" + path, "bs=1M", "status=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(Slurp(json_path));
  std::filesystem::remove(json_path);
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

TEST_F(RunCli, DdUnderDontcacheWritesUncached) {
  RandomFile(Path("src"), 64);
  json doc = Run({"--strategy", "dontcache"},
                 {"dd", "if=" + Path("src"), "of=" + Path("dst"), "bs=1M", "status=none"});
  ExpectHandled(doc, Path("dst"), "shim: dontcache");
  EXPECT_EQ(Sha256(Path("src")), Sha256(Path("dst")));
}

// RWF_DONTCACHE starts each write's writeback and returns: a dd of zeros
// outruns the device, and without the shim's wait at close 7 to 33 MiB were
// still under writeback (so cached) when dd exited, in about 2 runs of 3
// here. Four runs, so that a shim without the wait fails.
TEST_F(RunCli, DdUnderDontcacheLeavesNothingUnderWritebackAtExit) {
  const std::string path = Path("dst");
  for (int i = 0; i < 4; ++i) {
    json doc = Run({"--strategy", "dontcache"},
                   {"dd", "if=/dev/zero", "of=" + path, "bs=1M", "count=256", "status=none"});
    ExpectHandled(doc, path, "shim: dontcache");
    const json* row = FileRow(doc, path);
    ASSERT_TRUE(row);
    EXPECT_EQ(Figures(*row).at("handled"), 256 << 20);
    EXPECT_LT(Figures(*row).at("cached_end"), 1 << 20) << "run " << i << ": less than a dd block";
    std::filesystem::remove(path);
  }
}

// cp copies with copy_file_range (coreutils 9): the kernel's copy has no
// uncached form, so under dontcache those bytes go through the window.
TEST_F(RunCli, CpIsHandledWhateverWayItCopies) {
  RandomFile(Path("src"), 64);
  json doc = Run({"--strategy", "dontcache"}, {"cp", Path("src"), Path("dst")});
  ExpectHandled(doc, Path("dst"), "shim:");
  EXPECT_EQ(Sha256(Path("src")), Sha256(Path("dst")));
}

// cp asks copy_file_range for the whole file in one call: the shim copies it
// in pieces given to the window, so that the copy never has more than about
// two windows dirty or under writeback (all 256 MiB were, until cp's one
// call returned, before). The file's pages are watched while cp runs.
TEST_F(RunCli, CpsOneCallCopyIsWindowedAsItGoes) {
  RandomFile(Path("src"), 256);
  Shell("sync " + Path("src"));
  const std::string dst = Path("dst");
  std::atomic<bool> done{false};
  uint64_t peak = 0, looks = 0;
  bool has_dirty = true;
  std::thread watch([&] {
    UniqueFd fd;
    while (!done.load()) {
      if (!fd) fd = UniqueFd(open(dst.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      auto r = fd ? MeasureResidency(fd.get(), dst) : std::unexpected(Error{});
      if (r) {
        has_dirty = r->dirty_pages && r->writeback_pages;
        peak = std::max(
            peak, (r->dirty_pages.value_or(0) + r->writeback_pages.value_or(0)) * r->page_size);
        ++looks;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });
  json doc = Run({"--strategy", "window-drop"}, {"cp", Path("src"), dst});
  done = true;
  watch.join();
  if (!has_dirty) GTEST_SKIP() << "no cachestat(2) here: a file's dirty pages cannot be seen";
  ExpectHandled(doc, dst, "shim: window-drop");
  EXPECT_GT(looks, 10u) << "the copy was watched";
  EXPECT_GT(peak, 0u) << "the copy's pages were seen dirty or under writeback";
  EXPECT_LE(peak, 2 * kWindow + (2 << 20)) << "dirty or under writeback at most";
  EXPECT_EQ(Sha256(Path("src")), Sha256(dst));
}

TEST_F(RunCli, TarIsHandled) {
  std::filesystem::create_directories(Path("tree"));
  RandomFile(Path("tree/big"), 48);
  Shell("for i in 1 2 3 4 5; do echo $i > " + Path("tree") + "/small$i; done");
  json doc =
      Run({"--strategy", "window-drop"}, {"tar", "cf", Path("out.tar"), "-C", Path("tree"), "."});
  ExpectHandled(doc, Path("out.tar"), "shim: window-drop");
  EXPECT_EQ(Shell("tar xOf " + Path("out.tar") + " ./big | sha256sum | cut -d' ' -f1"),
            Sha256(Path("tree/big")));
}

// What no preload sees: a static binary, and writes through io_uring. The
// supervisor handles them from outside, and the rows say so.
TEST_F(RunCli, AStaticWriterIsTheSupervisors) {
  RunResult r;
  json doc = Run({"--strategy", "window-drop"},
                 {WRITELAB_STATIC_WRITERS_BINARY, "stream", Path("out"), "256"}, &r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectHandled(doc, Path("out"), "supervisor: window-drop");
  const json& row = (*Result(doc, "run"))["rows"][0];
  EXPECT_NE(row["notes"].dump().find("ran without the shim"), std::string::npos) << row["notes"];
}

// Paced from outside: the supervisor flushes and drops behind a static
// writer through its own descriptor, and leaves nothing cached.
TEST_F(RunCli, AStaticWriterIsPacedByTheSupervisor) {
  RunResult r;
  json doc = Run({"--strategy", "paced"},
                 {WRITELAB_STATIC_WRITERS_BINARY, "stream", Path("out"), "256"}, &r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectHandled(doc, Path("out"), "supervisor: paced");
  const json* row = FileRow(doc, Path("out"));
  ASSERT_TRUE(row);
  EXPECT_LE(Figures(*row).at("cached_end"), 16 << 20) << "its last window flushed and dropped";
}

// O_DIRECT needs the writer's own calls: a static writer's file is
// refused under direct, said so, and left as it wrote it.
TEST_F(RunCli, AStaticWritersFileIsRefusedDirect) {
  RunResult r;
  json doc = Run({"--strategy", "direct"},
                 {WRITELAB_STATIC_WRITERS_BINARY, "stream", Path("out"), "64"}, &r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json* row = FileRow(doc, Path("out"));
  ASSERT_TRUE(row);
  EXPECT_NE(How(*row).find("refused-direct: written by calls the shim does not see"),
            std::string::npos)
      << How(*row);
  EXPECT_EQ(Figures(*row).at("handled"), 0);
}

TEST_F(RunCli, AnIoUringWriterIsTheSupervisors) {
  json doc =
      Run({"--strategy", "dontcache"}, {WRITELAB_WRITERS_BINARY, "uring", Path("out"), "256"});
  ExpectHandled(doc, Path("out"), "supervisor: window-drop (RWF_DONTCACHE needs");
}

// Below --min-file a file is left alone, whichever way it is written.
TEST_F(RunCli, ASmallFileIsLeftAlone) {
  const std::vector<std::string> cmd = {WRITELAB_WRITERS_BINARY, "fwrite", Path("small"), "1000",
                                        "100"};
  json doc = Run({"--strategy", "window-drop", "--all-files"}, cmd);
  const json* row = FileRow(doc, Path("small"));
  ASSERT_TRUE(row);
  EXPECT_NE(How(*row).find("small: left alone"), std::string::npos) << How(*row);
  EXPECT_EQ(Figures(*row).at("handled"), 0);
  // Without --all-files it is not listed: summed with the other small ones.
  doc = Run({"--strategy", "window-drop"}, cmd);
  EXPECT_FALSE(FileRow(doc, Path("small")));
  row = FileRow(doc, "files below --min-file)");
  ASSERT_TRUE(row) << doc.dump().substr(0, 2000);
  EXPECT_EQ(Figures(*row).at("written"), 100000) << "its 1000 x 100 bytes";
}

// The supervisor names each file it finds through /proc/PID/fd by the inode
// it identified: descriptors swapped between two files as fast as dup2 goes
// give no row one file's size under the other's name (a stat and a
// readlink of /proc/PID/fd/N apart did, in half the files here, and a dd's
// output row came out "small", named as its output and sized as its
// stdout). The static writer: no shim names the files first.
TEST_F(RunCli, ADescriptorSwappedBetweenFilesIsNamedByItsInode) {
  constexpr int kPairs = 8;
  json doc =
      Run({"--strategy", "window-drop", "--all-files"},
          {WRITELAB_STATIC_WRITERS_BINARY, "swap", work.path(), std::to_string(kPairs), "1"});
  const json* files = Result(doc, "run-files");
  ASSERT_TRUE(files);
  std::map<std::string, int> rows;
  for (const json& r : (*files)["rows"]) {
    const std::string name = r["name"];
    const std::string base = name.substr(name.rfind('/') + 1);
    if (name.rfind(work.path() + "/", 0) != 0) continue;
    ++rows[base];
    const int i = std::stoi(base.substr(1)), k = 2 * i + (base[0] == 'b');
    EXPECT_EQ(Figures(r).at("size"), (k + 1) * 512) << name;
  }
  EXPECT_EQ(rows.size(), 2u * kPairs) << files->dump().substr(0, 2000);
  for (const auto& [name, n] : rows) EXPECT_EQ(n, 1) << name << ": rows";
}

// --path limits the strategy to the files it matches, in the shim and the
// supervisor alike: the other stream is CMD's alone, with no row.
TEST_F(RunCli, PathLimitsTheStrategyToTheFilesItMatches) {
  RandomFile(Path("src"), 16);
  const std::string copy = "dd if=" + Path("src") + " bs=1M status=none of=";
  json doc = Run({"--strategy", "window-drop", "--path", "*/kept"},
                 {"sh", "-c", copy + Path("kept") + " && " + copy + Path("other")});
  ExpectHandled(doc, Path("kept"), "shim: window-drop");
  EXPECT_FALSE(FileRow(doc, Path("other"))) << "outside --path: " << doc.dump().substr(0, 2000);
  EXPECT_EQ(Sha256(Path("src")), Sha256(Path("other")));
}

// Big stdio files: fwrite's bytes are passed on per batch and at fclose.
TEST_F(RunCli, AnFwriteStreamIsHandledThroughTheShim) {
  json doc = Run({"--strategy", "window-drop"},
                 {WRITELAB_WRITERS_BINARY, "fwrite", Path("big"), "200000", "512"});
  ExpectHandled(doc, Path("big"), "shim: window-drop");
}

// plain and the strategy side by side: the strategy's files leave (almost)
// nothing cached, plain's the whole file. (One round: plain's 64 MiB wait
// for the kernel's expiry, 30 s, before they are durable.)
TEST_F(RunCli, CompareRunsPlainBesideTheStrategy) {
  json doc = Run({"--strategy", "window-drop", "--compare", "--rounds", "1"},
                 {"dd", "if=/dev/zero", "of=" + Path("dst"), "bs=1M", "count=64", "status=none"});
  const json* run = Result(doc, "run");
  ASSERT_TRUE(run);
  ASSERT_EQ((*run)["rows"].size(), 2u);
  const auto plain = Figures((*run)["rows"][0]), window = Figures((*run)["rows"][1]);
  EXPECT_EQ((*run)["rows"][0]["name"], "plain");
  EXPECT_GE(plain.at("cached_end"), 60 << 20) << "plain leaves the file cached";
  EXPECT_LE(window.at("cached_end"), 2 * kWindow);
  EXPECT_NEAR(plain.at("bytes"), window.at("bytes"), window.at("bytes") / 100);
  for (const auto* f : {&plain, &window})  // compared: each waited until its file was clean
    EXPECT_TRUE(f->count("durable_mb_s") && f->count("settle_s"));
}

TEST_F(RunCli, CompareRunsThreeLabelledRotatedRoundsUnlessToldOtherwise) {
  RunResult r;
  json doc = Run({"--compare"}, {"echo", "hi"}, &r);
  const json& row = (*Result(doc, "run"))["rows"][0];
  EXPECT_EQ(r.out, "hi\nhi\nhi\nhi\nhi\nhi\n") << "stdout is CMD's alone";
  for (const char* run : {"plain, round 1 of 3", "window-drop, round 3 of 3"})
    EXPECT_NE(r.err.find(std::string("writelab run: ") + run + ":\n"), std::string::npos)
        << "each run's output labelled on stderr: " << r.err;
  EXPECT_EQ(row["figures"][0]["value"]["n"], 3) << "one round of each is not a comparison";
  doc = Run({"--compare", "--rounds", "2"}, {"true"});
  EXPECT_EQ((*Result(doc, "run"))["rows"][0]["figures"][0]["value"]["n"], 2);
}

// --measure: the bystander probes while CMD runs and until what it left
// dirty is written back (none here: window-drop waited for it at close).
TEST_F(RunCli, MeasureProbesBesideCmdUntilItsPagesSettle) {
  json doc = Run({"--strategy", "window-drop", "--measure", "--probe-dir", work.path()},
                 {"sh", "-c",
                  "dd if=/dev/zero of=" + Path("dst") +
                      " bs=1M count=64 status=none; "
                      "sleep 0.5"});
  const auto f = Figures((*Result(doc, "run"))["rows"][0]);
  EXPECT_TRUE(f.count("probe_max_ms")) << "the bystander probed";
  ASSERT_TRUE(f.count("settle_s"));
  EXPECT_LT(f.at("settle_s"), 5) << "window-drop left nothing dirty to wait for";
  for (const std::string& e : work.Entries())
    EXPECT_EQ(e.find("writelab-probe"), std::string::npos) << e << " left behind";
}

TEST_F(RunCli, OutputAndExitStatusPassThrough) {
  RunResult r;
  json doc =
      Run({"--strategy", "window-drop"}, {"sh", "-c", "echo hello; echo oops >&2; exit 7"}, &r);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "hello\n") << "stdout is CMD's alone";
  EXPECT_NE(r.err.find("oops"), std::string::npos);
  EXPECT_EQ(Figures((*Result(doc, "run"))["rows"][0]).at("exit_status"), 7);
}

// Ctrl-C: CMD gets it too, what was measured is written, nothing is left.
TEST_F(RunCli, SigintStopsCmdAndKeepsWhatWasMeasured) {
  const std::string marker = Path("endless");
  RunResult r = RunWritelab(
      {"run", "--json", json_path, "--", WRITELAB_WRITERS_BINARY, "stream", marker, "1000000"},
      1500, SIGINT);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(ProcessesMentioning(marker).empty()) << "CMD stopped with writelab";
  ASSERT_TRUE(std::filesystem::exists(json_path)) << r.err;
  json doc = json::parse(Slurp(json_path));
  std::filesystem::remove(json_path);
  EXPECT_NE(doc.dump().find("interrupted"), std::string::npos);
  const json* row = FileRow(doc, marker);
  ASSERT_TRUE(row);
  EXPECT_GT(Figures(*row).at("written"), 0);
  std::filesystem::remove(marker);
  for (const std::string& e : work.Entries())
    EXPECT_EQ(e.find("writelab-"), std::string::npos) << e << " left behind";
}

// The shim inside a program changes nothing it should not: O_APPEND,
// pwrite's position, copy_file_range's offsets, positions and errno (the
// shim copies in pieces), a failed write's errno, a pipe.
// Under direct too: its O_APPEND file is refused, its copy_file_range's
// bytes go through the window (the kernel copies: nothing to make direct).
TEST_F(RunCli, TheShimKeepsWhatTheProgramsCallsMean) {
  for (const std::string strategy : {"window-drop", "direct"}) {
    RunResult r;
    json doc = Run({"--strategy", strategy, "--min-file", "1M"},
                   {WRITELAB_WRITERS_BINARY, "semantics", work.path()}, &r);
    EXPECT_EQ(r.exit_code, 0) << strategy << ": " << r.err;
    const bool direct = strategy == "direct";
    const json* row = FileRow(doc, Path("appended"));
    ASSERT_TRUE(row);
    EXPECT_NE(
        How(*row).find(direct ? "refused-direct (CMD opened it O_APPEND)" : "shim: window-drop"),
        std::string::npos)
        << How(*row);
    const json* copied = FileRow(doc, Path("copied"));
    ASSERT_TRUE(copied);
    EXPECT_NE(How(*copied).find(direct ? "shim: direct+window-drop" : "shim: window-drop"),
              std::string::npos)
        << How(*copied);
  }
}

// A signal handler writing to the descriptor the program is streaming to,
// and a fork's children writing and exiting while a thread streams: no
// lock of the shim's is waited on (`timeout` makes a hang a failure). The
// forks run several times: a fork while the streaming thread's first write
// held its descriptor's lock, before the fork handler was registered, hung
// the child (1 run in 2 with the CPUs busy; the handler is now registered
// when the library loads).
TEST_F(RunCli, SignalHandlersAndForksDoNotHang) {
  for (const char* strategy : {"window-drop", "direct"})
    for (const char* mode : {"signals", "forks", "forks", "forks", "forks", "forks"}) {
      RunResult r;
      Run({"--strategy", strategy},
          {"timeout", "60", WRITELAB_WRITERS_BINARY, mode, Path(mode), "64"}, &r);
      EXPECT_EQ(r.exit_code, 0) << strategy << ": " << mode << ": " << r.err;
    }
}

// A program that outlives writelab (a daemon CMD started) goes on writing
// through the shim: its records find no writelab, and it must not die of
// SIGPIPE for it.
TEST_F(RunCli, AProgramOutlivingWritelabIsNotKilled) {
  const std::string status = Path("status");
  Run({"--strategy", "window-drop"},
      {"sh", "-c",
       "(sleep 1; " + std::string(WRITELAB_WRITERS_BINARY) + " stream " + Path("later") +
           " 16; echo $? > " + status + ") >/dev/null 2>&1 &"});
  for (int i = 0; i < 100 && Slurp(status).empty(); ++i) usleep(100'000);
  EXPECT_EQ(Slurp(status), "0\n") << "the writer's exit status after writelab had gone";
}

// Records are input from CMD: forged ones (a file CMD may not read, a FIFO,
// a hello from pid 1) make writelab open, list and handle nothing of them.
TEST_F(RunCli, ForgedRecordsOpenNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: CMD as nobody";
  const std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  for (const std::string& target : {std::string("/etc/shadow"), fifo}) {
    json doc = Run({"--strategy", "window-drop", "--user", "nobody", "--min-file", "1"},
                   {WRITELAB_WRITERS_BINARY, "forge", target});
    const json* files = Result(doc, "run-files");
    ASSERT_TRUE(files);
    for (const json& r : (*files)["rows"]) {
      if (r["name"].get<std::string>().find(target) == std::string::npos) continue;
      const auto f = Figures(r);
      EXPECT_FALSE(f.count("cached_end")) << target << " was opened: " << r.dump();
      EXPECT_EQ(f.count("size") ? f.at("size") : 0, 0) << target << ": " << r.dump();
    }
    const json& run = (*Result(doc, "run"))["rows"][0];
    EXPECT_NE(run["notes"].dump().find("outside the scope"), std::string::npos) << run["notes"];
  }
}

// writelab itself unprivileged: CMD's /proc/PID/io is unreadable once it
// is a zombie (to all but root), so its bytes come from wait4's rusage.
// The binary and its shim are copied where nobody may run them.
TEST(RunUnprivileged, ADdsBytesAndRateAreCountedWhenWritelabIsNotRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: to become nobody";
  char tmpl[] = "/var/tmp/writelab-unpriv-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  const std::string dir = tmpl, bin = dir + "/writelab", data = dir + "/data";
  const std::filesystem::path built(WRITELAB_BINARY);
  std::filesystem::copy_file(built, bin);
  std::filesystem::copy_file(built.parent_path() / "libwritelab-run.so",
                             dir + "/libwritelab-run.so");
  std::filesystem::create_directory(data);
  chmod(dir.c_str(), 0755);
  ASSERT_EQ(chown(data.c_str(), 65534, 65534), 0) << "nobody's own directory";
  const std::string rc = Shell("su nobody -s /bin/sh -c '" + bin + " run --json " + data +
                               "/r.json -- dd if=/dev/zero of=" + data +
                               "/big bs=1M count=256 status=none' >/dev/null 2>&1; echo $?");
  const std::string doc_text = Slurp(data + "/r.json");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(rc, "0");
  const json doc = json::parse(doc_text);
  const auto f = Figures((*Result(doc, "run"))["rows"][0]);
  EXPECT_GE(f.at("bytes"), 256.0 * 1024 * 1024) << "dd's own count, and a few blocks besides";
  EXPECT_LE(f.at("bytes"), 257.0 * 1024 * 1024);
  EXPECT_GT(f.at("mb_s"), 0);
}

TEST(RunRefusals, BadInputIsOneLineAndExitTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--strategy", "fast", "--", "true"},
        std::vector<std::string>{"run", "--window", "1", "--", "true"},
        std::vector<std::string>{"run", "--window", "18446744073709551615", "--", "true"},
        std::vector<std::string>{"run", "--window", "5000", "--", "true"},
        std::vector<std::string>{"run", "--min-file", "0", "--", "true"},
        std::vector<std::string>{"run", "--poll", "1000000h", "--", "true"},
        std::vector<std::string>{"run", "--path", "[", "--", "true"},
        std::vector<std::string>{"run", "--path", "", "--", "true"},
        std::vector<std::string>{"run", "--strategy", "plain", "--compare", "--", "true"},
        std::vector<std::string>{"run", "--strategy", "memcg", "--", "true"},
        std::vector<std::string>{"run", "--strategy", "memcg:1M", "--", "true"},
        std::vector<std::string>{"run", "--strategy", "window:5ms", "--", "true"},
        std::vector<std::string>{"run", "--strategy", "paced:0ms", "--", "true"},
        std::vector<std::string>{"run", "--strategy", "paced,window-drop", "--", "true"},
        std::vector<std::string>{"run", "--compare", "--strategy", "paced,paced", "--", "true"},
        std::vector<std::string>{"run"},
        std::vector<std::string>{"run", "--", "/nonexistent/program"},
        std::vector<std::string>{"run", "--json", "-", "--", "true"},
        std::vector<std::string>{"run", "--rounds", "3", "--", "true"},
        std::vector<std::string>{"run", "--user", "no-such-user-here", "--", "true"}}) {
    RunResult r = RunWritelab(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
  }
}

}  // namespace
}  // namespace writelab::testing
