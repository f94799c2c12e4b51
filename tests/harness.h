// SPDX-License-Identifier: MIT
// Helpers for integration tests: run the writelab binary as a user would,
// in a scratch directory of the test's own.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "support.h"
#include "test_paths.h"

namespace writelab::testing {

// A part the test profile installs is missing (a build with MPI, mpirun,
// chromium): the test skips, saying why, except where the caller asked for
// every part (scripts/test.sh, and so CI, sets WRITELAB_REQUIRE_PARTS=1):
// there it fails, so that a missing install step cannot pass for a green run.
#define WRITELAB_SKIP_WITHOUT_PART(why)                                                 \
  do {                                                                                  \
    if (const char* all = std::getenv("WRITELAB_REQUIRE_PARTS"); all && *all)           \
      FAIL() << why << " (WRITELAB_REQUIRE_PARTS is set: scripts/test.sh installs it)"; \
    GTEST_SKIP() << why;                                                                \
  } while (0)

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  long max_rss_kib = 0;  // the program's largest resident set (wait4's rusage)
};

// The environment a program under test runs in: this process's, with
// WRITELAB_HISTORY=off unless the test set WRITELAB_HISTORY itself, so that
// no test appends to the real history of whoever runs the tests (tests of
// the history pass --history FILE, which goes before the variable).
inline std::vector<std::string> TestEnvironment() {
  std::vector<std::string> env;
  bool history = false;
  for (char** e = environ; *e; ++e) {
    env.emplace_back(*e);
    history |= env.back().starts_with("WRITELAB_HISTORY=");
  }
  if (!history) env.emplace_back("WRITELAB_HISTORY=off");
  return env;
}

