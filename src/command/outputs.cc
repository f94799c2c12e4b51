// SPDX-License-Identifier: MIT
#include "command/outputs.h"

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "command/errors.h"
#include "core/clock.h"
#include "core/document_json.h"
#include "history/location.h"
#include "history/store.h"
#include "io/file.h"
#include "report/atomic_file.h"
#include "report/csv.h"
#include "report/text.h"

namespace writelab {

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
  std::fputs((out.brief_width ? RenderBrief(doc, out.brief_width) : RenderText(doc)).c_str(),
             tables);
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

}  // namespace writelab
