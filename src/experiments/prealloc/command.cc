// SPDX-License-Identifier: MIT
// `writelab prealloc`: options → PreallocSpec → RunPrealloc on each target.
#include <fcntl.h>

#include <memory>
#include <string>

#include "command/count_option.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "command/wire.h"
#include "experiments/prealloc/def.h"
#include "experiments/prealloc/prealloc.h"

namespace writelab {
namespace {

struct PreallocOptions {
  PreallocSpec spec;
  std::string file_size = "256M";
  std::string block = "4k";
  std::vector<std::string> modes;
  OutputOptions out;
  TargetOptions targets;
};

std::expected<PreallocSpec, std::string> BuildSpec(const PreallocOptions& o) {
  PreallocSpec spec = o.spec;
  auto size = SizeOption("--file-size", o.file_size);
  if (!size) return std::unexpected(size.error());
  auto block = SizeOption("--block", o.block);
  if (!block) return std::unexpected(block.error());
  spec.file_size = *size;
  spec.block = *block;
  auto modes = ChoicesOption("--mode", "mode", PreallocModes(), o.modes);
  if (!modes) return std::unexpected(modes.error());
  spec.modes = *modes;
  if (auto ok = ValidatePreallocSpec(spec); !ok) return std::unexpected(ok.error());
  return spec;
}

// --flags direct: every write is one O_DIRECT --block.
Where WherePreallocWrites(const PreallocSpec& spec) {
  Where w = DirOrFile(spec);
  if (auto flags = PreallocOpenFlags(spec.flags); flags && (*flags & O_DIRECT))
    w.direct.push_back({"--block", spec.block, 512, ""});
  return w;
}

}  // namespace

void AddPreallocCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<PreallocOptions>();
  CLI::App* sub = app.add_subcommand(
      "prealloc",
      "Preallocation and unwritten-extent conversion (ext4 fallocate thread, 2012): make a file "
      "in each mode, then strided synchronous direct writes; extents before and after from "
      "FIEMAP. With --testbed, the 2012 table per journal mode. See docs/prealloc.md.");
  sub->add_option("--dir", o->spec.dir, "Make the files in DIR (default: the current directory)")
      ->option_text("DIR");
  sub->add_option("--file-size", o->file_size, "Size of the preallocated file")
      ->capture_default_str();
  sub->add_option("--rounds", o->spec.rounds, "Trials per mode; the order rotates each round")
      ->check(Count(1, 1000))
      ->capture_default_str();
  sub->add_option("--writes", o->spec.writes, "Writes in the workload")
      ->check(Count(1, kMaxPreallocWrites))
      ->capture_default_str();
  sub->add_option("--block", o->block, "Bytes per write")->capture_default_str();
  sub->add_option("--stride", o->spec.stride, "Blocks from one write to the next")
      ->check(Count(1, kMaxPreallocStride))
      ->capture_default_str();
  sub->add_option("--flags", o->spec.flags,
                  "Open flags of the workload, comma-separated: sync, dsync, direct, or none. "
                  "The default O_DSYNC|O_DIRECT is what oflag=sync,direct needed in 2012 (data "
                  "durable per write); sync,direct is dd's O_SYNC exactly")
      ->capture_default_str();
  sub->add_option("--mode", o->modes,
                  ListHelp("Preallocation modes, comma-separated (default: all):", PreallocModes()))
      ->delimiter(',');
  sub->add_option("--zeroout-kb", o->spec.zeroout_kb,
                  "Run every mode with ext4's extent_max_zeroout_kb set to each value (root, "
                  "ext4; restored afterwards): Dilger's experiment")
      ->delimiter(',')
      ->check(Count(0, INT32_MAX));
  WireExperimentCommand(
      *sub, action, o, [](auto& opts) { return BuildSpec(opts); }, WherePreallocWrites,
      [](const auto& spec, const std::string& target, const RunContext& ctx, ExperimentResult& e) {
        return RunPrealloc(InTarget(spec, target), ctx, e);
      });
}

}  // namespace writelab
