// SPDX-License-Identifier: MIT
// Runs killed with SIGKILL once a system change is journaled, and what
// their undo journal under /run/writelab then holds: for the tests that
// `writelab cleanup` undoes what a killed run left.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "test_paths.h"

namespace writelab::testing {

using nlohmann::json;

// The undo steps of the journal under /run/writelab that names dir (the
// killed run's): each as its JSON object; of process pid's journal only,
// when given (a test beside this one may journal a path that begins as
// dir does). The test's own journal, which names the beds it made
// (bed_journal.h), is not a run's.
inline std::vector<json> JournalSteps(const std::string& dir, pid_t pid = 0) {
  std::error_code ec;
  const std::string own = "journal-" + std::to_string(getpid()) + "-";
  const std::string its = pid ? "journal-" + std::to_string(pid) + "-" : "journal-";
  for (const auto& j : std::filesystem::directory_iterator("/run/writelab", ec)) {
    const std::string name = j.path().filename().string();
    const std::string text = Slurp(j.path().string());
    // a path that begins with dir (a folder, or a prefix as "/sys/fs/cgroup/writelab-")
    if (!name.starts_with(its) || name.starts_with(own) ||
        text.find("\"" + dir) == std::string::npos)
      continue;
    std::vector<json> steps;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) steps.push_back(json::parse(line));
    return steps;
  }
  return {};
}

// Starts writelab with args, SIGKILLs it once its journal has an op step
// (sysfs, cgroup) for path_suffix (or after 60 s), and returns the
// journal's steps.
inline std::vector<json> KillOnceJournaled(const std::vector<std::string>& args,
                                           const std::string& dir, const std::string& path_suffix,
                                           const std::string& op = "sysfs") {
  std::vector<char*> argv{const_cast<char*>(WRITELAB_BINARY)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execv(WRITELAB_BINARY, argv.data());
    _exit(127);
  }
  if (pid < 0) return {};  // a failed fork: no journal (and never kill(-1))
  std::vector<json> steps;
  for (int i = 0; i < 600; ++i) {
    usleep(100'000);
    steps = JournalSteps(dir, pid);
    bool set = false;
    for (const json& s : steps)
      set |= s.value("op", "") == op && s.value("path", "").find(path_suffix) != std::string::npos;
    if (set) break;
  }
  usleep(300'000);  // the write that follows its journaling
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return JournalSteps(dir, pid);
}

inline std::string StepPath(const std::vector<json>& steps, const std::string& op) {
  for (const json& s : steps)
    if (s.value("op", "") == op) return s["path"];
  return "";
}

inline std::string Bracketed(const std::string& scheduler_file) {
  const std::string s = Slurp(scheduler_file);
  const size_t open = s.find('['), close = s.find(']');
  return open == std::string::npos ? s : s.substr(open + 1, close - open - 1);
}

}  // namespace writelab::testing
