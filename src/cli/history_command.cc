// SPDX-License-Identifier: MIT
// `writelab history list|show|export|import|forget`: the runs kept in the
// results history (docs/history.md).
#include "cli/history_command.h"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/documents.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "core/document_json.h"
#include "core/units.h"
#include "history/location.h"
#include "io/trusted_dir.h"
#include "report/text.h"
#include "telemetry/memory_budget.h"

namespace writelab {

void AddHistoryFileOption(CLI::App& sub, std::string& file) {
  sub.add_option("--history", file,
                 "The history database (default: WRITELAB_HISTORY, else "
                 "$XDG_DATA_HOME/writelab/history.sqlite, as root "
                 "/var/lib/writelab/history.sqlite)")
      ->option_text("FILE");
}

int Report(const HistoryProblem& p) {
  PrintError(p.message);
  return p.exit_code;
}

std::expected<HistoryStore, HistoryProblem> OpenHistoryFor(const std::string& file,
                                                           HistoryAccess access) {
  auto where = ChooseHistory(file, false);
  if (!where) return std::unexpected(HistoryProblem{"history: " + where.error(), kExitUsage});
  if (!*where)
    return std::unexpected(HistoryProblem{
        "history: WRITELAB_HISTORY=off: there is no history to read (give --history FILE)",
        kExitUsage});
  auto store = access == HistoryAccess::kRead
                   ? HistoryStore::OpenReadOnly(**where)
                   : HistoryStore::Open(**where, access == HistoryAccess::kCreate);
  if (!store) {
    // A problem of the path given (no file, a link, another user's or
    // program's file) is the caller's to fix: usage. The rest is a failure.
    const int code = store.error().code;
    const bool usage = code == 0 || code == ENOENT || code == ENOTDIR || code == ELOOP ||
                       code == EACCES || code == EPERM || code == EISDIR;
    return std::unexpected(
        HistoryProblem{store.error().Message(), usage ? kExitUsage : kExitRunFailed});
  }
  return std::move(*store);
}

std::expected<int64_t, std::string> ParseRunId(const std::string& text) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0 || text[0] == '+')
    return std::unexpected("'" + text + "' is not a run (a run id from writelab history list)");
  return id;
}

namespace {

struct HistoryOptions {
  std::string file;
  RunFilter filter;
  std::string run;
  std::vector<std::string> inputs;
};

// "2025-12-04 10:02:11" from "2025-12-04T10:02:11Z".
std::string When(const std::string& iso) {
  std::string s = iso;
  if (s.size() >= 19 && s[10] == 'T') s[10] = ' ';
  if (!s.empty() && s.back() == 'Z') s.pop_back();
  return s;
}

int RunList(const HistoryOptions& o) {
  auto store = OpenHistoryFor(o.file, HistoryAccess::kRead);
  if (!store) return Report(store.error());
  auto runs = store->List(o.filter);
  if (!runs) return PrintError(runs.error().Message()), kExitRunFailed;
  TextTable t({"run", "started (UTC)", "command", "label", "kernel", "host", "target", "errors"});
  for (const StoredRun& r : *runs)
    t.AddRow({std::to_string(r.id), When(r.record.started_at), r.record.command, r.record.label,
              r.record.kernel, r.record.hostname, r.record.target_fingerprint,
              r.record.errors ? std::to_string(r.record.errors) : ""});
  std::printf("%s: %zu runs\n", store->path().c_str(), runs->size());
  // A history is input: a label of another machine's may hold escapes.
  if (!runs->empty()) std::fputs(Printable(t.Render(), true).c_str(), stdout);
  return kExitOk;
}

// The non-empty ones, space-separated.
std::string Words(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : " ") + p;
  return out;
}

// What the history says of a run beside its document.
std::string Describe(const StoredRun& r) {
  const RunRecord& x = r.record;
  std::string out;
  auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out += fmt::format("{:<14} {}\n", std::string(key) + ":", Printable(value));
  };
  line("run", std::to_string(r.id));
  line("recorded", When(r.recorded_at) + " (" + r.source + ")");
  line("started", When(x.started_at));
  line("finished", When(x.finished_at));
  line("command line", x.command_line);
  line("label", x.label);
  line("writelab", x.writelab_version);
  line("host", x.hostname + ", " + x.kernel + ", " + x.machine);
  line("cpu", x.cpu_model.empty() ? std::to_string(x.cpus) + " CPUs"
                                  : x.cpu_model + ", " + std::to_string(x.cpus) + " CPUs");
  line("memory", FormatBytes(static_cast<double>(x.memory_bytes)));
  line("target", x.target_path);
  line("file system", x.fs_type + (x.mount_options.empty() ? "" : " (" + x.mount_options + ")"));
  line("device",
       Words({x.device, x.device_model, x.firmware.empty() ? "" : "firmware " + x.firmware}));
  line("scheduler", x.scheduler);
  line("fingerprints", x.host_fingerprint + " | " + x.target_fingerprint);
  return out;
}

int RunShow(const HistoryOptions& o) {
  auto id = ParseRunId(o.run);
  if (!id) return UsageError("history show: " + id.error());
  auto store = OpenHistoryFor(o.file, HistoryAccess::kRead);
  if (!store) return Report(store.error());
  auto run = store->Get(*id);
  if (!run) return UsageError("history show: " + run.error().Message());
  auto text = store->DocumentText(*id);
  if (!text) return PrintError(text.error().Message()), kExitRunFailed;
  auto doc = FromJson(*text, AvailableMemory());
  if (!doc)
    return PrintError(store->path() + ": run " + o.run + ": " + doc.error()), kExitRunFailed;
  std::fputs(Describe(*run).c_str(), stdout);
  std::fputs(("\n" + RenderText(*doc)).c_str(), stdout);
  return kExitOk;
}

