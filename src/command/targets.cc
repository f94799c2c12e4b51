// SPDX-License-Identifier: MIT
#include "command/targets.h"

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "command/options.h"
#include "core/units.h"
#include "explain/explainer.h"
#include "io/file.h"
#include "io/trusted_dir.h"
#include "mpi/session.h"
#include "port/no_memory.h"
#include "telemetry/identify.h"
#include "telemetry/memory_budget.h"
#include "testbed/testbed.h"

namespace writelab {

namespace {

// Refuses an empty value: `--testbed ''` or `--scheduler ''` would otherwise
// mean "no test bed" or "the current scheduler" without a word. (CLI11
// itself drops empty items between the commas of --scheduler.)
CLI::Validator NotEmpty(const char* instead) {
  return CLI::Validator(
      [instead](std::string& value) {
        return value.empty() ? std::string("empty value (") + instead + ")" : std::string();
      },
      "");
}

}  // namespace

void AddTargetOptions(CLI::App& sub, TargetOptions& o) {
  auto* g = sub.add_option_group("test beds", "Run on file systems made for the run (root)");
  g->add_option("--testbed", o.testbeds,
                "Test beds, comma-separated: FS[:OPTION...] with FS ext4, xfs, btrfs or tmpfs "
                "(or raw, a bare loop device, for stride); OPTION a mount option, or nojournal "
                "for ext4. e.g. "
                "ext4:data=ordered,ext4:data=journal,ext4:nojournal,xfs")
      ->option_text("SPEC[,SPEC...]")
      ->check(NotEmpty("leave --testbed out to run in the directory given"));
  g->add_option("--testbed-size", o.testbed_size, "Size of each test bed's sparse file")
      ->capture_default_str();
  g->add_option("--scratch", o.scratch, "Directory for the test beds' sparse files")
      ->capture_default_str();
  g->add_option("--scheduler", o.schedulers,
                "Run under each of these I/O schedulers of the device under test, e.g. "
                "none,mq-deadline,kyber,bfq (root; the previous one is restored)")
      ->delimiter(',')
      ->check(NotEmpty("leave --scheduler out to keep the device's scheduler"));
  sub.add_flag("--explain", o.explain,
               "Say where the time went, from the kernel's tracepoints (root; BPF): adds the "
               "attribution figures of docs/explain.md to every row");
}

namespace {

// A test bed's sparse file fills as the bed is written: one larger than the
// scratch file system's free space could fill it, and the bed's writes
// would then fail as I/O errors of the loop device.
std::optional<std::string> CheckTestbedRoom(int scratch_fd, const std::string& scratch,
                                            uint64_t size) {
  struct statvfs st;
  if (fstatvfs(scratch_fd, &st) != 0) return std::nullopt;  // Provision says what fails
  const uint64_t free = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (size <= free) return std::nullopt;
  return "--testbed-size " + FormatBytes(static_cast<double>(size)) + ": more than the " +
         FormatBytes(static_cast<double>(free)) + " free under --scratch " + scratch +
         " (the sparse file could fill it); give a smaller size or another --scratch";
}

}  // namespace

Target IdentifyWhere(const std::string& path) {
  struct stat st;
  return IdentifyTarget(stat(path.c_str(), &st) == 0 ? path : ParentDir(path));
}

std::optional<std::string> CheckDirectSizes(const std::vector<DirectSize>& sizes,
                                            const Target& target) {
  for (const DirectSize& d : sizes)
    if (auto bad = CheckDirectSize(d.option, d.bytes, target, d.at_least)) return *bad + d.instead;
  return std::nullopt;
}

std::optional<std::string> CheckTargets(const TargetOptions& t, bool has_file,
                                        const RunContext& ctx, std::vector<TestbedSpec>* beds_out) {
  if (ctx.team && ctx.team->size() > 1) {  // each of these changes, or looks at, one machine
    if (!t.testbeds.empty())
      return "--testbed: not under MPI: a test bed changes a single machine (run it without "
             "mpirun)";
    if (!t.schedulers.empty())
      return "--scheduler: not under MPI: it changes a single machine's device (run it "
             "without mpirun)";
    if (has_file) return "--file: under MPI every rank writes files of its own: give --dir";
    if (t.explain)
      return "--explain: not under MPI: its attribution is per machine and would count the "
             "other ranks' I/O (run it without mpirun)";
  }
  std::vector<TestbedSpec> beds;
  if (!t.testbeds.empty()) {
    auto parsed = ParseTestbeds(t.testbeds);
    if (!parsed) return parsed.error();
    beds = std::move(*parsed);
    if (has_file) return "--file cannot be used with --testbed";
    for (const TestbedSpec& b : beds) {
      if (t.raw_device && b.fs != "raw")
        return "--testbed: this experiment writes a raw device: use --testbed raw";
      if (!t.raw_device && b.fs == "raw")
        return "--testbed raw: this experiment needs a file system";
    }
  }
  if (t.explain)
    if (auto refusal = ExplainRefusal()) return *refusal;
  if ((!t.testbeds.empty() || !t.schedulers.empty()) && geteuid() != 0)
    return t.testbeds.empty() ? "--scheduler needs root" : "test beds need root";
  auto size = SizeOption("--testbed-size", t.testbed_size);
  if (!size) return size.error();
  if (*size < (64u << 20)) return "--testbed-size: at least 64 MiB";
  if (beds.empty()) return std::nullopt;
  auto any = [&](bool tmpfs) {
    return std::any_of(beds.begin(), beds.end(),
                       [&](const TestbedSpec& b) { return (b.fs == "tmpfs") == tmpfs; });
  };
  if (any(false)) {  // a bed on a loop device: its sparse file goes in --scratch
    auto scratch = OpenTrustedDir(t.scratch, DirUse::kPrivate, true);
    if (!scratch) return "--scratch: " + scratch.error().Message();
    if (auto full = CheckTestbedRoom(scratch->get(), t.scratch, *size)) return full;
  }
  if (any(true))  // a tmpfs bed's size is memory it may take
    if (auto big = CheckMemory(
            "--testbed-size " + FormatBytes(static_cast<double>(*size)) + " (a tmpfs test bed)",
            *size))
      return big;
  if (beds_out) *beds_out = std::move(beds);
  return std::nullopt;
}

}  // namespace writelab
