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

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "figures.h"
#include "harness.h"
#include "run_fixture.h"
#include "telemetry/pagecache.h"
#include "test_paths.h"
#include "writelab/unique_fd.h"

namespace writelab::testing {
namespace {

TEST_F(RunCli, DdUnderWindowDropKeepsTwoWindowsAndWritesTheSameBytes) {
  RandomFile(Path("src"), 64);
  json doc = Run({"--strategy", "window-drop"},
                 {"dd", "if=" + Path("src"), "of=" + Path("dst"), "bs=1M", "status=none"});
  ExpectHandled(doc, Path("dst"), "shim: window-drop");
  EXPECT_EQ(Sha256(Path("src")), Sha256(Path("dst")));
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

// A writelab whose shim the user CMD runs as cannot read (built under a
// private directory, as /root is) is refused before CMD starts, with one
// line that says what to do, instead of CMD failing at the loader.
TEST(RunRefusals, AShimTheUserCannotReadIsRefusedWithOneLine) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: --user";
  ScratchDir dir("private-shim");
  const std::string bin = dir.path() + "/bin";
  std::filesystem::create_directories(bin);
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);  // 0700
  const std::string from = std::filesystem::path(WRITELAB_BINARY).parent_path().string();
  ASSERT_EQ(Shell("cp " + std::string(WRITELAB_BINARY) + " " + from + "/libwritelab-run.so " + bin +
                  "/ && echo ok"),
            "ok");
  const std::string marker = dir.path() + "/ran";
  RunResult r = RunProgram(bin + "/writelab",
                           {"run", "--user", "nobody", "--", "sh", "-c", "touch " + marker});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("nobody, whom CMD runs as, cannot read the shim " + bin), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "CMD ran";
  // The same writelab runs CMD as root, who can read it (named: under sudo
  // CMD would run as SUDO_USER).
  RunResult ok =
      RunProgram(bin + "/writelab", {"run", "--user", "root", "--", "sh", "-c", "touch " + marker});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(std::filesystem::exists(marker));
}

}  // namespace
}  // namespace writelab::testing
