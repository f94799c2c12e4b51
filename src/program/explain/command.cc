// SPDX-License-Identifier: MIT
// `writelab explain [OPTIONS] -- CMD [ARGS...]` and `writelab explain --pid
// PID`: options -> ProgramSpec -> RunExplainProgram -> reporters; writelab
// exits with CMD's status.
#include <signal.h>
#include <sys/stat.h>

#include <memory>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "command/wire.h"
#include "explain/explainer.h"
#include "program/explain/def.h"
#include "program/explain/watch.h"

namespace writelab {
namespace {

struct ProgramOptions {
  ProgramSpec spec;
  std::string duration;
  std::string slow;
  OutputOptions out;
};

std::expected<ProgramSpec, std::string> BuildExplainSpec(ProgramOptions& o) {
  ProgramSpec s = o.spec;
  if (s.command.empty() == (s.pid == 0))
    return Refuse("explain: give a command after -- (writelab explain -- CMD ARGS) or --pid PID");
  if (!o.duration.empty()) {
    if (s.pid == 0)
      return Refuse("--duration: only with --pid (a command is watched until it exits)");
    auto d = DurationOption("--duration", o.duration);
    if (!d) return Refuse(d.error());
    if (*d == 0) return Refuse("--duration: must be greater than 0");
    s.duration_ns = *d;
  }
  if (!o.slow.empty()) {
    auto d = DurationOption("--slow", o.slow);
    if (!d) return Refuse(d.error());
    if (*d == 0) return Refuse("--slow: must be greater than 0");
    s.slow_ns = *d;
  }
  if (s.pid && kill(s.pid, 0) != 0 && errno == ESRCH)
    return Refuse("--pid: no process " + std::to_string(s.pid));
  for (const std::string& d : s.devices) {
    struct stat st;
    if (stat(d.c_str(), &st) != 0 || !S_ISBLK(st.st_mode))
      return Refuse("--device: '" + d + "' is not a block device");
  }
  if (!s.calls_csv.empty())
    if (auto bad = CheckOutputFile("--calls", s.calls_csv)) return Refuse(*bad);
  if (auto refusal = ExplainRefusal()) return Refuse("explain: " + *refusal);
  return s;
}

}  // namespace

void AddProgramCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<ProgramOptions>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Where any program's write and sync time went, call by call: runs CMD (writelab explain -- "
      "CMD ARGS) or attaches to --pid PID, with its descendants, and splits every write, fsync, "
      "fdatasync, sync_file_range, msync, syncfs, sync and io_uring write or fsync into what its "
      "thread did: on CPU, waiting for a CPU, or asleep for a journal commit, its own writes, a "
      "cache flush, dirty throttling or something else; beside it, what the disk and journal did "
      "meanwhile; lists the slowest calls with what was happening around them (root; BPF). CMD's "
      "output passes through; "
      "writelab's tables go to stderr. Exits with CMD's status. See docs/explain.md.");
  sub->add_option("--pid", o->spec.pid, "Attach to this running process and its descendants")
      ->check(Count(1, 4194304));
  sub->add_option("--duration", o->duration,
                  "With --pid: stop after this long (default: when the process exits, or Ctrl-C)");
  sub->add_option("--user", o->spec.user,
                  "Run CMD as this user (default: the invoking user; SUDO_USER under sudo)");
  sub->add_option("--device", o->spec.devices,
                  "Watch this block device's requests and journal from the start (default: the "
                  "disks under the files the program writes, as it writes them)")
      ->delimiter(',');
  sub->add_option("--top", o->spec.top, "How many of the slowest calls to list")
      ->check(Count(1, 10000))
      ->capture_default_str();
  sub->add_option("--slow", o->slow,
                  "Keep every call at least this long for the slow-call list, e.g. 10ms "
                  "(default: the 99th percentile so far)");
  sub->add_flag("--quiet", o->spec.quiet,
                "No live table on stderr while it runs (calls/s, p50, p99 and the split per "
                "type of call, redrawn once a second; drawn only when stderr is a terminal)");
  sub->add_option("--calls", o->spec.calls_csv,
                  "Write every durability call and every call above --slow, with its split in "
                  "nanoseconds, to this CSV file (docs/explain.md); --slow 1ns keeps every call")
      ->option_text("FILE");
  sub->add_option("command", o->spec.command, "The command to run, after --")->expected(-1);
  WireProgramCommand(*sub, action, o, BuildExplainSpec, RunExplainProgram);
}

}  // namespace writelab
