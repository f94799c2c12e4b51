// SPDX-License-Identifier: MIT
// `writelab fsync`: options → FsyncSpec → RunFsync → reporters.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "command/wire.h"
#include "experiments/fsync/def.h"
#include "experiments/fsync/fsync.h"
#include "experiments/fsync/mitigation.h"
#include "io/file.h"
#include "mpi/team.h"

namespace writelab {
namespace {

struct FsyncOptions {
  FsyncSpec spec;
  std::string write_size = "1M";
  std::string interval = "500ms";
  std::string bg_size;  // default: computed from free space
  std::string bg_span = "auto";
  std::string bg_warmup = "auto";
  std::string sample_interval = "1s";
  std::vector<std::string> methods;
  std::vector<std::string> backgrounds;
  std::vector<std::string> mitigations;
  bool verbose = false;
  OutputOptions out;
  TargetOptions targets;
};

// --roles measure=RANKS,background=RANKS: whether this rank is a background
// one. Every rank has exactly one role, and some rank measures.
std::expected<bool, std::string> ParseRoles(const std::string& text, const Team* team) {
  if (!team) return std::unexpected("--roles: only under MPI (mpirun -n N writelab fsync ...)");
  std::map<std::string, std::string> lists;  // role -> its ranks' text
  std::string role;
  size_t at = 0;
  while (at <= text.size()) {  // "measure=0,2,background=1,3": a bare item continues a list
    size_t comma = std::min(text.find(',', at), text.size());
    std::string item = text.substr(at, comma - at);
    if (auto eq = item.find('='); eq != std::string::npos) {
      role = item.substr(0, eq);
      item = item.substr(eq + 1);
      if (role != "measure" && role != "background")
        return std::unexpected("--roles: unknown role '" + role + "' (measure or background)");
      if (lists.count(role)) return std::unexpected("--roles: " + role + " is given twice");
      lists[role] = item;
    } else if (role.empty()) {
      return std::unexpected(
          "--roles: expected measure=RANKS,background=RANKS, e.g. "
          "measure=0,background=1-3");
    } else {
      lists[role] += "," + item;
    }
    at = comma + 1;
  }
  std::map<int, std::string> of;
  for (const auto& [name, list] : lists) {
    auto ranks = ParseRanks(list, team->size());
    if (!ranks) return std::unexpected("--roles: " + name + "=" + ranks.error());
    for (int r : *ranks)
      if (!of.emplace(r, name).second)
        return std::unexpected("--roles: rank " + std::to_string(r) + " is both " + of[r] +
                               " and " + name);
  }
  if (!lists.count("measure")) return std::unexpected("--roles: no rank measures (measure=RANKS)");
  for (int r = 0; r < team->size(); ++r)
    if (!of.count(r))
      return std::unexpected("--roles: rank " + std::to_string(r) +
                             " has no role (every rank measures or runs the background)");
  return of[team->rank()] == "background";
}

std::expected<FsyncSpec, std::string> BuildSpec(const FsyncOptions& o, const RunContext& ctx) {
  const bool terminal = ctx.progress != nullptr;
  FsyncSpec spec = o.spec;
  auto size = SizeOption("--write-size", o.write_size);
  auto interval = DurationOption("--interval", o.interval);
  auto span = o.bg_span == "auto" ? std::expected<uint64_t, std::string>(0)
                                  : SizeOption("--bg-span", o.bg_span);
  if (span && *span == 0 && o.bg_span != "auto")  // 0 stands for auto inside
    return std::unexpected("--bg-span: at least 4 KiB (or auto)");
  spec.bg_warmup_auto = o.bg_warmup == "auto";
  auto warmup = DurationOption("--bg-warmup", spec.bg_warmup_auto ? "2s" : o.bg_warmup);
  auto sample = DurationOption("--sample-interval", o.sample_interval);
  for (const auto* e : {&size, &span})
    if (!*e) return std::unexpected(e->error());
  for (const auto* e : {&interval, &warmup, &sample})
    if (!*e) return std::unexpected(e->error());
  spec.write_size = *size;
  spec.interval_ns = *interval;
  spec.bg_span = *span;
  spec.bg_warmup_ns = *warmup;
  spec.sample_interval_ns = *sample;
  if (!o.bg_size.empty()) {
    auto bound = SizeOption("--bg-size", o.bg_size);
    if (!bound) return std::unexpected(bound.error());
    if (*bound == 0) return std::unexpected("--bg-size: must be greater than 0");
    spec.bg_size = *bound;
  }
  auto methods = ChoicesOption("--sync", "value", SyncMethods(), o.methods);
  if (!methods) return std::unexpected(methods.error());
  auto bgs = ChoicesOption("--background", "value", Backgrounds(), o.backgrounds);
  if (!bgs) return std::unexpected(bgs.error());
  spec.methods = *methods;
  spec.backgrounds = *bgs;
  // Split here, not by the option parser, which drops empty entries: a
  // list of 100,000 commas is a mistake to say, not "none".
  constexpr size_t kMaxMitigations = 16;  // each is rows under every background and method
  std::vector<std::string> entries;
  for (const std::string& list : o.mitigations)
    for (size_t at = 0; at <= list.size() && entries.size() <= kMaxMitigations;) {
      const size_t comma = std::min(list.find(',', at), list.size());
      entries.push_back(list.substr(at, comma - at));
      if (entries.back().empty())
        return std::unexpected("--mitigation: an empty entry in '" + list.substr(0, 80) +
                               (list.size() > 80 ? "...'" : "'") + " (two commas in a row?)");
      at = comma + 1;
    }
  if (entries.size() > kMaxMitigations)
    return std::unexpected("--mitigation: at most " + std::to_string(kMaxMitigations) +
                           " (each is a set of rows under every background and method)");
  for (const std::string& text : entries) {
    auto m = ParseMitigation(text);
    if (!m) return std::unexpected(m.error());
    if (std::count(entries.begin(), entries.end(), text) > 1)
      return std::unexpected("--mitigation: '" + text + "' given twice");
    spec.mitigations.push_back(std::move(*m));
  }
  if (!spec.mitigations.empty() && ctx.team)
    return std::unexpected("--mitigation: not under MPI (it changes one machine's settings)");
  // The original's listing: asked for, or on a terminal when it stays short.
  spec.verbose = o.verbose || (terminal && spec.count <= 30);
  if (!spec.roles.empty()) {
    auto background = ParseRoles(spec.roles, ctx.team);
    if (!background) return std::unexpected(background.error());
    spec.background_rank = *background;
  }
  if (auto ok = ValidateFsyncSpec(spec); !ok) return std::unexpected(ok.error());
  return spec;
}

}  // namespace

void AddFsyncCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<FsyncOptions>();
  CLI::App* sub = app.add_subcommand(
      "fsync",
      "Sync latency under background writers (fsync-tester, LKML 2009): write --write-size at "
      "offset 0 and sync it, --count times, beside each background load. See docs/fsync.md.");
  AddExclusivePair(*sub, "Where to write (at most one)",
                   {"--dir", "DIR", &o->spec.dir,
                    "Make the test and background files in DIR (default: the current directory)",
                    &o->spec.file, "Test file PATH (backgrounds go beside it)"});
  sub->add_option("--write-size", o->write_size, "Bytes per write")->capture_default_str();
  sub->add_option("--rounds", o->spec.rounds,
                  "Trials per row, each --count iterations; the order rotates each round "
                  "(default: 1; 5 with --mitigation)")
      ->check(Count(1, 1000));
  sub->add_option("--count", o->spec.count, "Iterations per trial (the original: 60)")
      ->check(Count(1, 1000000))
      ->capture_default_str();
  sub->add_option("--interval", o->interval, "Time from one iteration's start to the next")
      ->capture_default_str();
  sub->add_option("--sync", o->methods,
                  ListHelp("Sync methods, comma-separated (default: fsync):", SyncMethods()))
      ->delimiter(',');
  sub->add_option("--background", o->backgrounds,
                  ListHelp("Background loads, one after another (default: none,random,stream):",
                           Backgrounds()))
      ->delimiter(',');
  sub->add_option("--mitigation", o->mitigations,
                  "The kernel's answers to the stall, each its own rows under every background "
                  "and method, compared with none (comma-separated; root for all but bg=): none, "
                  "wbt=off or wbt=DURATION (blk-wbt's latency target), bdi=SIZE (the device's own "
                  "dirty limit), bg=dontcache or bg=window-drop (how the stream background "
                  "writes), scheduler=NAME, cgroup=io.latency:TARGET or cgroup=io.max:LIMIT. "
                  "See docs/fsync.md")
      ->option_text("LIST");
  sub->add_option("--bg-cmd", o->spec.bg_command, "Command for --background cmd (run by sh -c)")
      ->option_text("'COMMAND'");
  sub->add_option("--bg-size", o->bg_size,
                  "Where the stream background starts over (default: twice the dirty background "
                  "threshold, within a quarter of the free space; the parameter bg_size_from "
                  "says how it was chosen)");
  sub->add_option("--bg-span", o->bg_span,
                  "File size the random background writes over; auto: 2.5x the device's dirty "
                  "background threshold, within a quarter of the free space (the parameter "
                  "bg_span_from says how it was chosen; 256M was the default before)")
      ->capture_default_str();
  sub->add_option("--bg-warmup", o->bg_warmup,
                  "Background run time before measuring; auto: 2s, then until Dirty and "
                  "Writeback reach the writeback threshold (at most 30s); or a duration, e.g. 2s")
      ->capture_default_str();
  sub->add_option("--sample-interval", o->sample_interval, "Telemetry sampling interval")
      ->capture_default_str();
  sub->add_flag("--verbose,-v", o->verbose, "Print every iteration in the original's shape");
  sub->add_option("--roles", o->spec.roles,
                  "Under MPI: which ranks measure and which run the background loads, e.g. "
                  "measure=0,background=1-3 (default: every rank measures beside its own load)")
      ->option_text("measure=RANKS,background=RANKS");
  WireExperimentCommand(
      *sub, action, o, [](auto& opts, const RunContext& ctx) { return BuildSpec(opts, ctx); },
      DirOrFile<FsyncSpec>,
      [](const auto& spec, const std::string& target, const RunContext& ctx, ExperimentResult& e) {
        return RunFsync(InTarget(spec, target), ctx, e);
      });
}

}  // namespace writelab
