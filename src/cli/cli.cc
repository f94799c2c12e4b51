// SPDX-License-Identifier: MIT
#include "cli/cli.h"

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

#include "core/clock.h"
#include "core/units.h"
#include "experiments/context.h"
#include "experiments/table.h"
#include "history/location.h"
#include "history/store.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/session.h"
#include "mpi/team.h"
#include "report/atomic_file.h"
#include "report/csv.h"
#include "report/json.h"
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

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  s = Printable(s);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

bool IsCommand(CLI::App& app, const std::string& word) {
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == word) return true;
  return false;
}

// `writelab help [CMD]` is `writelab [CMD] --help`. An unknown first word is
// a usage error that names it (CLI11 would only say a command is required).
std::expected<std::vector<std::string>, std::string> Rewrite(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() >= 2 && args[1] == "help") {
    args.erase(args.begin() + 1);
    args.push_back("--help");
  }
  if (args.size() >= 2 && !args[1].starts_with("-") && !IsCommand(app, args[1]))
    return std::unexpected(Quoted(args[1]) + " is not a writelab command (see writelab --help)");
  return args;
}

std::string CommandLine(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

}  // namespace

void PrintError(const std::string& message) {
  std::fprintf(stderr, "writelab: %s\n", OneLine(message).c_str());
}

std::optional<std::string> CheckOutputFile(const char* option, const std::string& path) {
  if (path.empty()) return std::nullopt;
  if (path == "-") return std::string(option) + ": - (stdout) is not supported here; give a file";
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return std::string(option) + ": '" + path + "' is a directory";
  const std::string dir = ParentDir(path);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return std::string(option) + ": directory '" + dir + "' does not exist";
  return std::nullopt;
}

std::optional<std::string> CheckOutputs(const OutputOptions& out) {
  if (out.json == "-" && out.csv == "-") return "--json - and --csv -: only one can be stdout";
  if (out.json != "-")
    if (auto e = CheckOutputFile("--json", out.json)) return e;
  if (out.csv != "-")
    if (auto e = CheckOutputFile("--csv", out.csv)) return e;
  if (!out.history.empty() && !out.no_history) return CheckOutputFile("--history", out.history);
  return std::nullopt;
}

bool ToStdout(const OutputOptions& out) { return out.json == "-" || out.csv == "-"; }

RunContext ForOutputs(const RunContext& ctx, const OutputOptions& out) {
  RunContext c = ctx;
  if (ToStdout(out)) c.progress = isatty(STDERR_FILENO) && !ctx.team ? stderr : nullptr;
  return c;
}

int UsageError(const std::string& message) {
  PrintError(message);
  return kExitUsage;
}

int AgreeOrRefuse(const RunContext& ctx, const std::optional<std::string>& usage) {
  if (ctx.team) return AgreeToStart(*ctx.team, usage, {}).value_or(-1);
  return usage ? UsageError(*usage) : -1;
}

void AddOutputOptions(CLI::App& sub, OutputOptions& out) {
  sub.add_option("--json", out.json,
                 "Write the results as JSON to FILE (docs/results.md); - for stdout, the tables "
                 "then go to stderr")
      ->option_text("FILE");
  sub.add_option("--csv", out.csv, "Write the figures as CSV to FILE; - for stdout")
      ->option_text("FILE");
  sub.add_option("--label", out.label,
                 "Name this run in compare and the report, e.g. \"6.18 bfq\" (default: host and "
                 "kernel)")
      ->option_text("TEXT");
  auto* history = sub.add_option("--history", out.history,
                                 "Append the results to this history database instead of the "
                                 "default (writelab help history)")
                      ->option_text("FILE");
  sub.add_flag("--no-history", out.no_history,
               "Do not append this run to the results history (also WRITELAB_HISTORY=off)")
      ->excludes(history);
}

std::expected<uint64_t, std::string> SizeOption(const char* name, const std::string& text) {
  auto v = ParseSize(text);
  if (!v) return std::unexpected(std::string(name) + ": " + v.error());
  return *v;
}

std::expected<uint64_t, std::string> DurationOption(const char* name, const std::string& text) {
  auto v = ParseDurationNs(text);
  if (!v) return std::unexpected(std::string(name) + ": " + v.error());
  return *v;
}

namespace {

// Writes text to path, or to stdout for "-". False after printing the error.
bool WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fputs(text.c_str(), stdout);
    if (std::fflush(stdout) == 0) return true;
    PrintError("stdout: " + std::string(std::strerror(errno)));
    return false;
  }
  if (Status s = WriteFileAtomically(path, text); !s) {
    PrintError(s.error().Message());
    return false;
  }
  return true;
}

// Appends the run to its history. Nothing here changes what the run
// writes or its exit code: a failure is one line on stderr.
void RecordInHistory(const OutputOptions& out, const Document& doc, const std::string& text,
                     FILE* info) {
  auto where = ChooseHistory(out.history, out.no_history);
  if (!where) return PrintError("history: " + where.error() + ": this run is not recorded");
  if (!*where) return;
  auto store = HistoryStore::Open(**where, true);
  auto appended = store ? store->Append(text, doc, "run")
                        : Result<HistoryStore::Appended>(std::unexpected(store.error()));
  if (!appended)
    return PrintError(appended.error().Message() + ": this run is not recorded in the history");
  std::fprintf(info, "history: run %lld in %s\n", static_cast<long long>(appended->id),
               store->path().c_str());
  std::fflush(info);
}

}  // namespace

int Finish(Document& doc, const OutputOptions& out, const Status& run) {
  doc.finished_at = UtcNowIso8601();
  doc.label = out.label;
  if (!run) doc.errors.push_back(run.error().Message());
  FILE* tables = ToStdout(out) || out.tables_to_stderr ? stderr : stdout;
  std::fputs(RenderText(doc).c_str(), tables);
  std::fflush(tables);
  int code = run ? kExitOk : kExitRunFailed;
  // One text for the file and the history: `history export` gives back the
  // file's bytes.
  const std::string json = !out.json.empty() || !out.no_history ? ToJson(doc) : std::string();
  if (!out.json.empty() && !WriteOutput(out.json, json)) code = kExitRunFailed;
  if (!out.csv.empty() && !WriteOutput(out.csv, RenderCsv(doc))) code = kExitRunFailed;
  if (!run) PrintError(run.error().Message());
  RecordInHistory(out, doc, json, tables);
  return code;
}

int FinishWithCommandStatus(Document& doc, const OutputOptions& out, const Status& run,
                            int cmd_status) {
  if (!run && doc.experiments.empty()) return UsageError(run.error().Message());
  const int code = Finish(doc, out, run);
  if (cmd_status < 0) return code;
  return cmd_status == 0 && code != kExitOk ? code : cmd_status;
}

void AddExclusivePair(CLI::App& sub, const char* group_help, const ExclusivePair& pair) {
  auto* group = sub.add_option_group("target", group_help);
  group->add_option(pair.first, *pair.first_value, pair.first_help)->option_text(pair.first_text);
  group->add_option("--file", *pair.file_value, pair.file_help)->option_text("PATH");
  group->require_option(0, 1);
}

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
    if (def->runs_under_mpi) names.emplace_back(def->name);
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
  app.set_version_flag("--version", std::string("writelab ") + WRITELAB_VERSION);
  app.require_subcommand(1);
  CommandAction action;
  AddSurveyCommand(app, &action);  // the first command a new user runs
  for (const ExperimentDef* def : Experiments()) def->add_command(app, &action);
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
      refusal = std::string(e.what()) + " (see writelab --help)";
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
