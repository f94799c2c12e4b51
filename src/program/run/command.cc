// SPDX-License-Identifier: MIT
// `writelab run --strategy S [OPTIONS] -- CMD [ARGS...]`: options -> RunSpec
// -> RunCommand -> reporters (on stderr: stdout is CMD's); writelab exits
// with CMD's status.
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "command/wire.h"
#include "program/run/def.h"
#include "program/run/launch.h"
#include "program/spawn.h"
#include "testbed/memory_cgroup.h"

namespace writelab {
namespace {

// --compare's rounds of each unless --rounds says: one run of each gave a 4x
// "win" that three rotated rounds did not.
constexpr int kCompareRounds = 3;

struct RunOptions {
  RunSpec spec;
  std::string strategies = "window-drop";  // a comma-separated list with --compare
  std::string window = std::to_string(kDefaultWindowBytes >> 20) + "M";
  std::string min_file = window;
  std::string poll = "50ms";
  std::string target = "20ms";
  bool path_given = false;
  int rounds = 0;  // 0: 3 with --compare (one round of each is not a comparison), else 1
  OutputOptions out;
};

// Why a --path glob cannot be what was meant (fnmatch takes an unclosed
// '[' as a plain character), or nullopt.
std::optional<std::string> GlobProblem(const std::string& glob) {
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] == '\\') {
      if (++i == glob.size()) return "it ends with a lone backslash";
      continue;
    }
    if (glob[i] != '[') continue;
    size_t j = i + 1;
    if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
    if (j < glob.size() && glob[j] == ']') ++j;  // a ']' first is a member
    j = glob.find(']', j);
    if (j == std::string::npos) return "a '[' is never closed (write [[] for the character)";
    i = j;
  }
  return std::nullopt;
}

// The smallest memcg:SIZE: CMD itself, its libraries and stack, must fit
// beside its page cache.
constexpr uint64_t kSmallestMemcg = uint64_t{16} << 20;

// memcg:SIZE: CMD as it is, in a memory cgroup of that limit.
std::expected<RunVariant, std::string> MemcgVariant(const std::string& item, size_t colon) {
  if (colon == std::string::npos)
    return std::unexpected("--strategy memcg: give the cgroup's limit, e.g. memcg:256M");
  auto size = SizeOption("--strategy memcg", item.substr(colon + 1));
  if (!size) return std::unexpected(size.error());
  if (*size < kSmallestMemcg)
    return std::unexpected("--strategy " + item + ": at least memcg:16M (CMD itself needs memory)");
  if (geteuid() != 0)
    return std::unexpected("--strategy " + item + ": needs root (it makes a cgroup)");
  if (auto place = FindMemoryCgroupPlace(); !place)
    return std::unexpected("--strategy " + item + ": " + place.error().Message());
  return RunVariant{RunStrategy::kPlain, 0, *size, item};
}

// One item of --strategy: NAME, paced:TARGET or memcg:SIZE.
std::expected<RunVariant, std::string> ParseVariant(const std::string& item, uint64_t target_ns) {
  const size_t colon = item.find(':');
  const std::string name = item.substr(0, colon);
  if (name == "memcg") return MemcgVariant(item, colon);
  const auto* strategy = FindChoice(kRunStrategies, name);
  if (!strategy)
    return std::unexpected(UnknownChoice("--strategy", "strategy", kRunStrategies, name) +
                           " (or memcg:SIZE)");
  RunVariant v{strategy->id, target_ns, 0, item};
  if (colon == std::string::npos) return v;
  if (strategy->id != RunStrategy::kPaced)
    return std::unexpected("--strategy " + item +
                           ": only paced:TARGET and memcg:SIZE take a value");
  auto target = DurationOption("--strategy paced", item.substr(colon + 1));
  if (!target) return std::unexpected(target.error());
  if (*target < 1'000'000)
    return std::unexpected("--strategy " + item + ": a target of at least 1ms");
  v.pace_target_ns = *target;
  return v;
}

// --strategy's list: one without --compare; with it, plain is first by
// itself.
std::expected<std::vector<RunVariant>, std::string> ParseVariants(const RunOptions& o,
                                                                  uint64_t target_ns) {
  std::vector<RunVariant> out;
  std::vector<std::string> items;
  for (size_t from = 0, comma;; from = comma + 1) {
    comma = o.strategies.find(',', from);
    items.push_back(o.strategies.substr(from, comma - from));
    if (comma == std::string::npos) break;
  }
  for (const std::string& item : items) {
    if (item.empty()) return std::unexpected("--strategy: an empty name in '" + o.strategies + "'");
    auto v = ParseVariant(item, target_ns);
    if (!v) return std::unexpected(v.error());
    for (const RunVariant& seen : out)
      if (seen.label == v->label) return std::unexpected("--strategy: " + item + " is given twice");
    out.push_back(std::move(*v));
  }
  if (out.empty()) return std::unexpected("--strategy: give one (window-drop)");
  if (out.size() > 1 && !o.spec.compare)
    return std::unexpected("--strategy: several are run side by side with --compare");
  for (const RunVariant& v : out)
    if (o.spec.compare && v.strategy == RunStrategy::kPlain && !v.memcg_bytes)
      return std::unexpected(
          "--compare: sets plain beside a strategy; give one (--strategy window-drop)");
  return out;
}

