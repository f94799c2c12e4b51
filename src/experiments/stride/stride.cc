// SPDX-License-Identifier: MIT
#include "experiments/stride/stride.h"
#include "experiments/stride/def.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "command/trials.h"
#include "core/clock.h"
#include "core/units.h"
#include "experiments/stride/rows.h"
#include "experiments/stride/step.h"
#include "explain/figures.h"
#include "io/file.h"
#include "port/write_all.h"
#include "telemetry/blockdev.h"
#include "telemetry/memory_budget.h"

namespace writelab {
namespace {

Result<UniqueFd> OpenTarget(const StrideSpec& spec, const std::string& path, uint64_t* span) {
  struct stat st;
  bool device = stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
  if (!spec.device.empty() && !device)
    return std::unexpected(PlainError("--device: " + path + " is not a block device"));
  if (device) {
    if (std::string why = WhyNotSafeToOverwrite(path); !why.empty()) {
      bool only_signature = why.find(" holds ") != std::string::npos;
      if (!(only_signature && spec.force))
        return std::unexpected(
            PlainError(why + (only_signature ? " (--force overwrites it)" : "")));
    }
    auto fd = OpenFile(path, O_WRONLY | O_DIRECT | O_EXCL);
    if (!fd) return fd;
    struct stat opened;  // the device checked above, not one swapped in since
    if (fstat(fd->get(), &opened) != 0 || !S_ISBLK(opened.st_mode) || opened.st_rdev != st.st_rdev)
      return std::unexpected(PlainError(path + " changed while it was checked: refused"));
    uint64_t bytes = 0;
    if (ioctl(fd->get(), BLKGETSIZE64, &bytes) != 0)
      return std::unexpected(ErrnoError(errno, "BLKGETSIZE64 " + path));
    *span = spec.span ? std::min(spec.span, bytes) : bytes;
    return fd;
  }
  *span = spec.span ? spec.span : (1ull << 30);
  // Never through a link, and only a regular file: what is filled with zeros
  // is what was named (survey's file is writelab's own, made O_EXCL).
  auto fill = OpenFile(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK);
  if (!fill) return std::unexpected(fill.error());
  if (fstat(fill->get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + path));
  if (!S_ISREG(st.st_mode))
    return std::unexpected(PlainError("--file: " + path + " is not a regular file"));
  {  // fill the file with zeros up to the span, so no write allocates
    if (fstat(fill->get(), &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + path));
    if (int rc = FillZeros(fill->get(), static_cast<uint64_t>(st.st_size), *span); rc < 0)
      return std::unexpected(ErrnoError(-rc, "fill " + path));
    if (fsync(fill->get()) != 0) return std::unexpected(ErrnoError(errno, "fsync " + path));
  }
  auto fd = ReopenFd(fill->get(), O_WRONLY | O_DIRECT, path);  // the file filled, not its name
  if (!fd && fd.error().code == EINVAL)
    return std::unexpected(ErrnoError(EINVAL, "open " + path + " with O_DIRECT"));
  return fd;
}

// A --batch value as the user would write it: 0 is the queue depth.
std::string BatchText(unsigned batch) { return batch == 0 ? "qd" : std::to_string(batch); }

std::string StepsText(const std::vector<uint64_t>& steps) {
  std::string s;
  for (uint64_t v : steps) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

}  // namespace

std::expected<void, std::string> ValidateStrideSpec(StrideSpec& spec) {
  if (spec.block == 0 || spec.block % 512)
    return std::unexpected("--block: O_DIRECT needs a multiple of 512 bytes");
  if (spec.unit == 0 || spec.unit % 512)
    return std::unexpected("--unit: a multiple of 512 bytes (512 or 4k)");
  // Bounds that keep step x unit x i and offset + block far from 64 bits.
  if (spec.block > kMaxStrideBlock) return std::unexpected("--block: at most 64 MiB");
  if (spec.unit > kMaxStrideUnit) return std::unexpected("--unit: at most 1 GiB");
  if (spec.span > kMaxStrideSpan) return std::unexpected("--span: at most 1 EiB");
  if (spec.duration_ns < 10'000'000) return std::unexpected("--duration: at least 10ms");
  if (spec.rounds < 1 || spec.rounds > 1000) return std::unexpected("--rounds: between 1 and 1000");
  if (spec.interval_ns < 10'000'000) return std::unexpected("--interval: at least 10ms");
  if (spec.engine != "psync" && spec.engine != "io_uring")
    return std::unexpected("--engine: 'psync' or 'io_uring', not '" + spec.engine + "'");
  if (spec.engine == "psync" && !spec.qds.empty() && !(spec.qds.size() == 1 && spec.qds[0] == 1))
    return std::unexpected("--qd: psync has queue depth 1; use --engine io_uring");
  if (spec.qds.empty())
    spec.qds = spec.engine == "psync" ? std::vector<unsigned>{1} : std::vector<unsigned>{1, 128};
  for (unsigned qd : spec.qds)
    if (qd < 1 || qd > 4096) return std::unexpected("--qd: between 1 and 4096");
  if (spec.engine == "psync" && !spec.batches.empty())
    return std::unexpected("--batch: psync submits one write per call; use --engine io_uring");
  if (spec.batches.empty()) spec.batches = {0};
  for (unsigned b : spec.batches)
    if (b > 4096) return std::unexpected("--batch: between 1 and 4096");
  if (spec.steps.empty()) {
    spec.steps = *ParseSteps("1-16");
    for (uint64_t s : {32, 64, 128, 256, 512}) spec.steps.push_back(s);
  }
  if (spec.span && spec.span < spec.block) return std::unexpected("--span: at least one --block");
  if (!spec.file.empty()) {  // before the banner, as stream does
    struct stat st;
    if (stat(spec.file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return std::unexpected("--file: '" + spec.file + "' is not a regular file");
    if (stat(ParentDir(spec.file).c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return std::unexpected("--file: directory '" + ParentDir(spec.file) + "' does not exist");
  }
  const unsigned deepest = *std::max_element(spec.qds.begin(), spec.qds.end());
  if (auto big = CheckMemory("--qd " + std::to_string(deepest) + " x --block " +
                                 FormatBytes(static_cast<double>(spec.block)) + " (buffers)",
                             SaturatingMul(deepest, spec.block)))
    return std::unexpected(*big);
  return {};
}

namespace {

struct StrideCell {
  uint64_t step;
  unsigned qd, batch;
  std::string name;  // "8", "8 qd32 batch4"
};

std::vector<StrideCell> Cells(const StrideSpec& spec) {
  std::vector<StrideCell> cells;
  for (unsigned qd : spec.qds) {
    for (unsigned batch : spec.batches) {
      for (uint64_t step : spec.steps) {
        std::string name = std::to_string(step);
        if (spec.qds.size() > 1) name += " qd" + std::to_string(qd);
        if (spec.batches.size() > 1) name += " batch" + BatchText(batch);
        cells.push_back({step, qd, batch, name});
      }
    }
  }
  return cells;
}

// Every step spec.rounds times, the order rotating each round
// (command/trials.h): a step cut short by an interrupt is dropped (and
// its row when that was its only trial); the rest go to out.
Status RunCells(const StepEnv& env, ExperimentResult& out) {
  std::vector<StrideCell> cells = Cells(env.spec);
  std::vector<std::vector<StepResult>> trials(cells.size());
  TrialPlan plan;
  plan.cells = cells.size();
  plan.rounds = env.spec.rounds;
  plan.name = [&](size_t i) { return cells[i].name; };
  plan.failure_prefix = "step ";
  Status status = RunTrials(
      env.ctx, plan,
      [&](const TrialSlot& t) {
        const StrideCell& c = cells[t.cell];
        return RunStep(env, c.step, c.qd, c.batch);
      },
      [&](const TrialSlot& t, StepResult&& r) { trials[t.cell].push_back(std::move(r)); });
  for (size_t i = 0; i < cells.size(); ++i)
    if (!trials[i].empty()) out.rows.push_back(StrideRow(cells[i].name, trials[i]));
  return status;
}

}  // namespace

Status RunStride(const StrideSpec& spec, const std::string& path, const RunContext& ctx,
                 ExperimentResult& out) {
  out.name = "stride";
  out.reproduces = kStrideReproduces;
  out.row_label = "step";
  out.table = KeyNames(KeysOf(
      kStrideFigures, {"cycles", "written_mb", "elapsed_s", "mb_s", "write_p50_ms", "write_p99_ms",
                       "syscalls_per_write", "device_merges", "device_kib_per_write"}));
  out.compare_figure = KeyOf(kStrideFigures, "mb_s").name;
  uint64_t span = 0;
  auto fd = OpenTarget(spec, path, &span);
  out.target = TargetOf(ctx, path);
  std::string qds, batches;
  for (unsigned q : spec.qds) qds += (qds.empty() ? "" : ",") + std::to_string(q);
  for (unsigned b : spec.batches) batches += (batches.empty() ? "" : ",") + BatchText(b);
  out.params = {{"path", path, ""},
                {"block", static_cast<int64_t>(spec.block), "bytes"},
                {"unit", static_cast<int64_t>(spec.unit), "bytes"},
                {"steps", StepsText(spec.steps), "units"},
                {"duration", static_cast<double>(spec.duration_ns) / 1e9, "s"},
                {"rounds", static_cast<int64_t>(spec.rounds), "trials"},
                {"engine", spec.engine, ""},
                {"qd", qds, ""},
                {"batch", batches, "SQEs per io_uring_enter"},
                {"span", static_cast<int64_t>(span), "bytes"},
                {"pattern", spec.pattern, ""}};
  if (!fd) return std::unexpected(fd.error());
  StepEnv env{spec,
              ctx,
              fd->get(),
              span,
              std::max<size_t>(512, out.target.logical_block_size.value_or(512)),
              out.target.device};
  Status s = RunCells(env, out);
  if (!s) return s;
  AddTrialNotes(ctx, RotationNote(spec.rounds, "steps"), {ExplainProbe::kBlock}, out);
  return {};
}

}  // namespace writelab
