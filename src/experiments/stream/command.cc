// SPDX-License-Identifier: MIT
// `writelab stream`: options → StreamSpec → RunStream → reporters.
#include <algorithm>
#include <memory>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "command/wire.h"
#include "experiments/stream/def.h"
#include "experiments/stream/stream.h"
#include "io/file.h"

namespace writelab {
namespace {

struct StreamOptions {
  StreamSpec spec;
  std::string size = "auto";
  std::string block = "8M";
  std::string interval = "1s";
  std::string time_limit;  // none
  std::string min_time;    // none
  std::string target = "20ms";
  std::vector<std::string> strategies;
  bool no_probe = false;
  OutputOptions out;
  TargetOptions targets;
};

// memcg:SIZE in --strategy: the limit into spec, the name left as memcg.
std::expected<std::vector<std::string>, std::string> MemcgFromStrategies(
    std::vector<std::string> names, StreamSpec& spec) {
  for (std::string& name : names) {
    if (name == "memcg")
      return std::unexpected("--strategy memcg: give the cgroup's limit, e.g. memcg:256M");
    if (!name.starts_with("memcg:")) continue;
    auto limit = SizeOption("--strategy memcg", name.substr(6));
    if (!limit) return std::unexpected(limit.error());
    if (*limit < (uint64_t{16} << 20))
      return std::unexpected("--strategy " + name +
                             ": at least memcg:16M (the writer needs memory)");
    if (spec.memcg_bytes && spec.memcg_bytes != *limit)
      return std::unexpected("--strategy: one memcg:SIZE per run");
    spec.memcg_bytes = *limit;
    spec.memcg_size = name.substr(6);
    name = "memcg";
  }
  return names;
}

std::expected<StreamSpec, std::string> BuildSpec(StreamOptions& o) {
  StreamSpec spec = o.spec;
  if (spec.dir.empty() && spec.file.empty()) spec.dir = ".";
  auto block = SizeOption("--block", o.block);
  if (!block) return std::unexpected(block.error());
  spec.block = *block;
  spec.size_auto = o.size == "auto";
  // auto: a placeholder until the run knows its target (whole blocks, at least one).
  auto size = spec.size_auto
                  ? std::expected<uint64_t, std::string>(std::max<uint64_t>(spec.block, 1))
                  : SizeOption("--size", o.size);
  if (!size) return std::unexpected(size.error());
  auto interval = DurationOption("--interval", o.interval);
  if (!interval) return std::unexpected(interval.error());
  spec.size = *size;
  spec.interval_ns = *interval;
  if (!o.time_limit.empty()) {
    auto limit = DurationOption("--time-limit", o.time_limit);
    if (!limit) return std::unexpected(limit.error());
    if (*limit == 0) return std::unexpected("--time-limit: must be greater than 0");
    spec.time_limit_ns = *limit;
  }
  if (!o.min_time.empty()) {
    auto least = DurationOption("--min-time", o.min_time);
    if (!least) return std::unexpected(least.error());
    spec.min_time_ns = *least;
  }
  auto target = DurationOption("--target", o.target);
  if (!target) return std::unexpected(target.error());
  if (*target < 1'000'000) return std::unexpected("--target: at least 1ms");
  spec.pace_target_ns = *target;
  spec.probe = !o.no_probe;
  auto names = MemcgFromStrategies(o.strategies, spec);
  if (!names) return std::unexpected(names.error());
  auto strategies = ChoicesOption("--strategy", "strategy", kStreamStrategies, *names);
  if (!strategies) return std::unexpected(strategies.error());
  spec.strategies = *strategies;
  if (auto ok = ValidateStreamSpec(spec); !ok) return std::unexpected(ok.error());
  return spec;
}

// The direct strategy writes whole blocks of aligned memory: a --block or
// --size it cannot write is refused before the run, not as a row, unless
// the user drops it.
Where WhereStreamWrites(const StreamSpec& spec) {
  Where w = DirOrFile(spec);
  if (std::ranges::find(spec.strategies, StreamStrategy::kDirect) != spec.strategies.end())
    for (auto [option, bytes] : {std::pair{"--block", spec.block}, {"--size", spec.size}})
      if (!spec.size_auto || option != std::string("--size"))  // auto: whole blocks
        w.direct.push_back({option, bytes, 4096, "; or leave direct out of --strategy"});
  return w;
}

}  // namespace

void AddStreamCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<StreamOptions>();
  CLI::App* sub = app.add_subcommand(
      "stream",
      "Streaming-write strategies (overwrite.c, LKML 2009): throughput, dirty pages, page "
      "cache left behind, and the stall a bystander's fsync sees. See docs/stream.md.");
  AddExclusivePair(*sub, "Where to write (at most one)",
                   {"--dir", "DIR", &o->spec.dir,
                    "Write a new file in DIR, removed afterwards (default: the current directory)",
                    &o->spec.file,
                    "Write PATH (created or truncated; left in place if it existed, removed if "
                    "writelab created it)"});
  sub->add_flag("--keep", o->spec.keep, "Keep the last file written (with --dir)");
  sub->add_option("--size", o->size,
                  "Bytes per trial, e.g. 1G, 64M, 1.5GiB; auto: 2.5x the device's dirty "
                  "background threshold, where the kernel starts writing back, so that the "
                  "bystander can meet the stall (within a quarter of the free space and 30 GB; "
                  "the parameter size_from says what was chosen)")
      ->capture_default_str();
  sub->add_option("--block", o->block, "Bytes per write call")->capture_default_str();
  sub->add_option("--strategy", o->strategies,
                  ListHelp("Strategies to run, comma-separated (default: all but memcg):",
                           kStreamStrategies))
      ->delimiter(',');
  sub->add_option("--target", o->target,
                  "paced: the fsync latency it keeps other programs under, e.g. 10ms (its own "
                  "flushes stay under half of it)")
      ->capture_default_str();
  sub->add_option("--interval", o->interval, "Telemetry sampling interval, e.g. 500ms")
      ->capture_default_str();
  sub->add_option("--time-limit", o->time_limit,
                  "Stop each trial's writes after this long, e.g. 30s (default: write --size)");
  sub->add_option("--min-time", o->min_time,
                  "Write each trial's file again from the start until it has written this long, "
                  "e.g. 3s (not with the library strategy)");
  sub->add_option("--rounds,--repeat", o->spec.rounds,
                  "Trials per strategy; the order rotates each round (--repeat: its old name)")
      ->check(Count(1, 1000))
      ->capture_default_str();
  // --probe is the default: accepted, and refused beside --no-probe.
  auto* probe = sub->add_flag("--probe")->description("Run the bystander fsync probe (default)");
  sub->add_flag("--no-probe", o->no_probe, "Do not run the bystander probe")->excludes(probe);
  WireExperimentCommand(
      *sub, action, o, [](auto& opts) { return BuildSpec(opts); }, WhereStreamWrites,
      [](const auto& spec, const std::string& target, const RunContext& ctx, ExperimentResult& e) {
        return RunStream(InTarget(spec, target), ctx, e);
      });
}

}  // namespace writelab
