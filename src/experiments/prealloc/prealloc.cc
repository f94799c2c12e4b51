// SPDX-License-Identifier: MIT
#include "experiments/prealloc/prealloc.h"
#include "experiments/prealloc/def.h"
#include "io/trusted_dir.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "command/trials.h"
#include "core/clock.h"
#include "core/outcome.h"
#include "core/units.h"
#include "experiments/prealloc/rows.h"
#include "explain/figures.h"
#include "io/engine.h"
#include "io/file.h"
#include "io/own_files.h"
#include "io/runner.h"
#include "port/linux_compat.h"
#include "port/write_all.h"
#include "telemetry/memory_budget.h"
#include "testbed/scoped_change.h"

namespace writelab {
namespace {

constexpr PreallocModeInfo kModes[] = {
    {PreallocMode::kSparse, "sparse", "ftruncate to the size: no blocks allocated"},
    {PreallocMode::kFallocate, "fallocate", "fallocate mode 0: unwritten extents"},
    {PreallocMode::kKeepSize, "keep-size",
     "fallocate FALLOC_FL_KEEP_SIZE: unwritten extents beyond a size of 0"},
    {PreallocMode::kZeroRange, "zero-range", "fallocate FALLOC_FL_ZERO_RANGE"},
    {PreallocMode::kWriteZeroes, "write-zeroes",
     "fallocate FALLOC_FL_WRITE_ZEROES (Linux 6.17): written, zeroed extents by the device"},
    {PreallocMode::kZeroFill, "zero-fill", "write zeros, as dd does"},
};

bool IsFallocateFlag(PreallocMode m) {
  return m != PreallocMode::kSparse && m != PreallocMode::kZeroFill;
}

// The library's Preallocate, with its fallocate through the timed runner.
class RunnerOps final : public PreallocateOps {
 public:
  RunnerOps(int fd, OpRunner& runner) : fd_(fd), runner_(runner) {}
  int Fallocate(int mode, uint64_t offset, uint64_t length) override {
    return runner_.Preallocate({mode, offset, length});
  }
  int WriteZeros(uint64_t offset, uint64_t length) override {
    return FillZeros(fd_, offset, offset + length);
  }
  int GrowTo(uint64_t size) override {
    return ftruncate(fd_, static_cast<off_t>(size)) == 0 ? 0 : -errno;
  }
  long FileSystemType() override { return 0; }

