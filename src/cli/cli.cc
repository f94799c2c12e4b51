// SPDX-License-Identifier: MIT
#include "cli/cli.h"
#include "command/errors.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/usage.h"
#include "core/clock.h"
#include "core/document_json.h"
#include "core/run_context.h"
#include "core/units.h"
#include "history/location.h"
#include "history/store.h"
#include "io/fault_engine.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/session.h"
#include "mpi/team.h"
#include "report/atomic_file.h"
#include "report/csv.h"
#include "report/text.h"
#include "telemetry/identify.h"

namespace writelab {
namespace {

std::atomic<bool> g_interrupted{false};  // written only by the signal handler
std::atomic<int64_t> g_first_signal_ns{0};

int64_t MonotonicNs() {  // clock_gettime is async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The first signal asks writelab to stop: what was measured is written and
// every change undone. Another one is the same request (GNU timeout sends
// SIGTERM to writelab and then to its process group, microseconds apart),
// but for a Ctrl-C at least 2 s after the first: a person who means it,
// for whom writelab ends at once, leaving what `writelab cleanup` undoes.
void OnSignal(int sig) {
  const int saved = errno;  // unlink may change it under the interrupted code
  const int64_t now = MonotonicNs();
  if (!g_interrupted.exchange(true, std::memory_order_relaxed)) {
    g_first_signal_ns.store(now, std::memory_order_relaxed);
    RemoveOwnFilesNow();  // under MPI only: a SIGKILL follows mpirun's SIGTERM
  } else if (sig == SIGINT &&
             now - g_first_signal_ns.load(std::memory_order_relaxed) >= 2'000'000'000) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
  errno = saved;
}

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sa.sa_flags = 0;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

// `writelab help [CMD]` is `writelab [CMD] --help`. An unknown first word is
// a usage error that names it (CLI11 would only say a command is required),
// and a program's words are its own (cli/usage.h).
std::expected<std::vector<std::string>, std::string> Rewrite(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() >= 2 && args[1] == "help") {
    args.erase(args.begin() + 1);
    args.push_back("--help");
  }
  if (args.size() >= 2 && !args[1].starts_with("-") && !FindCommand(app, args[1]))
    return std::unexpected(UnknownCommand(app, args[1]));
  SeparateProgram(app, args);
  return args;
}

std::string CommandLine(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

}  // namespace

namespace {

// The commands that run on many ranks (the survey, and the experiments
// whose definition says so); the others run on one machine.
bool RunsUnderMpi(const std::string& command) {
  if (command == "survey") return true;
  const ExperimentDef* def = FindExperiment(command);
  return def && def->runs_under_mpi;
}

// "survey, stream, fsync and records".
std::string UnderMpiList() {
  std::vector<std::string> names = {"survey"};
  for (const ExperimentDef* def : Experiments())
    if (def->runs_under_mpi) names.emplace_back(def->report.name);
  return ListInWords(names);
}

std::string ChosenCommand(CLI::App& app) {
  auto chosen = app.get_subcommands();
  return chosen.empty() ? "" : chosen.front()->get_name();
}

int RunCommandLine(int argc, char** argv, Team* team) {
  CLI::App app{
      "writelab: reproduces classic Linux write-path experiments on your kernel, file system "
      "and device, the old way and the modern way side by side. Under mpirun or srun, " +
      UnderMpiList() +
      " run on every rank (docs/mpi.md).\n"
      "Exit codes: 0 ok, 1 run failed or interrupted (results so far are still written), "
      "2 usage error, 3 a significant regression (compare --fail-on-regression, history check). "
      "Every run is also kept in the results history (writelab help history)."};
  app.name("writelab");
  // Before the commands are added: each takes its parent's formatter.
  app.formatter(std::make_shared<WrappingFormatter>(HelpWidth()));
  app.set_version_flag("--version", std::string("writelab ") + WRITELAB_VERSION);
  app.require_subcommand(1);
  CommandAction action;
  AddSurveyCommand(app, &action);  // the first command a new user runs
  for (const ExperimentDef* def : Experiments()) def->add_command(app, &action);
  for (const ProgramDef* def : Programs()) def->add_command(app, &action);
  AddReportCommand(app, &action);
  AddCompareCommand(app, &action);
  AddCleanupCommand(app, &action);
  AddHistoryCommand(app, &action);
  std::optional<std::string> refusal;  // a usage error
  auto args = Rewrite(app, argc, argv);
  std::vector<std::string> words_text;
  if (!args)
    refusal = args.error();
  else
    words_text = *args;
  std::vector<char*> words;
  for (std::string& a : words_text) words.push_back(a.data());
  if (!refusal) {
    try {
      app.parse(static_cast<int>(words.size()), words.data());
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0)  // --help, --version: printed once
        return !team || team->rank() == 0 ? app.exit(e) : kExitOk;
      refusal = ParseRefusal(app, words_text, e);
    }
  }
  std::unique_ptr<FaultInjector> faults;
  if (const char* plan = std::getenv("WRITELAB_FAULT"); !refusal && plan && *plan) {
    if (auto parsed = ParseFaultPlan(plan))
      faults = std::make_unique<FaultInjector>(*parsed);
    else
      refusal = "WRITELAB_FAULT: " + parsed.error().Message();
  }
  // One rank is one machine: what runs only on one runs there as usual.
  if (team && team->size() == 1 && !RunsUnderMpi(ChosenCommand(app))) team = nullptr;
  if (!refusal && team && !RunsUnderMpi(ChosenCommand(app)))
    refusal = ChosenCommand(app) +
              " runs on one machine: run it without mpirun (under MPI: " + UnderMpiList() + ")";
  if (team) {
    std::vector<std::string> compared(argv + 1, argv + argc);
    if (auto code = AgreeToStart(*team, refusal, compared)) return *code;
    RemoveOwnFilesOnSignal(true);
  } else if (refusal) {
    return UsageError(*refusal);
  }
  RunContext ctx;
  ctx.interrupted = &g_interrupted;
  ctx.team = team;
  ctx.faults = faults.get();
  // Under MPI a rank's stdout is mpirun's pseudo-terminal even when mpirun
  // writes to a file: no progress lines there.
  ctx.progress = isatty(STDOUT_FILENO) && !team ? stdout : nullptr;
  Document doc;
  doc.writelab_version = WRITELAB_VERSION;
  doc.command_line = CommandLine(argc, argv);
  if (faults)  // a result with injected faults says so where it says how it was made
    doc.command_line =
        "WRITELAB_FAULT=" + std::string(std::getenv("WRITELAB_FAULT")) + " " + doc.command_line;
  doc.started_at = UtcNowIso8601();
  doc.host = IdentifyHost();
  return action(ctx, doc);
}

}  // namespace

int RunCli(int argc, char** argv) {
  auto team = StartTeam(&argc, &argv, &g_interrupted);
  if (!team) return UsageError(team.error());
  InstallSignalHandlers();  // after MPI_Init, so that they are writelab's
  int code = RunCommandLine(argc, argv, team->get());
  EndTeam(std::move(*team));
  return code;
}

}  // namespace writelab