// Runs binary with args; stdout and stderr are captured through files of
// this process's own (tests run in parallel). setup, if given, runs in the
// child before exec (a seccomp filter, another uid) and returns 0, or an exit
// code for the child to end with. With signal_after_ms > 0, sends sig to the
// program that long after it started. The program's environment is
// TestEnvironment().
using ChildSetup = int (*)();
// A ChildSetup: the program in a session (and process group) of its own, so
// that whatever it signals as its group (kill(0, ...), as Open MPI's
// mpirun has done tearing down a failed job) is never the test runner's.
// A SIGKILL to the whole group ended two test runs, ctest and CI's script
// with them, each time while mpirun's refusals and script(1) ran. No
// controlling terminal either: a program that reads a developer's
// terminal (script(1)) is not stopped as a background job.
inline int OwnSession() { return setsid() < 0 ? 126 : 0; }
// With again_after_us > 0, sig is sent a second time that long after the
// first (GNU timeout's way: to the program, then to its process group).
// signal_after_ms: sig is sent that long after the start, or, with
// signal_when, as soon as signal_when() says so (polled every 20 ms; at
// signal_after_ms at the latest).
inline RunResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                            ChildSetup setup = nullptr, int signal_after_ms = 0, int sig = SIGINT,
                            int again_after_us = 0,
                            const std::function<bool()>& signal_when = nullptr) {
  // Its output in two files made new (mkostemp: O_EXCL, names no one can
  // guess): /tmp is anyone's, and root must not write through a name
  // planted there. Close-on-exec: only the copies on 1 and 2 reach it. The
  // test's PID in the name: scripts/test.sh removes a killed test's.
  const std::string pattern = "/tmp/writelab-test-capture-" + std::to_string(getpid()) + "-XXXXXX";
  const char* const with_nul_end = pattern.c_str() + pattern.size() + 1;
  std::vector<char> out_path(pattern.c_str(), with_nul_end),
      err_path(pattern.c_str(), with_nul_end);
  const int out = mkostemp(out_path.data(), O_CLOEXEC), err = mkostemp(err_path.data(), O_CLOEXEC);
  std::vector<char*> argv;  // built before fork: the child only calls what exec needs
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_text = TestEnvironment();
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(125);
    if (setup)
      if (int code = setup(); code != 0) _exit(code);
    execve(binary.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  for (const int fd : {out, err})
    if (fd >= 0) close(fd);
  RunResult r;
  if (pid > 0) {
    if (signal_after_ms > 0) {
      auto exited = [pid] {  // without reaping it: wait4 below does
        siginfo_t info{};
        return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == pid;
      };
      for (int waited = 0; signal_when && waited < signal_after_ms && !signal_when() && !exited();
           waited += 20)
        usleep(20'000);
      if (!signal_when) usleep(static_cast<useconds_t>(signal_after_ms) * 1000);
      kill(pid, sig);
      if (again_after_us > 0) {
        usleep(static_cast<useconds_t>(again_after_us));
        kill(pid, sig);
      }
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.max_rss_kib = usage.ru_maxrss;
  }
  r.out = out < 0 ? "" : Slurp(out_path.data());
  r.err = err < 0 ? "" : Slurp(err_path.data());
  for (const auto& [fd, path] : {std::pair{out, out_path.data()}, std::pair{err, err_path.data()}})
    if (fd >= 0) unlink(path);
  return r;
}

inline RunResult RunWritelab(const std::vector<std::string>& args, int signal_after_ms = 0,
                             int sig = SIGINT) {
  return RunProgram(WRITELAB_BINARY, args, nullptr, signal_after_ms, sig);
}

// Runs writelab as nobody (uid and gid 65534), to test refusals.
inline RunResult RunWritelabAsNobody(const std::vector<std::string>& args) {
  return RunProgram(WRITELAB_BINARY, args, [] { return setgid(65534) || setuid(65534) ? 126 : 0; });
}

// Runs writelab with io_uring_setup failing with Errno (a seccomp filter, as
// a container policy does: ENOSYS, or EACCES/EPERM); exit code 99 when the
// filter cannot be installed.
template <int Errno = ENOSYS>
inline RunResult RunWithoutUring(const std::vector<std::string>& args) {
  return RunProgram(WRITELAB_BINARY, args, [] {
    static sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | Errno),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog = {static_cast<unsigned short>(std::size(filter)), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
      return 99;
    return 0;
  });
}

// A fresh directory under the build tree's temp area, removed at the end.
class ScratchDir {
 public:
  // A new directory of its own, writelab-test-NAME-PID-XXXXXX (mkdtemp:
  // made, never found, so that nothing planted under a directory anyone
  // may write, as /var/tmp, is written through), readable by all as
  // before (tests run programs as nobody). One that cannot be made stops
  // the test binary, by name: paths built from "" would be the root's.
  explicit ScratchDir(const std::string& name) {
    const char* base = std::getenv("WRITELAB_TEST_DIR");
    const std::string under = base ? base : "/var/tmp";
    std::error_code ec;
    std::filesystem::create_directories(under, ec);
    std::string tmpl =
        under + "/writelab-test-" + name + "-" + std::to_string(getpid()) + "-XXXXXX";
    if (mkdtemp(tmpl.data()) && chmod(tmpl.c_str(), 0755) == 0) {
      path_ = tmpl;
      return;
    }
    std::fprintf(stderr, "ScratchDir: could not make %s: %s\n", tmpl.c_str(), std::strerror(errno));
    std::abort();
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    return names;
  }

 private:
  std::string path_;
};

// Runs a shell command; its stdout without the trailing newlines.
// Whether a loop device ("loop3") is bound to nothing: once writelab lets go
// of its test bed's device, a test running beside may bind it and set a
// limit of its own, so what its sysfs says is then that test's.
inline bool LoopDeviceFree(const std::string& dev) {
  return !std::filesystem::exists("/sys/block/" + dev + "/loop/backing_file");
}

inline std::string Shell(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Processes (other than this one) whose command line contains marker.
inline std::vector<int> ProcessesMentioning(const std::string& marker) {
  std::vector<int> pids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = Slurp(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (std::stoi(name) != getpid() && cmdline.find(marker) != std::string::npos)
      pids.push_back(std::stoi(name));
  }
  return pids;
}

// Loop devices whose backing file's path contains dir.
inline std::vector<std::string> LoopsBackedUnder(const std::string& dir) {
  std::vector<std::string> loops;
  for (const auto& e : std::filesystem::directory_iterator("/sys/block")) {
    std::string backing = Slurp(e.path().string() + "/loop/backing_file");
    if (backing.find(dir) != std::string::npos) loops.push_back(e.path().filename().string());
  }
  return loops;
}

inline int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace writelab::testing
