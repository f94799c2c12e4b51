// SPDX-License-Identifier: MIT
#include "command/trials.h"
#include "experiments/fsync/def.h"
#include "experiments/fsync/phase.h"
#include "experiments/fsync/rows.h"
#include "experiments/fsync/sync_loop.h"
#include "experiments/fsync/warmup.h"
#include "io/trusted_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/clock.h"
#include "core/significance.h"
#include "core/units.h"
#include "experiments/fsync/mitigation.h"
#include "explain/figures.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/team.h"
#include "port/linux_compat.h"
#include "telemetry/dirty_threshold.h"
#include "telemetry/identify.h"
#include "telemetry/memory_budget.h"
#include "telemetry/sampler.h"
#include "testbed/dirty_limit.h"

namespace writelab {
namespace {

constexpr SyncMethodInfo kMethods[] = {
    {SyncMethod::kFsync, "fsync", "pwrite, then fsync", 0, 0, true},
    {SyncMethod::kFdatasync, "fdatasync", "pwrite, then fdatasync", 0, 0, true},
    {SyncMethod::kSfr, "sfr",
     "pwrite, then sync_file_range(WRITE|WAIT_AFTER) on the range, then fdatasync", 0, 0, true},
    {SyncMethod::kOsync, "osync", "file opened O_SYNC: the pwrite is the sync", O_SYNC, 0, false},
    {SyncMethod::kOdsync, "odsync", "file opened O_DSYNC: the pwrite is the sync", O_DSYNC, 0,
     false},
    {SyncMethod::kRwfDsync, "rwf-dsync", "pwritev2 with RWF_DSYNC: the write is the sync", 0,
     RWF_DSYNC, false},
    {SyncMethod::kReopen, "reopen",
     "per iteration fopen (truncating), fprintf one line, fflush, fsync, fclose: Axboe's 2009 "
     "fwrite+fsync loop (--write-size does not apply)",
     0, 0, true},
};

constexpr BackgroundInfo kBackgrounds[] = {
    {BackgroundKind::kNone, "none", "nothing else writes"},
    {BackgroundKind::kRandom, "random",
     "4 KiB random pwrites over --bg-span, never synced (Mason's random writer)"},
    {BackgroundKind::kStream, "stream",
     "sequential buffered 1 MiB pwrites, never synced, wrapping at --bg-size (the dd)"},
    {BackgroundKind::kCommand, "cmd", "the command given with --bg-cmd, run by /bin/sh"},
};

}  // namespace

std::string DirOf(const FsyncSpec& spec) {
  return spec.dir.empty() ? ParentDir(spec.file) : spec.dir;
}

namespace {

// --mitigation: none first (every other row is compared with it), each
// once, root for those that change the device, not across MPI ranks; and
// the rounds' default, 5 to compare.
std::expected<void, std::string> ValidateMitigations(FsyncSpec& spec) {
  std::vector<Mitigation>& m = spec.mitigations;
  if (m.empty()) {
    if (spec.rounds == 0) spec.rounds = 1;
    return {};
  }
  if (std::none_of(m.begin(), m.end(),
                   [](const Mitigation& x) { return x.kind == MitigationKind::kNone; }))
    m.insert(m.begin(), Mitigation{});
  std::stable_partition(m.begin(), m.end(),
                        [](const Mitigation& x) { return x.kind == MitigationKind::kNone; });
  for (size_t i = 0; i < m.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (m[j].name == m[i].name)
        return std::unexpected("--mitigation: " + m[i].name + " is given twice");
    const bool changes_device =
        m[i].kind != MitigationKind::kNone && m[i].kind != MitigationKind::kBackground;
    if (changes_device && geteuid() != 0)
      return std::unexpected("--mitigation " + m[i].name +
                             ": needs root (it changes the device's settings)");
  }
  if (!spec.roles.empty()) return std::unexpected("--mitigation: not with --roles");
  if (spec.rounds == 0) spec.rounds = m.size() > 1 ? 5 : 1;
  return {};
}

}  // namespace

const SyncMethodInfo& InfoOf(SyncMethod m) {
  for (const auto& info : kMethods)
    if (info.id == m) return info;
  return kMethods[0];
}
std::span<const SyncMethodInfo> SyncMethods() { return kMethods; }
std::span<const BackgroundInfo> Backgrounds() { return kBackgrounds; }

std::expected<void, std::string> ValidateFsyncSpec(FsyncSpec& spec) {
  if (!spec.dir.empty() && !spec.file.empty())
    return std::unexpected("give at most one of --dir and --file");
  if (spec.dir.empty() && spec.file.empty()) spec.dir = ".";
  struct stat st;
  std::string dir = DirOf(spec);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return std::unexpected((spec.dir.empty() ? "--file: directory '" : "--dir: '") + dir +
                           "' is not a directory");
  if (access(dir.c_str(), W_OK) != 0) return std::unexpected("'" + dir + "' is not writable");
  if (!spec.dir.empty()) {
    auto resolved = CheckWorkDir("--dir", spec.dir);
    if (!resolved) return std::unexpected(resolved.error());
    spec.dir = *resolved;
  }
  if (!spec.file.empty() && stat(spec.file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return std::unexpected("--file: '" + spec.file + "' is not a regular file");
  if (spec.write_size == 0) return std::unexpected("--write-size: must be greater than 0");
  if (spec.write_size > (1ull << 30)) return std::unexpected("--write-size: at most 1 GiB");
  if (spec.count < 1) return std::unexpected("--count: must be at least 1");
  if (spec.count > 1'000'000) return std::unexpected("--count: at most 1000000");
  if (spec.rounds < 0 || spec.rounds > 1000) return std::unexpected("--rounds: between 1 and 1000");
  if (spec.sample_interval_ns < 10'000'000)
    return std::unexpected("--sample-interval: at least 10ms");
  if (spec.bg_span != 0 && spec.bg_span < 4096)  // 0: auto
    return std::unexpected("--bg-span: at least 4 KiB (or auto)");
  if (spec.methods.empty()) spec.methods = {SyncMethod::kFsync};
  if (spec.backgrounds.empty())
    spec.backgrounds = {BackgroundKind::kNone, BackgroundKind::kRandom, BackgroundKind::kStream};
  // A row is named BACKGROUND/METHOD: each may be given once.
  for (size_t i = 0; i < spec.methods.size(); ++i)
    if (std::count(spec.methods.begin(), spec.methods.begin() + i, spec.methods[i]))
      return std::unexpected(std::string("--sync: ") + InfoOf(spec.methods[i]).name +
                             " is given twice");
  for (size_t i = 0; i < spec.backgrounds.size(); ++i)
    if (std::count(spec.backgrounds.begin(), spec.backgrounds.begin() + i, spec.backgrounds[i]))
      return std::unexpected(std::string("--background: ") + BackgroundName(spec.backgrounds[i]) +
                             " is given twice");
  if (auto ok = ValidateMitigations(spec); !ok) return ok;
  bool wants_cmd = std::find(spec.backgrounds.begin(), spec.backgrounds.end(),
                             BackgroundKind::kCommand) != spec.backgrounds.end();
  if (wants_cmd && spec.bg_command.empty())
    return std::unexpected("--background cmd needs --bg-cmd 'COMMAND'");
  if (!wants_cmd && !spec.bg_command.empty())
    return std::unexpected("--bg-cmd is only used with --background cmd");
  if (spec.bg_size != 0 && spec.bg_size < (1u << 20))
    return std::unexpected("--bg-size: at least 1 MiB");
  if (auto big = CheckMemory(
          "--write-size " + FormatBytes(static_cast<double>(spec.write_size)) + " (one buffer)",
          spec.write_size))
    return std::unexpected(*big);
  return {};
}

}  // namespace writelab
