// SPDX-License-Identifier: MIT
// `writelab top [--duration D] [--interval I] [--rows N] [--quiet]`:
// options -> TopSpec -> RunTop -> reporters.
#include <memory>

#include <CLI/CLI.hpp>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "explain/explainer.h"
#include "program/top/def.h"

namespace writelab {
namespace {

struct TopOptions {
  TopSpec spec;
  std::string duration, interval;
  OutputOptions out;
};

std::expected<TopSpec, std::string> BuildTopSpec(TopOptions& o) {
  TopSpec s = o.spec;
  if (!o.duration.empty()) {
    auto d = DurationOption("--duration", o.duration);
    if (!d) return Refuse(d.error());
    if (*d == 0) return Refuse("--duration: must be greater than 0");
    s.duration_ns = *d;
  }
  if (!o.interval.empty()) {
    auto d = DurationOption("--interval", o.interval);
    if (!d) return Refuse(d.error());
    if (*d < 100'000'000) return Refuse("--interval: must be at least 100ms");
    s.interval_ns = *d;
  }
  if (auto refusal = ExplainRefusal()) return Refuse("top: " + *refusal);
  return s;
}

}  // namespace

void AddTopCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<TopOptions>();
  CLI::App* sub = app.add_subcommand(
      "top",
      "The whole machine's write path, live, as top: per process, the page cache it dirties "
      "and the writes queued for it (MB/s), what it still holds dirty, its time in dirty "
      "throttling, its durability calls per second with p99 and what they waited for; and who "
      "stalls whom: each victim's waits charged to the processes whose writes it waited "
      "behind. Redrawn every --interval on a terminal until Ctrl-C or --duration; the totals "
      "per process and pair at the end, every interval in --json (root; BPF). See docs/top.md.");
  sub->add_option("--duration", o->duration, "Stop after this long, e.g. 30s (default: Ctrl-C)");
  sub->add_option("--interval", o->interval,
                  "How often the screen is redrawn and an interval recorded (default: 1s)");
  sub->add_option("--rows", o->spec.rows, "Processes and victim <- culprit pairs on the screen")
      ->check(Count(1, 1000))
      ->capture_default_str();
  sub->add_flag("--quiet", o->spec.quiet,
                "No live screen (drawn only when stdout is a terminal); the totals at the end");
  AddOutputOptions(*sub, o->out);
  sub->callback([o, action] {
    *action = [o](const RunContext& ctx, Document& doc) {
      std::optional<std::string> usage = CheckOutputs(o->out);
      auto spec = BuildTopSpec(*o);
      if (!usage && !spec) usage = spec.error();
      if (usage) return UsageError(*usage);
      const Status st = RunTop(*spec, ForOutputs(ctx, o->out), doc);
      if (!st && doc.experiments.empty()) return UsageError(st.error().Message());
      return Finish(doc, o->out, st);
    };
  });
}

}  // namespace writelab
