// SPDX-License-Identifier: MIT
// `writelab stride`: options → StrideSpec → RunStride per scheduler.
#include <memory>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "command/wire.h"
#include "experiments/stride/def.h"
#include "experiments/stride/stride.h"
#include "telemetry/blockdev.h"

namespace writelab {
namespace {

struct StrideOptions {
  StrideSpec spec;
  std::string block = "4k";
  std::string unit = "512";
  std::string steps = "1-16,32,64,128,256,512";
  std::string duration = "3s";
  std::string span;
  std::string interval = "500ms";
  OutputOptions out;
  TargetOptions targets;
};

std::expected<StrideSpec, std::string> BuildSpec(const StrideOptions& o) {
  StrideSpec spec = o.spec;
  auto block = SizeOption("--block", o.block);
  auto unit = SizeOption("--unit", o.unit);
  auto duration = DurationOption("--duration", o.duration);
  auto interval = DurationOption("--interval", o.interval);
  auto steps = ParseSteps(o.steps);
  if (!block) return std::unexpected(block.error());
  if (!unit) return std::unexpected(unit.error());
  if (!duration) return std::unexpected(duration.error());
  if (!interval) return std::unexpected(interval.error());
  if (!steps) return std::unexpected(steps.error());
  spec.block = *block;
  spec.unit = *unit;
  spec.duration_ns = *duration;
  spec.interval_ns = *interval;
  spec.steps = *steps;
  if (!o.span.empty()) {
    auto span = SizeOption("--span", o.span);
    if (!span) return std::unexpected(span.error());
    if (*span == 0)
      return std::unexpected("--span: must be more than 0 (leave it out for the default)");
    spec.span = *span;
  }
  if (spec.device.empty() == spec.file.empty() && o.targets.testbeds.empty())
    return std::unexpected("give --device DEV, --file PATH, or --testbed raw");
  if (!o.targets.testbeds.empty() && !(spec.device.empty() && spec.file.empty()))
    return std::unexpected("--testbed raw replaces --device and --file");
  if (auto ok = ValidateStrideSpec(spec); !ok) return std::unexpected(ok.error());
  if (!spec.device.empty()) {  // before any scheduler is switched
    std::string why = WhyNotSafeToOverwrite(spec.device);
    bool only_signature = why.find(" holds ") != std::string::npos;
    if (!why.empty() && !(only_signature && spec.force))
      return std::unexpected(why + (only_signature ? " (--force overwrites it)" : ""));
  }
  return spec;
}

}  // namespace

void AddStrideCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<StrideOptions>();
  o->targets.raw_device = true;
  o->targets.all_schedulers_by_default = true;
  CLI::App* sub = app.add_subcommand(
      "stride",
      "Strided direct writes per I/O scheduler (submit_bio() question, 2006): --block at "
      "offset step x i x --unit for --duration per step, with the device's merges. See "
      "docs/stride.md.");
  AddExclusivePair(*sub, "What to write (one; or --testbed raw)",
                   {"--device", "DEV", &o->spec.device,
                    "A raw block device: refused when mounted or in use, or when it holds a file "
                    "system or partition table (unless --force)",
                    &o->spec.file, "A file, filled with zeros up to --span first"});
  sub->add_flag("--force", o->spec.force, "Overwrite a device that holds a signature");
  sub->add_option("--block", o->block, "Bytes per write")->capture_default_str();
  sub->add_option("--unit", o->unit,
                  "What a step counts: 512-byte sectors as the original, or 4k on devices "
                  "with 4 KiB logical blocks")
      ->capture_default_str();
  sub->add_option("--steps", o->steps,
                  "Steps: numbers and ranges A-B, comma-separated; each 1 to 1048576, at most 4096 "
                  "steps in all")
      ->capture_default_str();
  sub->add_option("--duration", o->duration, "Time per step")->capture_default_str();
  sub->add_option("--rounds", o->spec.rounds, "Trials per step; the order rotates each round")
      ->check(Count(1, 1000))
      ->capture_default_str();
  sub->add_option("--engine", o->spec.engine, "psync (queue depth 1) or io_uring")
      ->capture_default_str();
  sub->add_option("--qd", o->spec.qds, "io_uring queue depths (default 1,128)")
      ->delimiter(',')
      ->check(Count(1, 4096));
  sub->add_option("--batch", o->spec.batches,
                  "io_uring: the most writes submitted by one io_uring_enter, comma-separated for "
                  "several (default: the queue depth; 1 submits each write alone)")
      ->delimiter(',')
      ->check(Count(1, 4096));
  sub->add_option("--span", o->span,
                  "Bytes the offsets cover before wrapping (default: the device, or 1G)");
  sub->add_option("--interval", o->interval, "Telemetry sampling interval")->capture_default_str();
  sub->add_flag("--pattern", o->spec.pattern,
                "Stamp each block with its write index and step (for checking offsets)");
  WireExperimentCommand(
      *sub, action, o, [](auto& opts) { return BuildSpec(opts); },
      [](const StrideSpec& s) {
        // O_DIRECT writes of --block each, on the device, the file's or a test bed's
        return Where{
            s.device.empty() ? s.file : s.device, !s.file.empty(), {{"--block", s.block, 512, ""}}};
      },
      [](const auto& spec, const std::string& target, const RunContext& ctx, ExperimentResult& e) {
        // Neither --device nor --file: a test bed, whose loop device is
        // writelab's own (BuildSpec allows no other case), so no signature check.
        StrideSpec s = spec;
        s.force = s.force || (s.device.empty() && s.file.empty());
        return RunStride(s, target, ctx, e);
      });
}

}  // namespace writelab