std::expected<RunSpec, std::string> BuildRunSpec(RunOptions& o) {
  RunSpec s = o.spec;
  if (s.command.empty()) return Refuse("run: give a command after -- (writelab run -- CMD ARGS)");
  auto window = SizeOption("--window", o.window);
  auto min_file = SizeOption("--min-file", o.min_file);
  auto poll = DurationOption("--poll", o.poll);
  auto target = DurationOption("--target", o.target);
  for (const auto* e : {&window, &min_file})
    if (!*e) return Refuse(e->error());
  for (const auto* e : {&poll, &target})
    if (!*e) return Refuse(e->error());
  if (*target < 1'000'000) return Refuse("--target: at least 1ms");
  auto variants = ParseVariants(o, *target);
  if (!variants) return Refuse(variants.error());
  s.variants = std::move(*variants);
  s.strategy = s.variants.front().strategy;
  s.pace_target_ns = s.variants.front().pace_target_ns;
  if (*window < 4096 || *window > (1ull << 30) || *window % 4096)
    return Refuse("--window: from 4 KiB to 1 GiB, in whole pages (4 KiB)");
  if (*min_file == 0) return Refuse("--min-file: at least 1 byte (a file smaller is left alone)");
  if (*poll < 1'000'000 || *poll > 10'000'000'000) return Refuse("--poll: from 1ms to 10s");
  if (o.path_given && s.path_glob.empty())
    return Refuse("--path: an empty pattern matches nothing");
  if (auto bad = GlobProblem(s.path_glob)) return Refuse("--path: '" + s.path_glob + "': " + *bad);
  s.window = *window, s.min_file = *min_file, s.poll_ns = *poll;
  if (o.rounds > 1 && !s.compare)
    return Refuse("--rounds: with --compare (runs of plain and the strategy)");
  s.rounds = o.rounds ? o.rounds : s.compare ? kCompareRounds : 1;
  if (!s.probe_dir.empty()) {
    struct stat st;
    if (stat(s.probe_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return Refuse("--probe-dir: '" + s.probe_dir + "' is not a directory");
    if (!s.measure) return Refuse("--probe-dir: with --measure");
  }
  auto as = ResolveUser(s.user);
  if (!as) return Refuse(as.error());
  auto shim = FindShim();
  if (!shim) return Refuse("run: " + shim.error());
  if (auto unread = ShimUnreadableBy(*as, *shim)) return Refuse(*unread);
  for (const RunVariant& v : s.variants)
    if (v.strategy == RunStrategy::kDontcache)
      if (auto refused = DontcacheRefusal(s.probe_dir.empty() ? "." : s.probe_dir))
        return Refuse(*refused);
  return s;
}

}  // namespace

void AddRunCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "The stream experiment's winning strategy for a program nobody can change: runs CMD "
      "(writelab run --strategy S -- CMD ARGS) with its streaming writes to regular files "
      "windowed, dropped or uncached, through a preloaded shim in the writer's own thread and a "
      "supervisor that handles from outside what the shim cannot see (static binaries, "
      "io_uring); says, per file, what it covered and the page cache left. CMD's output and "
      "exit status pass through; writelab's tables go to stderr. See docs/run.md.");
  sub->add_option("--strategy", o->strategies,
                  ListHelp("How CMD's streaming writes are handled (default window-drop; with "
                           "--compare, a comma-separated list):",
                           kRunStrategies) +
                      "\n  paced:10ms: paced, with a target of its own (else --target's)\n"
                      "  memcg:256M: an anchor, not a strategy: CMD as it is, in a memory cgroup "
                      "of that limit (cgroup v2 memory.max, else v1 memory.limit_in_bytes; "
                      "root)")
      ->capture_default_str();
  sub->add_option("--window", o->window, "The window (default as StreamWriter's)")
      ->capture_default_str();
  sub->add_option("--min-file", o->min_file, "Files smaller than this are left alone")
      ->capture_default_str();
  sub->add_option("--target", o->target,
                  "paced: the fsync latency it keeps other programs under, e.g. 10ms")
      ->capture_default_str();
  sub->add_option("--path", o->spec.path_glob,
                  "Only files whose path matches this glob (fnmatch), e.g. '/backup/*'")
      ->each([o](const std::string&) { o->path_given = true; });
  sub->add_option("--user", o->spec.user,
                  "Run CMD as this user (default: the invoking user; SUDO_USER under sudo)");
  sub->add_flag("--measure", o->spec.measure,
                "Run the stream experiment's bystander probe (4 KiB pwrite + fdatasync every "
                "100 ms) beside CMD and report its latency");
  sub->add_option("--probe-dir", o->spec.probe_dir,
                  "With --measure: where the probe writes (default: the current directory; "
                  "put it on CMD's file system)");
  sub->add_flag("--all-files", o->spec.all_files,
                "List every file CMD wrote in run-files, those below --min-file too (by default "
                "they are summed in one row: a shell's redirect, a log)");
  sub->add_flag("--compare", o->spec.compare,
                "Run CMD plain and under each strategy, and print the rows side by side");
  sub->add_option("--rounds", o->rounds,
                  "With --compare: runs of each, the order rotating each round (default " +
                      std::to_string(kCompareRounds) + ")")
      ->check(Count(1, 1000));
  sub->add_option("--poll", o->poll, "How often the supervisor looks at CMD's files")
      ->capture_default_str();
  sub->add_option("command", o->spec.command, "The command to run, after --")->expected(-1);
  WireProgramCommand(*sub, action, o, BuildRunSpec, RunCommand);
}

}  // namespace writelab
