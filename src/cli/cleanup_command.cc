// `writelab cleanup`: undo what a killed writelab left behind (loop devices,
// mounts, schedulers and sysfs knobs, scratch files), from the undo journals
// in /run/writelab. Journals of writelab processes still running are left.
#include <unistd.h>

#include <cstdio>

#include "cli/cli.h"
#include "testbed/journal.h"

namespace writelab {

void AddCleanupCommand(CLI::App& app, CommandAction* action) {
  auto dir = std::make_shared<std::string>("/run/writelab");
  CLI::App* sub = app.add_subcommand(
      "cleanup",
      "Undo the system changes a crashed or killed writelab left (test-bed loop devices, "
      "mounts, I/O schedulers, sysfs knobs, scratch files), from its undo journal.");
  sub->add_option("--journal-dir", *dir, "Where the undo journals are")->capture_default_str();
  sub->callback([dir, action] {
    *action = [dir](const RunContext&, Document&) {
      if (geteuid() != 0) return UsageError("cleanup needs root");
      CleanupReport r = CleanupStale(*dir);
      for (const std::string& s : r.undone) std::printf("undone: %s\n", s.c_str());
      for (const std::string& s : r.skipped) std::printf("left: %s\n", s.c_str());
      if (r.undone.empty() && r.skipped.empty() && r.errors.empty())
        std::printf("nothing to clean up in %s\n", dir->c_str());
      for (const std::string& e : r.errors) PrintError(e);
      return r.errors.empty() ? kExitOk : kExitRunFailed;
    };
  });
}

}  // namespace writelab
