// SPDX-License-Identifier: MIT
// `writelab cleanup`: undo what a killed writelab left behind (loop devices,
// mounts, schedulers and sysfs knobs, scratch files, background commands),
// from the undo journals in /run/writelab. Journals of writelab processes
// still running are left.
#include <sys/stat.h>

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/cli.h"
#include "command/errors.h"
#include "testbed/journal.h"

namespace writelab {

void AddCleanupCommand(CLI::App& app, CommandAction* action) {
  static const std::string kDefaultDir = "/run/writelab";
  auto dir = std::make_shared<std::string>(kDefaultDir);
  CLI::App* sub = app.add_subcommand(
      "cleanup",
      "Undo the system changes a crashed or killed writelab left (test-bed loop devices, "
      "mounts, I/O schedulers, sysfs knobs, scratch files, background commands), from its undo "
      "journal.");
  sub->add_option("--journal-dir", *dir, "Where the undo journals are")->capture_default_str();
  sub->callback([dir, action] {
    *action = [dir](const RunContext&, Document&) {
      if (geteuid() != 0) return UsageError("cleanup needs root");
      struct stat st;
      if (lstat(dir->c_str(), &st) != 0 && errno == ENOENT) {
        if (*dir != kDefaultDir) return UsageError("--journal-dir: " + *dir + " does not exist");
        std::printf("nothing to clean up: %s does not exist (no writelab ran since boot)\n",
                    dir->c_str());
        return kExitOk;
      }
      auto r = CleanupStale(*dir);
      if (!r) {
        PrintError(r.error().Message());
        return kExitRunFailed;
      }
      for (const std::string& s : r->undone) std::printf("undone: %s\n", s.c_str());
      for (const std::string& s : r->skipped) std::printf("left: %s\n", s.c_str());
      if (r->undone.empty() && r->skipped.empty() && r->errors.empty())
        std::printf("nothing to clean up in %s\n", dir->c_str());
      for (const std::string& e : r->errors) PrintError(e);
      return r->errors.empty() ? kExitOk : kExitRunFailed;
    };
  });
}

}  // namespace writelab
