// SPDX-License-Identifier: MIT
#include "program/spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/units.h"
#include "telemetry/procfs.h"

namespace writelab {

std::expected<RunAs, std::string> ResolveUser(const std::string& user) {
  std::string name = user;
  if (name.empty())
    if (const char* sudo = std::getenv("SUDO_USER"); sudo && *sudo && geteuid() == 0) name = sudo;
  if (name.empty()) return RunAs{};
  const passwd* pw = getpwnam(name.c_str());
  if (!pw) return std::unexpected("--user: no user " + Quoted(name));
  RunAs as{pw->pw_uid != geteuid(),      pw->pw_uid, pw->pw_gid, name, {},
           pw->pw_dir ? pw->pw_dir : "/"};
  int n = 32;
  for (int tries = 0; tries < 4; ++tries) {
    as.groups.resize(static_cast<size_t>(n));
    const int want = n;
    if (getgrouplist(name.c_str(), as.gid, as.groups.data(), &n) >= 0) {
      as.groups.resize(static_cast<size_t>(n));
      return as;
    }
    if (n <= want) n = want * 2;
  }
  return std::unexpected("--user: the groups of " + Quoted(name) + " could not be read");
}

bool BecomeUserInThisThread(const RunAs& as) {
  if (syscall(SYS_setgroups, as.groups.size(), as.groups.data()) != 0) return false;
  syscall(SYS_setfsgid, as.gid);
  syscall(SYS_setfsuid, as.uid);
  // setfsuid and setfsgid say nothing on failure but the old value: ask.
  return static_cast<uid_t>(syscall(SYS_setfsuid, -1)) == as.uid &&
         static_cast<gid_t>(syscall(SYS_setfsgid, -1)) == as.gid;
}

Result<Child> Spawn(const std::vector<std::string>& command, const RunAs& as,
                    const SpawnExtras& extras) {
  std::vector<char*> argv;  // built before the fork: the child only calls what exec needs
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> added = extras.env;
  if (as.change)  // as login(1) and su - do: the user's own, not root's
    added.insert(added.end(), {"HOME=" + as.home, "USER=" + as.name, "LOGNAME=" + as.name});
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : added) replaced |= x.substr(0, x.find('=')) == name;
    if (!replaced) env_text.push_back(entry);
  }
  env_text.insert(env_text.end(), added.begin(), added.end());
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int gate[2], error[2];
  if (pipe2(gate, O_CLOEXEC) != 0) return Unexpected(ErrnoError(errno, "pipe"));
  if (pipe2(error, O_CLOEXEC) != 0) {
    close(gate[0]), close(gate[1]);
    return Unexpected(ErrnoError(errno, "pipe"));
  }
  const pid_t pid = fork();
  if (pid < 0) return Unexpected(ErrnoError(errno, "fork"));
  if (pid == 0) {
    close(gate[1]);
    close(error[0]);
    char go = 0;
    while (read(gate[0], &go, 1) < 0 && errno == EINTR) {
    }
    if (go != 'g') _exit(126);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    int err = 0;
    if (extras.keep_fd >= 0 && dup2(extras.keep_fd, extras.keep_as) < 0) err = errno;
    if (!err && as.change &&
        (setgroups(as.groups.size(), as.groups.data()) != 0 || setgid(as.gid) != 0 ||
         setuid(as.uid) != 0))
      err = errno;
    if (!err) {
      execvpe(argv[0], argv.data(), envp.data());
      err = errno;
    }
    (void)!write(error[1], &err, sizeof err);
    _exit(127);
  }
  close(gate[0]);
  close(error[1]);
  return Child{pid, gate[1], error[0]};
}

Status Child::Release(const std::string& what) {
  (void)!write(gate, "g", 1);
  close(gate);
  int err = 0;
  const ssize_t n = read(error, &err, sizeof err);
  close(error);
  gate = error = -1;
  if (n != static_cast<ssize_t>(sizeof err)) return {};
  waitpid(pid, nullptr, 0);
  return Unexpected(ErrnoError(err, what));
}

}  // namespace writelab