int RunExport(const HistoryOptions& o) {
  auto id = ParseRunId(o.run);
  if (!id) return UsageError("history export: " + id.error());
  auto store = OpenHistoryFor(o.file, HistoryAccess::kRead);
  if (!store) return Report(store.error());
  auto text = store->DocumentText(*id);
  if (!text) return UsageError("history export: " + text.error().Message());
  if (std::fwrite(text->data(), 1, text->size(), stdout) != text->size() || std::fflush(stdout))
    return PrintError("stdout: " + std::string(std::strerror(errno))), kExitRunFailed;
  return kExitOk;
}

int RunImport(const HistoryOptions& o) {
  auto store = OpenHistoryFor(o.file, HistoryAccess::kCreate);
  if (!store) return Report(store.error());
  int code = kExitOk;
  for (const std::string& path : o.inputs) {
    auto file = ReadDocumentFileText(path);
    if (!file) {
      PrintError(file.error());
      code = kExitUsage;
      continue;
    }
    const std::string source = "import " + AbsolutePath(path).value_or(path);
    auto appended = store->Append(file->text, file->doc, source);
    if (!appended) return PrintError(appended.error().Message()), kExitRunFailed;
    if (appended->duplicate)
      std::printf("%s: already in the history as run %lld\n", path.c_str(),
                  static_cast<long long>(appended->id));
    else
      std::printf("%s: imported as run %lld\n", path.c_str(), static_cast<long long>(appended->id));
  }
  return code;
}

int RunForget(const HistoryOptions& o) {
  auto id = ParseRunId(o.run);
  if (!id) return UsageError("history forget: " + id.error());
  auto store = OpenHistoryFor(o.file, HistoryAccess::kWrite);
  if (!store) return Report(store.error());
  auto removed = store->Forget(*id);
  if (!removed) return PrintError(removed.error().Message()), kExitRunFailed;
  if (!*removed) return UsageError("history forget: no run " + o.run + " in " + store->path());
  std::printf("forgot run %s\n", o.run.c_str());
  return kExitOk;
}

using Runner = int (*)(const HistoryOptions&);

CLI::App* Sub(CLI::App& history, CommandAction* action, const char* name, const char* what,
              Runner run, std::shared_ptr<HistoryOptions> o) {
  CLI::App* sub = history.add_subcommand(name, what);
  AddHistoryFileOption(*sub, o->file);
  sub->callback(
      [o, action, run] { *action = [o, run](const RunContext&, Document&) { return run(*o); }; });
  return sub;
}

}  // namespace

void AddHistoryCommand(CLI::App& app, CommandAction* action) {
  CLI::App* history = app.add_subcommand(
      "history",
      "Every run of every command is kept in a local SQLite database (docs/history.md): list, "
      "show and export runs, import result files, follow a figure across runs (trend) and check "
      "the newest run against a baseline (check, exit 3 on a significant regression).");
  history->require_subcommand(1);
  history->footer(
      "The history is, in order: --history FILE; WRITELAB_HISTORY (off for none, or a file); "
      "else $XDG_DATA_HOME/writelab/history.sqlite (~/.local/share/writelab/history.sqlite), "
      "and as root /var/lib/writelab/history.sqlite. Every command appends its run unless given "
      "--no-history.\n\nExamples:\n"
      "  $ writelab history list --kernel '6.1*'\n"
      "  $ writelab history export 12 > run12.json\n"
      "  $ writelab history trend --experiment fsync --figure sync_max_ms --row stream/fdatasync "
      "-o trend.html\n"
      "  $ writelab history changes --experiment fsync --figure sync_max_ms\n"
      "  $ writelab history check --baseline before-upgrade --fail-on-regression 10");
  auto o = std::make_shared<HistoryOptions>();
  CLI::App* list = Sub(*history, action, "list", "The runs kept, oldest first", RunList, o);
  list->add_option("--host", o->filter.host, "Only runs on this host name")->option_text("HOST");
  list->add_option("--kernel", o->filter.kernel,
                   "Only runs on this kernel release ('6.1*': those it starts with)")
      ->option_text("KERNEL");
  list->add_option("--label", o->filter.label, "Only runs with this --label")->option_text("LABEL");
  CLI::App* show = Sub(*history, action, "show",
                       "A run: where it ran (host, kernel, target) and its tables", RunShow, o);
  show->add_option("RUN", o->run, "The run's id (history list)")->required();
  CLI::App* out =
      Sub(*history, action, "export",
          "A run's result document on stdout, byte for byte as the run wrote it", RunExport, o);
  out->add_option("RUN", o->run, "The run's id (history list)")->required();
  CLI::App* in = Sub(*history, action, "import",
                     "Add result files (--json of any command, from here or another machine); a "
                     "run already kept is not added again",
                     RunImport, o);
  in->add_option("FILE", o->inputs, "Result files (each at most 1 GiB)")->required();
  CLI::App* forget = Sub(*history, action, "forget", "Remove a run and its figures", RunForget, o);
  forget->add_option("RUN", o->run, "The run's id (history list)")->required();
  AddHistoryQueryCommands(*history, action);
}

}  // namespace writelab