 private:
  int fd_;
  OpRunner& runner_;
};

// Makes the file in the mode (writelab::Preallocate), then fsyncs it; the
// fallocate and the fsync go through the runner. 0 or -errno.
int Prepare(PreallocMode m, int fd, OpRunner& runner, uint64_t size) {
  RunnerOps ops(fd, runner);
  if (auto p = Preallocate(ops, 0, size, m); !p) return p.error().code ? -p.error().code : -EINVAL;
  return runner.Sync({SyncKind::kFsync});
}

// What --explain attributes in the workload.
constexpr std::initializer_list<ExplainProbe> kPreallocExplains = {
    ExplainProbe::kConversions, ExplainProbe::kJournal, ExplainProbe::kSyncParts};

// The 2012 workload: `writes` writes of `block` at i x stride x block, each
// synchronous as the open flags make it. The file is the one `created`
// refers to, reopened with the flags through its descriptor, never by name.
void Workload(const PreallocSpec& spec, int flags, size_t align, int created,
              const std::string& path, const AlignedBuffer& data, const RunContext& ctx,
              PreallocTrial& t) {
  const bool direct = flags & O_DIRECT;
  auto fd = ReopenFd(created, O_WRONLY | flags, path);
  if (!fd) {
    return t.outcome.Fail(fd.error().code, "open " + path + (direct ? " with O_DIRECT" : ""),
                          direct ? Feature::kDirectIo : Feature::kNone);
  }
  auto engine = ctx.Engine(MakePwriteEngine(fd->get(), direct ? align : 1));
  WriteRunner runner(*engine, t.latency);
  ExplainSpan explain(ctx.explainer, kPreallocExplains);
  const uint64_t t0 = NowNs();  // workload_s spans all the writes
  for (int i = 0; i < spec.writes; ++i) {
    if (ctx.Interrupted()) {
      t.outcome.interrupted = true;
      return;
    }
    uint64_t off = static_cast<uint64_t>(i) * spec.stride * spec.block;
    if (int rc = runner.WriteFully(data.data(), spec.block, off); rc != 0)
      return t.outcome.Fail(-rc, "pwrite " + path + " at " + std::to_string(off));
  }
  t.figures[PreallocKey("workload_s").name] = static_cast<double>(NowNs() - t0) / 1e9;
  if (auto d = explain.End())
    ExplainValues(*ctx.explainer, *d,
                  {static_cast<uint64_t>(spec.writes), t.figures[PreallocKey("workload_s").name]},
                  kPreallocExplains, t.explained);
  const Histogram& h = t.latency;
  for (auto [key, p] : {std::pair{"write_p50_ms", 50.0}, {"write_p99_ms", 99.0}})
    if (auto ns = h.SupportedPercentile(p)) t.figures[key] = static_cast<double>(*ns) / 1e6;
  t.figures[PreallocKey("write_max_ms").name] = static_cast<double>(h.max()) / 1e6;
}

PreallocTrial RunTrial(const PreallocSpec& spec, PreallocMode m, int flags, size_t align,
                       const AlignedBuffer& data, const RunContext& ctx) {
  PreallocTrial t;
  std::string path;
  auto fd = CreateOwnFile(spec.dir, "prealloc", O_RDWR, &path);
  if (!fd) {
    t.outcome.Fail(fd.error());
    return t;
  }
  auto engine = ctx.Engine(MakePwriteEngine(fd->get()));
  WriteRunner runner(*engine);
  const uint64_t t0 = NowNs();  // prep_s spans the preparation and its fsync
  int err = -Prepare(m, fd->get(), runner, spec.file_size);
  t.figures[PreallocKey("prep_s").name] = static_cast<double>(NowNs() - t0) / 1e9;
  if (err != 0) {
    // A kernel or file system without the mode says EOPNOTSUPP; kernels
    // older than a flag reject the unknown bit with EINVAL.
    const bool flag = IsFallocateFlag(m);
    t.outcome.Fail(err, (flag ? "fallocate " : "prepare ") + path,
                   flag ? Feature::kFallocateMode : Feature::kNone);
  } else if (auto e = SnapshotExtents(fd->get(), path, "before", t.figures)) {
    t.outcome.Fail(*e);
  } else {
    Workload(spec, flags, align, fd->get(), path, data, ctx, t);
    if (t.outcome.ok() && !t.outcome.interrupted)
      if (auto e2 = SnapshotExtents(fd->get(), path, "after", t.figures)) t.outcome.Fail(*e2);
  }
  RemoveOwnFile(path);
  return t;
}

// /sys/fs/ext4/DEV/extent_max_zeroout_kb of the file system under dir.
std::string ZerooutKnob(const Target& target) {
  std::error_code ec;
  auto dev = std::filesystem::canonical(target.mount_source, ec);
  if (ec || target.fs_type != "ext4") return "";
  std::string knob = "/sys/fs/ext4/" + dev.filename().string() + "/extent_max_zeroout_kb";
  return std::filesystem::exists(knob) ? knob : "";
}

void AddParams(const PreallocSpec& spec, ExperimentResult& out) {
  std::string modes, zeroout;
  for (PreallocMode m : spec.modes)
    modes += (modes.empty() ? "" : ",") + std::string(NameOf(kModes, m));
  for (int64_t z : spec.zeroout_kb) zeroout += (zeroout.empty() ? "" : ",") + std::to_string(z);
  out.params = {{"path", spec.dir, ""},
                {"file_size", static_cast<int64_t>(spec.file_size), "bytes"},
                {"writes", static_cast<int64_t>(spec.writes), "writes"},
                {"rounds", static_cast<int64_t>(spec.rounds), "trials"},
                {"block", static_cast<int64_t>(spec.block), "bytes"},
                {"stride", static_cast<int64_t>(spec.stride), "blocks"},
                {"flags", spec.flags, ""},
                {"modes", modes, ""},
                {"zeroout_kb", zeroout, "KiB"}};
}

}  // namespace

std::span<const PreallocModeInfo> PreallocModes() { return kModes; }

std::expected<int, std::string> PreallocOpenFlags(const std::string& flags) {
  int out = 0;
  size_t pos = 0;
  while (pos <= flags.size()) {
    size_t end = flags.find(',', pos);
    if (end == std::string::npos) end = flags.size();
    std::string f = flags.substr(pos, end - pos);
    if (f == "sync")
      out |= O_SYNC;
    else if (f == "dsync")
      out |= O_DSYNC;
    else if (f == "direct")
      out |= O_DIRECT;
    else if (f != "none")
      return std::unexpected("--flags: unknown flag '" + f + "' (sync, dsync, direct, none)");
    pos = end + 1;
  }
  return out;
}

std::expected<void, std::string> ValidatePreallocSpec(PreallocSpec& spec) {
  if (spec.dir.empty()) spec.dir = ".";
  auto resolved = CheckWorkDir("--dir", spec.dir);
  if (!resolved) return std::unexpected(resolved.error());
  spec.dir = *resolved;
  if (spec.file_size == 0) return std::unexpected("--file-size: must be greater than 0");
  if (spec.block == 0) return std::unexpected("--block: must be greater than 0");
  if (spec.writes < 1) return std::unexpected("--writes: must be at least 1");
  if (spec.stride < 1) return std::unexpected("--stride: must be at least 1");
  if (spec.rounds < 1 || spec.rounds > 1000) return std::unexpected("--rounds: between 1 and 1000");
  auto flags = PreallocOpenFlags(spec.flags);
  if (!flags) return std::unexpected(flags.error());
  if (spec.writes > kMaxPreallocWrites)
    return std::unexpected("--writes: at most " + std::to_string(kMaxPreallocWrites));
  if (spec.stride > kMaxPreallocStride)
    return std::unexpected("--stride: at most " + std::to_string(kMaxPreallocStride));
  // (writes - 1) x stride x block + block, refused when it passes 64 bits
  // rather than wrapped into a small number that passes the size check.
  uint64_t span = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(spec.writes) - 1, spec.stride, &span) ||
      __builtin_mul_overflow(span, spec.block, &span) ||
      __builtin_add_overflow(span, spec.block, &span))
    return std::unexpected(
        "--writes x --stride x --block cover more than 16 EiB, more than "
        "--file-size " +
        FormatBytes(static_cast<double>(spec.file_size)));
  if (span > spec.file_size)
    return std::unexpected("--writes x --stride x --block cover " +
                           FormatBytes(static_cast<double>(span)) + ", more than --file-size " +
                           FormatBytes(static_cast<double>(spec.file_size)));
  for (int64_t z : spec.zeroout_kb)
    if (z < 0) return std::unexpected("--zeroout-kb: values must be 0 or more");
  if (!spec.zeroout_kb.empty() && geteuid() != 0)
    return std::unexpected(
        "--zeroout-kb needs root (it sets /sys/fs/ext4/DEV/extent_max_zeroout_kb)");
  if (spec.modes.empty())
    for (const auto& m : kModes) spec.modes.push_back(m.id);
  if (auto big = CheckMemory(
          "--block " + FormatBytes(static_cast<double>(spec.block)) + " (one buffer)", spec.block))
    return std::unexpected(*big);
  return {};
}

namespace {

// Every mode spec.rounds times, the order rotating each round
// (command/trials.h). Its rows go to out, also when a trial fails.
Status RunRounds(const PreallocSpec& spec, int flags, size_t align, AlignedBuffer& data,
                 const RunContext& ctx, const std::string& suffix, ExperimentResult& out) {
  const size_t n = spec.modes.size();
  std::vector<std::vector<PreallocTrial>> trials(n);
  TrialPlan plan;
  plan.cells = n;
  plan.rounds = spec.rounds;
  plan.name = [&](size_t i) { return NameOf(kModes, spec.modes[i]) + suffix; };
  Status status = RunTrials(
      ctx, plan,
      [&](const TrialSlot& t) {
        return RunTrial(spec, spec.modes[t.cell], flags, align, data, ctx);
      },
      [&](const TrialSlot& t, PreallocTrial&& trial) {
        trials[t.cell].push_back(std::move(trial));
      });
  for (size_t i = 0; i < n; ++i)
    if (!trials[i].empty()) out.rows.push_back(PreallocRow(plan.name(i), trials[i]));
  return status;
}

}  // namespace

Status RunPrealloc(const PreallocSpec& spec, const RunContext& ctx, ExperimentResult& out) {
  out.name = "prealloc";
  out.row_label = "mode";
  out.reproduces = kPreallocReproduces;
  out.target = TargetOf(ctx, spec.dir);
  out.table =
      KeyNames(KeysOf(kPreallocFigures, {"prep_s", "workload_s", "write_p99_ms", "extents_before",
                                         "unwritten_before", "extents_after", "unwritten_after"}));
  out.compare_figure = KeyOf(kPreallocFigures, "workload_s").name;
  out.compare_targets_as_rows = true;  // the 2012 table: journal modes down, modes across
  AddParams(spec, out);
  int flags = *PreallocOpenFlags(spec.flags);
  if ((flags & O_DIRECT) && out.target.fs_type == "ext4" &&
      out.target.mount_options.find("data=journal") != std::string::npos)
    out.notes.push_back(
        "ext4 with data=journal serves O_DIRECT through the page cache: these "
        "writes were buffered and journaled, not direct");
  if (out.target.fs_type == "tmpfs")
    out.notes.push_back("tmpfs has no FIEMAP: extent figures are absent, not zero");
  size_t align = std::max<size_t>(512, out.target.logical_block_size.value_or(512));
  AlignedBuffer data(spec.block, 4096);
  data.FillPattern(5);

  std::vector<std::optional<int64_t>> passes;
  for (int64_t z : spec.zeroout_kb) passes.push_back(z);
  if (passes.empty()) passes.push_back(std::nullopt);
  std::string knob = ZerooutKnob(out.target);
  for (const auto& zeroout : passes) {
    std::optional<ScopedChange> set;
    if (zeroout) {
      if (knob.empty() || !ctx.journal)
        return std::unexpected(PlainError("--zeroout-kb: " + spec.dir + " is on " +
                                          out.target.fs_type + ", not ext4 with a zeroout knob"));
      auto s = SetSysfs(*ctx.journal, knob, std::to_string(*zeroout));
      if (!s) return std::unexpected(s.error());
      set.emplace(std::move(*s));
    }
    std::string suffix = zeroout ? " (zeroout " + std::to_string(*zeroout) + " KiB)" : "";
    if (Status s = RunRounds(spec, flags, align, data, ctx, suffix, out); !s) return s;
  }
  AddTrialNotes(ctx, RotationNote(spec.rounds, "modes"), kPreallocExplains, out);
  return {};
}

}  // namespace writelab
